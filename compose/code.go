package compose

import (
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/index/text"
	"github.com/kgctx/kgctx/traverse"
)

// Code graphs. A code indexer (`kgctx index`, or another language's
// through the same import contract: README, "Indexing a Go module") writes
// the relationships of DESIGN.md's "Code graphs". The ranking reads three
// of their properties, all from the graph itself, never from a list of one
// repository's names:
//
//   - Tests. A node with an outgoing `tests` edge is test code. Unless the
//     work item is about tests (a query word such as test, flaky, coverage,
//     benchmark or fuzz, or a test's name spelled out in the query), test
//     code is set aside: a test is a seed at asideFactor of its score, and
//     a path that steps onto or off a test (its `tests` edges among them)
//     scores asideFactor times less, so its lines come after the lines
//     about the code, if the budget leaves room.
//   - What a symbol does. When the seeds are code symbols (nodes that
//     carry a location, which only a code indexer gives), a path scores by
//     the relationships it takes (codeRelFactors): what a
//     function calls and, through `implemented_by`, the implementations of
//     an interface method rank with the seed's own lines; its callers a
//     little lower; where it lives (`defines`, `has_method`, `contains`),
//     the types it uses and what its package imports lower still, since
//     the code map shows where a symbol lives and its signature names its
//     types.
//   - What the repository holds. A code node without a location from
//     which no edge leaves is outside the repository (an import of another
//     module that the indexer never read): no line to it enters a block
//     whose seeds carry locations unless a query word names it
//     (outsideLine).

// testsRel is the relationship that marks test code: test -> what it
// tests.
const testsRel = "tests"

// asideFactor scales the seeds and paths of test code when the query is
// not about tests: small enough that a test's lines come after every line
// about the code (a line's other factors span less than three decades).
const asideFactor = 1e-3

// testWords are the stems of query words that make a work item about
// tests.
var testWords = []string{"test", "flaki", "flake", "coverag", "benchmark", "fuzz"}

// codeRelFactors weigh a code graph's relationships by direction (see the
// comment above): forward is from the edge's source to its target.
// Relationships not listed weigh 1 both ways.
var codeRelFactors = map[string][2]float64{
	"calls":               {1, 0.8},
	"calls_via_interface": {1, 0.8},
	"implemented_by":      {1, 0.8},
	"implements":          {0.8, 0.8},
	"extends":             {0.6, 0.6},
	"has_method":          {0.6, 0.6},
	"defines":             {0.6, 0.6},
	"contains":            {0.4, 0.4},
	"uses_type":           {0.6, 0.6},
	"embeds":              {0.6, 0.6},
	"imports":             {0.4, 0.4},
}

// codeScratch is a request's reading of the code graph.
type codeScratch struct {
	info  *codeInfo
	aside bool // tests are set aside for this query
	seeds bool // the best seeds are code symbols (codeSeeds)
}

// codeInfos caches each scope's codeInfo by tenant.
type codeInfos struct{ m sync.Map }

// codeInfo is what the ranking reads of a scope's graph: its test nodes
// (ascending) and the walk's relationship factors for code seeds (by
// relationship id, see traverse.Query.RelFactor). It is valid while the
// stamp holds (the scope's edge count, the tests relationship's edge
// count, the relationship count): an edge added or deleted changes one of
// them, and a stale entry only misjudges a test or two until then.
// Entries are shared and read-only.
type codeInfo struct {
	stamp     [3]uint64
	tests     []uint32
	relFactor []float64
}

