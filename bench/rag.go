package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/kgctx/kgctx/bench/workload"
	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/policy"
)

// runRAG measures Graph RAG answers on FB15k-237 over HTTP. FB15k has none
// of the reference's predicates, so phase 2 follows the eight most frequent
// relations of the graph instead.
func runRAG(ctx context.Context, cfg Config) (*Report, error) {
	rep := &Report{Scenario: "rag", Machine: machine()}
	cfg.say("loading FB15k-237")
	fb, err := workload.LoadFB15k(cfg.Datasets)
	if err != nil {
		return nil, err
	}
	app, closeData, err := openData(ctx, cfg, fb, rep, nil)
	if err != nil {
		return nil, err
	}
	defer closeData()
	rep.Graph = fmt.Sprintf("FB15k-237 train: %d triplets", len(fb.Triplets))
	st, _ := app.Store.Stats(Tenant)
	type pc struct {
		name string
		n    int
	}
	var preds []pc
	for name, n := range st.Predicates {
		preds = append(preds, pc{name, n})
	}
	slices.SortFunc(preds, func(a, b pc) int { return b.n - a.n })
	var chosen []string
	for _, p := range preds[:min(8, len(preds))] {
		chosen = append(chosen, p.name)
	}
	rep.Notes = append(rep.Notes, fmt.Sprintf("phase 2 follows %v", chosen))
	rng := rand.New(rand.NewPCG(cfg.Seed, 5))
	queries := make([]string, cfg.Queries+cfg.Queries/2)
	for i := range queries {
		queries[i] = fb.Queries[rng.IntN(len(fb.Queries))]
	}
	cfg.say("in-process latency (%d answers)", cfg.Queries)
	l, err := series(cfg.Queries, func(i int, _ bool) error {
		_, err := app.Composer.RAG(ctx, compose.RAGRequest{Identity: policy.Identity{AgentID: "bench", OrgID: Tenant.Org, Role: policy.RoleAgent},
			Scope: Tenant, QueryText: queries[i], Predicates: chosen})
		return err
	})
	if err != nil {
		return nil, err
	}
	rep.InProcess = &l
	body := func(i int) []byte {
		b, _ := json.Marshal(map[string]any{"scope": map[string]string{"orgId": Tenant.Org, "projectId": Tenant.Project},
			"queryText": queries[i%len(queries)], "predicates": chosen})
		return b
	}
	if err := measureHTTP(ctx, cfg, app, rep, "/v1/context/rag", body, cfg.Queries); err != nil {
		return nil, err
	}
	rep.PeakRSSMB = peakRSSMB()
	return rep, nil
}
