package compose

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/delivery"
	"github.com/kgctx/kgctx/engine/sessionlog"
	"github.com/kgctx/kgctx/index"
	"github.com/kgctx/kgctx/index/fuse"
	"github.com/kgctx/kgctx/policy"
	"github.com/kgctx/kgctx/traverse"
)

// GraphHeader starts every non-empty graph block.
const GraphHeader = "## Knowledge Graph Triplets"

// Request limits (API.md "Graph context block").
const (
	DefaultBudgetTokens = 500
	MaxBudgetTokens     = 32000
	DefaultTopK         = 10
	MaxTopK             = 100
	DefaultDepth        = 2
)

// SessionWrites carries the session state a block or an in-session
// inject records.
type SessionWrites interface {
	PutInjectionLog(ctx context.Context, l sessionlog.InjectionLog) (string, error)
	Enqueue(ctx context.Context, in delivery.Inject) (delivery.Inject, bool, error)
}

func (c *Composer) putInjectionLog(ctx context.Context, l sessionlog.InjectionLog) (string, error) {
	if c.Writes != nil {
		return c.Writes.PutInjectionLog(ctx, l)
	}
	return c.Logs.PutInjectionLog(l)
}

func (c *Composer) enqueue(ctx context.Context, in delivery.Inject) (delivery.Inject, bool, error) {
	if c.Writes != nil {
		return c.Writes.Enqueue(ctx, in)
	}
	return c.Delivery.Enqueue(in, time.Now())
}

// Composer builds blocks from a store, its seed index and a PEP.
type Composer struct {
	Store *engine.Store
	// Logs keeps the injection logs of session blocks; Delivery queues the
	// in-session injects. Both are the store's (sessionlog.New,
	// delivery.New).
	Logs     *sessionlog.Store
	Delivery *delivery.Store
	// Writes, when set, carries the injection logs and injects the
	// composer and the injector make (a cluster's log); nil writes them
	// to Logs and Delivery at once.
	Writes SessionWrites
	Index  *index.Index
	PEP    *policy.PEP
	// Expand holds the walk's caps and decay (MaxFanout, MaxVisited,
	// HopDecay); Depth comes from each request. MaxFanout also bounds the
	// errors a tool's success visits (see propagationTargets).
	Expand traverse.Options
	// Settings hold the configuration documents (budgets, gates, ...).
	Settings *Settings
	// GraphShare is the share of a session block the graph part may take
	// (default 0.4).
	GraphShare float64
	// PropagationRate scales the confidence a success propagates to the
	// fixes of similar errors (default 0.3); SimilarErrorScore is the
	// cosine similarity from which two errors are similar_to (default
	// 0.75).
	PropagationRate, SimilarErrorScore float64
	Logger                             *slog.Logger

	pool sync.Pool // *graphScratch

	codes             codeInfos // each scope's reading of its code graph
	freqs             sync.Map  // engine.Tenant -> *nameFreqs
	nameLens, relLens lenCache  // textLen by node id, by relationship id
	relStems          stemCache // content stems of relationship names by relationship id
	nameStems         stemCache // content stems of node names by node id
	ownStems          stemCache // content stems of code symbols' own names (ownName) by node id
}

// GraphRequest is buildGraphContextBlock's input.
type GraphRequest struct {
	Identity  policy.Identity
	SessionID string
	// Scope is the (org, project) searched; Project "" is org-wide.
	Scope        engine.Tenant
	QueryText    string
	BudgetTokens int // 1..32000
	TopK         int // 1..100
	Depth        int // 0..4
	// Explain asks for each triplet's score parts (GraphTriplet.Explain).
	Explain bool
	// CodeMap asks for a code map (true), none (false), or one when the
	// block's best seeds carry locations (nil): see codemap.go.
	CodeMap *bool
}

