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
// move their records. The core keeps, for compose/service/cluster, the
// record of how far a replica applied each replicated write log
// (AppliedLog, applied.go), so that replication writes the store only
// through engine. The value types the store takes and gives (TripletInput,
// Tenant, Limits, ImportResult, Observation, ...) live in the leaf
// engine/model, without storage, for clients that must not link Badger;
// engine aliases them. engine/enginetest is the test kit.
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
// A name an import marks exact (TripletInput.SourceExact, TargetExact: a
// code indexer's symbols) is its own identity: case kept, nothing folded,
// so "Conn.close" and "Conn.Close" are two nodes, and neither merges with
// a folded name spelt the same (code.go). Lookups by name (View.Lookup:
// triplet queries, deletes by name, node search) try the exact name
// first, then the folded one, then the one exact name that folds so (none
// when two do). Code nodes may carry a location and a signature, kept in
// memory with the node (View.NodeLocation, NodeSignature, NodeExact).
//
// Stores of version 2 deleted separators instead, and so merged names such
// as "kill_src_2_10" and "kill_src_21_0". Open upgrades them (migrate.go):
// merged nodes cannot be split and stay one node, still found under every
// surface form they were imported under (legacy name keys).
//
// # Concurrency
//
// A Store is safe for concurrent use. Writers are serialised by the writer
// lock, first come first served (locks.go); each commits to Badger, then
// applies the batch to memory under a short exclusive lock, then queues
// the change set for the attached Indexers (applied in sequence order on
// one goroutine). Readers use View, which holds a shared lock: they see a
// consistent snapshot made of whole batches, and wait at most for one
// batch's in-memory apply.
//
// Imports (bulk.go) commit in chunks of at most 32,768 triplets, cut early
// once 4,096 nodes need indexing. A chunk takes the writer lock twice: to
// resolve its names and take its ids, then to commit; in between, without
// the lock, it reads the stored descriptions it needs and embeds its new
// nodes (an HTTP embedder may take seconds). It commits only if no batch
// changed its projects' nodes or edges in between (per-project
// generations); otherwise it is staged again and committed in one hold.
// Other writers get the lock between any two holds, so a one-triplet write
// of another org waits for one hold of an import, not for the import; and
// since a bulk import commits a chunk only once the indexers have room for
// it (the nodes queued for them and the chunk's at most 4,096; it stages
// and embeds the chunk meanwhile), the write then waits for the indexing
// of at most one chunk's worth of nodes (it returns once searches see it).
//
// An import of more than 2,048 triplets (bulk) is all or nothing across
// its chunks. Between chunks it checks ctx and whether the store is
// closing; when it fails there or in a chunk (ctx done, an embedder error,
// Close), it undoes its committed chunks before it returns: the nodes and
// edges it created are deleted, the others get back their fields,
// descriptions, vectors and provenance from before it, and the tenants
// and relationships it created go when nothing came after them. Readers
// see its chunks while it runs, never after it failed. For the undo to be
// exact, a bulk import holds the projects it writes (its own and those its
// triplets name) exclusively from its first chunk to its last: another
// import into one of them waits for it, or fails with its own ctx having
// written nothing. A single-chunk import holds its projects shared, so
// small imports do not wait for each other. Other writes do not wait, and
// the undo keeps them: a node or edge deleted meanwhile stays deleted, a
// weight moved meanwhile (feedback) keeps its move. Close waits for the
// running bulk imports, which stop at their next chunk and undo.
//
// AddObservations stores a batch of more than 2,048 the same way, in
// chunks of 4,096 with the same waits, undone on failure; observations
// never merge, so it holds no project. ClearProject deletes a large project
// in chunks as well, holding the project's import lock, and once started
// runs to its end (a delete cannot be undone halfway). DeleteNode,
// DeleteTriplet, MoveWeights and UpdateEdgeWeights stay one batch: their
// inputs are a node's edges or a session's references.
//
// Chunking changes neither an import's result nor its records or ids: the
// chunks share the import's state (the nodes it created, those it counted
// as updated, those it gave their own vector), and a chunk staged again
// draws the same ids from ImportOptions.IDs, so replicas agree. What an
// undo leaves: the dense ids it took (ids are never reused), and in the
// vector index the import's vector of an existing node that had none
// before. A Badger error inside a chunk's commit, or a crash during an
// import, leaves what Badger wrote, as a crash during one large batch
// always did.
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
// An indexer whose Apply fails is retried a few times with backoff; if it
// still fails it is behind (applyqueue.go): the writes that wait for it
// return once it has failed (they are stored; a write never fails for its
// index), Sync and Check return an *IndexError (ErrIndexBehind),
// IndexFailure reports it, the change log keeps what it missed, and it is
// caught up from the log at the next change set or the next open.
package engine
