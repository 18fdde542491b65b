package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kgctx/kgctx/api/client"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/auth"
)

func tokenCmd() *command {
	return &command{
		name:    "token",
		summary: "create, list and revoke bearer tokens",
		about: "Manage bearer tokens: create makes one in a data directory (offline, the server stopped); list and revoke\n" +
			"work offline (--data) or through a running server (--server URL --token T: on every node of a cluster).",
		subs: []*command{{
			name:     "create",
			summary:  "create a token and print its secret",
			about:    "Create a token in the data directory (created if absent) and print its secret.",
			required: []string{"agent"},
			flags:    tokenCreate,
		}, {
			name:    "list",
			summary: "list tokens by public id (never a secret)",
			about:   "List tokens: id, org, agent, role, projects, created and last used (on that node). An operator token lists\nevery org's (--org narrows it), an org admin's its org's.",
			flags:   tokenList,
		}, {
			name:    "revoke",
			summary: "revoke a token by its public id",
			about:   "Revoke the token ID (tok_...; see token list): it is refused from then on.",
			args:    "ID",
			flags:   tokenRevoke,
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
		if err := app.Tokens.PutToken(secret, auth.Token{OrgID: *org, AgentID: *agent, Role: *role, ProjectIDs: projects, Origin: auth.OriginCLI}); err != nil {
			return err
		}
		fmt.Fprintln(c.stdout, secret)
		return nil
	}
}

// tokenTarget is where list and revoke act: a data directory (offline)
// or a running server.
type tokenTarget struct {
	data, server, token *string
}

func (t *tokenTarget) register(fs *flag.FlagSet) {
	t.data = fs.String("data", defaultDataDir, "data directory (offline: the server must be stopped)")
	t.server = fs.String("server", "", "act through a running server at this URL instead (every node of a cluster)")
	t.token = fs.String("token", os.Getenv("KGCTX_TOKEN"), "bearer token for --server: an operator's or org admin's (default $KGCTX_TOKEN)")
}

// client is the API client of --server, or nil offline.
func (t *tokenTarget) client(c *call) (*client.Client, error) {
	if *t.server == "" {
		return nil, nil
	}
	cl, err := client.New(*t.server, *t.token, nil)
	if err != nil {
		return nil, c.usagef("--server/--token: %v", err)
	}
	return cl, nil
}

func tokenList(fs *flag.FlagSet) body {
	var t tokenTarget
	t.register(fs)
	org := fs.String("org", "", "only this org's tokens")
	asJSON := fs.Bool("json", false, "machine-readable output")
	return func(ctx context.Context, c *call) error {
		if len(c.args) > 0 {
			return c.usagef("unexpected argument %q", c.args[0])
		}
		if *org != "" {
			if err := engine.ValidateID(*org); err != nil {
				return c.usagef("--org %q: %v", *org, err)
			}
		}
		cl, err := t.client(c)
		if err != nil {
			return err
		}
		var list []client.TokenInfo
		if cl != nil {
			if list, err = cl.Tokens(ctx, *org); err != nil {
				return err
			}
		} else {
			app, err := openData(ctx, *t.data, readOnly, c.stderr)
			if err != nil {
				return err
			}
			defer app.Close()
			for _, in := range app.Tokens.List(*org) {
				list = append(list, client.TokenInfo{ID: in.ID, OrgID: in.OrgID, AgentID: in.AgentID, Role: in.Role,
					ProjectIDs: in.ProjectIDs, Origin: in.Origin, CreatedAt: in.CreatedAt, LastUsedAt: in.LastUsedAt})
			}
		}
		if list == nil {
			list = []client.TokenInfo{}
		}
		if *asJSON {
			return writeJSON(c.stdout, map[string]any{"tokens": list})
		}
		w := tabwriter.NewWriter(c.stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tORG\tAGENT\tROLE\tPROJECTS\tCREATED\tLAST USED")
		for _, in := range list {
			projects, used := "(all)", "never"
			if len(in.ProjectIDs) > 0 {
				projects = strings.Join(in.ProjectIDs, ",")
			}
			if in.LastUsedAt != nil {
				used = in.LastUsedAt.Format(time.RFC3339)
			}
			org := in.OrgID
			if org == "" {
				org = "-"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", in.ID, org, in.AgentID, in.Role, projects, in.CreatedAt.Format(time.RFC3339), used)
		}
		return w.Flush()
	}
}

func tokenRevoke(fs *flag.FlagSet) body {
	var t tokenTarget
	t.register(fs)
	return func(ctx context.Context, c *call) error {
		if len(c.args) != 1 {
			return c.usagef("want one token id (tok_...; kgctx token list shows them)")
		}
		id := c.args[0]
		if !auth.ValidPublicID(id) {
			return c.usagef("%q is not a token id: tok_ and 20 hex digits (kgctx token list shows them)", id)
		}
		cl, err := t.client(c)
		if err != nil {
			return err
		}
		if cl != nil {
			err = cl.RevokeToken(ctx, id)
		} else {
			app, oerr := openData(ctx, *t.data, readOnly, c.stderr)
			if oerr != nil {
				return oerr
			}
			defer app.Close()
			err = app.Tokens.Revoke(id)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "revoked %s\n", id)
		return nil
	}
}
