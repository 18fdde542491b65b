package api

import (
	"encoding/json"
	"testing"

	"github.com/kgctx/kgctx/engine"
)

// A triplet whose endpoint the policy hides from the caller cannot be
// deleted by it (404, the answer of a triplet that does not exist, so the
// route tells nothing of the hidden node), and stays; as for DELETE of a
// node or an observation (TestDeleteGoesThroughPEP).
func TestDeleteTripletGoesThroughPEP(t *testing.T) {
	e := newIsolationEnv(t)
	imp := e.token("org_a", "importer")
	del := func(src, rel, dst string) resp {
		b, _ := json.Marshal(map[string]string{"source": src, "relationship": rel, "target": dst})
		return e.do("DELETE", "/v1/orgs/org_a/projects/api/triplets", imp, "application/json", b)
	}
	hidden := del("Alpha", "reads", "Vault")
	missing := del("Alpha", "reads", "Nothing")
	if hidden.status != 404 || missing.status != 404 {
		t.Fatalf("delete of a triplet to a forbidden node: %d %s; of a missing one: %d %s; want 404 both", hidden.status, hidden.body, missing.status, missing.body)
	}
	if hidden.errCode() != missing.errCode() {
		t.Fatalf("a hidden triplet answers %q, a missing one %q", hidden.errCode(), missing.errCode())
	}
	ts, err := e.app.Store.QueryTriplets(engine.Tenant{Org: "org_a", Project: "api"}, engine.TripletQuery{Subject: "Alpha", Predicate: "reads"})
	if err != nil || len(ts) != 1 {
		t.Fatalf("the triplet to the forbidden node went: %v %+v", err, ts)
	}
	// A readable one goes.
	if r := del("Alpha", "calls", "Beta"); r.status != 204 {
		t.Fatalf("delete a readable triplet: %d %s", r.status, r.body)
	}
}
