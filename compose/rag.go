package compose

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/index"
	"github.com/kgctx/kgctx/index/fuse"
	"github.com/kgctx/kgctx/policy"
	"github.com/kgctx/kgctx/traverse"
)

// Graph RAG block headers and preface (the reference's Result Assembly).
const (
	RAGSemanticHeader = "## Semantic Context (RAG)"
	RAGExpandedHeader = "## Graph-Expanded Context"
	RAGPreface        = "The following related items were discovered through knowledge graph traversal:"
)

// DefaultRAGPredicates are the predicates phase 2 follows by default.
var DefaultRAGPredicates = []string{"related_to", "resolved_by", "caused_by", "similar_to"}

// RAG request defaults and limits.
const (
	DefaultTraversalDepth   = 2
	DefaultExpansionResults = 10
	DefaultRAGTopK          = 5
	MaxExpansionResults     = 100
)

// RAGRequest is a Graph RAG query.
type RAGRequest struct {
	Identity            policy.Identity
	Scope               engine.Tenant
	QueryText           string
	BudgetTokens        int
	TopK                int // phase-1 results (default 5)
	MaxTraversalDepth   int // 1..4 (default 2)
	MaxExpansionResults int // 1..100 (default 10)
	Predicates          []string
	// Explain asks for the expanded entries' score parts.
	Explain bool
}

// Validate applies defaults and checks ranges.
func (r *RAGRequest) Validate() error {
	if r.BudgetTokens == 0 {
		r.BudgetTokens = DefaultBudgetTokens
	}
	if r.TopK == 0 {
		r.TopK = DefaultRAGTopK
	}
	if r.MaxTraversalDepth == 0 {
		r.MaxTraversalDepth = DefaultTraversalDepth
	}
	if r.MaxExpansionResults == 0 {
		r.MaxExpansionResults = DefaultExpansionResults
	}
	if r.Predicates == nil {
		r.Predicates = DefaultRAGPredicates
	}
	g := GraphRequest{Scope: r.Scope, QueryText: r.QueryText, BudgetTokens: r.BudgetTokens, TopK: r.TopK, Depth: r.MaxTraversalDepth}
	if err := g.Validate(); err != nil {
		return err
	}
	switch {
	case r.MaxTraversalDepth < 1:
		return fmt.Errorf("%w: maxTraversalDepth %d is outside 1..%d", ErrInvalidRequest, r.MaxTraversalDepth, traverse.MaxDepth)
	case r.MaxExpansionResults < 1 || r.MaxExpansionResults > MaxExpansionResults:
		return fmt.Errorf("%w: maxExpansionResults %d is outside 1..%d", ErrInvalidRequest, r.MaxExpansionResults, MaxExpansionResults)
	case len(r.Predicates) == 0 || len(r.Predicates) > 64:
		return fmt.Errorf("%w: predicates must list 1 to 64 relationships", ErrInvalidRequest)
	}
	for _, p := range r.Predicates {
		if engine.NormalizeRelationship(p) == "" {
			return fmt.Errorf("%w: predicates: %q is not a relationship name", ErrInvalidRequest, p)
		}
	}
	return nil
}

// RAGSemantic is a phase-1 hit.
type RAGSemantic struct {
	Kind    string  `json:"kind"` // "observation" or "node"
	ID      string  `json:"id"`
	Content string  `json:"content"`
	Score   float64 `json:"score"`
}

// RAGExpanded is a phase-2 discovery: node, reached via predicate from
// origin. In a returned block, Node, Predicate and Origin are the
// sanitised text its line shows.
type RAGExpanded struct {
	Node      string  `json:"node"`
	Predicate string  `json:"predicate"`
	Origin    string  `json:"origin"`
	Score     float64 `json:"score"`
	NodeID    string  `json:"nodeId"`
	OriginID  string  `json:"originId"`
	// Explain, when asked for, says why the entry is there (the score
	// parts of the edge that reached it).
	Explain *ScoreParts `json:"explain,omitempty"`
}

// RAGBlock is a Graph RAG answer.
type RAGBlock struct {
	Block        string        `json:"block"`
	Semantic     []RAGSemantic `json:"semantic"`
	Expanded     []RAGExpanded `json:"expanded"`
	ActualTokens int           `json:"actualTokens"`
	ElapsedMs    float64       `json:"elapsedMs"`
	// Warnings say the request is probably a mistake (an empty or unknown
	// project); absent when none.
	Warnings []string `json:"warnings,omitempty"`
}

