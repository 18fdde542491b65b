package relevance

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/kgctx/kgctx/compose"
)

// The baselines rank the triplets (or observations) of one project from an
// in-memory copy and render them with renderGraph / renderObservations:
// the same line format, budget and skip-and-continue as kgctx. Each is
// deterministic: ties go to the lower edge (or observation) number, i.e.
// import order.

// Baseline names, as rows show them.
const (
	BaseBM25Triplets = "bm25 triplets"
	BaseBM25Obs      = "bm25 observations"
	BaseTopicRel1    = "topic+rel 1-hop"
	BaseTopicRel2    = "topic+rel 2-hop"
	BasePPR          = "ppr"
	BaseGraphRAG     = "graphrag bfs"
)

// graphBaselines lists the graph baselines in row order.
var graphBaselines = []string{BaseBM25Triplets, BaseTopicRel1, BaseTopicRel2, BasePPR, BaseGraphRAG}

// baselines holds one graph's indexes, built once; rank methods reuse
// scratch, so one baselines value serves one goroutine.
type baselines struct {
	g *graph
	// triplet documents: source, relationship words and target of each edge
	trip *bm25
	// node documents: name and description (graphrag's entity search)
	nodes *bm25
	// scratch
	q        []string
	cands    []scored
	pr, next []float64
	deg      []float64
	mark     []uint32 // per node: the query generation that last marked it
	gen      uint32
}

func newBaselines(g *graph) *baselines {
	b := &baselines{g: g, trip: newBM25(), nodes: newBM25(), mark: make([]uint32, len(g.names))}
	var terms []string
	for _, e := range g.edges {
		terms = append(terms[:0], g.nameTerms[e.src]...)
		terms = append(terms, g.relTerms[e.rel]...)
		terms = append(terms, g.nameTerms[e.dst]...)
		b.trip.add(terms)
	}
	for i := range g.names {
		terms = append(terms[:0], g.nameTerms[i]...)
		terms = tokenize(terms, g.descs[i])
		b.nodes.add(terms)
	}
	b.deg = make([]float64, len(g.names))
	for i, a := range g.adj {
		b.deg[i] = float64(len(a))
	}
	return b
}

// rank returns the candidates of baseline name for query, best first by
// score (renderGraph orders them). The slice is scratch, valid until the
// next call.
func (b *baselines) rank(name, query string) []scored {
	b.q = tokenize(b.q[:0], query)
	b.cands = b.cands[:0]
	switch name {
	case BaseBM25Triplets:
		b.trip.search(b.q, func(d uint32, s float64) { b.cands = append(b.cands, scored{d, s}) })
	case BaseTopicRel1:
		b.topicRel(1)
	case BaseTopicRel2:
		b.topicRel(2)
	case BasePPR:
		b.ppr()
	case BaseGraphRAG:
		b.graphRAG()
	default:
		panic("relevance: unknown baseline " + name)
	}
	return b.cands
}

// list appends edges in the given order as descending scores.
func (b *baselines) list(edges []uint32) {
	for i, e := range edges {
		b.cands = append(b.cands, scored{e, float64(len(edges) - i)})
	}
}

// relOverlap counts the distinct terms of e's relationship that the query
// holds.
func (b *baselines) relOverlap(e uint32) int {
	n := 0
	rt := b.g.relTerms[b.g.edges[e].rel]
	for i, t := range rt {
		if slices.Contains(rt[:i], t) {
			continue
		}
		if slices.Contains(b.q, t) {
			n++
		}
	}
	return n
}

// topicRel: the topic entity is the node with the longest name occurring
// in the query (all nodes sharing that token sequence, in node order);
// its edges come first, ordered by how many relationship words the query
// holds, ties in edge order; with hops 2, the edges of the hop-1 far ends
// follow, ordered the same way (ties by the hop-1 order, then edge order).
func (b *baselines) topicRel(hops int) {
	ms := b.g.mentions(b.q)
	if len(ms) == 0 {
		return
	}
	b.gen++
	type item struct {
		e       uint32
		overlap int
		seq     int
	}
	var hop1 []item
	listed := map[uint32]bool{}
	for _, n := range ms[0].nodes {
		b.mark[n] = b.gen
		for _, e := range b.g.adj[n] {
			if !listed[e] {
				listed[e] = true
				hop1 = append(hop1, item{e, b.relOverlap(e), len(hop1)})
			}
		}
	}
	order := func(a, c item) int {
		if a.overlap != c.overlap {
			return c.overlap - a.overlap
		}
		return a.seq - c.seq
	}
	slices.SortStableFunc(hop1, order)
	edges := make([]uint32, 0, len(hop1))
	for _, it := range hop1 {
		edges = append(edges, it.e)
	}
	if hops == 2 {
		var hop2 []item
		for _, it := range hop1 {
			// the far end of a hop-1 edge (both ends for a self-loop)
			ed := b.g.edges[it.e]
			for _, far := range []uint32{ed.src, ed.dst} {
				if b.mark[far] == b.gen {
					continue
				}
				b.mark[far] = b.gen
				for _, e := range b.g.adj[far] {
					if !listed[e] {
						listed[e] = true
						hop2 = append(hop2, item{e, b.relOverlap(e), len(hop2)})
					}
				}
			}
		}
		slices.SortStableFunc(hop2, order)
		for _, it := range hop2 {
			edges = append(edges, it.e)
		}
	}
	b.list(edges)
}

