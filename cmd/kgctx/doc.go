// Command kgctx is the kgctx binary: `serve` runs the HTTP server (and a
// cluster node with --cluster), `mcp` serves the MCP tools over stdio by
// forwarding to a running server, `import` loads triplet files offline or
// through a server, `index` turns a repository (Go, Python,
// TypeScript/JavaScript, Java, Rust) into triplets (offline or through a
// server), `graph` inspects and edits a data directory,
// `context` prints a graph block, `observations`, `nodes search` and
// `projects` list, search and correct a project's memory (offline or
// through a server), `token` creates, lists and revokes bearer tokens,
// `bench` runs the benchmark scenarios and `version` prints the build.
// command.go holds the command tree (help, suggestions, required flags,
// exit statuses: 2 for a misused command line, 130 for an interrupted one,
// 1 for any other failure); one file per command, wiring only.
package main
