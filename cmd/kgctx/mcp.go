package main

import (
	"context"
	"flag"
	"os"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgctx/kgctx/api/client"
	"github.com/kgctx/kgctx/api/mcp"
)

func mcpCmd() *command {
	return &command{
		name:    "mcp",
		summary: "serve the MCP tools over stdio, forwarding to a running server",
		about: "Serve kgctx's Model Context Protocol tools on stdin/stdout for an agent that spawns it " +
			"(Claude Code, Cursor, Codex, Zed ...). Every tool call goes to the running server at --server " +
			"($KGCTX_SERVER) " +
			"with --token (or $KGCTX_TOKEN): no second store is opened. The server itself also serves MCP " +
			"over streamable HTTP at /mcp.",
		flags: mcpServe,
	}
}

func mcpServe(fs *flag.FlagSet) body {
	server := fs.String("server", os.Getenv("KGCTX_SERVER"), "URL of the running kgctx server, e.g. http://127.0.0.1:7070 (default: $KGCTX_SERVER)")
	token := fs.String("token", "", "bearer token (default: $KGCTX_TOKEN)")
	org := fs.String("org", "", "org of tool calls that name none (default: the token's)")
	project := fs.String("project", "", "project of tool calls that name none (default: the token's one project)")
	return func(ctx context.Context, c *call) error {
		if len(c.args) > 0 {
			return c.usagef("unexpected argument %q", c.args[0])
		}
		if *server == "" {
			return c.usagef("--server (or $KGCTX_SERVER) is required")
		}
		tok := *token
		if tok == "" {
			tok = os.Getenv("KGCTX_TOKEN")
		}
		if tok == "" {
			return c.usagef("--token (or $KGCTX_TOKEN) is required")
		}
		cl, err := client.New(*server, tok, nil)
		if err != nil {
			return c.usagef("--server %q: %v", *server, err)
		}
		s := mcp.NewServer(cl, mcp.Options{Org: *org, Project: *project, Version: buildVersion()})
		return s.Run(ctx, &sdk.StdioTransport{})
	}
}
