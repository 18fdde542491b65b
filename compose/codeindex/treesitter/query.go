package treesitter

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Query is a compiled tree-sitter query of one language, with its
// predicates parsed for the host to apply. Immutable; safe for
// concurrent use. Each instance compiles it again on first use.
type Query struct {
	id       int
	lang     Language
	src      string
	captures []string
	preds    [][]predicate // by pattern
}

// Captures are the query's capture names, by index.
func (q *Query) Captures() []string { return q.captures }

// predicate is one text predicate of a pattern.
type predicate struct {
	op   string // "eq", "match", "any-of"
	not  bool
	any  bool // any node of a quantified capture, not all
	cap  int  // the first argument, a capture
	cap2 int  // eq's second argument when a capture, else -1
	strs []string
	re   *regexp.Regexp
}

// Capture is one node a match captured.
type Capture struct {
	Name               string // the capture's name, without '@'
	Index              int
	Kind               string
	StartByte, EndByte int
	StartLine, EndLine int // from 1
	text               []byte
}

// Text is the captured node's source text.
func (c Capture) Text() string { return string(c.text) }

// Match is one match of a query's pattern.
type Match struct {
	Pattern  int
	Captures []Capture
}

// NewQuery compiles src, a query over lang's grammar. Errors wrap
// ErrQuery and say where the query is wrong.
func (r *Runtime) NewQuery(ctx context.Context, lang Language, src string) (*Query, error) {
	g, ok := grammarOf[lang]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownLanguage, lang)
	}
	m, err := r.module(ctx, g.module)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.queries++
	q := &Query{id: r.queries, lang: lang, src: src}
	r.mu.Unlock()
	in, err := r.acquire(ctx, m)
	if err != nil {
		return nil, err
	}
	qp, err := in.compile(ctx, q, g.index)
	if err == nil {
		err = q.describe(ctx, in, qp)
	}
	r.release(m, in, err)
	if err != nil {
		return nil, err
	}
	return q, nil
}

var queryErrors = []string{"", "syntax error", "unknown node type", "unknown field", "unknown capture", "impossible pattern", "language error"}

// compile compiles q in this instance (once; kept by id).
func (in *instance) compile(ctx context.Context, q *Query, lang uint32) (uint32, error) {
	if p, ok := in.queries[q.id]; ok {
		return p, nil
	}
	if err := in.write(ctx, []byte(q.src)); err != nil {
		return 0, err
	}
	p, err := in.call(ctx, "kg_query_new", uint64(lang), uint64(len(q.src)))
	if err != nil {
		return 0, err
	}
	if p == 0 {
		off, kind := int(in.out(0)), int(in.out(1))
		why := "error"
		if kind < len(queryErrors) {
			why = queryErrors[kind]
		}
		line := 1 + strings.Count(q.src[:min(off, len(q.src))], "\n")
		return 0, fmt.Errorf("%w: %s at byte %d (line %d)", ErrQuery, why, off, line)
	}
	in.queries[q.id] = uint32(p)
	return uint32(p), nil
}

// describe reads q's capture names and predicates from its first
// compilation.
func (q *Query) describe(ctx context.Context, in *instance, qp uint32) error {
	nc, err := in.call(ctx, "kg_query_capture_count", uint64(qp))
	if err != nil {
		return err
	}
	for i := range uint32(nc) {
		s, err := in.cstring(ctx, "kg_query_capture_name", uint64(qp), uint64(i))
		if err != nil {
			return err
		}
		q.captures = append(q.captures, s)
	}
	ns, err := in.call(ctx, "kg_query_string_count", uint64(qp))
	if err != nil {
		return err
	}
	strs := make([]string, ns)
	for i := range uint32(ns) {
		if strs[i], err = in.cstring(ctx, "kg_query_string", uint64(qp), uint64(i)); err != nil {
			return err
		}
	}
	np, err := in.call(ctx, "kg_query_pattern_count", uint64(qp))
	if err != nil {
		return err
	}
	q.preds = make([][]predicate, np)
	for pi := range uint32(np) {
		p, err := in.call(ctx, "kg_query_predicates", uint64(qp), uint64(pi))
		if err != nil {
			return err
		}
		n := in.out(0)
		if n == 0 {
			continue
		}
		steps, ok := in.words(uint32(p), 2*n)
		if !ok {
			return fmt.Errorf("%w: predicates outside the module's memory", ErrQuery)
		}
		// Steps: (type, value): 0 done, 1 capture, 2 string.
		var cur [][2]uint32
		for i := 0; i+1 < len(steps); i += 2 {
			typ, val := steps[i], steps[i+1]
			if typ != 0 {
				cur = append(cur, [2]uint32{typ, val})
				continue
			}
			pr, keep, err := parsePredicate(cur, strs, q.captures)
			if err != nil {
				return fmt.Errorf("pattern %d: %w", pi, err)
			}
			if keep {
				q.preds[pi] = append(q.preds[pi], pr)
			}
			cur = nil
		}
	}
	return nil
}

