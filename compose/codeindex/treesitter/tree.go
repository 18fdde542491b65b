package treesitter

import (
	"context"
	"errors"
	"fmt"
	"iter"
)

// Flags of a dumped node (glue.c).
const (
	flagNamed   = 1
	flagMissing = 2
	flagError   = 4
	flagExtra   = 8
)

// wordsPerNode is the dump's record size (glue.c's kg_dump).
const wordsPerNode = 7

// Tree is a parsed source: its nodes in preorder, read from one dump.
// Immutable; safe for concurrent reads.
type Tree struct {
	lang Language
	tab  *table
	src  []byte
	w    []uint32 // wordsPerNode per node
	// first child, next and previous sibling: -1 for none.
	first, next, prev []int32
	errors            int
}

// Language is the grammar that parsed the tree.
func (t *Tree) Language() Language { return t.lang }

// Source is the parsed source (the tree's copy; do not modify it).
func (t *Tree) Source() []byte { return t.src }

// Len is the number of nodes in the tree.
func (t *Tree) Len() int { return len(t.first) }

// Errors counts the ERROR and missing nodes: the places where the grammar
// could not follow the source. Zero for a source that parsed clean.
func (t *Tree) Errors() int { return t.errors }

// Root is the tree's root node (a null Node for an empty tree).
func (t *Tree) Root() Node {
	if len(t.first) == 0 {
		return Node{}
	}
	return Node{t: t, i: 0}
}

// Node is a node of a Tree, a small value; the zero Node is null.
type Node struct {
	t *Tree
	i int32
}

// IsNull says whether n is no node (a missing child or field).
func (n Node) IsNull() bool { return n.t == nil }

func (n Node) word(k int) uint32 { return n.t.w[int(n.i)*wordsPerNode+k] }

func (n Node) at(i int32) Node {
	if i < 0 {
		return Node{}
	}
	return Node{t: n.t, i: i}
}

// Kind is the node's grammar symbol ("function_definition", "identifier",
// "def").
func (n Node) Kind() string {
	if n.t == nil {
		return ""
	}
	s := n.word(0) & 0xffff
	if int(s) < len(n.t.tab.symbols) {
		return n.t.tab.symbols[s]
	}
	return ""
}

// Field is the name of the field the node fills in its parent ("name",
// "body"), or "".
func (n Node) Field() string {
	if n.t == nil {
		return ""
	}
	f := n.word(0) >> 16
	if int(f) < len(n.t.tab.fields) {
		return n.t.tab.fields[f]
	}
	return ""
}

// IsNamed says whether the node is named in the grammar (not a keyword).
func (n Node) IsNamed() bool { return n.t != nil && n.word(1)&flagNamed != 0 }

// IsError says whether the node is an ERROR node.
func (n Node) IsError() bool { return n.t != nil && n.word(1)&flagError != 0 }

// IsMissing says whether the parser inserted the node to recover.
func (n Node) IsMissing() bool { return n.t != nil && n.word(1)&flagMissing != 0 }

// IsExtra says whether the node is an extra (a comment, mostly).
func (n Node) IsExtra() bool { return n.t != nil && n.word(1)&flagExtra != 0 }

// StartByte and EndByte delimit the node's text in the source.
func (n Node) StartByte() int { return int(n.word(2)) }

// EndByte: see StartByte.
func (n Node) EndByte() int { return int(n.word(3)) }

// StartLine is the node's first line, from 1.
func (n Node) StartLine() int { return int(n.word(4)) + 1 }

// EndLine is the node's last line, from 1 (the line its last byte is on).
func (n Node) EndLine() int {
	l := int(n.word(5)) + 1
	// A node ending with a newline ends on the next row at column 0:
	// its last byte is on the line before.
	if e := n.EndByte(); e > n.StartByte() && e <= len(n.t.src) && n.t.src[e-1] == '\n' && l > n.StartLine() {
		l--
	}
	return l
}

// Text is the node's source text.
func (n Node) Text() string {
	if n.t == nil {
		return ""
	}
	s, e := n.StartByte(), n.EndByte()
	if s > e || e > len(n.t.src) {
		return ""
	}
	return string(n.t.src[s:e])
}

// Parent is the node's parent (null for the root).
func (n Node) Parent() Node {
	if n.t == nil {
		return Node{}
	}
	p := n.word(6)
	if p == 0xffffffff {
		return Node{}
	}
	return n.at(int32(p))
}

// FirstChild is the node's first child in the dump (null for none).
func (n Node) FirstChild() Node {
	if n.t == nil {
		return Node{}
	}
	return n.at(n.t.first[n.i])
}

// NextSibling is the node's next sibling in the dump (null for none).
func (n Node) NextSibling() Node {
	if n.t == nil {
		return Node{}
	}
	return n.at(n.t.next[n.i])
}

// PrevSibling is the node's previous sibling in the dump (null for none).
func (n Node) PrevSibling() Node {
	if n.t == nil {
		return Node{}
	}
	return n.at(n.t.prev[n.i])
}

// Children iterates over the node's children in the dump.
func (n Node) Children() iter.Seq[Node] {
	return func(yield func(Node) bool) {
		for c := n.FirstChild(); !c.IsNull(); c = c.NextSibling() {
			if !yield(c) {
				return
			}
		}
	}
}

