// Package hnsw is kgctx's own HNSW (Hierarchical Navigable Small World,
// Malkov & Yashunin 2016) approximate nearest-neighbour index, without cgo.
// It serves vector seed search over graph nodes: ids are the engine's dense
// uint32 node ids, chosen by the caller.
//
// Everything is Go except optional kernels: on amd64 CPUs with AVX2 and
// FMA, Go-assembly kernels (distance_amd64.s for float32 vectors,
// quant_amd64.s for the int8 traversal records) replace the unrolled Go
// ones at init, making searches about 2x faster. Build with -tags purego
// to use only Go; other architectures always do.
//
// The graph walk scores compact int8 records of the vectors (quant.go: a
// quarter of the memory traffic of float32, two cache lines per 128-d
// vector) and re-ranks its candidates with the exact vectors, so returned
// distances are exact. With the records, building the 100k clustered
// vectors went from 37.5 s to 16.1 s and ef 64 searches from 193 to 97 µs
// at the same recall (0.985); SIFT-5k ef 32: recall 0.976 at 30 µs, ef 64:
// 0.993 at 51 µs (`kgctx bench hnsw`, 2-core machine, see bench/README.md).
//
// The exact vectors are kept whole (Dim float32 a node) or, under
// Options.Sparse, as the mask of their nonzero components and those values,
// restored whole into a scratch vector before each exact distance, so the
// two layouts give the same results to the bit; kgctx uses the sparse one
// for its lexical embedder, whose vectors are mostly zeros.
//
// # What it owns
//
// A Graph owns the vectors (copied in on Add, L2-normalised under Cosine),
// the layered neighbour lists, a reverse index of those lists (so Delete can
// repair exactly the nodes that pointed at the deleted one), the tombstones
// and the entry point. It does no I/O: MarshalMeta, TakeDirty, AppendNode and
// Load encode and decode records that the caller stores (kgctx keeps them in
// Badger next to the vectors it persists anyway); reopening loads the lists
// as stored and never rebuilds.
//
// # Parameters
//
// M (default 16) bounds the neighbours per node per upper layer, 2*M on
// layer 0. EfConstruction (default 200) is the candidate list while
// inserting, EfSearch (default 64) while searching; see Options. On SIFT-5k
// the defaults reach recall@10 ~0.99, the same as hnswlib with the same
// parameters.
//
// # Concurrency
//
// Every method is safe for concurrent use. Searches take no per-node locks:
// neighbour lists are read with atomic loads (a search may see a list
// half-updated; every id in it is still a valid node, which an approximate
// search tolerates) and vectors are read in place from chunked slabs that
// never move. Writers lock one node's list at a time (per-node mutexes, never
// two at once), so AddBatch scales across cores. Adds and Deletes of the same
// id are serialised; AddBatch holds that serialisation for a whole wave (at
// most 256 ids, see Determinism), so an Add or Delete of an id colliding with
// one in the wave waits for the wave. A short global lock covers entry-point
// changes.
//
// All operations hold a graph-wide RWMutex in shared mode. It is taken
// exclusively only to rewrite a previously used slot (Add of a deleted id, or
// replacing a live id's vector), which waits for running operations to
// finish and briefly blocks new ones, and by Check. That is what lets a
// search read a vector it reached through a stale link without a lock.
//
// Visibility: a node is returned by searches that start after its Add
// returned (possibly earlier, once linked); a deleted node is never returned
// by a search that starts after its Delete returned. Searches running
// concurrently with writes see some consistent-enough mix.
//
// # Determinism
//
// Two graphs created with the same Options (Seed included) and given the
// same sequence of Add, AddBatch and Delete calls, one at a time, are
// identical: same levels, same neighbour lists in the same order, same entry
// point, same ids reported by TakeDirty and same AppendNode records,
// whatever the workers count of AddBatch, GOMAXPROCS and the scheduling of
// goroutines. So replicas fed the same log answer every query the same way.
// Searches and AppendNode may run alongside; writes that overlap each other
// void the guarantee (the graph stays valid).
//
// AddBatch gets there by inserting in waves (batch.go): the items of a wave
// search the graph as it was at the wave's start in parallel, plus exact
// record distances to the earlier items of their wave; their backlinks are
// then applied grouped by target, each target by one goroutine, sources in
// batch order. A wave starting when the graph holds n live nodes holds
// items up to the next multiple of s, the largest power of two at most n/8
// (at least 1, at most 256): one item at a time into a graph of fewer than
// 16 nodes, 256 once it holds 2,048. A wave also ends at the end of its
// batch and before an id it already holds (a later duplicate replaces the
// earlier vector, as with Add). Consequences:
//
//   - A wave of one item links exactly as Add does, but a larger wave does
//     not: AddBatch builds a different graph than Adds in the same order
//     (of the same quality: recall@10 on SIFT-5k and on clustered data is
//     unchanged).
//   - Splitting a sequence of inserts of new ids into several AddBatch
//     calls builds the same graph as one call when every split falls on a
//     wave boundary (for example at live counts that are multiples of 256,
//     from 2,048 on), and a different one otherwise.
//   - AddBatchContext stops between waves, and draws levels wave by wave,
//     so a cancelled batch leaves the graph (and level generator) that
//     AddBatch of the inserted prefix would.
//   - Distances come from the kernels chosen at init (AVX2 or Go, see
//     above), so graphs match bit for bit only between processes using the
//     same kernels.
//   - Load derives the level generator's state from Seed and the node
//     counts it reads: graphs loaded from the same records continue
//     identically, but not necessarily as the graph that wrote them would
//     have.
//
// # Memory ownership
//
// Search and Exact append to the caller's dst and return it; with a reused
// dst of capacity >= k they allocate nothing. Vector returns a read-only view
// into the graph's storage (valid until that id is re-added; never modify
// it). Vectors passed to Add, AddBatch and Search, and allow-list bitmaps, are
// only read during the call and never retained. Memory is proportional to the
// largest id (chunks of 4,096 slots), so ids should be dense.
//
// # Deletes
//
// Delete tombstones the node and repairs every live node that linked to it
// (reselecting its neighbours with the heuristic over its remaining
// neighbours plus the deleted node's neighbours), so recall holds after
// deletes. The slot keeps its memory until the id is added again.
package hnsw
