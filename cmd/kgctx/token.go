package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/kgctx/kgctx/engine"
)

func cmdToken(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "create" {
		return errors.New(`token: the only subcommand is "create"`)
	}
	fs := newFlags("token create", stderr)
	data := fs.String("data", defaultDataDir, "data directory (the server must be stopped)")
	org := fs.String("org", "", "org id")
	agent := fs.String("agent", "", "agent id")
	role := fs.String("role", engine.RoleAgent, "agent, importer, org_admin or operator")
	var projects stringsFlag
	fs.Var(&projects, "project", "project the token may act on (repeatable; none = every project of the org)")
	if _, err := parse(fs, args[1:]); err != nil {
		return err
	}
	if !engine.ValidRole(*role) {
		return fmt.Errorf("--role %q: want agent, importer, org_admin or operator", *role)
	}
	if *role != engine.RoleOperator {
		if err := engine.ValidateID(*org); err != nil {
			return fmt.Errorf("--org: %w", err)
		}
	}
	if err := engine.ValidateID(*agent); err != nil {
		return fmt.Errorf("--agent: %w", err)
	}
	app, err := openData(ctx, *data, stderr)
	if err != nil {
		return err
	}
	defer app.Close()
	secret := engine.NewTokenSecret()
	if err := app.Store.PutToken(secret, engine.Token{OrgID: *org, AgentID: *agent, Role: *role, ProjectIDs: projects}); err != nil {
		return err
	}
	fmt.Fprintln(stdout, secret)
	return nil
}
