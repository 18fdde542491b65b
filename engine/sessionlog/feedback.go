package sessionlog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/kgctx/kgctx/engine"
)

// Feedback outcomes and their targets s in w <- (1 - alpha) w + alpha s.
const (
	OutcomeHelpful    = "helpful"
	OutcomeMisleading = "misleading"
	OutcomeNeutral    = "neutral"
)

// FeedbackResult counts the distinct items whose weight moved.
type FeedbackResult struct {
	Observations int `json:"observations"`
	Nodes        int `json:"nodes"`
	Edges        int `json:"edges"`
	// Logs is the number of injection logs the outcome was applied from
	// (logs that had it already are skipped).
	Logs int `json:"logs"`
}

// ApplyFeedback applies outcome to everything org's session's injection
// logs surfaced: w <- (1 - alpha) w + alpha s, s = 1 for helpful, 0 for
// misleading; neutral moves nothing but is recorded. Each log takes each
// outcome once. Weights, and the logs' record of what was applied, commit
// in one batch.
func (s *Store) ApplyFeedback(ctx context.Context, org, session, outcome string, alpha float64) (FeedbackResult, error) {
	var res FeedbackResult
	var target float64
	switch outcome {
	case OutcomeHelpful:
		target = 1
	case OutcomeMisleading:
		target = 0
	case OutcomeNeutral:
	default:
		return res, fmt.Errorf("%w: outcome %q: want helpful, misleading or neutral", engine.ErrInvalidInput, outcome)
	}
	if !(alpha > 0 && alpha <= 1) {
		return res, fmt.Errorf("%w: alpha %v is outside (0,1]", engine.ErrInvalidInput, alpha)
	}
	// The lock keeps the logs read here unchanged until the batch that
	// records the outcome in them commits.
	s.mu.Lock()
	defer s.mu.Unlock()
	var refs []engine.WeightRefs
	var records []engine.Record
	err := s.kv.Iterate(logPrefix(org, session), func(k, v []byte) error {
		var l InjectionLog
		if err := json.Unmarshal(v, &l); err != nil {
			return fmt.Errorf("%w: injection log: %v", engine.ErrCorrupt, err)
		}
		if slices.Contains(l.FeedbackApplied, outcome) {
			return nil
		}
		res.Logs++
		l.FeedbackApplied = append(l.FeedbackApplied, outcome)
		if outcome != OutcomeNeutral {
			// Each log moves only what lies in its own org and project.
			refs = append(refs, engine.WeightRefs{Scope: engine.Tenant{Org: org, Project: l.ProjectID},
				ObservationIDs: l.ObservationIDs, NodeIDs: l.GraphNodeIDs, EdgeKeys: l.GraphEdgeKeys})
		}
		b, err := json.Marshal(&l)
		if err != nil {
			return err
		}
		records = append(records, engine.Record{Key: bytes.Clone(k), Value: b})
		return nil
	})
	if err != nil || len(records) == 0 {
		return res, err
	}
	moved, err := s.st.MoveWeights(ctx, refs, alpha, target, records...)
	res.Observations, res.Nodes, res.Edges = moved.Observations, moved.Nodes, moved.Edges
	return res, err
}
