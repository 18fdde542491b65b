package compose

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/traverse"
)

// Self-learning defaults (the reference's GraphEngine).
const (
	DefaultPropagationRate   = 0.3
	DefaultSimilarErrorScore = 0.75
	maxLearnedNameRunes      = 160
)

// ToolResult is the outcome of one tool call of a session.
type ToolResult struct {
	SessionID string
	Scope     engine.Tenant
	Tool      string
	Success   bool
	Error     string
	Fix       string
}

// Validate checks the fields; the error names the one at fault.
func (r *ToolResult) Validate() error {
	bad := func(f string, a ...any) error { return fmt.Errorf("%w: "+f, append([]any{ErrInvalidRequest}, a...)...) }
	switch {
	case engine.ValidateID(r.SessionID) != nil:
		return bad("sessionId is not a valid id")
	case strings.TrimSpace(r.Tool) == "" || len(r.Tool) > MaxToolBytes || !utf8.ValidString(r.Tool) || hasCtl(r.Tool):
		return bad("tool must be 1 to %d bytes of UTF-8 without control characters", MaxToolBytes)
	case !r.Success && strings.TrimSpace(r.Error) == "":
		return bad("a failed tool result needs its error")
	case len(r.Error) > 16<<10 || len(r.Fix) > 16<<10 || !utf8.ValidString(r.Error) || !utf8.ValidString(r.Fix):
		return bad("error and fix must be at most 16 KiB of UTF-8")
	}
	return nil
}

// LearnedTriplet is one triplet a tool result recorded.
type LearnedTriplet struct {
	Source       string `json:"source"`
	Relationship string `json:"relationship"`
	Target       string `json:"target"`
}

// LearnResult is what a tool result changed.
type LearnResult struct {
	Triplets []LearnedTriplet `json:"triplets"`
	// Propagated counts the resolved_by edges whose weight rose.
	Propagated int `json:"propagated"`
}

// learnedName turns free text into a node name: kind prefix, whitespace
// folded, capped (the full text is the node's description).
func learnedName(kind, text string) string {
	return kind + ":" + Sanitize(text, maxLearnedNameRunes)
}

// ToolResult records a tool result in the session's project graph (the
// reference's self-learning GraphEngine):
//   - a failure records error --caused_by--> tool, error --in_session-->
//     session, and error --similar_to--> e for every earlier error e whose
//     vector is within SimilarErrorScore of this one's;
//   - a fix records error --resolved_by--> fix and fix --learned_from-->
//     session (the error is the result's own, or the session's last error
//     of the same tool);
//   - a success of a tool that failed before, in any session, raises the
//     resolved_by edges of the errors it caused and of their similar
//     errors by an EMA step of 0.1 x PropagationRate towards 1 (the
//     reference's confidence propagation follows every error --caused_by-->
//     tool edge; see propagationTargets for the bound).
func (c *Composer) ToolResult(ctx context.Context, r ToolResult) (*LearnResult, error) {
	return c.ToolResultAt(ctx, r, engine.ImportOptions{})
}

