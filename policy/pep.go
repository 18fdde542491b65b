package policy

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cedar-policy/cedar-go/types"
)

// PEP is the policy enforcement point. The zero value is not usable; create
// one with New. A nil *PEP denies everything.
type PEP struct {
	cur atomic.Pointer[policySet]
	// mu serialises Replace so versions are strictly sequential; decisions
	// never take it.
	mu sync.Mutex
}

// New parses and validates text (see SchemaText) and returns a PEP enforcing
// it at Version 1. On failure the error wraps ErrInvalidPolicy.
func New(text string) (*PEP, error) {
	s, err := compile(text, 1)
	if err != nil {
		return nil, err
	}
	p := &PEP{}
	p.cur.Store(s)
	return p, nil
}

// Replace validates text and, only if it is valid, atomically makes it the
// active policy set and increments Version. On error the previous set stays
// in force and Version is unchanged. Requests created before Replace keep
// the set they pinned.
func (p *PEP) Replace(text string) error {
	if p == nil {
		return ErrNilPEP
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.cur.Load()
	if old == nil {
		return ErrNilPEP
	}
	s, err := compile(text, old.version+1)
	if err != nil {
		return err
	}
	p.cur.Store(s)
	return nil
}

// Text returns the source of the active policy set ("" for a nil PEP).
func (p *PEP) Text() string {
	if s := p.set(); s != nil {
		return s.text
	}
	return ""
}

// Version returns the generation of the active policy set: 1 after New, +1
// per successful Replace, 0 for a nil PEP.
func (p *PEP) Version() uint64 {
	if s := p.set(); s != nil {
		return s.version
	}
	return 0
}

func (p *PEP) set() *policySet {
	if p == nil {
		return nil
	}
	return p.cur.Load()
}

// Authorize makes one uncached decision under the active policy set. It
// returns (true, nil) only when the set permits; a plain denial is
// (false, nil) and every failure (nil PEP, invalid identity or resource,
// unknown verb, policy evaluation error) is (false, err).
//
// Use NewRequest for many decisions on behalf of one identity: it builds
// the principal once and caches decisions.
func (p *PEP) Authorize(id Identity, verb string, r Resource) (bool, error) {
	s := p.set()
	if s == nil {
		return false, ErrNilPEP
	}
	action, err := actionFor(verb)
	if err != nil {
		return false, err
	}
	pe, ctx, err := principal(id)
	if err != nil {
		return false, err
	}
	uid, err := resourceUID(r)
	if err != nil {
		return false, err
	}
	ents := entityPair{
		principal: pe,
		resource:  types.Entity{UID: uid, Attributes: resourceAttrs(r.OrgID, r.ProjectID, r.Type)},
	}
	return decide(s, &ents, action, ctx)
}

// Enforce is Authorize shaped as a guard: nil means allowed, and every
// non-nil result satisfies errors.Is(err, ErrDenied) (and also wraps the
// specific cause, if any).
func (p *PEP) Enforce(id Identity, verb string, r Resource) error {
	ok, err := p.Authorize(id, verb, r)
	switch {
	case err != nil:
		return fmt.Errorf("%w: %w", ErrDenied, err)
	case !ok:
		return fmt.Errorf("%w: %s on %v %q", ErrDenied, verb, r.Kind, r.ID)
	}
	return nil
}
