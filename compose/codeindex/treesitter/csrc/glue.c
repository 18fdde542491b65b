// glue.c: the exports kgctx's host (compose/codeindex/treesitter) calls in
// a module made of tree-sitter's runtime, one or more grammars and this
// file, compiled to wasm32-wasi by scripts/build-grammars.sh.
//
// The host writes a source file into the input buffer (kg_input), parses
// it (kg_parse), and reads the whole tree at once as a flat preorder array
// (kg_dump): one call per file instead of one per node. Queries run in the
// module (kg_query_new, kg_query_exec) and hand back every match with its
// captures' spans; predicates (#eq?, #match?, ...) are the host's to
// apply. Out values beyond a function's result go to kg_out. A module is
// used by one thread at a time (the host keeps a pool of instances).
//
// The grammars are named at compile time: KG_LANG0 .. KG_LANG3.
//
// A parse or a query asks the host every few thousand steps whether to
// stop (kgctx.stop, the host's context done: cancelled, or over its time
// limit), so no instruction counting is compiled into the module.

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "tree_sitter/api.h"

#define EXPORT(name) __attribute__((export_name(#name)))

__attribute__((import_module("kgctx"), import_name("stop"))) uint32_t kg_host_stop(void);

#ifdef KG_LANG0
const TSLanguage *KG_LANG0(void);
#endif
#ifdef KG_LANG1
const TSLanguage *KG_LANG1(void);
#endif
#ifdef KG_LANG2
const TSLanguage *KG_LANG2(void);
#endif
#ifdef KG_LANG3
const TSLanguage *KG_LANG3(void);
#endif

static const TSLanguage *language(uint32_t i) {
  switch (i) {
#ifdef KG_LANG0
  case 0: return KG_LANG0();
#endif
#ifdef KG_LANG1
  case 1: return KG_LANG1();
#endif
#ifdef KG_LANG2
  case 2: return KG_LANG2();
#endif
#ifdef KG_LANG3
  case 3: return KG_LANG3();
#endif
  }
  return NULL;
}

// kg_out holds the out values of the last call (see each function).
static uint32_t kg_out[4];

EXPORT(kg_out_ptr) uint32_t *kg_out_ptr(void) { return kg_out; }

EXPORT(kg_language_count) uint32_t kg_language_count(void) {
  uint32_t n = 0;
  while (language(n) != NULL) n++;
  return n;
}

// Symbol and field names, for the host's tables. The strings are the
// grammar's, static.
EXPORT(kg_symbol_count) uint32_t kg_symbol_count(uint32_t lang) {
  return ts_language_symbol_count(language(lang));
}

EXPORT(kg_symbol_name) const char *kg_symbol_name(uint32_t lang, uint32_t sym) {
  const char *s = ts_language_symbol_name(language(lang), (TSSymbol)sym);
  kg_out[0] = s ? strlen(s) : 0;
  kg_out[1] = ts_language_symbol_type(language(lang), (TSSymbol)sym);
  return s;
}

EXPORT(kg_field_count) uint32_t kg_field_count(uint32_t lang) {
  return ts_language_field_count(language(lang));
}

EXPORT(kg_field_name) const char *kg_field_name(uint32_t lang, uint32_t id) {
  const char *s = ts_language_field_name_for_id(language(lang), (TSFieldId)id);
  kg_out[0] = s ? strlen(s) : 0;
  return s;
}

// The input buffer: the host writes a source file or a query there.
static char *input;
static uint32_t input_cap;

EXPORT(kg_input) char *kg_input(uint32_t n) {
  if (n + 1 > input_cap) {
    free(input);
    input_cap = n + 1;
    input = malloc(input_cap);
    if (input == NULL) input_cap = 0;
  }
  return input;
}

static TSParser *parser;
static uint32_t input_len;

static const char *read_input(void *payload, uint32_t byte, TSPoint point, uint32_t *n) {
  (void)payload;
  (void)point;
  if (byte >= input_len) {
    *n = 0;
    return "";
  }
  *n = input_len - byte;
  return input + byte;
}

// ask_host calls the host on one progress callback in 64: a call out of
// the module costs as much as a few hundred parse steps.
static uint32_t ticks;

static bool ask_host(void) {
  if (++ticks & 63) return false;
  return kg_host_stop() != 0;
}

