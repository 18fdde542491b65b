package model

import "time"

// ObservationMeta is an observation's metadata (the references'
// MemoryObservation metadata).
type ObservationMeta struct {
	Paths     []string `json:"paths"`
	SessionID string   `json:"sessionId,omitempty"`
	Namespace string   `json:"namespace,omitempty"`
	Tags      []string `json:"tags"`
	WorkType  string   `json:"workType,omitempty"`
}

// Observation is a short note learnt in an earlier session.
type Observation struct {
	ID        string          `json:"id"`
	Dense     uint32          `json:"-"`
	OrgID     string          `json:"orgId"`
	ProjectID string          `json:"projectId"`
	Content   string          `json:"content"`
	Metadata  ObservationMeta `json:"metadata"`
	Weight    float64         `json:"weight"`
	CreatedAt time.Time       `json:"createdAt"`
}
