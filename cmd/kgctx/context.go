package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/policy"
)

func contextCmd() *command {
	return &command{
		name:     "context",
		summary:  "print the graph context block for a query (offline)",
		about:    "Print the graph context block for a query, read directly from a data directory\n(the server must be stopped). A directory without a store is refused.",
		required: []string{"org"},
		flags:    contextFlags,
	}
}

func contextFlags(fs *flag.FlagSet) body {
	data := fs.String("data", defaultDataDir, "data directory")
	org := fs.String("org", "", "org id")
	project := fs.String("project", "", "project id (empty: the whole org)")
	query := fs.String("query", "", "query text")
	budget := fs.Int("budget", compose.DefaultBudgetTokens, "token budget")
	topK := fs.Int("top-k", compose.DefaultTopK, "seed nodes")
	depth := fs.Int("depth", compose.DefaultDepth, "neighbourhood depth (0-4)")
	asJSON := fs.Bool("json", false, "print the whole response as JSON")
	explain := fs.Bool("explain", false, "with --json: each line's score parts")
	codeMap := fs.String("code-map", "auto", "a ## Code Map of the block's symbols: auto (when its seeds carry locations), on or off")
	minRel := fs.Float64("min-relevance", compose.DefaultMinRelevance, "relevance floor: a line enters only at this share of the best line's query relevance or more (0: none; unset: the default, none in a code graph)")
	return func(ctx context.Context, c *call) error {
		if len(c.args) > 0 {
			return c.usagef("unexpected argument %q (quote a query of several words: --query \"...\")", c.args[0])
		}
		if err := engine.ValidateID(*org); err != nil {
			return c.usagef("--org %q: %v", *org, err)
		}
		if *project != "" {
			if err := engine.ValidateID(*project); err != nil {
				return c.usagef("--project %q: %v", *project, err)
			}
		}
		var cm *bool
		switch *codeMap {
		case "auto":
		case "on", "off":
			on := *codeMap == "on"
			cm = &on
		default:
			return c.usagef("--code-map %q: want auto, on or off", *codeMap)
		}
		app, err := openData(ctx, *data, readOnly, c.stderr)
		if err != nil {
			return err
		}
		defer app.Close()
		var floor *float64 // unset: the composer's default
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "min-relevance" {
				floor = minRel
			}
		})
		// The CLI reads the data directory directly, so it acts as an agent of
		// the org with every project: the default policy's widest grant.
		b, err := app.Composer.GraphBlock(ctx, compose.GraphRequest{
			Identity: policy.Identity{AgentID: "cli", OrgID: *org, Role: policy.RoleAgent},
			Scope:    engine.Tenant{Org: *org, Project: *project}, QueryText: *query,
			BudgetTokens: *budget, TopK: *topK, Depth: *depth, Explain: *explain, CodeMap: cm, MinRelevance: floor})
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(c.stdout, b)
		}
		for _, w := range b.Warnings {
			fmt.Fprintln(c.stderr, "warning:", w)
		}
		if b.Block == "" {
			fmt.Fprintln(c.stderr, "(no triplets matched)")
			return nil
		}
		fmt.Fprintln(c.stdout, b.Block)
		return nil
	}
}
