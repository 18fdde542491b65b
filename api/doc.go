// Package api is kgctx's HTTP face: an Echo server whose routes, JSON
// fields and status codes follow API.md, over a compose/service App (the
// wiring of store, index, PEP and composer, and the workflows such as a
// session's claim). A handler decodes the request, authorises it, calls
// one function of the App or its parts, and maps errors through one table
// (errors.go). It is the only package that imports Echo.
//
// Every route but /healthz needs a bearer token; the token (stored hashed
// by the engine) decides the org, role and projects of the caller, and a
// path or body naming another org is refused with 403 (operators
// excepted). Errors are always {"error": {"code", "message"}}, mapped from
// package errors in one table (errors.go); a write answered with 4xx or 5xx
// changed nothing, but for a cluster's 504 outcome_unknown (it may take
// effect: a retry with the same Idempotency-Key applies it at most once).
// Bodies are capped (64 MiB for imports, 1 MiB otherwise).
// Every request is timed per route for /metrics, and every block per stage.
//
// Concurrency: a Server handles requests concurrently. Memory: handlers
// copy what they keep; nothing of a request outlives it.
package api
