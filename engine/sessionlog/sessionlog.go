package sessionlog

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/kgctx/kgctx/engine"
)

// Store is the injection logs of an engine.Store.
type Store struct {
	st *engine.Store
	kv *engine.KV
	mu sync.Mutex // serialises feedback (read the logs, move, record)
}

// New returns st's log store: the same one for every call over st.
func New(st *engine.Store) (*Store, error) {
	v, err := st.KV().Shared("sessionlog", func() (any, error) {
		return &Store{st: st, kv: st.KV()}, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*Store), nil
}

// InjectionLog is the references' ContextInjectionLog: what a composed
// session block surfaced, so that feedback can reweight it later.
type InjectionLog struct {
	ID                string           `json:"id"`
	SessionID         string           `json:"sessionId" oas:"required"`
	WorkType          string           `json:"workType"`
	BudgetTokens      int              `json:"budgetTokens"`
	ActualTokens      int              `json:"actualTokens"`
	ObservationIDs    []string         `json:"observationIds"`
	SessionSummaryIDs []string         `json:"sessionSummaryIds"`
	GraphNodeIDs      []string         `json:"graphNodeIds"`
	GraphEdgeKeys     []engine.EdgeKey `json:"graphEdgeKeys"`
	QueryText         string           `json:"queryText"`
	OrgID             string           `json:"orgId"`
	ProjectID         string           `json:"projectId,omitempty"`
	Timestamp         time.Time        `json:"timestamp"`
	// FeedbackApplied lists the outcomes already applied from this log, so
	// that the same feedback twice moves the weights once.
	FeedbackApplied []string `json:"feedbackApplied,omitempty"`
}

// Log ids and keys: 'l' org 0 session 0 (engine.SessionKey) + big-endian
// nanoseconds + log id, so one prefix scan lists an org's session's logs in
// time order.
func logKey(org, session string, ts time.Time, id string) []byte {
	k := binary.BigEndian.AppendUint64(logPrefix(org, session), uint64(ts.UnixNano()))
	return append(k, id...)
}

func logPrefix(org, session string) []byte { return engine.SessionKey(engine.PrefixLog, org, session) }

// Injection log limits: a log lists at most this many ids of each kind.
const maxLogIDs = 10_000

// ValidateInjectionLog checks a log's fields; the error names the field.
func ValidateInjectionLog(l *InjectionLog) error {
	if err := engine.ValidateID(l.SessionID); err != nil {
		return fmt.Errorf("sessionId: %w", err)
	}
	if err := engine.ValidateID(l.OrgID); err != nil {
		return fmt.Errorf("orgId: %w", err)
	}
	if l.ProjectID != "" {
		if err := engine.ValidateID(l.ProjectID); err != nil {
			return fmt.Errorf("projectId: %w", err)
		}
	}
	if l.WorkType != "" {
		if err := engine.ValidateID(l.WorkType); err != nil {
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
	if err := ValidateInjectionLog(&l); err != nil {
		return "", fmt.Errorf("%w: %w", engine.ErrInvalidInput, err)
	}
	if l.ID == "" {
		l.ID = engine.NewID("log")
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
		l.GraphEdgeKeys = []engine.EdgeKey{}
	}
	v, err := json.Marshal(&l)
	if err != nil {
		return "", err
	}
	if err := s.kv.Update(func(txn *badger.Txn) error {
		if err := engine.MarkSession(txn, l.OrgID, l.SessionID); err != nil {
			return err
		}
		return txn.Set(logKey(l.OrgID, l.SessionID, l.Timestamp, l.ID), v)
	}); err != nil {
		return "", fmt.Errorf("sessionlog: store injection log: %w", err)
	}
	return l.ID, nil
}

// InjectionLogs returns org's session's logs, newest first.
func (s *Store) InjectionLogs(org, session string) ([]InjectionLog, error) {
	var out []InjectionLog
	err := s.kv.Iterate(logPrefix(org, session), func(_, v []byte) error {
		var l InjectionLog
		if err := json.Unmarshal(v, &l); err != nil {
			return fmt.Errorf("%w: injection log: %v", engine.ErrCorrupt, err)
		}
		out = append(out, l)
		return nil
	})
	slices.Reverse(out)
	return out, err
}

// DropOrg deletes every injection log of org (its data moved to another
// shard of a cluster) and returns how many it deleted.
func (s *Store) DropOrg(org string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := engine.SessionKey(engine.PrefixLog, org, "")
	return s.kv.DeleteWhere(k[:len(k)-1], nil)
}
