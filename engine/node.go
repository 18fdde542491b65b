package engine

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"
)

// Node is an entity of a project's graph as callers see it.
type Node struct {
	ID          string   `json:"id"` // stable external id (UUID)
	Dense       uint32   `json:"-"`  // internal id, for bitmaps and indexes
	OrgID       string   `json:"orgId"`
	ProjectID   string   `json:"projectId"`
	Name        string   `json:"name"`
	Aliases     []string `json:"aliases,omitempty"`
	Type        string   `json:"type,omitempty"`
	Description string   `json:"description,omitempty"`
	// Exact: the name is exact (case kept, nothing folded), as code
	// symbols are; Location and Signature are a code symbol's (code.go).
	Exact     bool      `json:"exact,omitempty"`
	Location  *Location `json:"location,omitempty"`
	Signature string    `json:"signature,omitempty"`
	Weight    float64   `json:"weight"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Triplet is one live edge with its endpoints resolved.
type Triplet struct {
	EdgeID       uint32       `json:"-"`
	Src, Dst     uint32       `json:"-"`
	Source       string       `json:"source"`
	Relationship string       `json:"relationship"`
	Target       string       `json:"target"`
	SourceNodeID string       `json:"sourceNodeId"`
	TargetNodeID string       `json:"targetNodeId"`
	Weight       float64      `json:"weight"`
	Provenance   []Provenance `json:"provenance,omitempty"`
}

// DefaultWeight is the EMA weight of a new node or edge.
const DefaultWeight = 0.5

type uuid [16]byte

func newUUID() uuid {
	var u uuid
	if _, err := rand.Read(u[:]); err != nil {
		panic("BUG: crypto/rand failed: " + err.Error())
	}
	u[6] = (u[6] & 0x0f) | 0x40 // version 4
	u[8] = (u[8] & 0x3f) | 0x80 // RFC 4122 variant
	return u
}

func (u uuid) String() string {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

var errBadUUID = errors.New("malformed node id")

func parseUUID(s string) (uuid, error) {
	var u uuid
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, errBadUUID
	}
	var h [32]byte
	copy(h[0:8], s[0:8])
	copy(h[8:12], s[9:13])
	copy(h[12:16], s[14:18])
	copy(h[16:20], s[19:23])
	copy(h[20:32], s[24:36])
	if _, err := hex.Decode(u[:], h[:]); err != nil {
		return u, errBadUUID
	}
	return u, nil
}

func unixTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}
