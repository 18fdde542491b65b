package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kgctx/kgctx/engine/auth"
)

func TestTokensListAndRevoke(t *testing.T) {
	s := startServer(t)
	ag := s.token("org_a", "agent")
	adminA := s.token("org_a", "org_admin")
	agB := s.token("org_b", "agent")

	var who whoamiResponse
	s.do("GET", "/v1/whoami", ag, "", nil).json(t, &who)
	if !auth.ValidPublicID(who.ID) {
		t.Fatalf("whoami id %q", who.ID)
	}
	var whoB whoamiResponse
	s.do("GET", "/v1/whoami", agB, "", nil).json(t, &whoB)

	// The operator sees every token; never a secret or a hash.
	r := s.do("GET", "/v1/admin/tokens", s.admin, "", nil)
	var all tokenList
	r.json(t, &all)
	if r.status != 200 || len(all.Tokens) != 4 {
		t.Fatalf("operator list: %d %s", r.status, r.body)
	}
	for _, sec := range []string{ag, adminA, agB, s.admin, auth.TokenHash(ag), auth.TokenHash(s.admin)} {
		if strings.Contains(string(r.body), sec) {
			t.Fatalf("the list shows a secret or hash: %s", r.body)
		}
	}
	// An org admin sees its org's only, and may not ask for another's.
	var mine tokenList
	s.do("GET", "/v1/admin/tokens", adminA, "", nil).json(t, &mine)
	if len(mine.Tokens) != 2 || mine.Tokens[0].OrgID != "org_a" || mine.Tokens[1].OrgID != "org_a" {
		t.Fatalf("org admin list: %+v", mine)
	}
	for _, u := range mine.Tokens {
		if u.ID == who.ID && u.LastUsedAt == nil {
			t.Fatalf("last use not kept: %+v", u)
		}
	}
	if r := s.do("GET", "/v1/admin/tokens?orgId=org_b", adminA, "", nil); r.status != 403 {
		t.Fatalf("org admin lists another org: %d %s", r.status, r.body)
	}
	if r := s.do("GET", "/v1/admin/tokens", ag, "", nil); r.status != 403 {
		t.Fatalf("agent lists tokens: %d", r.status)
	}
	// An org admin cannot revoke another org's token (nor learn it exists).
	if r := s.do("DELETE", "/v1/admin/tokens/"+whoB.ID, adminA, "", nil); r.status != 404 {
		t.Fatalf("foreign revoke: %d %s", r.status, r.body)
	}
	if r := s.do("GET", "/v1/whoami", agB, "", nil); r.status != 200 {
		t.Fatalf("org b's token after a foreign revoke: %d", r.status)
	}
	if r := s.do("DELETE", "/v1/admin/tokens/not-an-id", adminA, "", nil); r.status != 400 {
		t.Fatalf("bad id: %d %s", r.status, r.body)
	}
	// Revoked: 401 from the next request on, and gone from the list.
	if r := s.do("DELETE", "/v1/admin/tokens/"+who.ID, adminA, "", nil); r.status != 204 {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	if r := s.do("GET", "/v1/whoami", ag, "", nil); r.status != 401 {
		t.Fatalf("revoked token: %d", r.status)
	}
	if r := s.do("DELETE", "/v1/admin/tokens/"+who.ID, s.admin, "", nil); r.status != 404 {
		t.Fatalf("revoke twice: %d", r.status)
	}
	s.do("GET", "/v1/admin/tokens?orgId=org_a", s.admin, "", nil).json(t, &mine)
	if len(mine.Tokens) != 1 {
		t.Fatalf("after revoke: %+v", mine)
	}
	// Revocation survives a restart of the store.
	if _, err := s.app.Tokens.LookupToken(ag); err == nil {
		t.Fatal("revoked token still in memory")
	}
}

func TestTokensAreLong(t *testing.T) {
	s := startServer(t)
	err := s.app.Tokens.PutToken(strings.Repeat("x", 31), auth.Token{OrgID: "org_a", AgentID: "a", Role: auth.RoleAgent})
	if err == nil {
		t.Fatal("a 31-character token was accepted")
	}
	if err := s.app.Tokens.PutToken(strings.Repeat("x", 32), auth.Token{OrgID: "org_a", AgentID: "a", Role: auth.RoleAgent}); err != nil {
		t.Fatal(err)
	}
}

func TestQuotas(t *testing.T) {
	s := startServer(t)
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	s.srv.quota.now = func() time.Time { return now }
	var q struct {
		Defaults     map[string]float64            `json:"defaults"`
		OrgOverrides map[string]map[string]float64 `json:"orgOverrides"`
	}
	r := s.do("GET", "/v1/admin/quotas", s.admin, "", nil)
	r.json(t, &q)
	if r.status != 200 || q.Defaults["readsPerSecond"] != 10000 || q.Defaults["importTripletsPerMinute"] != 20_000_000 {
		t.Fatalf("defaults: %d %s", r.status, r.body)
	}
	if r := s.do("PUT", "/v1/admin/quotas", s.admin, "application/json", []byte(`{"defaults": {}, "orgOverrides": {"bad org!": {"readsPerSecond": 1}}}`)); r.status/100 != 4 {
		t.Fatalf("bad override: %d %s", r.status, r.body)
	}
	imp := s.token("org_q", "importer")
	ag := s.token("org_q", "agent")
	other := s.token("org_r", "agent")
	if r := s.do("PUT", "/v1/admin/quotas", ag, "application/json", []byte(`{}`)); r.status != 403 {
		t.Fatalf("agent sets quotas: %d", r.status)
	}
	body := `{"defaults": {}, "orgOverrides": {"org_q": {"readsPerSecond": 2, "importTripletsPerMinute": 10, "nodesPerProject": 5, "observationsPerProject": 1}}}`
	if r := s.do("PUT", "/v1/admin/quotas", s.admin, "application/json", []byte(body)); r.status != 200 {
		t.Fatalf("put quotas: %d %s", r.status, r.body)
	}

	// Reads: two a second pass, the third waits; another org is untouched.
	for i := range 2 {
		if r := s.do("GET", "/v1/whoami", ag, "", nil); r.status != 200 {
			t.Fatalf("read %d: %d %s", i, r.status, r.body)
		}
	}
	r = s.do("GET", "/v1/whoami", ag, "", nil)
	if r.status != 429 || r.header.Get("Retry-After") != "1" || r.errCode() != "rate_limited" {
		t.Fatalf("third read: %d %s %q", r.status, r.body, r.header.Get("Retry-After"))
	}
	for range 5 {
		if r := s.do("GET", "/v1/whoami", other, "", nil); r.status != 200 {
			t.Fatalf("other org: %d", r.status)
		}
	}
	now = now.Add(time.Second)
	if r := s.do("GET", "/v1/whoami", ag, "", nil); r.status != 200 {
		t.Fatalf("a second later: %d", r.status)
	}

	// Project size: an import that would make 6 nodes is refused whole.
	nd := func(pairs ...string) []byte {
		var b strings.Builder
		for i := 0; i+1 < len(pairs); i += 2 {
			line, _ := json.Marshal(map[string]string{"source": pairs[i], "relationship": "calls", "target": pairs[i+1]})
			b.Write(line)
			b.WriteByte('\n')
		}
		return []byte(b.String())
	}
	path := "/v1/orgs/org_q/projects/p/triplets"
	r = s.do("POST", path, imp, "application/x-ndjson", nd("A", "B", "C", "D", "E", "F"))
	if r.status != 422 || r.errCode() != "quota_exceeded" || !strings.Contains(string(r.body), "nodesPerProject") {
		t.Fatalf("over the node quota: %d %s", r.status, r.body)
	}
	if st := s.stats("org_q", "p"); st.Nodes != 0 {
		t.Fatalf("a refused import wrote %d nodes", st.Nodes)
	}
	// Merging into existing nodes adds none: 4 nodes, then edges among them.
	if r := s.do("POST", path, imp, "application/x-ndjson", nd("A", "B", "C", "D")); r.status != 200 {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	if r := s.do("POST", path, imp, "application/x-ndjson", nd("A", "C", "B", "D", "a", "d")); r.status != 200 {
		t.Fatalf("import into existing nodes: %d %s", r.status, r.body)
	}
	// Triplets per minute: 5 of 10 taken; 6 more wait, with the time.
	six := nd("A", "D", "B", "C", "C", "A", "D", "B", "D", "C", "C", "B")
	r = s.do("POST", path, imp, "application/x-ndjson", six)
	if r.status != 429 || r.header.Get("Retry-After") == "" {
		t.Fatalf("over the import rate: %d %s", r.status, r.body)
	}
	// An import bigger than a minute's worth can never pass: 422.
	big := nd("A", "B", "A", "C", "A", "D", "B", "A", "B", "C", "B", "D", "C", "A", "C", "B", "C", "D", "D", "A", "D", "B")
	if r := s.do("POST", path, imp, "application/x-ndjson", big); r.status != 422 || r.errCode() != "quota_exceeded" {
		t.Fatalf("import over a minute's quota: %d %s", r.status, r.body)
	}
	now = now.Add(time.Minute)
	if r := s.do("POST", path, imp, "application/x-ndjson", six); r.status != 200 {
		t.Fatalf("a minute later: %d %s", r.status, r.body)
	}
	if st := s.stats("org_q", "p"); st.Nodes != 4 || st.Triplets != 10 {
		t.Fatalf("stats %+v", st)
	}

	// Observations per project.
	obs := "/v1/orgs/org_q/projects/p/observations"
	if r := s.post(obs, imp, map[string]any{"content": "one"}); r.status != 201 {
		t.Fatalf("first observation: %d %s", r.status, r.body)
	}
	if r := s.post(obs, imp, map[string]any{"content": "two"}); r.status != 422 || r.errCode() != "quota_exceeded" {
		t.Fatalf("second observation: %d %s", r.status, r.body)
	}
	// Operators are not rate limited.
	for range 5 {
		if r := s.do("GET", "/v1/whoami", s.admin, "", nil); r.status != http.StatusOK {
			t.Fatalf("operator: %d", r.status)
		}
	}
}
