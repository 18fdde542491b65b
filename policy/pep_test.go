package policy

import (
	"errors"
	"strings"
	"testing"
)

// forbidSecret is the default set plus a forbid on secret-typed resources.
const forbidSecret = DefaultPolicies + `
@id("no-secrets")
forbid (principal, action, resource)
when { resource.type == "secret" };
`

func mustNew(t testing.TB, text string) *PEP {
	t.Helper()
	p, err := New(text)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

func agent(org string, projects ...string) Identity {
	return Identity{AgentID: "a-" + org, OrgID: org, Role: RoleAgent, ProjectIDs: projects}
}

func node(id, org, project string) Resource {
	return Resource{Kind: GraphNode, ID: id, OrgID: org, ProjectID: project}
}

// decideAll asks the same question through Authorize, Enforce and a fresh
// Request and fails the test if they disagree.
func decideAll(t *testing.T, p *PEP, id Identity, verb string, r Resource) bool {
	t.Helper()
	got, err := p.Authorize(id, verb, r)
	if err != nil {
		t.Fatalf("Authorize(%+v, %s, %+v): %v", id, verb, r, err)
	}
	eerr := p.Enforce(id, verb, r)
	if (eerr == nil) != got || (eerr != nil && !errors.Is(eerr, ErrDenied)) {
		t.Fatalf("Enforce = %v, Authorize = %v", eerr, got)
	}
	req := p.NewRequest(id, verb)
	defer req.Release()
	if a := req.Allow(1, r); a != got {
		t.Fatalf("Request.Allow = %v, Authorize = %v", a, got)
	}
	if a := req.Allow(1, r); a != got { // cached
		t.Fatalf("cached Request.Allow = %v, Authorize = %v", a, got)
	}
	if c, h := req.Stats(); c != 2 || h != 1 {
		t.Fatalf("Stats = %d, %d; want 2, 1", c, h)
	}
	return got
}

func TestDefaultPolicyTruthTable(t *testing.T) {
	p := mustNew(t, DefaultPolicies)
	roles := []string{RoleAgent, RoleImporter, RoleOrgAdmin, RoleOperator}
	kinds := []Kind{GraphNode, Observation}
	cases := []struct {
		name     string
		org      string
		projects []string
		resOrg   string
		resProj  string
		want     bool
	}{
		{"same org, project in list", "o1", []string{"p1"}, "o1", "p1", true},
		{"same org, project in multi list", "o1", []string{"p0", "p1", "p2"}, "o1", "p2", true},
		{"same org, empty scope, any project", "o1", nil, "o1", "p9", true},
		{"same org, empty non-nil scope", "o1", []string{}, "o1", "p9", true},
		{"same org, empty scope, org-level resource", "o1", nil, "o1", "", true},
		{"same org, project not in list", "o1", []string{"p1"}, "o1", "p2", false},
		{"same org, scoped, org-level resource", "o1", []string{"p1"}, "o1", "", false},
		{"other org, same project name", "o1", []string{"p1"}, "o2", "p1", false},
		{"other org, empty scope", "o1", nil, "o2", "p1", false},
		{"other org, project not in list", "o1", []string{"p1"}, "o2", "p2", false},
		{"other org, org-level resource", "o1", nil, "o2", "", false},
		{"org id prefix is not the org", "o1", nil, "o10", "p1", false},
		{"case matters", "o1", nil, "O1", "p1", false},
	}
	for _, c := range cases {
		for _, role := range roles {
			for _, kind := range kinds {
				for _, typ := range []string{"", "function", "secret"} {
					id := Identity{AgentID: "a1", OrgID: c.org, Role: role, ProjectIDs: c.projects}
					r := Resource{Kind: kind, ID: "n1", OrgID: c.resOrg, ProjectID: c.resProj, Type: typ}
					if got := decideAll(t, p, id, VerbRead, r); got != c.want {
						t.Errorf("%s (role %s, %v, type %q): got %v, want %v", c.name, role, kind, typ, got, c.want)
					}
					// The default set has no write permit at all.
					if got := decideAll(t, p, id, VerbWrite, r); got {
						t.Errorf("%s (role %s, %v): write allowed", c.name, role, kind)
					}
				}
			}
		}
	}
}

func TestSessionContext(t *testing.T) {
	// A policy may pin reads to the session's project when one is given.
	p := mustNew(t, DefaultPolicies+`
forbid (principal, action, resource)
when { context has projectId && context.projectId != resource.projectId };
`)
	id := agent("o1")
	if !decideAll(t, p, id, VerbRead, node("n", "o1", "p2")) {
		t.Fatal("no session project: want allow")
	}
	id.SessionProjectID = "p1"
	if decideAll(t, p, id, VerbRead, node("n", "o1", "p2")) {
		t.Fatal("session p1, resource p2: want deny")
	}
	if !decideAll(t, p, id, VerbRead, node("n", "o1", "p1")) {
		t.Fatal("session p1, resource p1: want allow")
	}
}

func TestEntityLiteralsAndHierarchy(t *testing.T) {
	// Entity literals, `in` on entities without parents and role checks
	// must work with the two-entity getter.
	p := mustNew(t, `
permit (principal == Agent::"boss", action == Action::"write", resource in GraphNode::"n1")
when { principal.role == "operator" && principal.orgId == resource.orgId };
`)
	boss := Identity{AgentID: "boss", OrgID: "o1", Role: RoleOperator}
	if !decideAll(t, p, boss, VerbWrite, node("n1", "o1", "p")) {
		t.Fatal("boss write n1: want allow")
	}
	if decideAll(t, p, boss, VerbWrite, node("n2", "o1", "p")) {
		t.Fatal("boss write n2: want deny")
	}
	if decideAll(t, p, boss, VerbWrite, node("n1", "o2", "p")) {
		t.Fatal("boss write n1 of other org: want deny")
	}
	boss.Role = RoleAgent
	if decideAll(t, p, boss, VerbWrite, node("n1", "o1", "p")) {
		t.Fatal("boss as plain agent: want deny")
	}
}

func TestNewInvalid(t *testing.T) {
	cases := []struct{ name, text, msg string }{
		{"syntax", "permit(principal, action, resource)\n  when { principal.orgId == };", "2:"},
		{"missing semicolon", `permit(principal, action, resource)`, "1:"},
		{"unknown entity type", `permit(principal is User, action, resource);`, "User"},
		{"unknown entity literal", `forbid(principal, action, resource) when { principal == Admin::"x" };`, "Admin"},
		{"unknown action", `permit(principal, action == Action::"delete", resource);`, "delete"},
		{"unknown attribute", `permit(principal, action, resource) when { resource.secret == "x" };`, "secret"},
		{"type error", `permit(principal, action, resource) when { principal.orgId == 1 };`, "policy0"},
		{"unguarded optional context", `permit(principal, action, resource) when { context.projectId == "p" };`, "projectId"},
		{"duplicate id", `@id("a") permit(principal, action, resource); @id("a") forbid(principal, action, resource);`, "duplicate"},
		{"second policy bad", "permit(principal, action, resource);\n\n  permit(principal, action, resource) when { resource.nope };", "line 3, column 3"},
	}
	for _, c := range cases {
		p, err := New(c.text)
		if err == nil || p != nil {
			t.Errorf("%s: New succeeded", c.name)
			continue
		}
		if !errors.Is(err, ErrInvalidPolicy) {
			t.Errorf("%s: %v does not wrap ErrInvalidPolicy", c.name, err)
		}
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %q does not mention %q", c.name, err, c.msg)
		}
	}
}

