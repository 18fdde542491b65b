package api

import (
	"strings"
	"testing"
)

func TestPredicateVocabulary(t *testing.T) {
	s := startServer(t)
	imp := s.token("org_123", "importer")
	adm := s.token("org_123", "org_admin")
	r := s.do("GET", projPath+"/predicates", imp, "", nil)
	if r.status != 200 || !strings.Contains(string(r.body), `"mode":"open"`) || !strings.Contains(string(r.body), "learned_from") {
		t.Fatalf("default: %d %s", r.status, r.body)
	}
	// Open: anything goes (normalised).
	if r := s.do("POST", projPath+"/triplets", imp, "text/plain", []byte("a|Owns Stake In|b\n")); r.status != 200 {
		t.Fatalf("open import: %d %s", r.status, r.body)
	}
	if r := s.do("PUT", projPath+"/predicates", imp, "application/json", []byte(`{"mode": "strict"}`)); r.status != 403 {
		t.Fatalf("importer set the vocabulary: %d", r.status)
	}
	if r := s.do("PUT", projPath+"/predicates", adm, "application/json", []byte(`{"mode": "paranoid"}`)); r.status != 400 {
		t.Fatalf("bad mode: %d %s", r.status, r.body)
	}
	if r := s.do("PUT", projPath+"/predicates", adm, "application/json", []byte(`{"mode": "strict"}`)); r.status != 200 {
		t.Fatalf("strict: %d %s", r.status, r.body)
	}
	before := s.stats("org_123", "proj_xyz")
	body := "error:timeout|caused_by|tool:http\nerror:timeout|resolved by|fix:retry\nx|owns_stake_in|y\n"
	r = s.do("POST", projPath+"/triplets", imp, "text/plain", []byte(body))
	if r.status != 422 || !strings.Contains(string(r.body), `"line":3`) || !strings.Contains(string(r.body), "owns_stake_in") {
		t.Fatalf("strict rejection: %d %s", r.status, r.body)
	}
	if after := s.stats("org_123", "proj_xyz"); after.Triplets != before.Triplets {
		t.Fatal("a rejected import wrote something")
	}
	if r := s.do("POST", projPath+"/triplets", imp, "text/plain", []byte(body[:strings.LastIndex(body[:len(body)-1], "\n")+1])); r.status != 200 {
		t.Fatalf("known predicates: %d %s", r.status, r.body)
	}
	if st := s.stats("org_123", "proj_xyz"); st.Predicates["caused_by"] != 1 || st.Predicates["resolved_by"] != 1 || st.Predicates["owns_stake_in"] != 1 {
		t.Fatalf("stats per predicate: %+v", st.Predicates)
	}
}
