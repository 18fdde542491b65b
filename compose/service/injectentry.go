package service

import (
	"fmt"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/delivery"
)

// InjectEntry is what a Write carries of an enqueue (WriteEnqueue), the
// replicated log's own type: the inject as its writer gave it. The
// queue's fields (delivery id, sequence, state, times, content hash,
// attempts) are set by each replica's queue when it applies the write, so
// the entry does not carry them; the queue's record (delivery.Inject) and
// the HTTP body are types of their own.
//
// Its JSON names are the ones the log's enqueues have always used (it
// carried a delivery.Inject before), so that entries written before V
// existed (V 0) still apply; the fields they carried beyond these were
// overwritten by the queue and are ignored.
type InjectEntry struct {
	V              int      `json:"v,omitempty"`
	OrgID          string   `json:"orgId"`
	SessionID      string   `json:"sessionId"`
	AgentID        string   `json:"agentId,omitempty"`
	Text           string   `json:"text"`
	ObservationIDs []string `json:"observationIds"`
}

// InjectEntryVersion is the InjectEntry.V this code writes; it applies
// entries up to it (0: written before the field).
const InjectEntryVersion = 1

// NewInjectEntry is the log entry of an enqueue of in.
func NewInjectEntry(in delivery.Inject) *InjectEntry {
	return &InjectEntry{V: InjectEntryVersion, OrgID: in.OrgID, SessionID: in.SessionID, AgentID: in.AgentID,
		Text: in.Text, ObservationIDs: in.ObservationIDs}
}

// Inject is the inject e enqueues, for delivery.Store.Enqueue. An entry of
// a later version than this code knows is invalid input: refused alike
// by every replica of this version.
func (e *InjectEntry) Inject() (delivery.Inject, error) {
	if e.V < 0 || e.V > InjectEntryVersion {
		return delivery.Inject{}, fmt.Errorf("%w: an enqueue of log entry version %d (this node knows up to %d)", engine.ErrInvalidInput, e.V, InjectEntryVersion)
	}
	return delivery.Inject{OrgID: e.OrgID, SessionID: e.SessionID, AgentID: e.AgentID, Text: e.Text, ObservationIDs: e.ObservationIDs}, nil
}