func TestEmptyPolicySetDeniesEverything(t *testing.T) {
	for _, text := range []string{"", "  \n// nothing here\n"} {
		p := mustNew(t, text)
		if decideAll(t, p, agent("o1"), VerbRead, node("n", "o1", "p")) {
			t.Fatalf("empty set %q allowed a read", text)
		}
	}
}

func TestReplaceInvalidKeepsOld(t *testing.T) {
	p := mustNew(t, DefaultPolicies)
	if v := p.Version(); v != 1 {
		t.Fatalf("Version after New = %d, want 1", v)
	}
	for _, bad := range []string{"permit(", `permit(principal is User, action, resource);`} {
		err := p.Replace(bad)
		if !errors.Is(err, ErrInvalidPolicy) {
			t.Fatalf("Replace(%q) = %v, want ErrInvalidPolicy", bad, err)
		}
	}
	if v := p.Version(); v != 1 {
		t.Fatalf("Version after failed Replace = %d, want 1", v)
	}
	if p.Text() != DefaultPolicies {
		t.Fatal("Text changed after failed Replace")
	}
	if !decideAll(t, p, agent("o1"), VerbRead, node("n", "o1", "p")) {
		t.Fatal("old set no longer in force")
	}
}

func TestReplacePinsPerRequest(t *testing.T) {
	p := mustNew(t, DefaultPolicies)
	id := agent("o1", "p1")
	secret := Resource{Kind: Observation, ID: "obs1", OrgID: "o1", ProjectID: "p1", Type: "secret"}
	plain := Resource{Kind: GraphNode, ID: "n1", OrgID: "o1", ProjectID: "p1", Type: "function"}

	before := p.NewRequest(id, VerbRead)
	defer before.Release()
	if !before.Allow(1, secret) {
		t.Fatal("default set: secret should be readable")
	}

	if err := p.Replace(forbidSecret); err != nil {
		t.Fatal(err)
	}
	if p.Version() != 2 || p.Text() != forbidSecret {
		t.Fatalf("Version/Text not updated: %d", p.Version())
	}

	// The old Request keeps its pinned set, cached or not.
	if !before.Allow(1, secret) || !before.Allow(2, Resource{Kind: GraphNode, ID: "n2", OrgID: "o1", ProjectID: "p1", Type: "secret"}) {
		t.Fatal("pinned Request changed its answer after Replace")
	}
	if before.Version() != 1 {
		t.Fatalf("pinned Version = %d, want 1", before.Version())
	}

	after := p.NewRequest(id, VerbRead)
	defer after.Release()
	if after.Version() != 2 {
		t.Fatalf("new Request Version = %d, want 2", after.Version())
	}
	if after.Allow(1, secret) {
		t.Fatal("new Request: secret should be forbidden")
	}
	if !after.Allow(2, plain) {
		t.Fatal("new Request: plain node should be readable")
	}
	if ok, err := p.Authorize(id, VerbRead, secret); ok || err != nil {
		t.Fatalf("Authorize(secret) = %v, %v; want false, nil", ok, err)
	}
	// Forbid overrides permit even for an unscoped operator.
	op := Identity{AgentID: "op", OrgID: "o1", Role: RoleOperator}
	if ok, _ := p.Authorize(op, VerbRead, secret); ok {
		t.Fatal("operator read a forbidden secret")
	}
}
