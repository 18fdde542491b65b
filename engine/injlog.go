package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// EdgeKey names an edge by its endpoints' node ids and relationship.
type EdgeKey struct {
	SourceID         string `json:"sourceId"`
	TargetID         string `json:"targetId"`
	RelationshipName string `json:"relationshipName"`
}

// InjectionLog is the references' ContextInjectionLog: what a composed
// session block surfaced, so that feedback can reweight it later.
type InjectionLog struct {
	ID                string    `json:"id"`
	SessionID         string    `json:"sessionId"`
	WorkType          string    `json:"workType"`
	BudgetTokens      int       `json:"budgetTokens"`
	ActualTokens      int       `json:"actualTokens"`
	ObservationIDs    []string  `json:"observationIds"`
	SessionSummaryIDs []string  `json:"sessionSummaryIds"`
	GraphNodeIDs      []string  `json:"graphNodeIds"`
	GraphEdgeKeys     []EdgeKey `json:"graphEdgeKeys"`
	QueryText         string    `json:"queryText"`
	OrgID             string    `json:"orgId"`
	ProjectID         string    `json:"projectId,omitempty"`
	Timestamp         time.Time `json:"timestamp"`
	// FeedbackApplied lists the outcomes already applied from this log, so
	// that the same feedback twice moves the weights once.
	FeedbackApplied []string `json:"feedbackApplied,omitempty"`
}

// Log ids and keys: 'l' org 0 session 0 (sessionKey) + big-endian
// nanoseconds + log id, so one prefix scan lists an org's session's logs in
// time order.
func logKey(org, session string, ts time.Time, id string) []byte {
	k := binary.BigEndian.AppendUint64(logPrefix(org, session), uint64(ts.UnixNano()))
	return append(k, id...)
}

func logPrefix(org, session string) []byte { return sessionKey(pfxLog, org, session) }

// Injection log limits: a log lists at most this many ids of each kind.
const maxLogIDs = 10_000

// ValidateInjectionLog checks a log's fields; the error names the field.
func ValidateInjectionLog(l *InjectionLog) error {
	if err := ValidateID(l.SessionID); err != nil {
		return fmt.Errorf("sessionId: %w", err)
	}
	if err := ValidateID(l.OrgID); err != nil {
		return fmt.Errorf("orgId: %w", err)
	}
	if l.ProjectID != "" {
		if err := ValidateID(l.ProjectID); err != nil {
			return fmt.Errorf("projectId: %w", err)
		}
	}
	if l.WorkType != "" {
		if err := ValidateID(l.WorkType); err != nil {
			return fmt.Errorf("workType: %w", err)
		}
	}
	if l.BudgetTokens < 0 || l.ActualTokens < 0 {
		return errors.New("budgetTokens and actualTokens must not be negative")
	}
	if len(l.ObservationIDs) > maxLogIDs || len(l.GraphNodeIDs) > maxLogIDs || len(l.GraphEdgeKeys) > maxLogIDs || len(l.SessionSummaryIDs) > maxLogIDs {
		return fmt.Errorf("a log lists at most %d ids of each kind", maxLogIDs)
	}
	if len(l.QueryText) > 64<<10 {
		return errors.New("queryText is over 64 KiB")
	}
	return nil
}

// PutInjectionLog stores l (recordContextInjection), assigning its id and
// timestamp when empty, and returns the id.
func (s *Store) PutInjectionLog(l InjectionLog) (string, error) {
	if err := s.checkOpen(); err != nil {
		return "", err
	}
	if err := ValidateInjectionLog(&l); err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalidInput, err)
	}
	if l.ID == "" {
		u := newUUID()
		l.ID = "log_" + obsIDEncoding.EncodeToString(u[:10])
	}
	if l.Timestamp.IsZero() {
		l.Timestamp = time.Now().UTC()
	}
	for _, p := range []*[]string{&l.ObservationIDs, &l.SessionSummaryIDs, &l.GraphNodeIDs} {
		if *p == nil {
			*p = []string{}
		}
	}
	if l.GraphEdgeKeys == nil {
		l.GraphEdgeKeys = []EdgeKey{}
	}
	v, err := json.Marshal(&l)
	if err != nil {
		return "", err
	}
	if err := s.db.Update(func(txn *badger.Txn) error {
		if err := markSession(txn, l.OrgID, l.SessionID); err != nil {
			return err
		}
		return txn.Set(logKey(l.OrgID, l.SessionID, l.Timestamp, l.ID), v)
	}); err != nil {
		return "", fmt.Errorf("engine: store injection log: %w", err)
	}
	return l.ID, nil
}