// PPR parameters: restart probability and power iterations.
const (
	pprRestart    = 0.15
	pprIterations = 20
)

// ppr is personalised PageRank on the undirected graph, restarting
// uniformly at the nodes whose names occur in the query (every match, as
// Aider's repo map personalises on the identifiers a chat mentions);
// a triplet scores the sum of its endpoints' ranks.
func (b *baselines) ppr() {
	g := b.g
	b.gen++
	var seeds []uint32
	for _, m := range g.mentions(b.q) {
		for _, n := range m.nodes {
			if b.mark[n] != b.gen {
				b.mark[n] = b.gen
				seeds = append(seeds, n)
			}
		}
	}
	if len(seeds) == 0 {
		return
	}
	if len(b.pr) != len(g.names) {
		b.pr, b.next = make([]float64, len(g.names)), make([]float64, len(g.names))
	}
	clear(b.pr)
	restart := 1 / float64(len(seeds))
	for _, s := range seeds {
		b.pr[s] = restart
	}
	for range pprIterations {
		// What each node sends along each of its edges: its rank, less the
		// restart share, split by its degree. Every edge carries it both
		// ways (the graph is taken as undirected).
		for n, p := range b.pr {
			b.next[n] = 0
			if p != 0 {
				b.pr[n] = (1 - pprRestart) * p / b.deg[n]
			}
		}
		for _, s := range seeds {
			b.next[s] = pprRestart * restart
		}
		for _, e := range g.edges {
			b.next[e.dst] += b.pr[e.src]
			b.next[e.src] += b.pr[e.dst]
		}
		b.pr, b.next = b.next, b.pr
	}
	for i, e := range g.edges {
		if s := b.pr[e.src] + b.pr[e.dst]; s > 0 {
			b.cands = append(b.cands, scored{uint32(i), s})
		}
	}
}

// graphRAGEntities is how many entities seed the Graph RAG baseline, and
// graphRAGHops how far its breadth-first walk goes.
const (
	graphRAGEntities = 10
	graphRAGHops     = 2
)

// graphRAG is Lango's Graph RAG as a baseline: the top 10 entities by BM25
// over their name and description, then a breadth-first walk of 1 and 2
// hops over every edge, triplets listed in the order the walk meets them
// (hop 1 of every entity, in rank order, before any hop 2).
func (b *baselines) graphRAG() {
	var top []scored
	b.nodes.search(b.q, func(d uint32, s float64) { top = append(top, scored{d, s}) })
	slices.SortFunc(top, cmpScored)
	top = top[:min(len(top), graphRAGEntities)]
	b.gen++
	frontier := make([]uint32, 0, len(top))
	for _, t := range top {
		b.mark[t.id] = b.gen
		frontier = append(frontier, t.id)
	}
	var edges []uint32
	listed := map[uint32]bool{}
	for range graphRAGHops {
		var next []uint32
		for _, n := range frontier {
			for _, e := range b.g.adj[n] {
				if !listed[e] {
					listed[e] = true
					edges = append(edges, e)
				}
				if far := b.g.other(e, n); b.mark[far] != b.gen {
					b.mark[far] = b.gen
					next = append(next, far)
				}
			}
		}
		frontier = next
	}
	b.list(edges)
}

// obsIndex is BM25 over observation texts (the LoCoMo baseline).
type obsIndex struct {
	ids      []string // observation ids, as the store gave them
	contents []string
	x        *bm25
	q        []string
}

func newObsIndex(ids, contents []string) *obsIndex {
	o := &obsIndex{ids: ids, contents: contents, x: newBM25()}
	var terms []string
	for _, c := range contents {
		terms = tokenize(terms[:0], c)
		o.x.add(terms)
	}
	return o
}

// rank scores the observations for query, best first.
func (o *obsIndex) rank(query string) []scored {
	o.q = tokenize(o.q[:0], query)
	var out []scored
	o.x.search(o.q, func(d uint32, s float64) { out = append(out, scored{d, s}) })
	slices.SortFunc(out, cmpScored)
	return out
}

// render fills an observations block of budget tokens, kgctx's line format
// (weight 0.50, every observation's stored weight here) and
// skip-and-continue; ranked must be in order.
func (o *obsIndex) render(ranked []scored, budget int) blockOut {
	limit := budget * 4
	used := utf8.RuneCountInString(compose.ObservationsHeader)
	var out blockOut
	var b strings.Builder
	for _, c := range ranked {
		line := compose.ObservationLine(o.ids[c.id], o.contents[c.id], 0.5)
		n := 1 + utf8.RuneCountInString(line)
		if used+n > limit {
			continue
		}
		if b.Len() == 0 {
			b.WriteString(compose.ObservationsHeader)
		}
		b.WriteByte('\n')
		b.WriteString(line)
		used += n
		out.ObsIDs = append(out.ObsIDs, o.ids[c.id])
	}
	if len(out.ObsIDs) > 0 {
		out.Text = b.String()
		out.Tokens = compose.Tokens(out.Text)
	}
	return out
}
