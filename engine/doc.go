// Package engine is kgctx's store: the graph core. It holds the domain
// types (Node, Triplet, Tenant, Observation), their Badger persistence, the
// in-memory graph image that blocks are composed from, the change log the
// indexes follow, the store's upgrades and its consistency check (Check).
//
// Beside it, sharing its one Badger through the store's key-value handle
// (KV, kv.go), live the packages of the other concerns: engine/delivery
// (session leases and the inject queue), engine/sessionlog (injection logs
// and feedback), engine/auth (tokens) and engine/configstore
// (configuration documents). They import engine, never the reverse; their
// key prefixes are listed in keys.go, with the core's, so that upgrades can
// move their records. engine/enginetest is the test kit.
//
// # Layout
//
// Badger holds everything durable in key spaces by prefix (see keys.go).
// In memory, rebuilt at Open: a node table indexed by dense uint32 id, an
// edge table indexed by edge id, per-node roaring bitmaps of outgoing and
// incoming edge ids, per-relationship edge bitmaps, per-project node and
// edge bitmaps, per-org node bitmaps, deleted bitmaps, and the identity
// indexes (normalised name per project, plus the legacy name keys of
// upgraded stores, external UUID, (source, relationship, target)). Ids are never reused, so a derived index can never
// confuse a new node with a deleted one.
//
// # Identity
//
// A node is identified within its project by NormalizeName: case-folded,
// each run of '-' and whitespace and each case boundary ("authService",
// "HTTPServer") folded to one '_', underscores kept, digits and other
// punctuation kept. So "AuthService", "auth-service" and "Auth Service" are
// one node, while "v1_2" and "v12", or Freebase's "/m/015g7" and
// "/m/015g_7", are two. The other surface forms are kept as aliases. An
// edge is identified by (source, NormalizeRelationship(rel), target);
// importing it again merges provenance and, when the import names a
// weight, sets the weight.
//
// Stores of version 2 deleted separators instead, and so merged names such
// as "kill_src_2_10" and "kill_src_21_0". Open upgrades them (migrate.go):
// merged nodes cannot be split and stay one node, still found under every
// surface form they were imported under (legacy name keys).
//
// # Concurrency
//
// A Store is safe for concurrent use. Writers are serialised; each commits
// to Badger, then applies the batch to memory under a short exclusive lock,
// then hands the change set to the attached Indexers (still serialised, in
// sequence order). Readers use View, which holds a shared lock: they see a
// consistent snapshot made of whole batches, and wait at most for one
// batch's in-memory apply.
//
// # Memory ownership
//
// Everything a View hands out (bitmaps, strings, EdgeInfo) belongs to the
// store and is valid only inside the View callback; bitmaps are read-only.
// Values returned by Store methods outside a View (Node, Triplet, vectors)
// are copies the caller owns. Badger values never escape their transaction.
//
// # Durability
//
// A write is durable when its method returns: Badger writes through mmap,
// which survives kill -9; Options.SyncWrites adds fsync for power loss.
// Derived indexes follow through a change log (changes.go) replayed at
// Attach, so a crash between a commit and an index update heals on reopen.
package engine