static bool parse_progress(TSParseState *state) {
  (void)state;
  return ask_host();
}

static bool query_progress(TSQueryCursorState *state) {
  (void)state;
  return ask_host();
}

// kg_parse parses the n bytes of the input buffer as UTF-8 with grammar
// lang; 0 when it could not (no memory, no such grammar, stopped by the
// host: the parser is then reset, so the next parse starts afresh).
EXPORT(kg_parse) TSTree *kg_parse(uint32_t lang, uint32_t n) {
  if (parser == NULL) parser = ts_parser_new();
  if (parser == NULL || input == NULL || n >= input_cap) return NULL;
  if (!ts_parser_set_language(parser, language(lang))) return NULL;
  input_len = n;
  TSInput in = {NULL, read_input, TSInputEncodingUTF8, NULL};
  TSParseOptions opts = {NULL, parse_progress};
  TSTree *t = ts_parser_parse_with_options(parser, NULL, in, opts);
  if (t == NULL) ts_parser_reset(parser);
  return t;
}

EXPORT(kg_tree_delete) void kg_tree_delete(TSTree *t) { ts_tree_delete(t); }

// The dump: 7 words per node, in preorder: symbol | field << 16, flags,
// start byte, end byte, start row, end row, parent's index (0xffffffff
// for the root). Anonymous nodes whose name does not start with a letter
// or '_' (punctuation, operators) are left out, unless the parser
// inserted them to recover (missing): their kind is all they say, and
// they double the tree.
enum { KG_NAMED = 1, KG_MISSING = 2, KG_ERROR = 4, KG_EXTRA = 8 };

static uint32_t *dump;
static uint32_t dump_cap, dump_len;

static int grow(uint32_t need) {
  if (need <= dump_cap) return 1;
  uint32_t cap = dump_cap ? dump_cap : 1 << 14;
  while (cap < need) cap *= 2;
  uint32_t *d = realloc(dump, (size_t)cap * 4);
  if (d == NULL) return 0;
  dump = d;
  dump_cap = cap;
  return 1;
}

