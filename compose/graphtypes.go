package compose

import (
	"fmt"
	"unicode/utf8"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/index"
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
	// MinRelevance is the relevance floor (see DefaultMinRelevance): nil
	// means the default, 0 none.
	MinRelevance *float64
}

// DefaultMinRelevance is the relevance floor of a block when the request
// names none: a triplet line or code map entry enters only when its query
// relevance (its seed's score times the share of the query its path
// explains: relevanceOf) is at least this share of the best the block
// shows, and an observation only when its relevance is at least this
// share of the best observation's. What is that far below the best
// matches the query by little more than a weak seed's neighbourhood, and
// the block is better without it (precision) than filled with it.
//
// The default is the largest floor that costs no recall on the relevance
// harness's sets (0.05, 0.075 and 0.1 tried; bench/README.md, "Relevance
// floor"), and it holds outside code graphs only: in a code graph
// (codeGraph) a weak seed's callees and map entries are often what a
// change touches, and every floor tried there (0.01 to 0.1) lost function
// recall, so a code block's default is none. A request's own floor holds
// everywhere.
const DefaultMinRelevance = 0.05

// minRelevance is a request's floor (see GraphRequest.MinRelevance), and
// whether it is the default.
func minRelevance(p *float64) (float64, bool) {
	if p == nil {
		return DefaultMinRelevance, true
	}
	return *p, false
}

// validRelevance checks a requested floor.
func validRelevance(p *float64) error {
	if p != nil && !(*p >= 0 && *p <= 1) {
		return fmt.Errorf("%w: minRelevance %v is outside [0,1]", ErrInvalidRequest, *p)
	}
	return nil
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
	return validRelevance(r.MinRelevance)
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

	Edge     uint32 `json:"-"`
	Src, Dst uint32 `json:"-"`
	cand     entry  // the render's record of it (explain)
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
