package compose

import (
	"math"
	"slices"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/policy"
	"github.com/kgctx/kgctx/traverse"
)

// entry is a walk candidate as a block renders it: its index in the
// walk's candidates (sc.walk, where the rest of it is read), its
// importance in the block (the walk's, then spread and novelty), the two
// keys that break importance ties (traverse.Less's hop and edge), its
// rank among its seed's candidates when the budget is spread among seeds
// (spread, for explain), the code points of its line once measured (len,
// 0 until then) and whether novelty lowered it already (stale). Small,
// so that the ranker's heap moves 24 bytes, not a whole candidate; and
// four fields at the top (the small ones a struct of their own), so that
// the compiler keeps an entry being swapped in registers: the spread's
// sort swaps tens of thousands a block, and with seven fields each swap
// went through memory (a sort 60 % slower).
type entry struct {
	imp  float64
	edge uint32
	idx  int32
	entryFlags
}

// entryFlags are an entry's small fields.
type entryFlags struct {
	hop         uint8
	stale       bool
	spread, len uint16
}

// entries makes the render entries of cands in dst[:0].
func entries(dst []entry, cands []traverse.Candidate) []entry {
	dst = slices.Grow(dst[:0], len(cands))
	for i := range cands {
		c := &cands[i]
		dst = append(dst, entry{imp: c.Importance, edge: c.Edge, idx: int32(i), entryFlags: entryFlags{hop: c.Hop}})
	}
	return dst
}

// relevanceOf is a candidate's query relevance, what the relevance floor
// compares: its seed's score times the share of the query its path
// explains (traverse's Match, from its floor for a path that adds nothing
// to the seed, to 1). The other factors of its importance (hops, hubs,
// weights, the code factors, the spread) order a block; they do not make
// a line more or less about the query.
func relevanceOf(c *traverse.Candidate) float64 { return float64(c.SeedScore) * float64(c.Match) }

// lessEntry is traverse.Less's order on entries: higher importance, then
// fewer hops, then lower edge id (traverse.Order written out, so that it
// inlines: the spread's sorts compare tens of thousands of entries a
// block).
func lessEntry(a, b *entry) bool {
	if a.imp != b.imp {
		return a.imp > b.imp
	}
	if a.hop != b.hop {
		return a.hop < b.hop
	}
	return a.edge < b.edge
}

// enumerated reports whether edge e is one of several of its relationship
// and direction at node n.
func enumerated(v *engine.View, n, e uint32) bool {
	for _, in := range v.Ranked(n) {
		if in.Edge == e {
			return in.Alike > 1
		}
	}
	return false
}

// novelty is the factor of a line whose two ends the block already shows.
const novelty = 0.5

// lineOverhead is the code points of a line besides its three names:
// "\n- " and two " → ".
const lineOverhead = 3 + 3 + 3

// TripletLine renders one triplet as the graph block renders it, "- src →
// rel → dst", untrusted names sanitised and a leading block marker of the
// source escaped: for tools that show triplets outside a block.
func TripletLine(src, rel, dst string) string {
	var ln lineBuf
	graphLine(&ln, src, rel, dst)
	return string(ln.b)
}

// graphLine renders one triplet line, "- src → rel → dst", into ln; src
// starts the list item's content, so a leading block marker of it is
// escaped.
func graphLine(ln *lineBuf, src, rel, dst string) (s, r, d part) {
	ln.reset()
	ln.lit("- ")
	s = ln.text(src, MaxNameRunes)
	ln.lit(" → ")
	r = ln.text(rel, MaxNameRunes)
	ln.lit(" → ")
	d = ln.text(dst, MaxNameRunes)
	return s, r, d
}

