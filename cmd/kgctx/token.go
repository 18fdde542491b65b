package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/auth"
)

func tokenCmd() *command {
	return &command{
		name:    "token",
		summary: "create bearer tokens in a data directory (offline)",
		about:   "Manage bearer tokens directly in a data directory; the server must be stopped.",
		subs: []*command{{
			name:     "create",
			summary:  "create a token and print its secret",
			about:    "Create a token in the data directory (created if absent) and print its secret.",
			required: []string{"agent"},
			flags:    tokenCreate,
		}},
	}
}

func tokenCreate(fs *flag.FlagSet) body {
	data := fs.String("data", defaultDataDir, "data directory (the server must be stopped)")
	org := fs.String("org", "", "org id (required unless --role operator)")
	agent := fs.String("agent", "", "agent id")
	role := fs.String("role", auth.RoleAgent, "agent, importer, org_admin or operator")
	var projects stringsFlag
	fs.Var(&projects, "project", "project the token may act on (repeatable; none = every project of the org)")
	return func(ctx context.Context, c *call) error {
		if len(c.args) > 0 {
			return c.usagef("unexpected argument %q", c.args[0])
		}
		if !auth.ValidRole(*role) {
			return c.usagef("--role %q: want agent, importer, org_admin or operator", *role)
		}
		if *role != auth.RoleOperator {
			if *org == "" {
				return c.usagef("--org is required (except with --role operator)")
			}
			if err := engine.ValidateID(*org); err != nil {
				return c.usagef("--org %q: %v", *org, err)
			}
		}
		if err := engine.ValidateID(*agent); err != nil {
			return c.usagef("--agent %q: %v", *agent, err)
		}
		app, err := openData(ctx, *data, create, c.stderr)
		if err != nil {
			return err
		}
		defer app.Close()
		secret := auth.NewTokenSecret()
		if err := app.Tokens.PutToken(secret, auth.Token{OrgID: *org, AgentID: *agent, Role: *role, ProjectIDs: projects}); err != nil {
			return err
		}
		fmt.Fprintln(c.stdout, secret)
		return nil
	}
}
