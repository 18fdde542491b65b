package model

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Positions are places in a cluster's replicated logs: per shard, the
// highest sequence written or to wait for. Their text form is what the
// API's X-Kgctx-Sequence header carries: "SHARD:SEQ,SHARD:SEQ", shards in
// order. The zero value is empty and ready; it is safe for concurrent
// use.
type Positions struct {
	mu sync.Mutex
	m  map[string]uint64
}

// Note raises shard's position to seq.
func (p *Positions) Note(shard string, seq uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]uint64{}
	}
	p.m[shard] = max(p.m[shard], seq)
}

// Add notes every position of text (see ParsePositions); on an error it
// notes none.
func (p *Positions) Add(text string) error {
	m, err := ParsePositions(text)
	for s, q := range m {
		p.Note(s, q)
	}
	return err
}

// String is the text form ("" when empty).
func (p *Positions) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	parts := make([]string, 0, len(p.m))
	for s, q := range p.m {
		parts = append(parts, s+":"+strconv.FormatUint(q, 10))
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// ParsePositions reads "SHARD:SEQ,..." (blank: none), the highest of a
// shard named twice; an ErrInvalidInput names the part at fault.
func ParsePositions(text string) (map[string]uint64, error) {
	m := map[string]uint64{}
	if strings.TrimSpace(text) == "" {
		return m, nil
	}
	for _, part := range strings.Split(text, ",") {
		shard, s, ok := strings.Cut(strings.TrimSpace(part), ":")
		seq, err := strconv.ParseUint(s, 10, 64)
		if !ok || err != nil || shard == "" {
			return nil, fmt.Errorf("%w: %q is not SHARD:SEQ", ErrInvalidInput, part)
		}
		m[shard] = max(m[shard], seq)
	}
	return m, nil
}
