package compose

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/sessionlog"
	"github.com/kgctx/kgctx/index"
	"github.com/kgctx/kgctx/index/fuse"
	"github.com/kgctx/kgctx/policy"
)

// ObservationsHeader starts every non-empty observations block.
const ObservationsHeader = "## Relevant Past Observations"

// Session block defaults.
const (
	DefaultGraphShare = 0.4
	// MaxExcerptRunes caps an observation's excerpt in a block.
	MaxExcerptRunes = 300
	// TransferThreshold is the Jaccard similarity of tech stacks from which
	// a project is a peer for cross-project transfer.
	TransferThreshold = 0.7
	// sessionCandidates is how many observations a search proposes: more
	// than a 750-token budget holds, few enough to keep the vector search
	// narrow.
	sessionCandidates = 24
)

// WorkItem is the work a session is about (from the platform's issue
// cache).
type WorkItem struct {
	Identifier  string `json:"identifier"`
	IssueID     string `json:"issueId"`
	Title       string `json:"title"`
	Description string `json:"description"`
}

// RetrievalQueryText composes the retrieval query (retrieval-query.ts):
// queryText when given; else the work item's identifier, title and first
// line of description; degrading to the identifier only, then the issue
// id, then the session id.
func RetrievalQueryText(queryText string, wi WorkItem, sessionID string) string {
	if q := strings.TrimSpace(queryText); q != "" {
		return q
	}
	first, _, _ := strings.Cut(strings.TrimSpace(wi.Description), "\n")
	var parts []string
	for _, p := range []string{wi.Identifier, wi.Title, first} {
		if p = strings.TrimSpace(p); p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) > 0 {
		return strings.Join(parts, " ")
	}
	if id := strings.TrimSpace(wi.IssueID); id != "" {
		return id
	}
	return sessionID
}

// SessionRequest is buildSessionMemoryBlock's input.
type SessionRequest struct {
	SessionID string
	WorkType  string
	Scope     engine.Tenant // org and project of the session
	Identity  policy.Identity
	QueryText string
	WorkItem  WorkItem
	// Graph, when false, leaves graph context out whatever the gates say.
	Graph bool
	// CrossProjectTransfer adds peer projects' observations.
	CrossProjectTransfer bool
	// Explain asks for the score parts of every line (SessionBlock.Explain).
	Explain bool
	// CodeMap asks the graph part for a code map (true), none (false), or
	// one when its best seeds carry locations (nil), as GraphRequest.
	CodeMap *bool
	// MinRelevance is the relevance floor of both parts, as
	// GraphRequest's: nil means DefaultMinRelevance.
	MinRelevance *float64
}

// SessionBlock is the composed start-of-session block, with what the
// injection log records.
type SessionBlock struct {
	Block             string           `json:"block"`
	ObservationIDs    []string         `json:"observationIds"`
	SessionSummaryIDs []string         `json:"sessionSummaryIds"`
	GraphNodeIDs      []string         `json:"graphNodeIds"`
	GraphEdgeKeys     []engine.EdgeKey `json:"graphEdgeKeys"`
	BudgetTokens      int              `json:"budgetTokens"`
	ActualTokens      int              `json:"actualTokens"`
	QueryText         string           `json:"queryText"`
	LogID             string           `json:"logId"`
	// Gates explains what was composed: memory on, graph gated in, peers.
	Gates SessionGates `json:"gates"`
	// Explain, when the request asked for it, holds why each line is
	// there: the observations' relevance, weight and score, and the graph
	// part's triplets with their score parts.
	Explain *SessionExplain `json:"explain,omitempty"`
	// Warnings say the request is probably a mistake: an empty or unknown
	// project, a work type no budget names, no work item; absent when none.
	Warnings []string `json:"warnings,omitempty"`
	// CodeMap lists the symbols of the graph part's code map, in the order
	// it shows them (their node ids are among GraphNodeIDs); absent when
	// the block has none.
	CodeMap []CodeSymbol `json:"codeMap,omitempty"`
}