// InjectionLogs returns org's session's logs, newest first.
func (s *Store) InjectionLogs(org, session string) ([]InjectionLog, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	var out []InjectionLog
	err := s.iterate(logPrefix(org, session), func(_, v []byte) error {
		var l InjectionLog
		if err := json.Unmarshal(v, &l); err != nil {
			return fmt.Errorf("%w: injection log: %v", ErrCorrupt, err)
		}
		out = append(out, l)
		return nil
	})
	slices.Reverse(out)
	return out, err
}

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
		return res, fmt.Errorf("%w: outcome %q: want helpful, misleading or neutral", ErrInvalidInput, outcome)
	}
	if !(alpha > 0 && alpha <= 1) {
		return res, fmt.Errorf("%w: alpha %v is outside (0,1]", ErrInvalidInput, alpha)
	}
	ema := func(w float64) float64 { return (1-alpha)*w + alpha*target }
	_, err := s.write(ctx, func(b *batch) error {
		type logRow struct {
			key []byte
			log InjectionLog
		}
		var rows []logRow
		err := s.iterate(logPrefix(org, session), func(k, v []byte) error {
			var l InjectionLog
			if err := json.Unmarshal(v, &l); err != nil {
				return fmt.Errorf("%w: injection log: %v", ErrCorrupt, err)
			}
			if !slices.Contains(l.FeedbackApplied, outcome) {
				rows = append(rows, logRow{bytes.Clone(k), l})
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			return errNothing
		}
		obs := map[uint32]*pobs{}
		nodes := map[uint32]*pnode{}
		edges := map[uint32]*pedge{}
		for i := range rows {
			l := &rows[i].log
			res.Logs++
			l.FeedbackApplied = append(l.FeedbackApplied, outcome)
			if outcome == OutcomeNeutral {
				continue
			}
			for _, id := range l.ObservationIDs {
				d, ok := b.g.byObs[id]
				if !ok {
					continue // deleted since
				}
				p := obs[d]
				if p == nil {
					p = &pobs{id: d, rec: b.g.obs[d]}
					obs[d] = p
					b.obsList = append(b.obsList, p)
				}
				p.rec.weight = ema(p.rec.weight)
			}
			for _, id := range l.GraphNodeIDs {
				u, err := parseUUID(id)
				if err != nil {
					continue
				}
				n, ok := b.g.nodeByUUID(u)
				if !ok {
					continue
				}
				p := nodes[n]
				if p == nil {
					p = &pnode{id: n, rec: b.g.nodes[n], dirty: true}
					nodes[n] = p
					b.nodeList = append(b.nodeList, p)
				}
				p.rec.weight = ema(p.rec.weight)
				p.rec.updated = b.now
			}
			for _, k := range l.GraphEdgeKeys {
				e, ok := b.edgeByKey(k)
				if !ok {
					continue
				}
				p := edges[e]
				if p == nil {
					p = &pedge{id: e, rec: b.g.edges[e], dirty: true}
					edges[e] = p
					b.edgeList = append(b.edgeList, p)
				}
				p.rec.weight = ema(p.rec.weight)
			}
		}
		res.Observations, res.Nodes, res.Edges = len(obs), len(nodes), len(edges)
		if err := b.loadEdgeMeta(); err != nil {
			return err
		}
		for _, r := range rows {
			v, err := json.Marshal(&r.log)
			if err != nil {
				return err
			}
			b.extra = append(b.extra, kv{r.key, v})
		}
		return nil
	}, time.Now(), true)
	if err == errNothing {
		return res, nil
	}
	return res, err
}

// edgeByKey resolves an EdgeKey against the graph.
func (b *batch) edgeByKey(k EdgeKey) (uint32, bool) {
	su, err1 := parseUUID(k.SourceID)
	tu, err2 := parseUUID(k.TargetID)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	src, ok1 := b.g.nodeByUUID(su)
	dst, ok2 := b.g.nodeByUUID(tu)
	rel, ok3 := b.g.relIndex[k.RelationshipName]
	if !ok1 || !ok2 || !ok3 {
		return 0, false
	}
	e, ok := b.g.edgeByTriple(src, rel, dst)
	return e, ok
}

// UpdateEdgeWeights moves the weight of each live edge in edges with
// w <- (1 - alpha) w + alpha target (EMA), durably. Gone edges are skipped.
// It returns how many edges moved.
func (s *Store) UpdateEdgeWeights(ctx context.Context, edges []uint32, alpha, target float64) (int, error) {
	if !(alpha > 0 && alpha <= 1) || target < 0 || target > 1 {
		return 0, fmt.Errorf("%w: alpha %v / target %v out of range", ErrInvalidInput, alpha, target)
	}
	n := 0
	_, err := s.write(ctx, func(b *batch) error {
		seen := map[uint32]bool{}
		for _, e := range edges {
			if seen[e] || int(e) >= len(b.g.edges) || !b.g.edges[e].live {
				continue
			}
			seen[e] = true
			p := &pedge{id: e, rec: b.g.edges[e], dirty: true}
			p.rec.weight = (1-alpha)*p.rec.weight + alpha*target
			b.edgeList = append(b.edgeList, p)
		}
		n = len(b.edgeList)
		if n == 0 {
			return errNothing
		}
		return b.loadEdgeMeta()
	}, time.Now(), true)
	if err == errNothing {
		return 0, nil
	}
	return n, err
}
