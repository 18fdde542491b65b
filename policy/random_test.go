package policy

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// oracle is an independent Go statement of DefaultPolicies.
func oracle(id Identity, verb string, r Resource) bool {
	if verb != VerbRead || id.OrgID != r.OrgID {
		return false
	}
	return len(id.ProjectIDs) == 0 || slices.Contains(id.ProjectIDs, r.ProjectID)
}

func TestRandomAgainstOracle(t *testing.T) {
	const seed = 20240601
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	orgs := []string{"o1", "o2", "o3", "o10"}
	projects := []string{"", "p1", "p2", "p3", "p4", "p10"}
	roles := []string{RoleAgent, RoleImporter, RoleOrgAdmin, RoleOperator}
	types := []string{"", "function", "file", "secret"}

	p := mustNew(t, DefaultPolicies)
	var allows, checks int
	for i := 0; i < 300; i++ {
		id := Identity{
			AgentID: "a" + strconv.Itoa(rng.IntN(20)),
			OrgID:   orgs[rng.IntN(len(orgs))],
			Role:    roles[rng.IntN(len(roles))],
		}
		if rng.IntN(3) > 0 { // a third of agents are unscoped
			for _, pr := range projects[1:] {
				if rng.IntN(3) == 0 {
					id.ProjectIDs = append(id.ProjectIDs, pr)
				}
			}
		}
		if rng.IntN(4) == 0 {
			id.SessionProjectID = projects[1+rng.IntN(len(projects)-1)]
		}
		verb := VerbRead
		if rng.IntN(10) == 0 {
			verb = VerbWrite
		}
		// A universe of resources for this request; keys are indexes, and
		// each is asked several times to exercise the cache.
		universe := make([]Resource, 40)
		for k := range universe {
			kind := GraphNode
			if rng.IntN(3) == 0 {
				kind = Observation
			}
			universe[k] = Resource{
				Kind:      kind,
				ID:        "r" + strconv.Itoa(rng.IntN(1000)),
				OrgID:     orgs[rng.IntN(len(orgs))],
				ProjectID: projects[rng.IntN(len(projects))],
				Type:      types[rng.IntN(len(types))],
			}
		}
		req := p.NewRequest(id, verb)
		for j := 0; j < 100; j++ {
			k := rng.IntN(len(universe))
			r := universe[k]
			want := oracle(id, verb, r)
			if got := req.Allow(uint64(k), r); got != want {
				t.Fatalf("seed %d: Allow(%+v, %s, %+v) = %v, oracle %v", seed, id, verb, r, got, want)
			}
			if j%10 == 0 {
				if got, err := p.Authorize(id, verb, r); got != want || err != nil {
					t.Fatalf("seed %d: Authorize(%+v, %s, %+v) = %v, %v; oracle %v", seed, id, verb, r, got, err, want)
				}
			}
			checks++
			if want {
				allows++
			}
		}
		if err := req.Err(); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		req.Release()
	}
	// Guard against a generator that only ever produces one answer.
	if allows < checks/10 || allows > checks*9/10 {
		t.Fatalf("unbalanced sample: %d allows of %d", allows, checks)
	}
	t.Logf("%d checks, %d allowed", checks, allows)
}

func TestConcurrentReplaceAndAllow(t *testing.T) {
	// Odd versions run DefaultPolicies, even versions forbidSecret. Every
	// Request must answer consistently with the version it pinned, and no
	// decision may ever cross orgs.
	p := mustNew(t, DefaultPolicies)
	id := agent("o1", "p1")
	plain := node("n1", "o1", "p1")
	secret := Resource{Kind: GraphNode, ID: "s1", OrgID: "o1", ProjectID: "p1", Type: "secret"}
	foreign := node("n9", "o2", "p1")

	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 200; i++ {
			text := forbidSecret
			if i%2 == 1 {
				text = DefaultPolicies
			}
			if err := p.Replace(text); err != nil {
				t.Error(err)
				return
			}
			_ = p.Replace("not cedar") // must never take effect
		}
		stop.Store(true)
	}()
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; !stop.Load() || n < 50; n++ {
				req := p.NewRequest(id, VerbRead)
				wantSecret := req.Version()%2 == 1
				for k := uint64(0); k < 3; k++ {
					if !req.Allow(1, plain) || req.Allow(2, foreign) || req.Allow(3, secret) != wantSecret {
						t.Errorf("version %d: inconsistent decision", req.Version())
					}
				}
				req.Release()
				if ok, err := p.Authorize(id, VerbRead, foreign); ok || err != nil {
					t.Errorf("cross-org Authorize = %v, %v", ok, err)
				}
				_ = p.Text()
			}
		}()
	}
	wg.Wait()
	if v := p.Version(); v != 201 {
		t.Fatalf("Version = %d, want 201", v)
	}
}

func TestAllowCachedAllocatesNothing(t *testing.T) {
	p := mustNew(t, DefaultPolicies)
	req := p.NewRequest(agent("o1", "p1", "p2"), VerbRead)
	defer req.Release()
	res := []Resource{node("n1", "o1", "p1"), node("n2", "o2", "p1"), node("n3", "o1", "p3")}
	for k, r := range res {
		req.Allow(uint64(k), r)
	}
	allocs := testing.AllocsPerRun(1000, func() {
		for k, r := range res {
			req.Allow(uint64(k), r)
		}
	})
	if allocs != 0 {
		t.Fatalf("cached Allow allocates %.1f per run", allocs)
	}
}

func BenchmarkPEP_Authorize(b *testing.B) {
	p := mustNew(b, DefaultPolicies)
	id := agent("o1", "p1", "p2", "p3")
	r := node("n1", "o1", "p2")
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := p.Authorize(id, VerbRead, r); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkRequest_AllowMiss measures a cache miss inside a warm Request:
// a fresh key each time, resources spread over a few projects (so the
// attribute-record memo hits, as it does in a real graph walk).
func BenchmarkRequest_AllowMiss(b *testing.B) {
	p := mustNew(b, DefaultPolicies)
	req := p.NewRequest(agent("o1", "p1", "p2", "p3"), VerbRead)
	defer req.Release()
	res := []Resource{node("n1", "o1", "p1"), node("n2", "o1", "p2"), node("n3", "o2", "p1"), node("n4", "o1", "p9")}
	var key uint64
	b.ReportAllocs()
	for b.Loop() {
		key++
		if key%1024 == 0 {
			clear(req.decisions) // keep the map from growing with b.N
		}
		req.Allow(key, res[key%4])
	}
}

func BenchmarkRequest_AllowCached(b *testing.B) {
	p := mustNew(b, DefaultPolicies)
	req := p.NewRequest(agent("o1", "p1", "p2", "p3"), VerbRead)
	defer req.Release()
	r := node("n1", "o1", "p2")
	req.Allow(1, r)
	b.ReportAllocs()
	for b.Loop() {
		if !req.Allow(1, r) {
			b.Fatal("denied")
		}
	}
}

func BenchmarkNewRequestRelease(b *testing.B) {
	p := mustNew(b, DefaultPolicies)
	id := agent("o1", "p1", "p2", "p3")
	r := node("n1", "o1", "p2")
	b.ReportAllocs()
	for b.Loop() {
		req := p.NewRequest(id, VerbRead)
		req.Allow(1, r)
		req.Release()
	}
}