static int keep(const TSLanguage *lang, TSNode n) {
  if (ts_node_is_named(n) || ts_node_is_missing(n)) return 1;
  const char *s = ts_language_symbol_name(lang, ts_node_symbol(n));
  return s != NULL && ((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_');
}

// kg_dump writes t's nodes; it returns the dump's address and sets
// kg_out[0] to its node count (0 when out of memory).
EXPORT(kg_dump) uint32_t *kg_dump(TSTree *t) {
  dump_len = 0;
  kg_out[0] = 0;
  const TSLanguage *lang = ts_tree_language(t);
  TSTreeCursor c = ts_tree_cursor_new(ts_tree_root_node(t));
  // parents[d] is the index of the nearest kept ancestor at depth < d+1.
  uint32_t *parents = NULL;
  uint32_t pcap = 0, depth = 0;
  uint32_t count = 0;
  int ok = 1;
  for (;;) {
    TSNode n = ts_tree_cursor_current_node(&c);
    if (depth + 1 > pcap) {
      uint32_t cap = pcap ? pcap * 2 : 256;
      uint32_t *p = realloc(parents, (size_t)cap * 4);
      if (p == NULL) { ok = 0; break; }
      parents = p;
      pcap = cap;
    }
    uint32_t parent = depth == 0 ? 0xffffffffu : parents[depth - 1];
    uint32_t self = parent;
    if (depth == 0 || keep(lang, n)) {
      if (!grow(dump_len + 7)) { ok = 0; break; }
      uint32_t flags = (ts_node_is_named(n) ? KG_NAMED : 0) | (ts_node_is_missing(n) ? KG_MISSING : 0) |
                       (ts_node_is_error(n) ? KG_ERROR : 0) | (ts_node_is_extra(n) ? KG_EXTRA : 0);
      uint32_t *w = dump + dump_len;
      w[0] = (uint32_t)ts_node_symbol(n) | ((uint32_t)ts_tree_cursor_current_field_id(&c) << 16);
      w[1] = flags;
      w[2] = ts_node_start_byte(n);
      w[3] = ts_node_end_byte(n);
      w[4] = ts_node_start_point(n).row;
      w[5] = ts_node_end_point(n).row;
      w[6] = parent;
      self = count++;
      dump_len += 7;
    }
    parents[depth] = self;
    if (ts_tree_cursor_goto_first_child(&c)) { depth++; continue; }
    while (!ts_tree_cursor_goto_next_sibling(&c)) {
      if (!ts_tree_cursor_goto_parent(&c)) goto done;
      depth--;
    }
  }
done:
  ts_tree_cursor_delete(&c);
  free(parents);
  if (!ok) return NULL;
  kg_out[0] = count;
  return dump;
}

// kg_query_new compiles the n bytes of the input buffer as a query of
// grammar lang; on failure 0, with kg_out[0] the error's byte offset and
// kg_out[1] its TSQueryError.
EXPORT(kg_query_new) TSQuery *kg_query_new(uint32_t lang, uint32_t n) {
  uint32_t off = 0;
  TSQueryError e = TSQueryErrorNone;
  TSQuery *q = ts_query_new(language(lang), input, n, &off, &e);
  kg_out[0] = off;
  kg_out[1] = (uint32_t)e;
  return q;
}

EXPORT(kg_query_delete) void kg_query_delete(TSQuery *q) { ts_query_delete(q); }
EXPORT(kg_query_pattern_count) uint32_t kg_query_pattern_count(TSQuery *q) { return ts_query_pattern_count(q); }
EXPORT(kg_query_capture_count) uint32_t kg_query_capture_count(TSQuery *q) { return ts_query_capture_count(q); }
EXPORT(kg_query_string_count) uint32_t kg_query_string_count(TSQuery *q) { return ts_query_string_count(q); }

EXPORT(kg_query_capture_name) const char *kg_query_capture_name(TSQuery *q, uint32_t id) {
  uint32_t n = 0;
  const char *s = ts_query_capture_name_for_id(q, id, &n);
  kg_out[0] = n;
  return s;
}

EXPORT(kg_query_string) const char *kg_query_string(TSQuery *q, uint32_t id) {
  uint32_t n = 0;
  const char *s = ts_query_string_value_for_id(q, id, &n);
  kg_out[0] = n;
  return s;
}

// kg_query_predicates returns a pattern's predicate steps (two words
// each: type, value id), their count in kg_out[0].
EXPORT(kg_query_predicates) const TSQueryPredicateStep *kg_query_predicates(TSQuery *q, uint32_t pattern) {
  uint32_t n = 0;
  const TSQueryPredicateStep *s = ts_query_predicates_for_pattern(q, pattern, &n);
  kg_out[0] = n;
  return s;
}

// kg_query_exec runs q over t and writes every match: pattern index,
// capture count, then per capture its index, symbol, start byte, end
// byte, start row and end row. It returns the words' address and sets
// kg_out[0] to their count (0 and a null address when out of memory).
EXPORT(kg_query_exec) uint32_t *kg_query_exec(TSQuery *q, TSTree *t) {
  dump_len = 0;
  kg_out[0] = 0;
  TSQueryCursor *c = ts_query_cursor_new();
  if (c == NULL) return NULL;
  TSQueryCursorOptions opts = {NULL, query_progress};
  ts_query_cursor_exec_with_options(c, q, ts_tree_root_node(t), &opts);
  TSQueryMatch m;
  int ok = 1;
  while (ts_query_cursor_next_match(c, &m)) {
    if (!grow(dump_len + 2 + 6 * (uint32_t)m.capture_count)) { ok = 0; break; }
    uint32_t *w = dump + dump_len;
    *w++ = m.pattern_index;
    *w++ = m.capture_count;
    for (uint16_t i = 0; i < m.capture_count; i++) {
      TSNode n = m.captures[i].node;
      *w++ = m.captures[i].index;
      *w++ = ts_node_symbol(n);
      *w++ = ts_node_start_byte(n);
      *w++ = ts_node_end_byte(n);
      *w++ = ts_node_start_point(n).row;
      *w++ = ts_node_end_point(n).row;
    }
    dump_len = (uint32_t)(w - dump);
  }
  if (kg_host_stop()) ok = 0;
  ts_query_cursor_delete(c);
  if (!ok) return NULL;
  kg_out[0] = dump_len;
  return dump;
}
