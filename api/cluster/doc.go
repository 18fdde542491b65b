// Package cluster is kgctx's scale-out on NATS JetStream (issue 13), in
// progress: this branch has the foundations only, not yet wired into
// serve.
//
// Design. Orgs are placed on shards by rendezvous hashing over the shard
// ids (Placement), overridable per org; the placement map lives in a
// JetStream key-value bucket. Each shard is a JetStream stream with three
// replicas; a write is published to its org's shard and acknowledged to
// the client after JetStream's replicated ack, with the stream sequence it
// got; every kgctx replica of the shard applies the stream in order to its
// own Badger, recording the applied sequence. Reads wait, within a bound,
// for the sequence a client names. Leases are compare-and-set entries of
// a key-value bucket; the inject queue is in the shard's stream.
//
// Still to build before serve --cluster exists: a deterministic write
// path (ids and timestamps drawn from the message, not at apply time), the
// applier and its durable sequence, read-your-writes, proxying, leases and
// injects, the SIGKILL and join tests, the bench.
package cluster
