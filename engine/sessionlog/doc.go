// Package sessionlog holds the injection logs and the feedback on them:
// what each composed session block surfaced (observations, nodes, edges),
// and the outcomes (helpful, misleading, neutral) that move the weights of
// those items in the graph.
//
// # Key spaces
//
// It keeps its records in the store's Badger, through the store's KV
// handle (engine.KV), under a prefix listed in engine's keys.go: 'l' org 0
// session 0 + big-endian nanoseconds + log id -> log, JSON (PrefixLog), so
// one prefix scan lists a session's logs in time order. Every log also
// marks its session in PrefixSessionOrg (engine.MarkSession).
//
// # Concurrency
//
// A Store is safe for concurrent use. Feedback is serialised by the
// store's feedback lock, and its weights and the logs' record of the
// applied outcome commit in one batch of the graph
// (engine.Store.MoveWeights), so an outcome moves the weights once however
// often it is sent. New returns the same Store for every call over one
// engine.Store. Logs returned are copies the caller owns.
package sessionlog
