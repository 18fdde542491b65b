package compose

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/policy"
)

var leakSeed = flag.Uint64("seed", 0, "seed for the randomised isolation test (0: time-based, printed)")

// TestNoTenantLeak builds several orgs with several projects each, with
// edges across projects and (as an operator may) across orgs, then asks
// thousands of random blocks with random identities and scopes, and checks
// every node of every block against an independent oracle of the default
// policy: same org, and one of the token's projects when it lists any.
func TestNoTenantLeak(t *testing.T) {
	seed := *leakSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 99))
	e := newEnv(t)
	orgs := []string{"org_a", "org_b", "org_c"}
	projects := []string{"p1", "p2", "p3"}
	vocab := []string{"auth", "billing", "payments", "token", "db", "cache", "router", "parser", "invoice", "session", "user", "queue"}
	name := func() string {
		return vocab[rng.IntN(len(vocab))] + "_" + vocab[rng.IntN(len(vocab))] + fmt.Sprint(rng.IntN(5))
	}
	for _, org := range orgs {
		for _, p := range projects {
			var in []engine.TripletInput
			for range 60 {
				x := engine.TripletInput{Source: name(), Relationship: []string{"calls", "depends_on", "contains"}[rng.IntN(3)], Target: name(),
					Weight: w(float64(1+rng.IntN(9)) / 10)}
				switch r := rng.IntN(10); {
				case r == 0: // an edge into another project of the same org
					x.TargetProjectID = projects[rng.IntN(len(projects))]
				case r == 1: // an operator-made edge into another org
					x.TargetOrgID = orgs[rng.IntN(len(orgs))]
				case r == 2:
					x.SourceProjectID = projects[rng.IntN(len(projects))]
				}
				in = append(in, x)
			}
			e.load(t, engine.Tenant{Org: org, Project: p}, in...)
		}
	}
	// Node tenants, for the oracle.
	tenantOf := map[string]engine.Tenant{}
	_ = e.st.View(func(v *engine.View) error {
		for n := uint32(0); int(n) < v.NodeCap(); n++ {
			if v.Live(n) {
				tenantOf[v.NodeID(n)] = v.NodeTenant(n)
			}
		}
		return nil
	})
	mayRead := func(id policy.Identity, t engine.Tenant) bool {
		return id.OrgID == t.Org && (len(id.ProjectIDs) == 0 || slices.Contains(id.ProjectIDs, t.Project))
	}
	queries := 3000
	if testing.Short() {
		queries = 600
	}
	blocks, triplets := 0, 0
	for q := range queries {
		id := policy.Identity{AgentID: "agent", OrgID: orgs[rng.IntN(len(orgs))], Role: policy.RoleAgent}
		if rng.IntN(2) == 0 {
			id.ProjectIDs = []string{projects[rng.IntN(len(projects))]}
			if rng.IntN(3) == 0 {
				id.ProjectIDs = append(id.ProjectIDs, projects[rng.IntN(len(projects))])
			}
		}
		// Scopes are random too, including other orgs' projects: the PEP,
		// not the scope, must keep foreign nodes out.
		scope := engine.Tenant{Org: orgs[rng.IntN(len(orgs))], Project: projects[rng.IntN(len(projects))]}
		if rng.IntN(4) == 0 {
			scope.Project = ""
		}
		req := GraphRequest{Identity: id, Scope: scope, QueryText: vocab[rng.IntN(len(vocab))] + " " + vocab[rng.IntN(len(vocab))],
			BudgetTokens: 50 + rng.IntN(1000), TopK: 1 + rng.IntN(20), Depth: rng.IntN(5)}
		b, err := e.c.GraphBlock(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		checkBlock(t, b, req.BudgetTokens)
		if b.Block != "" {
			blocks++
		}
		for _, tr := range b.Triplets {
			triplets++
			for _, n := range []string{tr.SourceNodeID, tr.TargetNodeID} {
				if ten := tenantOf[n]; !mayRead(id, ten) {
					t.Fatalf("query %d: identity %+v read node %s of %+v in block %q", q, id, n, ten, b.Block)
				}
			}
		}
	}
	t.Logf("%d queries, %d non-empty blocks, %d triplets checked", queries, blocks, triplets)
	if blocks < queries/10 {
		t.Fatalf("only %d non-empty blocks: the test is not exercising anything", blocks)
	}
}
