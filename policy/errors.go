package policy

import "errors"

// Sentinel errors. Every error returned by this package wraps exactly one of
// these (plus, where useful, the underlying cedar-go error) so callers can
// branch with errors.Is without parsing messages.
var (
	// ErrInvalidPolicy is returned by New and Replace when the policy text
	// does not parse or does not validate against the kgctx Cedar schema
	// (see SchemaText). The wrapped error carries the parser's line/column
	// or the validator's message.
	ErrInvalidPolicy = errors.New("policy: invalid policy")

	// ErrDenied is returned by Enforce for every denial, including denials
	// caused by one of the other errors below (which are then wrapped too),
	// so errors.Is(err, ErrDenied) is true for every non-nil Enforce result.
	ErrDenied = errors.New("policy: denied")

	// ErrNilPEP is returned when a decision is requested from a nil *PEP or
	// a Request that was not created by a PEP. The answer is always deny.
	ErrNilPEP = errors.New("policy: nil PEP")

	// ErrInvalidIdentity is returned when the principal is incomplete:
	// empty AgentID or OrgID, an unknown Role, or an empty project id in
	// ProjectIDs. The answer is deny.
	ErrInvalidIdentity = errors.New("policy: invalid identity")

	// ErrInvalidResource is returned when the resource is incomplete: an
	// unknown Kind, an empty ID or an empty OrgID. The answer is deny.
	ErrInvalidResource = errors.New("policy: invalid resource")

	// ErrUnknownVerb is returned for a verb other than "read" or "write".
	ErrUnknownVerb = errors.New("policy: unknown verb")

	// ErrEvaluation is returned when any policy in the set raised an error
	// while being evaluated (overflow, missing attribute, type error...).
	// Cedar itself would merely skip the failing policy, which for a forbid
	// policy means "allow"; the PEP instead denies the whole request.
	ErrEvaluation = errors.New("policy: evaluation error")
)
