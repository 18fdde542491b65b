package main

import (
	"context"
	"fmt"
	"io"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/policy"
)

func cmdContext(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("context", stderr)
	data := fs.String("data", defaultDataDir, "data directory")
	org := fs.String("org", "", "org id (required)")
	project := fs.String("project", "", "project id (empty: the whole org)")
	query := fs.String("query", "", "query text")
	budget := fs.Int("budget", compose.DefaultBudgetTokens, "token budget")
	topK := fs.Int("top-k", compose.DefaultTopK, "seed nodes")
	depth := fs.Int("depth", compose.DefaultDepth, "neighbourhood depth (0-4)")
	asJSON := fs.Bool("json", false, "print the whole response as JSON")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if err := engine.ValidateID(*org); err != nil {
		return fmt.Errorf("--org: %w", err)
	}
	app, err := openData(ctx, *data, stderr)
	if err != nil {
		return err
	}
	defer app.Close()
	// The CLI reads the data directory directly, so it acts as an agent of
	// the org with every project: the default policy's widest grant.
	b, err := app.Composer.GraphBlock(ctx, compose.GraphRequest{
		Identity: policy.Identity{AgentID: "cli", OrgID: *org, Role: policy.RoleAgent},
		Scope:    engine.Tenant{Org: *org, Project: *project}, QueryText: *query,
		BudgetTokens: *budget, TopK: *topK, Depth: *depth})
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, b)
	}
	if b.Block == "" {
		fmt.Fprintln(stderr, "(no triplets matched)")
		return nil
	}
	fmt.Fprintln(stdout, b.Block)
	return nil
}