// Validate checks the request's ranges; the error names the field.
func (r *GraphRequest) Validate() error {
	switch {
	case r.BudgetTokens < 1 || r.BudgetTokens > MaxBudgetTokens:
		return fmt.Errorf("%w: budgetTokens %d is outside 1..%d", ErrInvalidRequest, r.BudgetTokens, MaxBudgetTokens)
	case r.TopK < 1 || r.TopK > MaxTopK:
		return fmt.Errorf("%w: topK %d is outside 1..%d", ErrInvalidRequest, r.TopK, MaxTopK)
	case r.Depth < 0 || r.Depth > traverse.MaxDepth:
		return fmt.Errorf("%w: neighborhoodDepth %d is outside 0..%d", ErrInvalidRequest, r.Depth, traverse.MaxDepth)
	case len(r.QueryText) > index.MaxQueryBytes:
		return fmt.Errorf("%w: queryText is %d bytes, the limit is %d", ErrInvalidRequest, len(r.QueryText), index.MaxQueryBytes)
	case !utf8.ValidString(r.QueryText):
		return fmt.Errorf("%w: queryText is not valid UTF-8", ErrInvalidRequest)
	case r.Scope.Org == "":
		return fmt.Errorf("%w: scope.orgId is required", ErrInvalidRequest)
	}
	return nil
}

// GraphTriplet is one triplet of a block (the references'
// GraphContextTriplet). Entity and relationship strings are the sanitised
// text the block shows, without the backslash the block puts before a
// source's leading markdown block marker (JSON is not markdown).
type GraphTriplet struct {
	SourceEntity   string             `json:"sourceEntity"`
	Relationship   string             `json:"relationship"`
	TargetEntity   string             `json:"targetEntity"`
	RelevanceScore float64            `json:"relevanceScore"`
	SourceNodeID   string             `json:"sourceNodeId"`
	TargetNodeID   string             `json:"targetNodeId"`
	Provenance     *engine.Provenance `json:"provenance,omitempty"`
	// Explain, when the request asked for it, says why the line is there.
	Explain *ScoreParts `json:"explain,omitempty"`

	Edge     uint32             `json:"-"`
	Src, Dst uint32             `json:"-"`
	cand     traverse.Candidate // the walk's record of it (explain)
}

// ScoreParts are the parts of a triplet's score (see the README, "How
// triplets are scored"): importance = seedScore × queryMatch ×
// hopDecay^(hop-1) × hub × code × weight × spread, and
// relevanceScore = 1 - importance.
// A path's earlier triplets take the score of the best path continuing
// them (Lent), so that its lines stand together.
type ScoreParts struct {
	Importance float64 `json:"importance"`
	// The seed the triplet's best path starts from, its score, and that
	// score's parts: the name match (0 when the name matches no query
	// word), the index's fused score, and whether the name stands verbatim
	// in the query.
	Seed         string  `json:"seed"`
	SeedNodeID   string  `json:"seedNodeId"`
	SeedScore    float64 `json:"seedScore"`
	SeedName     float64 `json:"seedNameMatch"`
	SeedFused    float64 `json:"seedFused"`
	SeedVerbatim bool    `json:"seedVerbatim"`
	Hop          int     `json:"hop"`
	HopDecay     float64 `json:"hopDecay"`
	// QueryMatch is the share of the query the path explains, from the
	// floor (nothing beyond the seed) to 1 (every query word).
	QueryMatch float64 `json:"queryMatch"`
	// Hub is the factor of the busy nodes the path passed through, Weight
	// the learnt weights' factor of the edge and its endpoints.
	Hub    float64 `json:"hub"`
	Weight float64 `json:"weight"`
	// Code is the factor of a code graph's reading (see the README, "Code
	// graphs"): the relationships the path took, test code set aside, the
	// size of the symbol the line leads to; 1 elsewhere.
	Code float64 `json:"code"`
	// Spread is the factor that shares the block among seeds (see
	// maxSpreadRate).
	Spread float64 `json:"spread"`
	// Lent is true when the importance is a longer path's.
	Lent bool `json:"lent,omitempty"`
	// Path lists the triplets before this one on its path, first first.
	Path []string `json:"path,omitempty"`
}

