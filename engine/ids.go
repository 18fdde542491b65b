package engine

import (
	"crypto/sha256"
	"encoding/binary"
	"sync"
)

// IDSource draws the ids a write gives new nodes and observations from a
// seed instead of at random, so that applying the same write with the
// same seed (and the same ImportOptions.Now) to two stores gives them the
// same ids: the replicas of a cluster apply a replicated write this way.
// A nil *IDSource draws at random.
type IDSource struct {
	mu   sync.Mutex
	seed [32]byte
	n    uint64
}

// NewIDSource returns a source seeded with seed (e.g. a stream's name
// and sequence).
func NewIDSource(seed []byte) *IDSource {
	return &IDSource{seed: sha256.Sum256(seed)}
}

// read fills b with the source's next bytes (at most 32).
func (s *IDSource) read(b []byte) {
	s.mu.Lock()
	n := s.n
	s.n++
	s.mu.Unlock()
	var in [40]byte
	copy(in[:], s.seed[:])
	binary.BigEndian.PutUint64(in[32:], n)
	h := sha256.Sum256(in[:])
	copy(b, h[:])
}

func (s *IDSource) uuid() uuid {
	if s == nil {
		return newUUID()
	}
	var u uuid
	s.read(u[:])
	u[6] = (u[6] & 0x0f) | 0x40
	u[8] = (u[8] & 0x3f) | 0x80
	return u
}

// ID is NewID drawn from the source.
func (s *IDSource) ID(kind string) string {
	if s == nil {
		return NewID(kind)
	}
	var b [10]byte
	s.read(b[:])
	return kind + "_" + idEncoding.EncodeToString(b[:])
}

// mark and reset let an import draw the same ids again when it stages a
// chunk a second time (a concurrent write changed what it had staged), so
// that its ids do not depend on other writers.
func (s *IDSource) mark() uint64 {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func (s *IDSource) reset(n uint64) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.n = n
	s.mu.Unlock()
}