// SessionExplain is a session block's score parts, in block order.
type SessionExplain struct {
	Observations []ObservationScore `json:"observations"`
	Triplets     []GraphTriplet     `json:"triplets"`
}

// ObservationScore is why an observation is in a block: its relevance to
// the query (fused search score, best = 1), its learnt weight, and the
// score it was ranked by, relevance × (0.5 + weight).
type ObservationScore struct {
	ID        string  `json:"id"`
	Relevance float64 `json:"relevance"`
	Weight    float64 `json:"weight"`
	Score     float64 `json:"score"`
}

// SessionGates records the gate decisions of one block.
type SessionGates struct {
	MemoryEnabled bool     `json:"memoryEnabled"`
	GraphIncluded bool     `json:"graphIncluded"`
	Peers         []string `json:"peers,omitempty"`
}

// ObsCandidate is an observation proposed for a block.
type ObsCandidate struct {
	Dense     uint32
	Relevance float64 // fused search score in (0,1]
	Weight    float64
	Score     float64 // FeedbackScore(Relevance, Weight)
}

// FeedbackScore is the feedback ranking: relevance scaled by the learnt
// weight, relevance x (0.5 + weight). A weight of 0.5 (new) leaves the
// relevance as it is; 1 makes it 1.5x, 0 halves it. At equal relevance the
// heavier observation ranks first, and repeated "misleading" feedback
// (weight 0.5 -> 0.4 -> 0.32) sinks an observation below ones it used to
// outrank.
func FeedbackScore(relevance, weight float64) float64 { return relevance * (0.5 + weight) }

// SortCandidates orders observation candidates by score, then relevance,
// then dense id (deterministic).
func SortCandidates(cs []ObsCandidate) { slices.SortFunc(cs, compareCandidates) }

func compareCandidates(a, b ObsCandidate) int {
	switch {
	case a.Score != b.Score:
		if a.Score > b.Score {
			return -1
		}
		return 1
	case a.Relevance != b.Relevance:
		if a.Relevance > b.Relevance {
			return -1
		}
		return 1
	}
	return int(a.Dense) - int(b.Dense)
}

// SessionBlock composes the start-of-session block (buildSessionMemoryBlock)
// and records it (recordContextInjection): the observations block, a blank
// line, the graph block, within the work type's budget; the graph part
// takes at most GraphShare of it, and what either part leaves unused goes
// to the other. The graph part is exactly the graph block of the same
// query, scope and identity at the room it got. The block is logged
// whatever it holds, even when memory is off and it is empty.
func (c *Composer) SessionBlock(ctx context.Context, req SessionRequest) (*SessionBlock, error) {
	if err := engine.ValidateID(req.SessionID); err != nil {
		return nil, fmt.Errorf("%w: sessionId: %v", ErrInvalidRequest, err)
	}
	if req.WorkType != "" {
		if err := engine.ValidateID(req.WorkType); err != nil {
			return nil, fmt.Errorf("%w: workType: %v", ErrInvalidRequest, err)
		}
	}
	if err := validRelevance(req.MinRelevance); err != nil {
		return nil, err
	}
	budgets, err := c.Settings.Budgets()
	if err != nil {
		return nil, err
	}
	out := &SessionBlock{ObservationIDs: []string{}, SessionSummaryIDs: []string{}, GraphNodeIDs: []string{},
		GraphEdgeKeys: []engine.EdgeKey{}, BudgetTokens: budgets.Budget(req.Scope.Org, req.WorkType),
		QueryText: RetrievalQueryText(req.QueryText, req.WorkItem, req.SessionID)}
	if len(out.QueryText) > index.MaxQueryBytes {
		out.QueryText = truncateBytes(out.QueryText, index.MaxQueryBytes)
	}
	mem, err := c.Settings.MemoryConfig(req.Scope)
	if err != nil {
		return nil, err
	}
	out.Gates.MemoryEnabled = mem.MemoryEnabled
	if mem.MemoryEnabled {
		if err := c.composeSession(ctx, req, mem, out); err != nil {
			return nil, err
		}
	}
	out.Warnings = append(out.Warnings, c.ScopeWarnings(req.Identity, req.Scope, true)...)
	out.Warnings = append(out.Warnings, workTypeWarning(budgets, req.Scope.Org, req.WorkType)...)
	if !mem.MemoryEnabled {
		out.Warnings = append(out.Warnings, fmt.Sprintf("memory is off for project %s (its memory-config memoryEnabled): the block is empty", req.Scope.Project))
	}
	if out.QueryText == req.SessionID && strings.TrimSpace(req.QueryText) == "" {
		out.Warnings = append(out.Warnings, "no work item: the query is the session id; send workItem (identifier, title, description) or queryText")
	}
	log := sessionlog.InjectionLog{SessionID: req.SessionID, WorkType: cmpOrStr(req.WorkType, "unknown"), BudgetTokens: out.BudgetTokens,
		ActualTokens: out.ActualTokens, ObservationIDs: out.ObservationIDs, SessionSummaryIDs: out.SessionSummaryIDs,
		GraphNodeIDs: out.GraphNodeIDs, GraphEdgeKeys: out.GraphEdgeKeys, QueryText: out.QueryText,
		OrgID: req.Scope.Org, ProjectID: req.Scope.Project}
	if out.LogID, err = c.putInjectionLog(ctx, log); err != nil {
		return nil, err
	}
	return out, nil
}

func cmpOrStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func truncateBytes(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// composeSession fills out's block and ids (memory is on).
func (c *Composer) composeSession(ctx context.Context, req SessionRequest, mem MemoryConfig, out *SessionBlock) error {
	graphOn := false
	if req.Graph {
		enabled, err := c.Settings.GraphEnabledForProject(req.Scope)
		if err != nil {
			return err
		}
		rm, err := c.Settings.RecallMatrix()
		if err != nil {
			return err
		}
		graphOn = enabled && rm.Graph(req.Scope.Org, req.WorkType)
	}
	out.Gates.GraphIncluded = graphOn
	var peers []engine.Tenant
	if req.CrossProjectTransfer {
		var err error
		if peers, err = c.peers(req.Scope, mem); err != nil {
			return err
		}
		for _, p := range peers {
			out.Gates.Peers = append(out.Gates.Peers, p.Org+"/"+p.Project)
		}
	}
	total := out.BudgetTokens * 4
	share := c.GraphShare
	if share <= 0 || share > 1 {
		share = DefaultGraphShare
	}
	sc := c.scratch()
	defer c.pool.Put(sc)
	sc.mapMode = CodeMapModeOf(req.CodeMap)
	sc.floor, sc.floorAuto = minRelevance(req.MinRelevance)
	g := &GraphBlock{Triplets: []GraphTriplet{}}
	var obs []ObsCandidate
	var obsBlock string
	var obsIDs []string
	err := c.Store.View(func(v *engine.View) error {
		var err error
		if sc.qv, err = c.Index.Embed(ctx, sc.qv, out.QueryText); err != nil {
			return err
		}
		obs, err = c.observationCandidates(ctx, v, req, out.QueryText, peers, sc.qv)
		if err != nil {
			return err
		}
		obs = aboveFloor(obs, sc.floor)
		greq := GraphRequest{Identity: req.Identity, Scope: req.Scope, QueryText: out.QueryText, TopK: DefaultTopK, Depth: DefaultDepth}
		// The graph part first gets its share; it may be rendered again
		// below (sc.keep).
		shareRoom := int(float64(total) * share)
		if graphOn {
			sc.keep = true
			if err := c.prepareGraph(ctx, v, greq, sc, g); err != nil {
				return err
			}
			c.renderGraph(v, req.Identity, sc, g, shareRoom)
		}
		// Observations get what the graph left.
		gUsed := utf8.RuneCountInString(g.Block)
		room := total - gUsed
		if gUsed > 0 {
			room -= 2 // the blank line between the parts
		}
		obsBlock, obsIDs = c.renderObservations(v, sc, obs, room)
		// If they leave more than the share, the graph part is rendered
		// again, from the same candidates, with all they left: it is then
		// exactly the graph block of the same query at that room (the
		// same seeds, candidates and ranking), and the whole stays within
		// the total.
		final := total
		if obsBlock != "" {
			final -= utf8.RuneCountInString(obsBlock) + 2
		}
		if graphOn && final > shareRoom && len(g.Triplets)+len(g.CodeMap) < g.Candidates {
			c.renderGraph(v, req.Identity, sc, g, final)
		}
		c.finishGraph(v, sc, req.Explain, g)
		if req.Explain {
			x := &SessionExplain{Observations: []ObservationScore{}, Triplets: g.Triplets}
			for _, id := range obsIDs {
				for _, o := range obs {
					if v.ObsID(o.Dense) == id {
						x.Observations = append(x.Observations, ObservationScore{ID: id, Relevance: o.Relevance, Weight: o.Weight, Score: o.Score})
						break
					}
				}
			}
			out.Explain = x
		}
		return nil
	})
	if err != nil {
		c.log().Warn("session block degraded", "err", err, "org", req.Scope.Org, "project", req.Scope.Project)
		return nil
	}
	c.attachProvenance(g)
	parts := make([]string, 0, 2)
	if obsBlock != "" {
		parts = append(parts, obsBlock)
	}
	if g.Block != "" {
		parts = append(parts, g.Block)
	}
	out.Block = strings.Join(parts, "\n\n")
	out.ActualTokens = Tokens(out.Block)
	out.ObservationIDs = obsIDs
	seen := map[string]bool{}
	for _, t := range g.Triplets {
		for _, id := range []string{t.SourceNodeID, t.TargetNodeID} {
			if !seen[id] {
				seen[id] = true
				out.GraphNodeIDs = append(out.GraphNodeIDs, id)
			}
		}
		out.GraphEdgeKeys = append(out.GraphEdgeKeys, engine.EdgeKey{SourceID: t.SourceNodeID, TargetID: t.TargetNodeID, RelationshipName: t.Relationship})
	}
	for _, s := range g.CodeMap {
		if !seen[s.NodeID] {
			seen[s.NodeID] = true
			out.GraphNodeIDs = append(out.GraphNodeIDs, s.NodeID)
		}
	}
	out.CodeMap = g.CodeMap
	return nil
}

// peers lists the projects whose tech stacks are TransferThreshold-similar
// to this one's (any org: the Cedar check, not this list, keeps other
// orgs' observations out).
func (c *Composer) peers(self engine.Tenant, mem MemoryConfig) ([]engine.Tenant, error) {
	if len(mem.TechStack) == 0 {
		return nil, nil
	}
	all, err := c.Settings.Projects()
	if err != nil {
		return nil, err
	}
	var out []engine.Tenant
	for _, t := range all {
		if t == self {
			continue
		}
		pc, err := c.Settings.MemoryConfig(t)
		if err != nil {
			return nil, err
		}
		if pc.MemoryEnabled && Jaccard(mem.TechStack, pc.TechStack) >= TransferThreshold {
			out = append(out, t)
		}
	}
	return out, nil
}

// observationCandidates searches the project's observations (and the
// peers', one search per org), keeps those the PEP lets the identity read
// and ranks them with FeedbackScore.
func (c *Composer) observationCandidates(ctx context.Context, v *engine.View, req SessionRequest, query string, peers []engine.Tenant, qv []float32) ([]ObsCandidate, error) {
	type search struct {
		org     string
		project string // "" when peers of the org join
		allow   *roaring.Bitmap
	}
	searches := []search{{org: req.Scope.Org, project: req.Scope.Project, allow: v.ScopeObservations(req.Scope)}}
	for _, p := range peers {
		b := v.ScopeObservations(p)
		if b == nil || b.IsEmpty() {
			continue
		}
		i := slices.IndexFunc(searches, func(s search) bool { return s.org == p.Org })
		if i < 0 {
			searches = append(searches, search{org: p.Org, allow: b.Clone()})
			continue
		}
		if searches[i].allow == nil {
			searches[i].allow = b.Clone()
		} else {
			searches[i].allow = roaring.Or(searches[i].allow, b)
		}
		searches[i].project = ""
	}
	pr := c.PEP.NewRequest(req.Identity, policy.VerbRead)
	defer pr.Release()
	var out []ObsCandidate
	var hits []fuse.Ranked
	for _, s := range searches {
		if s.allow == nil || s.allow.IsEmpty() {
			continue
		}
		var err error
		hits, _, err = c.Index.SearchObservations(ctx, hits, index.Query{Text: query, Org: s.org, Project: s.project, Scores: true,
			Allow: s.allow, K: sessionCandidates, Vector: qv})
		if err != nil {
			return nil, err
		}
		hits = addFollowers(v, hits, s.allow)
		for _, h := range hits {
			if !allowObs(pr, v, h.ID) {
				continue
			}
			w := v.ObsWeight(h.ID)
			out = append(out, ObsCandidate{Dense: h.ID, Relevance: h.Score, Weight: w, Score: FeedbackScore(h.Score, w)})
		}
	}
	SortCandidates(out)
	return out, nil
}

// aboveFloor keeps the candidates whose relevance is at least floor
// times the best one's (see DefaultMinRelevance), in their order.
func aboveFloor(cs []ObsCandidate, floor float64) []ObsCandidate {
	best := 0.0
	for _, x := range cs {
		best = max(best, x.Relevance)
	}
	kept := cs[:0]
	for _, x := range cs {
		if x.Relevance >= floor*best {
			kept = append(kept, x)
		}
	}
	return kept
}

// renderObservations renders the observations block within limit code
// points (header included), skip and continue; it returns the block and
// the ids it holds. Excerpts come from the content heads kept in memory;
// the store is read only for a head too short to fill an excerpt.
func (c *Composer) renderObservations(v *engine.View, sc *graphScratch, cs []ObsCandidate, limit int) (string, []string) {
	bb, ln := &sc.blk, &sc.ln
	bb.reset()
	var ids []string
	for _, x := range cs {
		if !v.ObsLive(x.Dense) {
			continue
		}
		text, truncated := v.ObsHead(x.Dense)
		if truncated && SanitizedLen(text, MaxExcerptRunes) < MaxExcerptRunes {
			full, err := c.Store.ObservationContents([]uint32{x.Dense})
			if err != nil || full[0] == "" {
				continue
			}
			text = full[0]
		}
		observationLine(ln, v.ObsID(x.Dense), text, x.Weight)
		n := 1 + ln.runes()
		if bb.empty() {
			n += bb.sectionCost(ObservationsHeader)
		}
		if bb.runes+n > limit || !bb.fresh(ln.b) {
			continue
		}
		if bb.empty() {
			bb.section(ObservationsHeader)
		}
		bb.add(ln.b, ln.runes())
		ids = append(ids, v.ObsID(x.Dense))
	}
	if ids == nil {
		return "", []string{}
	}
	return string(bb.b), ids
}

// observationLine renders one observation into ln: "- [<id>] <excerpt>
// (weight: <w>)", the excerpt cut to MaxExcerptRunes.
func observationLine(ln *lineBuf, id, content string, weight float64) {
	ln.reset()
	ln.lit("- [")
	ln.text(id, MaxNameRunes)
	ln.lit("] ")
	ln.text(content, MaxExcerptRunes)
	ln.lit(" (weight: ")
	ln.num(weight)
	ln.lit(")")
}

// ObservationLine is one line of the observations block as the block
// renders it (for tools that must produce the same format, such as the
// relevance harness's baselines).
func ObservationLine(id, content string, weight float64) string {
	var ln lineBuf
	observationLine(&ln, id, content, weight)
	return string(ln.b)
}
