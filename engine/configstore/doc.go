// Package configstore holds the configuration documents: policies,
// budgets, the recall matrix, per-project memory configs and the like,
// each an opaque value under (kind, key). Their owners (compose, api)
// encode them; this package only keeps them durable.
//
// # Key spaces
//
// It keeps its records in the store's Badger, through the store's KV
// handle (engine.KV), under a prefix listed in engine's keys.go: 'g' kind
// 0 key -> value (PrefixConfig).
//
// # Concurrency
//
// A Store is safe for concurrent use and holds no state of its own: each
// call is one Badger transaction, and the last Put of a key wins. Values
// returned by Get are copies the caller owns; values handed to Each's
// callback are valid only during the call.
package configstore