// render walks candidates best first and fills the block. It consumes
// sc.cands.
//
// While lines fit, candidates come off a heap in importance order. The first
// line that does not fit ends that phase: the room left can only shrink, so
// every candidate whose line is longer than the room now can never fit, and
// one linear pass keeps the others; those few are then sorted and tried in
// importance order. The result is the one a loop over every candidate in
// importance order would give (skip what does not fit, or is denied, or
// repeats a line already in the block; continue), without popping
// thousands of candidates off the heap.
//
// With a code map (sc.codeMap), a containment candidate whose target has a
// location becomes that node's map entry instead of a line (codemap.go); a
// map entry is measured by its least cost (its symbol line) before it is
// tried, which only falls as the map grows, so the same pass holds.
func (c *Composer) render(v *engine.View, id policy.Identity, sc *graphScratch, out *GraphBlock, limit int) {
	walk := sc.walk
	pr := c.PEP.NewRequest(id, policy.VerbRead)
	defer pr.Release()
	bb := &sc.blk
	bb.reset()
	cm := &sc.cmap
	cm.reset(v, sc.codeMap)
	const minLine = lineOverhead + 3 // the shortest line: one-character names
	minEntry := minLine
	if cm.on {
		minEntry = 3 // a map's shortest entry: a one-character path and its colon
	}
	if bb.sectionCost(GraphHeader)+minEntry > limit {
		return
	}
	bb.section(GraphHeader)
	used := func() int { return bb.runes + cm.runes }
	// lineLen is the code points a candidate's line adds, newline included,
	// from the cached name lengths (the source takes its escape); for a map
	// entry, its least cost.
	lineLen := func(cand *entry) int {
		if cand.len == 0 {
			cd := &walk[cand.idx]
			if cm.takes(v, cd) {
				cand.len = uint16(min(cm.minCost(v, cd), math.MaxUint16))
				return int(cand.len)
			}
			src, esc := c.nameLens.get(cd.Src, v.NodeName)
			rel, _ := c.relLens.get(cd.Rel, v.RelName)
			dst, _ := c.nameLens.get(cd.Dst, v.NodeName)
			cand.len = uint16(min(lineOverhead+src+esc+rel+dst, math.MaxUint16))
		}
		return int(cand.len)
	}
	// fits says whether a candidate's line fits room; names take at least
	// a code point each, so the relationship's cached length alone
	// rules most lines out near the end of the budget without touching
	// the names (each a cache miss at a million nodes).
	fits := func(cand *entry, room int) bool {
		if cand.len == 0 && !cm.on {
			cd := &walk[cand.idx]
			rel, _ := c.relLens.get(cd.Rel, v.RelName)
			if lineOverhead+rel+2 > room {
				return false
			}
			// Then the near end's name, which the block's other lines from
			// that node read too (cached), before the far end's.
			if cd.From == cd.Src || cd.From == cd.Dst {
				near, esc := c.nameLens.get(cd.From, v.NodeName)
				if cd.From != cd.Src {
					esc = 0 // only the source's name may take a backslash
				}
				if lineOverhead+rel+near+esc+1 > room {
					return false
				}
			}
		}
		return lineLen(cand) <= room
	}
	shown := sc.shown
	if shown == nil {
		shown = map[uint32]bool{}
		sc.shown = shown
	}
	clear(shown)
	// add checks the policy on both endpoints, then renders the line.
	add := func(cand *entry, n int) {
		cd := &walk[cand.idx]
		if !allowNode(pr, v, cd.Src) || !allowNode(pr, v, cd.Dst) {
			out.Denied++
			return
		}
		ln := &sc.ln
		s, r, d := graphLine(ln, v.NodeName(cd.Src), v.RelName(cd.Rel), v.NodeName(cd.Dst))
		// m == n while lineLen and graphLine agree; the budget holds if
		// they ever do not.
		m := 1 + ln.runes()
		if used()+m > limit || !bb.fresh(ln.b) {
			return
		}
		bb.add(ln.b, m-1)
		shown[cd.Src], shown[cd.Dst] = true, true
		line := string(ln.b)
		out.Triplets = append(out.Triplets, GraphTriplet{
			SourceEntity: s.plain(line), Relationship: r.plain(line), TargetEntity: d.plain(line), RelevanceScore: 1 - cand.imp,
			SourceNodeID: v.NodeID(cd.Src), TargetNodeID: v.NodeID(cd.Dst), Edge: cd.Edge, Src: cd.Src, Dst: cd.Dst,
			cand: *cand,
		})
	}
	// addMap puts a containment candidate's target in the code map (the
	// policy checked on it: the map shows it alone).
	addMap := func(cand *entry) {
		cd := &walk[cand.idx]
		dst := cd.Dst
		if cm.nodes[dst] {
			return
		}
		// A file the walk reached as one of its package's several files
		// says only that the package has files (codemap.go): not listed
		// alone, unless its name explains a query word.
		if cd.Rel != selfRel && !cd.Gain && fileNode(v, dst) && enumerated(v, cd.Src, cd.Edge) {
			return
		}
		// A file entry (fileEntries) says where its runner-up lives: the
		// runner-up must pass the policy too.
		if !allowNode(pr, v, dst) || cd.Rel == selfRel && cd.Seed != dst && !allowNode(pr, v, cd.Seed) {
			out.Denied++
			return
		}
		if cm.add(v, dst, limit-used(), &out.CodeMap, cand) > 0 {
			shown[dst] = true
		}
	}
	// ownEdge reports whether cd is the block's best seed's only edge of
	// its relationship and direction (see next). One of a kind: a seed's
	// enumeration (a director's films) is a list the block may show in
	// part, while its one birthplace is a fact the query may ask for. Not
	// in code graphs: there a seed's edges to what the block shows already
	// are calls among shown functions and where they live, which the code
	// map says (codeindex at 500 tokens lost 0.017 of function recall with
	// them exempt).
	var ones map[uint32]bool // the best seed's one-of-a-kind edges, read once
	ownEdge := func(cd *traverse.Candidate) bool {
		if cd.Hop != 1 || sc.codeGraph || len(sc.tseeds) == 0 || cd.Seed != sc.tseeds[0].Node {
			return false
		}
		if ones == nil {
			ones = map[uint32]bool{}
			for _, in := range v.Ranked(cd.Seed) {
				if in.Alike == 1 {
					ones[in.Edge] = true
				}
			}
		}
		return ones[cd.Edge]
	}
	// A line whose two ends the block already shows adds no node: it
	// waits behind lines that do (its importance halved), decided lazily
	// when it comes up (the block only grows, so a line never gets newer).
	// Exempt: the first edges of a longer path (the path needs them),
	// lines that explain a query word (what they say is asked for), and
	// the best seed's one-of-a-kind edges (a fact about what the query is
	// about, whose other end another line may have shown first, as a
	// person's birthplace after the city a line says they lived in).
	next := func(r *traverse.Ranker[entry]) (entry, bool) {
		for {
			cand, ok := r.Next()
			if !ok || cand.stale {
				return cand, ok
			}
			if cd := &walk[cand.idx]; cd.Lent || cd.Gain || ownEdge(cd) || !shown[cd.Src] || !shown[cd.Dst] {
				return cand, ok
			}
			cand.imp *= novelty
			cand.stale = true
			r.Push(cand)
		}
	}
	// refit keeps of r's candidates those whose line fits the room left:
	// the room only shrinks, so the others never will.
	refit := func(r *traverse.Ranker[entry]) traverse.Ranker[entry] {
		room := limit - used()
		rest := r.Rest()
		fit := rest[:0]
		for i := range rest {
			if fits(&rest[i], room) {
				fit = append(fit, rest[i])
			}
		}
		return traverse.RankerOf(fit, lessEntry)
	}
	if cap(out.Triplets) == 0 {
		// Room for the lines such a block holds (they average well over
		// 32 code points) at once, not through a series of doublings.
		out.Triplets = make([]GraphTriplet, 0, min(len(sc.cands), limit/32+1))
	}
	r := traverse.RankerOf(sc.cands, lessEntry)
	tail := false // past the first line that did not fit
	// best is the highest query relevance (relevanceOf) of the entries the
	// block shows so far; a candidate under floor × best is left out (an
	// entry the policy denied counts for nothing: what the block does not
	// show must not change what it shows).
	best := 0.0
	for used()+minEntry <= limit {
		cand, ok := next(&r)
		if !ok {
			break
		}
		rel := relevanceOf(&walk[cand.idx])
		if rel < sc.floor*best {
			continue
		}
		n := lineLen(&cand)
		if used()+n > limit {
			if !tail {
				tail, r = true, refit(&r)
			}
			continue
		}
		shown := len(out.Triplets) + len(out.CodeMap)
		if cm.takes(v, &walk[cand.idx]) {
			addMap(&cand)
		} else if !sc.located || !outsideLine(v, &walk[cand.idx], sc.qs.q.Nodes) {
			add(&cand, n)
		}
		if len(out.Triplets)+len(out.CodeMap) > shown {
			best = max(best, rel)
		}
		if tail {
			r = refit(&r)
		}
	}
	out.Timings.PolicyMs = ms(pr.EvalTime())
	if len(out.Triplets) == 0 && len(out.CodeMap) == 0 {
		out.CodeMap = out.CodeMap[:0]
		return
	}
	mapText, syms := cm.text(out.CodeMap)
	out.CodeMap = syms
	switch {
	case len(out.Triplets) == 0:
		out.Block = mapText
	case mapText == "":
		out.Block = string(bb.b)
	default:
		out.Block = string(bb.b) + "\n\n" + mapText
	}
	out.ActualTokens = Tokens(out.Block)
}
