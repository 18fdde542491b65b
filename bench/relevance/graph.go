package relevance

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/engine"
)

// graph is the baselines' in-memory copy of one project's triplets, built
// from what the store exports (so names, relationships and edge order are
// the ones kgctx holds). Nodes are identified by engine.NormalizeName of
// their name and edges by (source, relationship, target), as in the
// engine; edges keep their first-seen order, which is every baseline's
// tie-break.
type graph struct {
	names  []string // as stored
	descs  []string
	keys   []string // NormalizeName(names[i])
	byKey  map[string]uint32
	rels   []string // normalised relationship names
	relIdx map[string]uint32
	edges  []gedge
	adj    [][]uint32 // incident edge ids per node (out and in), in edge order
	// nameTerms and relTerms are the tokenised names, for matching.
	nameTerms [][]string
	relTerms  [][]string
	// lineRunes[e] is the code points edge e's line adds to a block,
	// newline included; minLine is the smallest of them.
	lineRunes []int
	minLine   int
	// nodes by the token sequence (joined by a space) of their name, and of
	// their short name (shortName), for finding the names a query
	// mentions; maxNameTerms bounds the n-grams looked up.
	byTerms      map[string][]uint32
	maxNameTerms int
}

type gedge struct{ src, dst, rel uint32 }

// newGraph builds the graph of ts (descriptions from the first triplet
// that carries one).
func newGraph(ts []engine.TripletInput) *graph {
	g := &graph{byKey: map[string]uint32{}, relIdx: map[string]uint32{}, byTerms: map[string][]uint32{}}
	seen := map[gedge]bool{}
	node := func(name, desc string) uint32 {
		k := engine.NormalizeName(name)
		if n, ok := g.byKey[k]; ok {
			if g.descs[n] == "" {
				g.descs[n] = desc
			}
			return n
		}
		n := uint32(len(g.names))
		g.byKey[k] = n
		g.names = append(g.names, name)
		g.descs = append(g.descs, desc)
		g.keys = append(g.keys, k)
		g.adj = append(g.adj, nil)
		terms := tokenize(nil, name)
		g.nameTerms = append(g.nameTerms, terms)
		g.addTerms(terms, n)
		if a := shortName(name); a != "" {
			g.addTerms(tokenize(nil, a), n)
		}
		return n
	}
	for i := range ts {
		t := &ts[i]
		s, d := node(t.Source, t.SourceDescription), node(t.Target, t.TargetDescription)
		rn := engine.NormalizeRelationship(t.Relationship)
		r, ok := g.relIdx[rn]
		if !ok {
			r = uint32(len(g.rels))
			g.relIdx[rn] = r
			g.rels = append(g.rels, rn)
			g.relTerms = append(g.relTerms, tokenize(nil, rn))
		}
		e := gedge{s, d, r}
		if seen[e] {
			continue
		}
		seen[e] = true
		id := uint32(len(g.edges))
		g.edges = append(g.edges, e)
		g.adj[s] = append(g.adj[s], id)
		if d != s {
			g.adj[d] = append(g.adj[d], id)
		}
	}
	nameLen := make([]int, len(g.names))
	for i, n := range g.names {
		nameLen[i] = compose.SanitizedLen(n, compose.MaxNameRunes)
	}
	relLen := make([]int, len(g.rels))
	for i, r := range g.rels {
		relLen[i] = compose.SanitizedLen(r, compose.MaxNameRunes)
	}
	g.lineRunes = make([]int, len(g.edges))
	g.minLine = 1 << 30
	for i, e := range g.edges {
		// "\n- " + src + " → " + rel + " → " + dst, as compose renders it.
		g.lineRunes[i] = 9 + nameLen[e.src] + relLen[e.rel] + nameLen[e.dst]
		g.minLine = min(g.minLine, g.lineRunes[i])
	}
	return g
}

// addTerms makes node n findable by the token sequence terms.
func (g *graph) addTerms(terms []string, n uint32) {
	if len(terms) == 0 {
		return
	}
	j := strings.Join(terms, " ")
	if l := g.byTerms[j]; len(l) > 0 && l[len(l)-1] == n {
		return
	}
	g.byTerms[j] = append(g.byTerms[j], n)
	g.maxNameTerms = max(g.maxNameTerms, len(terms))
}