// ToolResultAt is ToolResult importing with opt's time and ids (a
// cluster's replica applying it from the log).
func (c *Composer) ToolResultAt(ctx context.Context, r ToolResult, opt engine.ImportOptions) (*LearnResult, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	out := &LearnResult{Triplets: []LearnedTriplet{}}
	toolName := "tool:" + Sanitize(r.Tool, maxLearnedNameRunes)
	sessionName := "session:" + r.SessionID
	var in []engine.TripletInput
	add := func(t engine.TripletInput) {
		in = append(in, t)
		out.Triplets = append(out.Triplets, LearnedTriplet{t.Source, t.Relationship, t.Target})
	}
	errName := ""
	if strings.TrimSpace(r.Error) != "" {
		errName = learnedName("error", r.Error)
	}
	if !r.Success && errName != "" {
		prov := &engine.Provenance{SessionID: r.SessionID}
		add(engine.TripletInput{Source: errName, SourceType: "error", SourceDescription: r.Error, Relationship: "caused_by",
			Target: toolName, TargetType: "tool", Provenance: prov})
		add(engine.TripletInput{Source: errName, Relationship: "in_session", Target: sessionName, TargetType: "session", Provenance: prov})
		similar, err := c.similarErrors(ctx, r, errName)
		if err != nil {
			return nil, err
		}
		for _, e := range similar {
			add(engine.TripletInput{Source: errName, Relationship: "similar_to", Target: e, Provenance: prov})
		}
	}
	if fix := strings.TrimSpace(r.Fix); fix != "" {
		target := errName
		if target == "" {
			var err error
			if target, err = c.lastError(r.Scope, toolName, sessionName); err != nil {
				return nil, err
			}
		}
		if target != "" {
			fixName := learnedName("fix", fix)
			prov := &engine.Provenance{SessionID: r.SessionID}
			add(engine.TripletInput{Source: target, Relationship: "resolved_by", Target: fixName, TargetType: "fix", TargetDescription: fix, Provenance: prov})
			add(engine.TripletInput{Source: fixName, Relationship: "learned_from", Target: sessionName, TargetType: "session", Provenance: prov})
		}
	}
	if len(in) > 0 {
		if _, err := c.Store.Import(ctx, r.Scope, in, opt); err != nil {
			return nil, err
		}
	}
	if r.Success {
		edges, err := c.propagationTargets(r.Scope, toolName)
		if err != nil {
			return nil, err
		}
		rate := c.PropagationRate
		if rate <= 0 {
			rate = DefaultPropagationRate
		}
		if out.Propagated, err = c.Store.UpdateEdgeWeights(ctx, edges, 0.1*rate, 1); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// similarErrors names the project's error nodes whose vectors are similar
// enough to the new error's.
func (c *Composer) similarErrors(ctx context.Context, r ToolResult, errName string) ([]string, error) {
	v, err := c.Index.NodeVector(ctx, errName, "error", r.Error)
	if err != nil {
		return nil, err
	}
	minSim := c.SimilarErrorScore
	if minSim <= 0 {
		minSim = DefaultSimilarErrorScore
	}
	var names []string
	err = c.Store.View(func(view *engine.View) error {
		scope := view.ScopeNodes(r.Scope)
		if scope == nil {
			return nil
		}
		errs := roaring.New()
		it := scope.Iterator()
		for it.HasNext() {
			if n := it.Next(); view.NodeType(n) == "error" {
				errs.Add(n)
			}
		}
		self, hasSelf := view.Lookup(r.Scope, errName)
		for _, h := range c.Index.SimilarNodes(v, errs, 20, minSim) {
			if hasSelf && h.ID == self {
				continue
			}
			names = append(names, view.NodeName(h.ID))
		}
		return nil
	})
	return names, err
}

// sessionErrors lists the error nodes caused by tool in session.
func sessionErrors(v *engine.View, t engine.Tenant, toolName, sessionName string) []uint32 {
	tool, ok1 := v.Lookup(t, toolName)
	ses, ok2 := v.Lookup(t, sessionName)
	causedBy, ok3 := v.RelID("caused_by")
	inSession, ok4 := v.RelID("in_session")
	if !ok1 || !ok2 || !ok3 || !ok4 || v.In(tool) == nil {
		return nil
	}
	var out []uint32
	it := v.In(tool).Iterator()
	for it.HasNext() {
		e := v.Edge(it.Next())
		if e.Rel != causedBy || v.Out(e.Src) == nil {
			continue
		}
		oi := v.Out(e.Src).Iterator()
		for oi.HasNext() {
			if f := v.Edge(oi.Next()); f.Rel == inSession && f.Dst == ses {
				out = append(out, e.Src)
				break
			}
		}
	}
	return out
}

// lastError is the most recent error of tool in session ("" if none).
func (c *Composer) lastError(t engine.Tenant, toolName, sessionName string) (string, error) {
	name := ""
	err := c.Store.View(func(v *engine.View) error {
		var best uint32
		found := false
		for _, e := range sessionErrors(v, t, toolName, sessionName) {
			if !found || v.Node(e).UpdatedAt.After(v.Node(best).UpdatedAt) || (v.Node(e).UpdatedAt.Equal(v.Node(best).UpdatedAt) && e > best) {
				best, found = e, true
			}
		}
		if found {
			name = v.NodeName(best)
		}
		return nil
	})
	return name, err
}

// propagationTargets lists the resolved_by edges a success of tool raises:
// those of the errors the tool caused in scope t (every error
// --caused_by--> tool edge, whichever session recorded it) and of the
// errors similar_to them (either direction), in scope t too.
//
// Bounded: a success visits at most MaxFanout errors caused by the tool
// (Expand.MaxFanout, default 64; the most recently linked first, by edge
// id, which the engine never reuses) and at most 2 x MaxFanout errors in
// all (similar errors of the most recent errors first, strongest links
// first), so a tool that failed thousands of times costs a bounded write.
func (c *Composer) propagationTargets(t engine.Tenant, toolName string) ([]uint32, error) {
	fanout := c.Expand.MaxFanout
	if fanout <= 0 {
		fanout = traverse.DefaultMaxFanout
	}
	var edges []uint32
	err := c.Store.View(func(v *engine.View) error {
		tool, ok1 := v.Lookup(t, toolName)
		causedBy, ok2 := v.RelID("caused_by")
		resolvedBy, ok3 := v.RelID("resolved_by")
		scope := v.ScopeNodes(t)
		if !ok1 || !ok2 || !ok3 || scope == nil || v.In(tool) == nil {
			return nil
		}
		var errs []uint32 // visit order
		seen := roaring.New()
		visit := func(n uint32) {
			if scope.Contains(n) && !seen.Contains(n) {
				seen.Add(n)
				errs = append(errs, n)
			}
		}
		it := v.In(tool).ReverseIterator()
		for it.HasNext() && len(errs) < fanout {
			if e := v.Edge(it.Next()); e.Rel == causedBy {
				visit(e.Src)
			}
		}
		if similarTo, ok := v.RelID("similar_to"); ok {
			direct := len(errs)
			for _, e := range errs[:direct] {
				for _, in := range v.Ranked(e) {
					if len(errs) >= 2*fanout {
						break
					}
					if in.Rel == similarTo {
						visit(in.Other())
					}
				}
			}
		}
		for _, n := range errs {
			if o := v.Out(n); o != nil {
				oi := o.Iterator()
				for oi.HasNext() {
					if e := oi.Next(); v.Edge(e).Rel == resolvedBy {
						edges = append(edges, e)
					}
				}
			}
		}
		return nil
	})
	return edges, err
}