// RAG answers a Graph RAG query: phase 1 is the hybrid search over the
// scope's observations and nodes; phase 2 expands from each node hit, up
// to MaxTraversalDepth hops over the chosen predicates only, scored like
// the graph block (seed score, hop decay, edge and node weights), both ends
// of each step Cedar-checked. Everything is rendered as the reference does
// and fits BudgetTokens (entries that do not fit are skipped).
func (c *Composer) RAG(ctx context.Context, req RAGRequest) (*RAGBlock, error) {
	start := time.Now()
	if err := req.Validate(); err != nil {
		return nil, err
	}
	out := &RAGBlock{Semantic: []RAGSemantic{}, Expanded: []RAGExpanded{}}
	sc := c.scratch()
	defer c.pool.Put(sc)
	var nodeHits []uint32
	err := c.Store.View(func(v *engine.View) error {
		var err error
		if sc.qv, err = c.Index.Embed(ctx, sc.qv, req.QueryText); err != nil {
			return err
		}
		pr := c.PEP.NewRequest(req.Identity, policy.VerbRead)
		defer pr.Release()
		// Phase 1: observations and nodes, fused scores, Cedar-checked.
		var obsIDs []uint32
		var obsScores []float64
		if allow := v.ScopeObservations(req.Scope); allow != nil {
			hits, _, err := c.Index.SearchObservations(ctx, nil, index.Query{Text: req.QueryText, Org: req.Scope.Org, Scores: true,
				Project: req.Scope.Project, Allow: allow, K: req.TopK, Vector: sc.qv})
			if err != nil {
				return err
			}
			hits = addFollowers(v, hits, allow)
			slices.SortStableFunc(hits, func(a, b fuse.Ranked) int { return cmp.Compare(b.Score, a.Score) })
			hits = hits[:min(len(hits), req.TopK)]
			for _, h := range hits {
				if allowObs(pr, v, h.ID) {
					obsIDs = append(obsIDs, h.ID)
					obsScores = append(obsScores, h.Score)
				}
			}
		}
		contents, err := c.Store.ObservationContents(obsIDs)
		if err != nil {
			return err
		}
		for i, id := range obsIDs {
			if contents[i] != "" {
				out.Semantic = append(out.Semantic, RAGSemantic{Kind: "observation", ID: v.ObsID(id), Content: contents[i], Score: obsScores[i]})
			}
		}
		var query *traverse.Query
		sc.tseeds = sc.tseeds[:0]
		if allow := v.ScopeNodes(req.Scope); allow != nil {
			// The same seeds (calibrated) and the same query-aware walk
			// as the graph block.
			if query, err = c.seeds(ctx, v, req.QueryText, req.Scope, allow, req.TopK, sc); err != nil {
				return err
			}
			kept := sc.tseeds[:0]
			for _, h := range sc.tseeds {
				if !allowNode(pr, v, h.Node) {
					continue
				}
				nodeHits = append(nodeHits, h.Node)
				kept = append(kept, h)
				out.Semantic = append(out.Semantic, RAGSemantic{Kind: "node", ID: v.NodeID(h.Node), Content: nodeContent(v, h.Node), Score: h.Score})
			}
			sc.tseeds = kept
		}
		slices.SortStableFunc(out.Semantic, func(a, b RAGSemantic) int {
			switch {
			case a.Score > b.Score:
				return -1
			case a.Score < b.Score:
				return 1
			}
			return 0
		})
		// Phase 2: expansion over the chosen predicates from the node hits.
		rels := make([]bool, 0)
		for _, p := range req.Predicates {
			if id, ok := v.RelID(engine.NormalizeRelationship(p)); ok {
				for int(id) >= len(rels) {
					rels = append(rels, false)
				}
				rels[id] = true
			}
		}
		if len(rels) == 0 || len(sc.tseeds) == 0 {
			return nil
		}
		opts := c.Expand
		opts.Depth = req.MaxTraversalDepth
		opts.Rels = rels
		opts.Query = query
		sc.walk = traverse.Expand(v, sc.tseeds, opts, sc.walk)
		sc.cands = entries(sc.cands, sc.walk)
		seeds := map[uint32]bool{}
		for _, s := range sc.tseeds {
			seeds[s.Node] = true
		}
		reached := map[uint32]bool{}
		r := traverse.RankerOf(sc.cands, lessEntry)
		for len(out.Expanded) < req.MaxExpansionResults {
			e, ok := r.Next()
			if !ok {
				break
			}
			cand := &sc.walk[e.idx]
			node := cand.Dst
			if node == cand.From {
				node = cand.Src
			}
			if seeds[node] || reached[node] || !allowNode(pr, v, node) || !allowNode(pr, v, cand.From) {
				continue
			}
			reached[node] = true
			// Raw names: renderRAG renders them and keeps what it shows.
			x := RAGExpanded{Node: v.NodeName(node), Predicate: v.RelName(cand.Rel),
				Origin: v.NodeName(cand.From), Score: e.imp, NodeID: v.NodeID(node), OriginID: v.NodeID(cand.From)}
			if req.Explain {
				x.Explain = c.scoreParts(v, sc, cand, e.imp, 0)
			}
			out.Expanded = append(out.Expanded, x)
		}
		return nil
	})
	if err != nil {
		c.log().Warn("graph RAG degraded to empty", "err", err, "org", req.Scope.Org)
		return &RAGBlock{Semantic: []RAGSemantic{}, Expanded: []RAGExpanded{}, ElapsedMs: ms(time.Since(start))}, nil
	}
	for i := range out.Semantic {
		if out.Semantic[i].Kind == "node" {
			if n, err := c.Store.Node(req.Scope, out.Semantic[i].ID); err == nil && n.Description != "" {
				out.Semantic[i].Content += ": " + n.Description
			}
		}
	}
	c.renderRAG(sc, req.BudgetTokens*4, out)
	out.Warnings = c.ScopeWarnings(req.Identity, req.Scope, true)
	out.ElapsedMs = ms(time.Since(start))
	return out, nil
}

