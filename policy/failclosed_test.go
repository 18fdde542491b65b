package policy

import (
	"errors"
	"strconv"
	"testing"

	cedar "github.com/cedar-policy/cedar-go"
)

// uncheckedPEP builds a PEP from text without schema validation, to reach
// evaluation errors that the validator would otherwise keep out.
func uncheckedPEP(t *testing.T, text string) *PEP {
	t.Helper()
	list, err := cedar.NewPolicyListFromBytes("unchecked.cedar", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	s := &policySet{text: text, version: 1, list: list, ids: make([]cedar.PolicyID, len(list))}
	for i := range list {
		s.ids[i] = cedar.PolicyID("p" + strconv.Itoa(i))
	}
	s.all = func(yield func(cedar.PolicyID, *cedar.Policy) bool) {
		for i, p := range s.list {
			if !yield(s.ids[i], p) {
				return
			}
		}
	}
	p := &PEP{}
	p.cur.Store(s)
	return p
}

// expectDeny checks that every entry point denies with an error wrapping
// want.
func expectDeny(t *testing.T, name string, p *PEP, id Identity, verb string, r Resource, want error) {
	t.Helper()
	ok, err := p.Authorize(id, verb, r)
	if ok || !errors.Is(err, want) {
		t.Errorf("%s: Authorize = %v, %v; want false, %v", name, ok, err, want)
	}
	if err := p.Enforce(id, verb, r); !errors.Is(err, ErrDenied) || !errors.Is(err, want) {
		t.Errorf("%s: Enforce = %v; want ErrDenied and %v", name, err, want)
	}
	req := p.NewRequest(id, verb)
	defer req.Release()
	for i := 0; i < 2; i++ { // miss, then hit
		if req.Allow(7, r) {
			t.Errorf("%s: Request.Allow #%d allowed", name, i)
		}
	}
	if err := req.Err(); !errors.Is(err, want) {
		t.Errorf("%s: Request.Err = %v; want %v", name, err, want)
	}
}

func TestFailClosed(t *testing.T) {
	p := mustNew(t, DefaultPolicies)
	good := agent("o1")
	res := node("n1", "o1", "p1")
	if !decideAll(t, p, good, VerbRead, res) {
		t.Fatal("baseline should allow")
	}

	var nilPEP *PEP
	expectDeny(t, "nil PEP", nilPEP, good, VerbRead, res, ErrNilPEP)
	expectDeny(t, "zero PEP", &PEP{}, good, VerbRead, res, ErrNilPEP)
	if nilPEP.Version() != 0 || nilPEP.Text() != "" || !errors.Is(nilPEP.Replace(DefaultPolicies), ErrNilPEP) {
		t.Error("nil PEP accessors")
	}

	expectDeny(t, "unknown verb", p, good, "delete", res, ErrUnknownVerb)
	expectDeny(t, "empty verb", p, good, "", res, ErrUnknownVerb)
	expectDeny(t, "verb case", p, good, "Read", res, ErrUnknownVerb)

	bad := good
	bad.AgentID = ""
	expectDeny(t, "empty agent id", p, bad, VerbRead, res, ErrInvalidIdentity)
	bad = good
	bad.OrgID = ""
	expectDeny(t, "empty agent org", p, bad, VerbRead, node("n1", "", "p1"), ErrInvalidIdentity)
	bad = good
	bad.Role = ""
	expectDeny(t, "empty role", p, bad, VerbRead, res, ErrInvalidIdentity)
	bad.Role = "root"
	expectDeny(t, "unknown role", p, bad, VerbRead, res, ErrInvalidIdentity)
	bad = agent("o1", "p1", "")
	expectDeny(t, "empty project id in scope", p, bad, VerbRead, node("n1", "o1", ""), ErrInvalidIdentity)

	expectDeny(t, "empty resource id", p, good, VerbRead, node("", "o1", "p1"), ErrInvalidResource)
	expectDeny(t, "empty resource org", p, good, VerbRead, node("n1", "", "p1"), ErrInvalidResource)
	expectDeny(t, "zero kind", p, good, VerbRead, Resource{ID: "n1", OrgID: "o1"}, ErrInvalidResource)
	expectDeny(t, "bogus kind", p, good, VerbRead, Resource{Kind: 9, ID: "n1", OrgID: "o1"}, ErrInvalidResource)

	// Evaluation errors in policies that pass validation. Plain Cedar skips
	// an erroring policy, so these sets would Allow; the PEP must deny.
	overflow := mustNew(t, DefaultPolicies+`
forbid (principal, action, resource) when { 9223372036854775807 + 1 > 0 };`)
	expectDeny(t, "erroring forbid (overflow)", overflow, good, VerbRead, res, ErrEvaluation)
	ghost := mustNew(t, DefaultPolicies+`
forbid (principal, action, resource) when { Agent::"ghost".orgId == resource.orgId };`)
	expectDeny(t, "erroring forbid (missing entity)", ghost, good, VerbRead, res, ErrEvaluation)
	erroringPermit := mustNew(t, DefaultPolicies+`
permit (principal, action, resource) when { 9223372036854775807 * 2 > 0 };`)
	expectDeny(t, "erroring extra permit", erroringPermit, good, VerbRead, res, ErrEvaluation)

	// A missing attribute can only come from an unvalidated set.
	missing := uncheckedPEP(t, `
permit (principal, action, resource);
forbid (principal, action, resource) when { resource.classification == "secret" };`)
	expectDeny(t, "missing attribute", missing, good, VerbRead, res, ErrEvaluation)
	typeErr := uncheckedPEP(t, `
permit (principal, action, resource);
forbid (principal, action, resource) when { principal.orgId > 3 };`)
	expectDeny(t, "type error", typeErr, good, VerbRead, res, ErrEvaluation)
}

func TestRequestMisuse(t *testing.T) {
	p := mustNew(t, DefaultPolicies)
	res := node("n1", "o1", "p1")

	var nilReq *Request
	if nilReq.Allow(1, res) || !errors.Is(nilReq.Err(), ErrNilPEP) || nilReq.Version() != 0 {
		t.Error("nil Request must deny")
	}
	if c, h := nilReq.Stats(); c != 0 || h != 0 {
		t.Error("nil Request stats")
	}
	nilReq.Release() // must not panic

	var zero Request
	if zero.Allow(1, res) {
		t.Error("zero Request must deny")
	}

	r := p.NewRequest(agent("o1"), VerbRead)
	if !r.Allow(1, res) {
		t.Fatal("baseline should allow")
	}
	r.Release()
	if r.Allow(1, res) {
		t.Error("released Request allowed (cached key)")
	}
	if r.Allow(2, res) {
		t.Error("released Request allowed (new key)")
	}
	r.Release() // idempotent until reused

	// One bad resource does not poison the rest of the walk.
	r = p.NewRequest(agent("o1"), VerbRead)
	defer r.Release()
	if r.Allow(1, node("", "o1", "p1")) {
		t.Error("empty id allowed")
	}
	if !r.Allow(2, res) {
		t.Error("good resource denied after a bad one")
	}
	if !errors.Is(r.Err(), ErrInvalidResource) {
		t.Errorf("Err = %v", r.Err())
	}
}

func TestRequestDoesNotLeakAcrossPool(t *testing.T) {
	// A pooled Request must not carry decisions or identity into its next
	// life: allow for org o1, release, then ask for an o2 agent with the
	// same key.
	p := mustNew(t, DefaultPolicies)
	res := node("n1", "o1", "p1")
	for i := 0; i < 100; i++ {
		r := p.NewRequest(agent("o1"), VerbRead)
		if !r.Allow(42, res) {
			t.Fatal("o1 denied")
		}
		r.Release()
		r = p.NewRequest(agent("o2"), VerbRead)
		if r.Allow(42, res) {
			t.Fatal("o2 agent got o1's cached decision")
		}
		if c, h := r.Stats(); c != 1 || h != 0 {
			t.Fatalf("stats carried over: %d, %d", c, h)
		}
		r.Release()
	}
}