// ChildByField is the first child filling the field name (null for none).
func (n Node) ChildByField(name string) Node {
	if n.t == nil {
		return Node{}
	}
	id, ok := n.t.tab.fieldID[name]
	if !ok {
		return Node{}
	}
	for c := n.FirstChild(); !c.IsNull(); c = c.NextSibling() {
		if uint16(c.word(0)>>16) == id {
			return c
		}
	}
	return Node{}
}

// ChildOfKind is the first child of that kind (null for none).
func (n Node) ChildOfKind(kind string) Node {
	for c := n.FirstChild(); !c.IsNull(); c = c.NextSibling() {
		if c.Kind() == kind {
			return c
		}
	}
	return Node{}
}

// Walk visits the node's subtree in preorder, the node first; a false
// from visit skips that node's children. It keeps no stack of its own
// (a hostile source may nest deeply).
func (n Node) Walk(visit func(Node) (descend bool)) {
	if n.t == nil {
		return
	}
	t, root, cur := n.t, n.i, n.i
	for {
		if visit(Node{t: t, i: cur}) && t.first[cur] >= 0 {
			cur = t.first[cur]
			continue
		}
		for {
			if cur == root {
				return
			}
			if t.next[cur] >= 0 {
				cur = t.next[cur]
				break
			}
			cur = int32(t.w[int(cur)*wordsPerNode+6])
		}
	}
}

// Parse parses src as lang. A source with syntax errors gives a tree all
// the same (see Tree.Errors); an error means no tree: ErrTooLarge,
// ErrUnknownLanguage, ErrParse (out of the memory or time limit), or
// ctx's.
func (r *Runtime) Parse(ctx context.Context, lang Language, src []byte) (*Tree, error) {
	t, _, err := r.run(ctx, lang, src, nil)
	return t, err
}

// Match parses src as q's language and runs q over it: the matches that
// pass q's predicates, in the order tree-sitter finds them.
func (r *Runtime) Match(ctx context.Context, q *Query, src []byte) ([]Match, error) {
	_, ms, err := r.run(ctx, q.lang, src, q)
	return ms, err
}

// run parses src in an instance of lang's module and dumps the tree (q
// nil) or runs q over it.
func (r *Runtime) run(ctx context.Context, lang Language, src []byte, q *Query) (t *Tree, ms []Match, err error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	g, ok := grammarOf[lang]
	if !ok {
		return nil, nil, fmt.Errorf("%w: %q", ErrUnknownLanguage, lang)
	}
	if len(src) > MaxSourceSize {
		return nil, nil, fmt.Errorf("%w: %d bytes, over %d", ErrTooLarge, len(src), MaxSourceSize)
	}
	m, err := r.module(ctx, g.module)
	if err != nil {
		return nil, nil, err
	}
	tab := m.langs[g.index]
	in, err := r.acquire(ctx, m)
	if err != nil {
		return nil, nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, r.o.ParseTimeout)
	defer cancel()
	defer func() {
		r.release(m, in, err)
		if err != nil && ctx.Err() != nil {
			err = ctx.Err() // stopped by the caller, not by the source
		} else if err != nil && cctx.Err() != nil {
			err = fmt.Errorf("%w: over the %s parse timeout", ErrParse, r.o.ParseTimeout)
		}
	}()
	if err = in.write(cctx, src); err != nil {
		return nil, nil, err
	}
	tp, err := in.call(cctx, "kg_parse", uint64(g.index), uint64(len(src)))
	if err != nil {
		return nil, nil, err
	}
	if tp == 0 {
		if cctx.Err() != nil {
			return nil, nil, cctx.Err() // said as the caller's or a timeout below
		}
		return nil, nil, fmt.Errorf("%w: the parser gave no tree (out of memory?)", ErrParse)
	}
	defer func() {
		if _, derr := in.call(cctx, "kg_tree_delete", tp); derr != nil && err == nil {
			err = derr
		}
	}()
	if q != nil {
		ms, err = in.exec(cctx, q, uint32(tp), tab, src)
		return nil, ms, err
	}
	p, err := in.call(cctx, "kg_dump", tp)
	if err != nil {
		return nil, nil, err
	}
	n := in.out(0)
	if p == 0 {
		return nil, nil, fmt.Errorf("%w: no memory for the tree's dump", ErrParse)
	}
	w, ok := in.words(uint32(p), n*wordsPerNode)
	if !ok {
		return nil, nil, errors.New("treesitter: the dump lies outside the module's memory")
	}
	t = &Tree{lang: lang, tab: tab, src: append([]byte(nil), src...), w: w}
	t.link()
	return t, nil, nil
}

// link fills first and next from the parents, and counts errors.
func (t *Tree) link() {
	n := len(t.w) / wordsPerNode
	t.first = make([]int32, n)
	t.next = make([]int32, n)
	t.prev = make([]int32, n)
	last := make([]int32, n)
	for i := range n {
		t.first[i], t.next[i], t.prev[i], last[i] = -1, -1, -1, -1
	}
	for i := range n {
		if f := t.w[i*wordsPerNode+1]; f&(flagError|flagMissing) != 0 {
			t.errors++
		}
		p := t.w[i*wordsPerNode+6]
		if i == 0 || int(p) >= i {
			continue // the root, or a parent after its child: not a tree
		}
		if last[p] < 0 {
			t.first[p] = int32(i)
		} else {
			t.next[last[p]] = int32(i)
			t.prev[i] = last[p]
		}
		last[p] = int32(i)
	}
}
