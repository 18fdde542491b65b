// Package mcp is kgctx's Model Context Protocol server, on the official Go
// SDK: the tools an agent calls (graph_context, session_context,
// rag_context, search_triplets, add_triplets, add_observations,
// record_tool_result, session_feedback), each a thin call of the kgctx
// HTTP API with the caller's token, so that every tool is authenticated,
// authorised, scoped and validated exactly as its route, and answers the
// route's error codes as tool errors.
//
// Two transports: streamable HTTP at /mcp on the running server (Handler:
// stateless, one MCP server per request built for that request's bearer
// token, calling the API in process), and stdio (kgctx mcp), which
// forwards to a running server over HTTP.
//
// Concurrency: a server is safe for concurrent tool calls; it holds no
// state but the token's identity, read once.
package mcp
