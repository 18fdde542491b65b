package policy

import (
	"strconv"
	"testing"
)

// TestResourceIDFree lists policies that read a resource's id, in every
// way Cedar allows, and policies that only read its kind and attributes.
func TestResourceIDFree(t *testing.T) {
	for _, tc := range []struct {
		text   string
		idFree bool
	}{
		{DefaultPolicies, true},
		{forbidSecret, true},
		{`permit (principal, action, resource is GraphNode) when { resource has type && resource.type == "x" };`, true},
		{`permit (principal, action, resource) when { resource is Observation };`, true},
		{`permit (principal, action, resource) when { context has projectId && context.projectId == resource.projectId };`, true},
		{`permit (principal, action, resource == GraphNode::"a");`, false},
		{`permit (principal, action, resource in GraphNode::"a");`, false},
		{`permit (principal, action, resource is GraphNode in GraphNode::"a");`, false},
		{`permit (principal, action, resource) when { resource == GraphNode::"a" };`, false},
		{`permit (principal, action, resource) when { resource != GraphNode::"a" };`, false},
		{`permit (principal, action, resource) when { resource in GraphNode::"a" };`, false},
		{`permit (principal, action, resource) when { resource is GraphNode in GraphNode::"a" };`, false},
		{`permit (principal, action, resource is GraphNode) when { [resource].contains(GraphNode::"a") };`, false},
		{`permit (principal, action, resource) unless { resource.orgId == "o" || resource == GraphNode::"a" };`, false},
		{DefaultPolicies + `forbid (principal, action, resource) when { if resource.type == "x" then resource == GraphNode::"a" else false };`, false},
	} {
		p := mustNew(t, tc.text)
		if got := p.set().idFree; got != tc.idFree {
			t.Errorf("idFree = %v, want %v for\n%s", got, tc.idFree, tc.text)
		}
	}
}

// TestRequestDecidesEachIDWhenPoliciesReadIt asks one Request about many
// resources that share a kind and an attribute record, under sets that
// read ids and sets that do not: every answer must equal an uncached
// decision. Were a decision shared across ids when a policy names one,
// the named resource would get its neighbours' answer.
func TestRequestDecidesEachIDWhenPoliciesReadIt(t *testing.T) {
	for _, text := range []string{
		DefaultPolicies,
		forbidSecret,
		DefaultPolicies + `forbid (principal, action, resource == GraphNode::"n7");`,
		DefaultPolicies + `forbid (principal, action, resource) when { resource in GraphNode::"n3" };`,
		`permit (principal, action, resource is GraphNode) when { [GraphNode::"n5"].contains(resource) };`,
	} {
		p := mustNew(t, text)
		for _, id := range []Identity{agent("o1"), agent("o1", "p1"), agent("o2")} {
			req := p.NewRequest(id, VerbRead)
			for round := range 2 {
				for i := range 10 {
					for _, kind := range []Kind{GraphNode, Observation} {
						r := Resource{Kind: kind, ID: "n" + strconv.Itoa(i), OrgID: "o1", ProjectID: "p1", Type: "secret"[:6*(i%2)]}
						want, err := p.Authorize(id, VerbRead, r)
						if err != nil {
							t.Fatal(err)
						}
						if got := req.Allow(uint64(kind)<<32|uint64(i), r); got != want {
							t.Fatalf("round %d, %v %s of %+v: Allow = %v, uncached %v, under\n%s", round, kind, r.ID, id, got, want, text)
						}
					}
				}
			}
			req.Release()
		}
	}
}

// TestCached answers only what Allow decided before, or a denial for a
// Request that denies everything.
func TestCached(t *testing.T) {
	p := mustNew(t, DefaultPolicies)
	req := p.NewRequest(agent("o1"), VerbRead)
	if _, ok := req.Cached(1); ok {
		t.Fatal("Cached before any decision: ok")
	}
	if !req.Allow(1, node("n1", "o1", "p1")) || req.Allow(2, node("n2", "o2", "p1")) {
		t.Fatal("Allow: want allow n1 of o1, deny n2 of o2")
	}
	if a, ok := req.Cached(1); !ok || !a {
		t.Fatalf("Cached(1) = %v, %v; want true, true", a, ok)
	}
	if a, ok := req.Cached(2); !ok || a {
		t.Fatalf("Cached(2) = %v, %v; want false, true", a, ok)
	}
	if c, h := req.Stats(); c != 4 || h != 2 {
		t.Fatalf("Stats = %d, %d; want 4, 2", c, h)
	}
	req.Release()
	if a, ok := req.Cached(1); !ok || a {
		t.Fatalf("Cached after Release = %v, %v; want a denial", a, ok)
	}
	bad := p.NewRequest(Identity{AgentID: "x", OrgID: "o1", Role: "nobody"}, VerbRead)
	defer bad.Release()
	if a, ok := bad.Cached(1); !ok || a {
		t.Fatalf("Cached of an invalid identity's Request = %v, %v; want a denial", a, ok)
	}
}

// TestEvalTime counts the time of evaluations only: answers from the
// Request's memos (the same key, or another resource of an id-free set's
// record) add nothing.
func TestEvalTime(t *testing.T) {
	p := mustNew(t, DefaultPolicies)
	req := p.NewRequest(agent("o1"), VerbRead)
	defer req.Release()
	if req.EvalTime() != 0 {
		t.Fatal("EvalTime before any decision")
	}
	req.Allow(1, node("n1", "o1", "p1"))
	spent := req.EvalTime()
	if spent <= 0 {
		t.Fatal("an evaluation took no time")
	}
	req.Allow(1, node("n1", "o1", "p1"))
	req.Allow(2, node("n2", "o1", "p1")) // same record under an id-free set
	if req.EvalTime() != spent {
		t.Fatalf("memo answers timed: %v -> %v", spent, req.EvalTime())
	}
}