// codeInfoOf returns scope's codeInfo, from the cache while it is valid.
func (c *Composer) codeInfoOf(v *engine.View, scope engine.Tenant) *codeInfo {
	var stamp [3]uint64
	var edges *roaring.Bitmap
	if scope.Project != "" {
		if edges = v.ProjectEdges(scope); edges == nil {
			return nil
		}
		stamp[0] = edges.GetCardinality()
	}
	testsID, hasTests := v.RelID(testsRel)
	if hasTests {
		if b := v.RelEdges(testsID); b != nil {
			stamp[1] = b.GetCardinality()
		}
	}
	stamp[2] = uint64(v.RelCount())
	if x, ok := c.codes.m.Load(scope); ok {
		if ci := x.(*codeInfo); ci.stamp == stamp {
			return ci
		}
	}
	ci := &codeInfo{stamp: stamp}
	inScope := func(b *roaring.Bitmap) *roaring.Bitmap {
		if b == nil || edges == nil {
			return b
		}
		return roaring.And(b, edges)
	}
	if hasTests && stamp[1] > 0 {
		allow := v.ScopeNodes(scope)
		it := inScope(v.RelEdges(testsID)).Iterator()
		for it.HasNext() {
			e := it.Next()
			if !v.EdgeLive(e) {
				continue
			}
			if src := v.Edge(e).Src; allow == nil || allow.Contains(src) {
				ci.tests = append(ci.tests, src)
			}
		}
		slices.Sort(ci.tests)
		ci.tests = slices.Compact(ci.tests)
	}
	n := v.RelCount()
	ci.relFactor = make([]float64, 2*n)
	for r := range n {
		f, ok := codeRelFactors[v.RelName(uint32(r))]
		if !ok {
			f = [2]float64{1, 1}
		}
		ci.relFactor[2*r], ci.relFactor[2*r+1] = f[0], f[1]
	}
	c.codes.m.Store(scope, ci)
	return ci
}

// isTest reports whether n is one of the scope's test nodes.
func (cs *codeScratch) isTest(n uint32) bool {
	if cs.info == nil {
		return false
	}
	_, ok := slices.BinarySearch(cs.info.tests, n)
	return ok
}

// codeSeeds reports whether the seeds are code symbols: one of the best
// three carries a location.
func codeSeeds(v *engine.View, seeds []traverse.Seed) bool {
	for _, s := range seeds[:min(len(seeds), 3)] {
		if _, ok := v.NodeLocation(s.Node); ok {
			return true
		}
	}
	return false
}

// codeGraph reports whether the seeds are a code graph's: one of the best
// three carries a location or is of a code kind of the import contract
// (README, "Indexers for other languages"), as curated code graphs without
// locations are. The walk does not read enumerations there
// (traverse.Query.Alike): a function's many calls are each a part of the
// program a change may touch, and its one file or type is where it lives,
// which the code map and the names already say.
func codeGraph(v *engine.View, seeds []traverse.Seed) bool {
	return slices.ContainsFunc(seeds[:min(len(seeds), 3)], func(s traverse.Seed) bool { return codeNode(v, s.Node) })
}

// codeNode reports whether node n is a code symbol: it carries a location
// or is of a code kind of the import contract.
func codeNode(v *engine.View, n uint32) bool {
	if _, ok := v.NodeLocation(n); ok {
		return true
	}
	switch v.NodeType(n) {
	case "package", "file", "function", "method", "type", "interface":
		return true
	}
	return false
}

// outside reports whether node n stands for code the repository does not
// hold: a code node without a location from which no edge leaves (a
// package of another module or an external library, which an indexer
// names as an import's target but never reads).
func outside(v *engine.View, n uint32) bool {
	if _, ok := v.NodeLocation(n); ok || !codeNode(v, n) {
		return false
	}
	out := v.Out(n)
	return out == nil || out.IsEmpty()
}

// outsideLine reports whether a code block leaves out candidate c's line:
// one of its ends is outside the repository (outside) and the work item
// does not name it (no query word matches its name: named, the query's
// node masks). What another module holds is no part of a change here
// unless the work item says so.
func outsideLine(v *engine.View, c *traverse.Candidate, named []traverse.NodeMask) bool {
	for _, n := range [2]uint32{c.Src, c.Dst} {
		if outside(v, n) && !slices.ContainsFunc(named, func(m traverse.NodeMask) bool { return m.Node == n }) {
			return true
		}
	}
	return false
}

