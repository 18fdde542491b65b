package compose

import (
	"context"
	"slices"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/index"
	"github.com/kgctx/kgctx/policy"
	"github.com/kgctx/kgctx/traverse"
)

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
	sc.floor, sc.floorAuto = minRelevance(req.MinRelevance)
	err := c.Store.View(func(v *engine.View) error {
		if err := c.prepareGraph(ctx, v, req, sc, out); err != nil {
			return err
		}
		c.renderGraph(v, req.Identity, sc, out, limit)
		c.finishGraph(v, sc, req.Explain, out)
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
	code := codeGraph(v, sc.tseeds)
	sc.codeGraph = code
	sc.located = code && slices.ContainsFunc(sc.tseeds, func(s traverse.Seed) bool {
		_, ok := v.NodeLocation(s.Node)
		return ok
	})
	if q != nil && !code {
		q.Alike = alikeRate
	}
	if code && sc.floorAuto {
		sc.floor = 0 // see DefaultMinRelevance
	}
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

// Every block with a graph part (graph, session, in-session) makes it in
// the same three steps: prepareGraph once, renderGraph at the room the
// block gives it (again at another room when sc.keep was set before
// preparing: the session block), then finishGraph.

// prepareGraph finds the seeds, walks from them into sc.walk and makes
// the render entries (sc.cands, the budget spread among seeds).
func (c *Composer) prepareGraph(ctx context.Context, v *engine.View, req GraphRequest, sc *graphScratch, out *GraphBlock) error {
	t0 := time.Now()
	sc.walk, sc.cands, sc.tseeds, sc.rendered = sc.walk[:0], sc.cands[:0], sc.tseeds[:0], false
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
	sc.walk = traverse.Expand(v, sc.tseeds, opts, sc.walk)
	out.Candidates = len(sc.walk)
	if sc.qs.code.seeds {
		sizePrior(v, sc.walk)
	}
	sc.codeMap = sc.mapMode == CodeMapOn || sc.mapMode == CodeMapAuto && sc.qs.code.seeds
	if sc.codeMap {
		sc.walk = seedEntries(v, sc.tseeds, sc.walk)
		sc.walk = fileEntries(v, sc.qs.runners, sc.walk)
	}
	spreadEntries(sc, spreadRate(sc.tseeds))
	if sc.keep {
		sc.orig = append(sc.orig[:0], sc.cands...)
	}
	out.Timings.ExpandMs = ms(time.Since(t1))
	return nil
}

// renderGraph fills out (block, triplets, tokens) from the prepared
// entries within limit code points, header included. A render consumes
// sc.cands; a second one starts again from the copy prepareGraph kept
// (sc.keep), so it is the block the same preparation gives at that room.
func (c *Composer) renderGraph(v *engine.View, id policy.Identity, sc *graphScratch, out *GraphBlock, limit int) {
	if sc.rendered {
		if !sc.keep {
			panic("compose: a graph part rendered twice without sc.keep")
		}
		sc.cands = append(sc.cands[:0], sc.orig...)
	}
	sc.rendered = true
	t := time.Now()
	out.Block, out.Triplets, out.ActualTokens, out.Denied, out.Timings.PolicyMs = "", out.Triplets[:0], 0, 0, 0
	out.CodeMap = out.CodeMap[:0]
	sc.edges = sc.edges[:0]
	c.render(v, id, sc, out, limit)
	out.Timings.RenderMs = ms(time.Since(t)) - out.Timings.PolicyMs
}

// finishGraph explains the rendered lines and map symbols when asked.
func (c *Composer) finishGraph(v *engine.View, sc *graphScratch, explain bool, out *GraphBlock) {
	if !explain {
		return
	}
	for i := range out.Triplets {
		t := &out.Triplets[i]
		t.Explain = c.scoreParts(v, sc, &sc.walk[t.cand.idx], t.cand.imp, int(t.cand.spread))
	}
	for i := range out.CodeMap {
		s := &out.CodeMap[i]
		s.Explain = c.scoreParts(v, sc, &sc.walk[s.cand.idx], s.cand.imp, int(s.cand.spread))
	}
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