// Timings are the stage durations of one block, in milliseconds.
type Timings struct {
	SeedMs   float64 `json:"seedMs"`
	ExpandMs float64 `json:"expandMs"`
	PolicyMs float64 `json:"policyMs"`
	RenderMs float64 `json:"renderMs"`
}

// GraphBlock is buildGraphContextBlock's result.
type GraphBlock struct {
	Block        string         `json:"block"`
	Triplets     []GraphTriplet `json:"triplets"`
	ActualTokens int            `json:"actualTokens"`
	Timings      Timings        `json:"timings"`
	// Seeds and Candidates count the walk's inputs and outputs; Denied the
	// candidates the PEP refused before the budget filled.
	Seeds      int `json:"seeds"`
	Candidates int `json:"candidates"`
	Denied     int `json:"denied"`
	// Warnings say the request is probably a mistake (an empty or unknown
	// project); absent when none.
	Warnings []string `json:"warnings,omitempty"`
	// CodeMap lists the symbols of the block's code map section, in the
	// order it shows them; absent when the block has none.
	CodeMap []CodeSymbol `json:"codeMap,omitempty"`
}

type graphScratch struct {
	seeds  []fuse.Ranked
	tseeds []traverse.Seed
	cands  []traverse.Candidate
	edges  []uint32
	qv     []float32 // the query's embedding, when the caller has it
	qs     queryScratch
	// orig keeps the session block's candidates for its second graph
	// render: a render consumes sc.cands (the ranker reorders and
	// overwrites it).
	orig []traverse.Candidate
	// walk keeps the candidates in the walk's order when a request asks
	// to explain (their Parent indexes refer to it).
	walk []traverse.Candidate
	// shown is the set of nodes a render has put in its block.
	shown map[uint32]bool
	// The spread's scratch: candidate indexes grouped by seed, the groups'
	// starts, and their fill positions.
	starts, fill []int32
	keys         []spreadKey
	group        []uint8  // each candidate's seed group
	blk          blockBuf // the block being rendered
	ln           lineBuf  // the entry being rendered
	// mapMode is the request's code map mode (CodeMapOff unless the block
	// asks: the in-session injector's never has one); codeMap whether the
	// prepared block has one; cmap the map being rendered.
	mapMode CodeMapMode
	codeMap bool
	cmap    codeMapBuf
}

func (c *Composer) scratch() *graphScratch {
	if sc, ok := c.pool.Get().(*graphScratch); ok {
		sc.qv, sc.mapMode, sc.codeMap = nil, CodeMapOff, false
		return sc
	}
	return &graphScratch{mapMode: CodeMapOff}
}

// GraphBlock composes the graph context block for req: seed search, depth-N
// expansion, Cedar check of both endpoints of each triplet, importance order
// within the token budget. Nothing authorised gives an empty block. Only a
// request out of range is an error (ErrInvalidRequest); a failing seed
// search degrades to an empty block, logged, as the references' does.
func (c *Composer) GraphBlock(ctx context.Context, req GraphRequest) (*GraphBlock, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	out := c.graphBlock(ctx, req, req.BudgetTokens*4)
	out.Warnings = c.ScopeWarnings(req.Identity, req.Scope, false)
	return out, nil
}

// graphBlock is GraphBlock within limit code points (a validated request;
// its BudgetTokens is not read). The session block's graph part is
// graphBlock at the room the observations leave, which its tests check.
func (c *Composer) graphBlock(ctx context.Context, req GraphRequest, limit int) *GraphBlock {
	out := &GraphBlock{Triplets: []GraphTriplet{}}
	sc := c.scratch()
	defer c.pool.Put(sc)
	sc.mapMode = CodeMapModeOf(req.CodeMap)
	err := c.Store.View(func(v *engine.View) error {
		if err := c.prepareGraph(ctx, v, req, sc, out); err != nil {
			return err
		}
		if req.Explain {
			sc.walk = append(sc.walk[:0], sc.cands...)
		}
		c.renderGraph(v, req.Identity, sc, out, limit)
		if req.Explain {
			c.explain(v, sc, out.Triplets)
			c.explainMap(v, sc, out.CodeMap)
		}
		return nil
	})
	if err != nil {
		c.log().Warn("graph block degraded to empty", "err", err, "org", req.Scope.Org, "project", req.Scope.Project)
		return &GraphBlock{Triplets: []GraphTriplet{}, Timings: out.Timings}
	}
	c.attachProvenance(out)
	return out
}

