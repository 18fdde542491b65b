// Package auth holds the bearer tokens: what each token grants (org,
// agent, role, projects), stored by the token's SHA-256 only, and served
// from memory.
//
// # Key spaces
//
// It keeps its records in the store's Badger, through the store's KV
// handle (engine.KV), under a prefix listed in engine's keys.go: 't' +
// SHA-256 hex of the secret -> token, JSON (PrefixToken). The secret
// itself is never stored.
//
// # Concurrency
//
// A Store is safe for concurrent use. New loads every token into memory
// once per engine.Store (every call over one engine.Store returns the same
// Store); PutToken writes through to Badger, then to memory, and
// LookupToken reads memory only. Tokens returned are copies the caller
// owns.
package auth