// readCode fills cs for query words qw over scope: the scope's code
// reading, and whether tests are set aside (the query holds no test word;
// calibrate also lifts the aside when a seed spells out a test's name).
func (c *Composer) readCode(v *engine.View, scope engine.Tenant, qw *queryWords, cs *codeScratch) {
	cs.info = c.codeInfoOf(v, scope)
	cs.aside = cs.info != nil && len(cs.info.tests) > 0
	for _, st := range qw.stems {
		if !cs.aside {
			break
		}
		if slices.ContainsFunc(testWords, func(t string) bool { return wordsMatch(t, st) }) {
			cs.aside = false
		}
	}
}

// Query words weigh their inverse document frequency among the names of
// the scope searched (weigh): "connection" in a client library's names
// says little, "reconnect" more. The frequencies are counted per scope
// and cached (scopeFreqs); the text index's own, over every tenant, serve
// scopes too large to count on a request's path.

// maxScopeFreqNodes bounds the scopes whose name frequencies are counted:
// larger ones use the index's.
const maxScopeFreqNodes = 250_000

// nameFreqs are the document frequencies of name parts (text.SplitName's,
// lower case) among a scope's nodes. Shared and read-only.
type nameFreqs struct {
	nodes uint64 // the scope's node count when counted
	df    map[string]uint32
}

// scopeFreqs returns scope's name frequencies, counted again when its
// node count has moved by more than a sixteenth; nil for a scope too
// large or empty.
func (c *Composer) scopeFreqs(v *engine.View, scope engine.Tenant) *nameFreqs {
	nodes := v.ScopeNodes(scope)
	if nodes == nil {
		return nil
	}
	n := nodes.GetCardinality()
	if n == 0 || n > maxScopeFreqNodes {
		return nil
	}
	if x, ok := c.freqs.Load(scope); ok {
		nf := x.(*nameFreqs)
		if d := max(n, nf.nodes) - min(n, nf.nodes); d <= nf.nodes/16 {
			return nf
		}
	}
	nf := &nameFreqs{nodes: n, df: make(map[string]uint32, n)}
	var seen []string
	it := nodes.Iterator()
	for it.HasNext() {
		id := it.Next()
		seen = seen[:0]
		for _, p := range text.SplitName(v.NodeName(id)) {
			if !slices.Contains(seen, p) {
				seen = append(seen, p)
				nf.df[p]++
			}
		}
	}
	c.freqs.Store(scope, nf)
	return nf
}

// ownName is a code symbol's name without its package qualifier
// ("nats.Conn.doReconnect" is Conn.doReconnect): for an exact name that
// carries a location and is not its file's path, the part after the first
// dot. A package names many symbols; what a symbol's name says of it is
// the rest.
func ownName(v *engine.View, n uint32) (string, bool) {
	if !v.NodeExact(n) {
		return "", false
	}
	loc, ok := v.NodeLocation(n)
	name := v.NodeName(n)
	if !ok || loc.File == name {
		return "", false
	}
	i := strings.IndexByte(name, '.')
	if i < 0 || i == len(name)-1 {
		return "", false
	}
	return name[i+1:], true
}

// The size prior. Among the symbols a code block could show, a larger
// function is more likely the one a change touches (code changes, and
// defects, concentrate in large functions): a candidate is weighed by the
// size of the symbol it leads to (its far end, when that carries a
// location), min(1, (lines / sizeFull)^sizePower): a one-line accessor
// at a third, a 10-line function at two thirds, 40 lines and more in
// full. It orders the neighbours of the seeds (a file's symbols, a
// function's callees), never the seeds themselves: a seed's own map entry
// keeps its score.
const (
	sizeFull  = 40
	sizePower = 0.3
)

// sizePrior applies the size prior to cands (see above), in the candidates'
// importance and their code factor (EdgeF, for explain).
func sizePrior(v *engine.View, cands []traverse.Candidate) {
	for i := range cands {
		c := &cands[i]
		far := c.Dst
		if c.From == c.Dst {
			far = c.Src
		}
		loc, ok := v.NodeLocation(far)
		if !ok || loc.Line == 0 || v.NodeName(far) == loc.File {
			continue
		}
		f := min(1, math.Pow(float64(max(loc.EndLine-loc.Line+1, 1))/sizeFull, sizePower))
		c.Importance *= f
		c.EdgeF *= float32(f)
	}
}