// seeds finds the seeds of query text in scope (allow: its node bitmap)
// into sc.tseeds, calibrated (see calibrate), and returns the walk's Query
// (nil when the text has no content word). Every block that walks the
// graph finds its seeds here, so they all rank alike.
func (c *Composer) seeds(ctx context.Context, v *engine.View, text string, scope engine.Tenant, allow *roaring.Bitmap, topK int, sc *graphScratch) (*traverse.Query, error) {
	sc.qs.freqs.Docs = 0
	var err error
	sc.seeds, _, err = c.Index.Search(ctx, sc.seeds, index.Query{Text: text, Org: scope.Org,
		Project: scope.Project, Allow: allow, K: topK * seedPool, Vector: sc.qv, TextDepth: textDepth, VectorDepth: max(3*topK, 30),
		TextHits: &sc.qs.hits, Freqs: &sc.qs.freqs, Scores: true})
	if err != nil {
		sc.tseeds = sc.tseeds[:0]
		return nil, err
	}
	sc.qs.scopeDF = c.scopeFreqs(v, scope)
	q := c.buildQuery(v, text, &sc.qs)
	c.readCode(v, scope, &sc.qs.words, &sc.qs.code)
	sc.seeds = c.addNamed(v, text, scope, allow, &sc.qs, sc.seeds)
	sc.tseeds = c.calibrate(v, sc.seeds, topK, &sc.qs, sc.tseeds)
	sc.qs.code.seeds = codeSeeds(v, sc.tseeds)
	if q != nil && sc.qs.code.info != nil {
		if sc.qs.code.seeds {
			q.RelFactor = sc.qs.code.info.relFactor
		}
		if sc.qs.code.aside {
			q.Aside, q.AsideFactor = sc.qs.code.info.tests, asideFactor
		}
	}
	return q, nil
}

// prepareGraph finds the seeds and expands them into sc.cands.
func (c *Composer) prepareGraph(ctx context.Context, v *engine.View, req GraphRequest, sc *graphScratch, out *GraphBlock) error {
	t0 := time.Now()
	sc.cands, sc.tseeds = sc.cands[:0], sc.tseeds[:0]
	allow := v.ScopeNodes(req.Scope)
	if allow == nil {
		return nil
	}
	q, err := c.seeds(ctx, v, req.QueryText, req.Scope, allow, req.TopK, sc)
	t1 := time.Now()
	out.Timings.SeedMs = ms(t1.Sub(t0))
	if err != nil {
		return err
	}
	opts := c.Expand
	opts.Depth = req.Depth
	if req.Depth == 0 {
		opts.Depth = traverse.DepthZero
	}
	opts.Query = q
	out.Seeds = len(sc.tseeds)
	sc.cands = traverse.Expand(v, sc.tseeds, opts, sc.cands)
	out.Candidates = len(sc.cands)
	if sc.qs.code.seeds {
		sizePrior(v, sc.cands)
	}
	sc.codeMap = sc.mapMode == CodeMapOn || sc.mapMode == CodeMapAuto && sc.qs.code.seeds
	if sc.codeMap {
		sc.cands = seedEntries(v, sc.tseeds, sc.cands)
	}
	spread(sc, spreadRate(sc.tseeds))
	out.Timings.ExpandMs = ms(time.Since(t1))
	return nil
}