// shortName is the unqualified name of a qualified identifier: for a name
// without spaces holding dots ("mux.Router.ServeHTTP"), the part after the
// last dot when it has at least 3 characters (so "profiler.go" has none).
// Queries name symbols that way, as Aider's repo map matches identifiers.
func shortName(name string) string {
	if strings.ContainsFunc(name, unicode.IsSpace) {
		return ""
	}
	i := strings.LastIndexByte(name, '.')
	if i < 0 || utf8.RuneCountInString(name[i+1:]) < 3 {
		return ""
	}
	return name[i+1:]
}

// other is e's endpoint that is not n.
func (g *graph) other(e, n uint32) uint32 {
	if g.edges[e].src == n {
		return g.edges[e].dst
	}
	return g.edges[e].src
}

// line renders edge e as kgctx does, with the names as rendered.
func (g *graph) line(e uint32) line {
	ed := g.edges[e]
	return line{Src: compose.Sanitize(g.names[ed.src], compose.MaxNameRunes), Rel: compose.Sanitize(g.rels[ed.rel], compose.MaxNameRunes),
		Dst: compose.Sanitize(g.names[ed.dst], compose.MaxNameRunes)}
}

// nameMatch is a node name found in a query: the nodes whose name has the
// token sequence query[at:at+terms].
type nameMatch struct {
	nodes     []uint32
	at, terms int
}

// mentions lists every node name occurring in the query terms q at term
// boundaries, longest first, then by position.
func (g *graph) mentions(q []string) []nameMatch {
	var out []nameMatch
	for i := range q {
		for n := 1; n <= g.maxNameTerms && i+n <= len(q); n++ {
			if nodes, ok := g.byTerms[strings.Join(q[i:i+n], " ")]; ok {
				out = append(out, nameMatch{nodes: nodes, at: i, terms: n})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b nameMatch) int {
		if a.terms != b.terms {
			return b.terms - a.terms
		}
		return a.at - b.at
	})
	return out
}

// scored is a candidate (an edge, or an observation) and its score; higher
// is better, ties go to the lower id.
type scored struct {
	id    uint32
	score float64
}

func better(a, b scored) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.id < b.id
}

// cmpScored orders candidates best first (for slices.SortFunc).
func cmpScored(a, b scored) int {
	switch {
	case better(a, b):
		return -1
	case better(b, a):
		return 1
	}
	return 0
}

// candHeap is a binary max-heap of candidates under better.
type candHeap []scored

func (h candHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && better(h[r], h[l]) {
			m = r
		}
		if !better(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

func (h candHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *candHeap) pop() scored {
	old := *h
	top := old[0]
	last := len(old) - 1
	old[0] = old[last]
	*h = old[:last]
	if last > 0 {
		(*h).down(0)
	}
	return top
}

// renderGraph fills a graph block of budget tokens with cands in score
// order, exactly as kgctx fills its own: the header counts, a triplet
// whose line does not fit is skipped and the loop goes on, and it stops
// once not even the shortest line of the graph would fit. cands is
// reordered. Only the order of cands matters, so a baseline that produces
// a list gives descending scores.
func renderGraph(g *graph, cands []scored, budget int) blockOut {
	limit := budget * 4
	used := utf8.RuneCountInString(compose.GraphHeader)
	var out blockOut
	var b strings.Builder
	h := candHeap(cands)
	h.init()
	for len(h) > 0 && used+g.minLine <= limit {
		c := h.pop()
		n := g.lineRunes[c.id]
		if used+n > limit {
			// What is longer than the room left can never fit: drop it all
			// now rather than popping it one by one.
			room := limit - used
			keep := h[:0]
			for _, x := range h {
				if g.lineRunes[x.id] <= room {
					keep = append(keep, x)
				}
			}
			h = keep
			h.init()
			continue
		}
		if b.Len() == 0 {
			b.WriteString(compose.GraphHeader)
		}
		l := g.line(c.id)
		b.WriteString("\n- ")
		b.WriteString(l.Src)
		b.WriteString(" → ")
		b.WriteString(l.Rel)
		b.WriteString(" → ")
		b.WriteString(l.Dst)
		used += n
		out.Lines = append(out.Lines, l)
	}
	if len(out.Lines) > 0 {
		out.Text = b.String()
		out.Tokens = compose.Tokens(out.Text)
	}
	return out
}
