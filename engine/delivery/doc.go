// Package delivery holds the session leases and the inject queue: a
// worker claims a session's lease (the session lock) and only the holder of
// a live lease is handed the blocks queued for the session, one in flight
// at a time, until it acks them.
//
// # Key spaces
//
// It keeps its records in the store's Badger, through the store's KV
// handle (engine.KV), under prefixes listed in engine's keys.go: 's' org 0
// session 0 -> lease (PrefixLease); 'q' org 0 session 0 seq -> inject
// (PrefixInject); 'h' org 0 session 0 content hash -> seq (PrefixInjectHash,
// the dedupe, kept after ack); the inject sequence under the meta key
// MetaInjectSeq. Every first write of a session also marks it in
// PrefixSessionOrg (engine.MarkSession). Records are JSON.
//
// # Concurrency
//
// A Store is safe for concurrent use. Every lease and queue transition
// runs in one Badger transaction under the store's delivery lock, so
// transitions are serialised and atomic. New returns the same Store for
// every call over one engine.Store, so the lock and the sequence exist once
// per Badger. Values returned are copies the caller owns.
package delivery