// renderGraph fills out (block, triplets, tokens) from the prepared
// candidates within limit code points, header included. It consumes
// sc.cands (the ranker reorders and overwrites them): a second render must
// start from a fresh copy of the prepared candidates (see composeSession).
func (c *Composer) renderGraph(v *engine.View, id policy.Identity, sc *graphScratch, out *GraphBlock, limit int) {
	t := time.Now()
	out.Block, out.Triplets, out.ActualTokens, out.Denied, out.Timings.PolicyMs = "", out.Triplets[:0], 0, 0, 0
	out.CodeMap = out.CodeMap[:0]
	sc.edges = sc.edges[:0]
	c.render(v, id, sc, out, limit)
	out.Timings.RenderMs = ms(time.Since(t)) - out.Timings.PolicyMs
}

// attachProvenance reads the latest provenance of the block's edges.
func (c *Composer) attachProvenance(out *GraphBlock) {
	if len(out.Triplets) == 0 {
		return
	}
	edges := make([]uint32, len(out.Triplets))
	for i, t := range out.Triplets {
		edges[i] = t.Edge
	}
	prov, err := c.Store.EdgeProvenance(edges)
	if err != nil {
		c.log().Warn("read provenance", "err", err)
		return
	}
	for i := range out.Triplets {
		if p := prov[i]; len(p) > 0 {
			last := p[len(p)-1]
			out.Triplets[i].Provenance = &last
		}
	}
}

// maxSpreadRate shares a block's budget among seeds: a seed's k-th best
// candidate counts 1/(1 + rate × (k-1)), with rate = maxSpreadRate ×
// (second best seed score / best seed score). When one seed stands out (a
// name the query spells out), its neighbourhood keeps the block; when
// several match about as well, each gets its best lines in, instead of
// the first filling the block with its weaker ones.
const maxSpreadRate = 0.15

// spreadRate is the request's rate (see maxSpreadRate).
func spreadRate(seeds []traverse.Seed) float64 {
	if len(seeds) < 2 || !(seeds[0].Score > 0) {
		return 0
	}
	return maxSpreadRate * min(seeds[1].Score/seeds[0].Score, 1)
}

// spread applies the seeds' budget sharing to sc.cands (see
// maxSpreadRate): each candidate's importance is divided by
// spreadFactorOf(rate, its rank among its seed's candidates), and the
// rank is kept in Spread for explain. Ranks order by importance, then hop,
// then edge id, so the result is deterministic. Only a seed's spreadTop
// best are ranked one by one (no block holds more lines of one seed);
// the rest share rank spreadTop.
func spread(sc *graphScratch, rate float64) {
	if rate <= 0 || len(sc.cands) == 0 {
		return
	}
	cs := sc.cands
	// Group the candidates by seed (seeds are few: a linear lookup), as
	// sort keys: importance, hop and edge copied out of the candidates, so
	// the sort compares small contiguous records.
	groups := len(sc.tseeds) + 1
	sc.starts = append(sc.starts[:0], make([]int32, groups+1)...)
	sc.group = slices.Grow(sc.group[:0], len(cs))[:len(cs)]
	for i := range cs {
		g := len(sc.tseeds)
		for j, s := range sc.tseeds {
			if s.Node == cs[i].Seed {
				g = j
				break
			}
		}
		sc.group[i] = uint8(min(g, 255))
		sc.starts[g+1]++
	}
	for g := 1; g <= groups; g++ {
		sc.starts[g] += sc.starts[g-1]
	}
	sc.keys = slices.Grow(sc.keys[:0], len(cs))[:len(cs)]
	fill := append(sc.fill[:0], sc.starts[:groups]...)
	for i := range cs {
		g := sc.group[i]
		sc.keys[fill[g]] = spreadKey{imp: cs[i].Importance, hop: cs[i].Hop, edge: cs[i].Edge, idx: int32(i)}
		fill[g]++
	}
	sc.fill = fill
	for g := range groups {
		grp := sc.keys[sc.starts[g]:sc.starts[g+1]]
		slices.SortFunc(grp, compareSpreadKeys)
		for k, key := range grp {
			rank := min(k, spreadTop)
			c := &cs[key.idx]
			c.Importance /= spreadFactorOf(rate, rank)
			c.Spread = uint16(rank)
		}
	}
}