// nodeContent is a node's phase-1 content before its description is read:
// its name, and its type in parentheses.
func nodeContent(v *engine.View, n uint32) string {
	if t := v.NodeType(n); t != "" {
		return v.NodeName(n) + " (" + t + ")"
	}
	return v.NodeName(n)
}

// RAGEntryPrefix starts a phase-1 entry's first line: "### [<kind>] <id>";
// the entry's content is the line after it.
const RAGEntryPrefix = "### ["

// renderRAG lays out the block within limit code points, skip and continue,
// keeping in out only the entries the block shows: a phase-1 entry is
// "### [<kind>] <id>" then its content on a line of its own (the one place
// untrusted text starts a line: its leading block marker is escaped); a
// phase-2 entry is "- **<node>** (via <predicate> from <origin>)", and
// out.Expanded then holds the sanitised names the line shows. An entry that
// would repeat a line already in the block, or whose id or content
// sanitises to nothing, is left out.
func (c *Composer) renderRAG(sc *graphScratch, limit int, out *RAGBlock) {
	bb, ln := &sc.blk, &sc.ln
	bb.reset()
	// fits reports whether the entry in ln, after header when it opens its
	// section, keeps the block within limit and repeats no line.
	fits := func(header string) bool {
		n := ln.runes()
		if header != "" {
			n += bb.sectionCost(header)
		}
		if header != "" || !bb.empty() {
			n++ // the newline before the entry
		}
		return bb.runes+n <= limit && bb.fresh(ln.b)
	}
	put := func(header string) {
		if header != "" {
			bb.section(header)
		}
		bb.add(ln.b, ln.runes())
	}
	var sem []RAGSemantic
	for _, s := range out.Semantic {
		ln.reset()
		ln.lit(RAGEntryPrefix)
		ln.lit(s.Kind)
		ln.lit("] ")
		id := ln.text(s.ID, MaxNameRunes)
		ln.lit("\n")
		content := ln.text(s.Content, MaxExcerptRunes)
		if id.end == id.start || content.end == content.start {
			continue
		}
		header := ""
		if len(sem) == 0 {
			header = RAGSemanticHeader
		}
		if fits(header) {
			put(header)
			sem = append(sem, s)
		}
	}
	var exp []RAGExpanded
	for _, e := range out.Expanded {
		ln.reset()
		ln.lit("- **")
		node := ln.text(e.Node, MaxNameRunes)
		ln.lit("** (via ")
		pred := ln.text(e.Predicate, MaxNameRunes)
		ln.lit(" from ")
		origin := ln.text(e.Origin, MaxNameRunes)
		ln.lit(")")
		header := ""
		if len(exp) == 0 {
			header = RAGExpandedHeader + "\n" + RAGPreface
		}
		if fits(header) {
			put(header)
			line := string(ln.b)
			e.Node, e.Predicate, e.Origin = node.plain(line), pred.plain(line), origin.plain(line)
			exp = append(exp, e)
		}
	}
	out.Semantic, out.Expanded = nonNil(sem), nonNilE(exp)
	out.Block = string(bb.b)
	out.ActualTokens = Tokens(out.Block)
}

func nonNil(s []RAGSemantic) []RAGSemantic {
	if s == nil {
		return []RAGSemantic{}
	}
	return s
}

func nonNilE(s []RAGExpanded) []RAGExpanded {
	if s == nil {
		return []RAGExpanded{}
	}
	return s
}
