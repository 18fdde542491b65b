package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/kgctx/kgctx/compose/service"
	"math/rand/v2"
	"time"

	"github.com/kgctx/kgctx/bench/workload"
	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/policy"
)

// memoryData opens a store holding FB15k-237 as the graph plus
// cfg.Observations generated observations (importing them unless the data
// directory has them already). The caller calls cleanup (which closes the
// app).
func memoryData(ctx context.Context, cfg Config, rep *Report) (*service.App, *workload.FB15k, []engine.ObservationInput, func(), error) {
	cfg.say("loading FB15k-237")
	fb, err := workload.LoadFB15k(cfg.Datasets)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	app, cleanup, err := openData(ctx, cfg, fb, rep, nil)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	obs := workload.Observations(fb, cfg.Observations, cfg.Seed)
	rep.Graph = fmt.Sprintf("FB15k-237 train (%d triplets) and %d generated observations", len(fb.Triplets), cfg.Observations)
	fail := func(err error) (*service.App, *workload.FB15k, []engine.ObservationInput, func(), error) {
		cleanup()
		return nil, nil, nil, nil, err
	}
	if n := app.Index.ObsLen(); n == 0 {
		cfg.say("adding %d observations", cfg.Observations)
		start := time.Now()
		for i := 0; i < len(obs); i += 10_000 {
			if _, err := app.Store.AddObservations(ctx, Tenant, obs[i:min(i+10_000, len(obs))], engine.ImportOptions{NoWait: true}); err != nil {
				return fail(err)
			}
		}
		if err := app.Store.Sync(ctx); err != nil {
			return fail(err)
		}
		rep.Notes = append(rep.Notes, fmt.Sprintf("observations added at %.0f/s", float64(len(obs))/time.Since(start).Seconds()))
	}
	return app, fb, obs, cleanup, nil
}

// runSession measures start-of-session blocks: a session block per request
// (search over graph and observations, gates, budgets, an injection log
// written each time).
func runSession(ctx context.Context, cfg Config) (*Report, error) {
	rep := &Report{Scenario: "session", Machine: machine()}
	app, fb, _, cleanup, err := memoryData(ctx, cfg, rep)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	rng := rand.New(rand.NewPCG(cfg.Seed, 3))
	works := []string{compose.WorkBugFix, compose.WorkFeature, compose.WorkRefactor, compose.WorkChore}
	type q struct{ text, work string }
	qs := make([]q, cfg.Queries+cfg.Queries/2)
	for i := range qs {
		qs[i] = q{fb.Queries[rng.IntN(len(fb.Queries))], works[rng.IntN(len(works))]}
	}
	run := time.Now().UnixNano()
	cfg.say("in-process latency (%d session blocks)", cfg.Queries)
	var bs BlockStats
	l, err := series(cfg.Queries, func(i int, record bool) error {
		b, err := app.Composer.SessionBlock(ctx, compose.SessionRequest{SessionID: fmt.Sprintf("ses_%d_%d", run, i), WorkType: qs[i].work,
			Scope: Tenant, Identity: policy.Identity{AgentID: "bench", OrgID: Tenant.Org, Role: policy.RoleAgent},
			QueryText: qs[i].text, Graph: true})
		if err == nil && record {
			if b.Block != "" {
				bs.NonEmpty++
			}
			bs.MeanTokens += float64(b.ActualTokens)
			bs.MeanTriplets += float64(len(b.GraphEdgeKeys))
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	bs.MeanTokens /= float64(cfg.Queries)
	bs.MeanTriplets /= float64(cfg.Queries)
	rep.Blocks = &bs
	rep.InProcess = &l
	body := func(i int) []byte {
		x := qs[i%len(qs)]
		b, _ := json.Marshal(map[string]any{"sessionId": fmt.Sprintf("ses_h%d_%d", run, i), "workType": x.work,
			"orgId": Tenant.Org, "projectId": Tenant.Project, "queryText": x.text})
		return b
	}
	if err := measureHTTP(ctx, cfg, app, rep, "/v1/context/session", body, cfg.Queries); err != nil {
		return nil, err
	}
	rep.PeakRSSMB = peakRSSMB()
	return rep, nil
}

// runInSession measures verb events (the in-session injector) over HTTP:
// Edit, Read and Bash events touching the observations' paths, with query
// texts from the FB15k test split, over a hundred sessions.
func runInSession(ctx context.Context, cfg Config) (*Report, error) {
	rep := &Report{Scenario: "insession", Machine: machine()}
	app, fb, obs, cleanup, err := memoryData(ctx, cfg, rep)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	rng := rand.New(rand.NewPCG(cfg.Seed, 4))
	tools := []string{"Edit", "Read", "Bash", "Grep"}
	n := cfg.Queries + cfg.Queries/2
	bodies := make([][]byte, n)
	for i := range bodies {
		ev := map[string]any{"phase": "pre-verb", "orgId": Tenant.Org, "projectId": Tenant.Project, "agentId": "bench",
			"tool": tools[rng.IntN(len(tools))], "emittedAt": time.Now().UnixMilli()}
		if rng.IntN(2) == 0 {
			ev["paths"] = obs[rng.IntN(len(obs))].Metadata.Paths
		}
		if rng.IntN(4) != 0 {
			ev["query"] = fb.Queries[rng.IntN(len(fb.Queries))]
		}
		b, _ := json.Marshal(ev)
		bodies[i] = b
	}
	sessions := 100
	rep.Notes = append(rep.Notes, fmt.Sprintf("verb events over %d sessions; the path and the query lookups each search the observations", sessions))
	err = measureHTTPPaths(ctx, cfg, app, rep, func(i int) (string, []byte) {
		return fmt.Sprintf("/v1/sessions/ses_ins_%d/verb-events", i%sessions), bodies[i%len(bodies)]
	}, cfg.Queries)
	if err != nil {
		return nil, err
	}
	rep.PeakRSSMB = peakRSSMB()
	return rep, nil
}