// spreadKey is a candidate's order in the spread (traverse.Less's:
// importance, then hop, then edge) and its index.
type spreadKey struct {
	imp  float64
	edge uint32
	idx  int32
	hop  uint8
}

func compareSpreadKeys(a, b spreadKey) int {
	switch {
	case a.imp != b.imp:
		if a.imp > b.imp {
			return -1
		}
		return 1
	case a.hop != b.hop:
		return int(a.hop) - int(b.hop)
	}
	return cmp.Compare(a.edge, b.edge)
}

// novelty is the factor of a line whose two ends the block already shows.
const novelty = 0.5

// spreadTop is how many of a seed's candidates the spread ranks one by
// one.
const spreadTop = 256

// spreadFactorOf divides the importance of a seed's line when the block
// already holds k lines of that seed.
func spreadFactorOf(rate float64, k int) float64 { return 1 + rate*float64(k) }

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
	var policyTime time.Duration
	allow := func(n uint32) bool {
		t := time.Now()
		ok := allowNode(pr, v, n)
		policyTime += time.Since(t)
		return ok
	}
	// lineLen is the code points a candidate's line adds, newline included,
	// from the cached name lengths (the source takes its escape); for a map
	// entry, its least cost.
	lineLen := func(cand *traverse.Candidate) int {
		if cand.Len == 0 {
			if cm.takes(v, cand) {
				cand.Len = uint16(min(cm.minCost(v, cand), math.MaxUint16))
				return int(cand.Len)
			}
			src, esc := c.nameLens.get(cand.Src, v.NodeName)
			rel, _ := c.relLens.get(cand.Rel, v.RelName)
			dst, _ := c.nameLens.get(cand.Dst, v.NodeName)
			cand.Len = uint16(min(lineOverhead+src+esc+rel+dst, math.MaxUint16))
		}
		return int(cand.Len)
	}
	// fits says whether a candidate's line fits room; names take at least
	// a code point each, so the relationship's cached length alone
	// rules most lines out near the end of the budget without touching
	// the names (each a cache miss at a million nodes).
	fits := func(cand *traverse.Candidate, room int) bool {
		if cand.Len == 0 && !cm.on {
			if rel, _ := c.relLens.get(cand.Rel, v.RelName); lineOverhead+rel+2 > room {
				return false
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
	add := func(cand *traverse.Candidate, n int) {
		if !allow(cand.Src) || !allow(cand.Dst) {
			out.Denied++
			return
		}
		ln := &sc.ln
		s, r, d := graphLine(ln, v.NodeName(cand.Src), v.RelName(cand.Rel), v.NodeName(cand.Dst))
		// m == n while lineLen and graphLine agree; the budget holds if
		// they ever do not.
		m := 1 + ln.runes()
		if used()+m > limit || !bb.fresh(ln.b) {
			return
		}
		bb.add(ln.b, m-1)
		shown[cand.Src], shown[cand.Dst] = true, true
		out.Triplets = append(out.Triplets, GraphTriplet{
			SourceEntity: ln.plain(s), Relationship: ln.plain(r), TargetEntity: ln.plain(d), RelevanceScore: 1 - cand.Importance,
			SourceNodeID: v.NodeID(cand.Src), TargetNodeID: v.NodeID(cand.Dst), Edge: cand.Edge, Src: cand.Src, Dst: cand.Dst,
			cand: *cand,
		})
	}
	// addMap puts a containment candidate's target in the code map (the
	// policy checked on it: the map shows it alone).
	addMap := func(cand *traverse.Candidate) {
		if cm.nodes[cand.Dst] {
			return
		}
		if !allow(cand.Dst) {
			out.Denied++
			return
		}
		if cm.add(v, cand.Dst, limit-used(), &out.CodeMap, cand) > 0 {
			shown[cand.Dst] = true
		}
	}
	// A line whose two ends the block already shows adds no node: it
	// waits behind lines that do (its importance halved), decided lazily
	// when it comes up (the block only grows, so a line never gets newer).
	// Exempt: the first edges of a longer path (the path needs them) and
	// lines that explain a query word (what they say is asked for).
	next := func(r *traverse.Ranker) (traverse.Candidate, bool) {
		for {
			cand, ok := r.Next()
			if !ok || cand.Stale || cand.Lent || cand.Gain || !shown[cand.Src] || !shown[cand.Dst] {
				return cand, ok
			}
			cand.Importance *= novelty
			cand.Stale = true
			r.Push(cand)
		}
	}
	// refit keeps of r's candidates those whose line fits the room left:
	// the room only shrinks, so the others never will.
	refit := func(r *traverse.Ranker) traverse.Ranker {
		room := limit - used()
		rest := r.Rest()
		fit := rest[:0]
		for i := range rest {
			if fits(&rest[i], room) {
				fit = append(fit, rest[i])
			}
		}
		return traverse.NewRanker(fit)
	}
	r := traverse.NewRanker(sc.cands)
	tail := false // past the first line that did not fit
	for used()+minEntry <= limit {
		cand, ok := next(&r)
		if !ok {
			break
		}
		n := lineLen(&cand)
		if used()+n > limit {
			if !tail {
				tail, r = true, refit(&r)
			}
			continue
		}
		if cm.takes(v, &cand) {
			addMap(&cand)
		} else {
			add(&cand, n)
		}
		if tail {
			r = refit(&r)
		}
	}
	out.Timings.PolicyMs = ms(policyTime)
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

func (c *Composer) log() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.Default()
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// explain fills the score parts of ts from the walk's records (sc.walk,
// the candidates in the walk's order) and the seeds' calibration.
func (c *Composer) explain(v *engine.View, sc *graphScratch, ts []GraphTriplet) {
	for i := range ts {
		ts[i].Explain = c.scoreParts(v, sc, &ts[i].cand)
	}
}

// explainMap fills the score parts of a code map's symbols (see explain).
func (c *Composer) explainMap(v *engine.View, sc *graphScratch, syms []CodeSymbol) {
	for i := range syms {
		syms[i].Explain = c.scoreParts(v, sc, &syms[i].cand)
	}
}

// scoreParts explains one candidate (see explain).
func (c *Composer) scoreParts(v *engine.View, sc *graphScratch, cd *traverse.Candidate) *ScoreParts {
	decay := c.Expand.HopDecay
	if decay == 0 {
		decay = traverse.DefaultHopDecay
	}
	line := func(cd *traverse.Candidate) string {
		return Sanitize(v.NodeName(cd.Src), MaxNameRunes) + " → " + Sanitize(v.RelName(cd.Rel), MaxNameRunes) + " → " + Sanitize(v.NodeName(cd.Dst), MaxNameRunes)
	}
	{
		p := &ScoreParts{Importance: cd.Importance, Hop: int(cd.Hop), HopDecay: math.Pow(decay, max(float64(cd.Hop)-1, 0)),
			SeedScore: float64(cd.SeedScore), QueryMatch: float64(cd.Match), Hub: float64(cd.HubF), Weight: float64(cd.WeightF), Code: float64(cd.EdgeF),
			Spread: 1 / spreadFactorOf(spreadRate(sc.tseeds), int(cd.Spread))}
		if v.Live(cd.Seed) {
			p.Seed, p.SeedNodeID = v.NodeName(cd.Seed), v.NodeID(cd.Seed)
		}
		for _, s := range sc.qs.seeds {
			if s.node == cd.Seed {
				p.SeedName, p.SeedFused, p.SeedVerbatim = s.name, s.fused, s.verbatim
				break
			}
		}
		own := p.SeedScore * p.QueryMatch * p.HopDecay * p.Hub * p.Code * p.Weight * p.Spread
		p.Lent = cd.Importance > own*(1+1e-6)
		for j := cd.Parent; j > 0 && int(j) <= len(sc.walk) && len(p.Path) < traverse.MaxDepth; j = sc.walk[j-1].Parent {
			p.Path = append(p.Path, line(&sc.walk[j-1]))
		}
		slices.Reverse(p.Path)
		return p
	}
}
