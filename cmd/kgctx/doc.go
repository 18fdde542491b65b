// Command kgctx is the kgctx binary: `serve` runs the HTTP server, `import`
// loads triplet files offline or through a server, `graph` inspects and
// clears a data directory, `context` prints a graph block, `token` creates
// bearer tokens and `bench` runs the benchmark scenarios. One file per
// subcommand; wiring only.
package main