// parsePredicate reads one predicate's steps; keep is false for the
// directives and predicates that do not filter.
func parsePredicate(steps [][2]uint32, strs, caps []string) (predicate, bool, error) {
	if len(steps) == 0 || steps[0][0] != 2 || int(steps[0][1]) >= len(strs) {
		return predicate{}, false, fmt.Errorf("%w: a predicate must start with its name", ErrQuery)
	}
	name := strs[steps[0][1]]
	args := steps[1:]
	pr := predicate{cap2: -1}
	op := strings.TrimSuffix(name, "?")
	if op == name {
		return pr, false, nil // a directive (#set!, #strip!, ...)
	}
	if o, ok := strings.CutPrefix(op, "not-"); ok {
		pr.not, op = true, o
	}
	if o, ok := strings.CutPrefix(op, "any-"); ok {
		pr.any, op = true, o
		if o, ok := strings.CutPrefix(op, "not-"); ok {
			pr.not, op = true, o
		}
	}
	pr.op = op
	if op != "eq" && op != "match" && op != "of" {
		return pr, false, nil // #is?, #is-not? and others: properties, not filters
	}
	if op == "of" {
		pr.op = "any-of"
		pr.any = false
	}
	if len(args) < 2 || args[0][0] != 1 || int(args[0][1]) >= len(caps) {
		return pr, false, fmt.Errorf("%w: #%s needs a capture and an argument", ErrQuery, name)
	}
	pr.cap = int(args[0][1])
	switch pr.op {
	case "eq":
		if len(args) != 2 {
			return pr, false, fmt.Errorf("%w: #%s takes two arguments", ErrQuery, name)
		}
		if args[1][0] == 1 {
			pr.cap2 = int(args[1][1])
		} else {
			pr.strs = []string{strs[args[1][1]]}
		}
	case "match":
		if len(args) != 2 || args[1][0] != 2 {
			return pr, false, fmt.Errorf("%w: #%s takes a capture and a pattern", ErrQuery, name)
		}
		re, err := regexp.Compile(strs[args[1][1]])
		if err != nil {
			return pr, false, fmt.Errorf("%w: #%s: %v", ErrQuery, name, err)
		}
		pr.re = re
	case "any-of":
		for _, a := range args[1:] {
			if a[0] != 2 {
				return pr, false, fmt.Errorf("%w: #%s takes strings after its capture", ErrQuery, name)
			}
			pr.strs = append(pr.strs, strs[a[1]])
		}
	}
	return pr, true, nil
}

// exec runs q over the tree tp and keeps the matches its predicates pass.
func (in *instance) exec(ctx context.Context, q *Query, tp uint32, tab *table, src []byte) ([]Match, error) {
	qp, err := in.compile(ctx, q, tab.index)
	if err != nil {
		return nil, err
	}
	p, err := in.call(ctx, "kg_query_exec", uint64(qp), uint64(tp))
	if err != nil {
		return nil, err
	}
	n := in.out(0)
	if p == 0 {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: no memory for the query's matches", ErrParse)
	}
	w, ok := in.words(uint32(p), n)
	if !ok {
		return nil, fmt.Errorf("%w: matches outside the module's memory", ErrParse)
	}
	var out []Match
	for i := 0; i+2 <= len(w); {
		m := Match{Pattern: int(w[i])}
		nc := int(w[i+1])
		i += 2
		if i+6*nc > len(w) {
			break
		}
		for range nc {
			c := Capture{Index: int(w[i]), StartByte: int(w[i+2]), EndByte: int(w[i+3]), StartLine: int(w[i+4]) + 1, EndLine: int(w[i+5]) + 1}
			if c.Index < len(q.captures) {
				c.Name = q.captures[c.Index]
			}
			if s := int(w[i+1]); s < len(tab.symbols) {
				c.Kind = tab.symbols[s]
			}
			if c.StartByte <= c.EndByte && c.EndByte <= len(src) {
				c.text = src[c.StartByte:c.EndByte]
			}
			m.Captures = append(m.Captures, c)
			i += 6
		}
		if m.Pattern < len(q.preds) && q.passes(m) {
			out = append(out, m)
		}
	}
	return out, nil
}

// passes applies the match's pattern's predicates.
func (q *Query) passes(m Match) bool {
	for _, pr := range q.preds[m.Pattern] {
		var nodes, others [][]byte
		for _, c := range m.Captures {
			if c.Index == pr.cap {
				nodes = append(nodes, c.text)
			}
			if c.Index == pr.cap2 {
				others = append(others, c.text)
			}
		}
		if len(nodes) == 0 {
			continue // an optional capture that did not match: nothing to test
		}
		test := func(text []byte, k int) bool {
			var ok bool
			switch pr.op {
			case "eq":
				if pr.cap2 >= 0 {
					ok = k < len(others) && bytes.Equal(text, others[k])
				} else {
					ok = string(text) == pr.strs[0]
				}
			case "match":
				ok = pr.re.Match(text)
			case "any-of":
				ok = slices.Contains(pr.strs, string(text))
			}
			return ok != pr.not
		}
		pass := !pr.any
		for k, t := range nodes {
			r := test(t, k)
			if pr.any && r {
				pass = true
				break
			}
			if !pr.any && !r {
				pass = false
				break
			}
		}
		if !pass {
			return false
		}
	}
	return true
}
