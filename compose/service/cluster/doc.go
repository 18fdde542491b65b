// Package cluster is kgctx's scale-out on NATS JetStream: `kgctx serve
// --cluster` runs a Node, which the API uses to write and to route.
//
// Placement. Orgs are placed on shards by rendezvous hashing over the
// shard ids (ShardOf), overridable per org; the shard list and the
// overrides live in a JetStream key-value bucket (Placement), which every
// node watches and keeps a copy of; Node.Place sets an override (PUT
// /v1/admin/orgs/{org}/shard) for an org without data. Each shard is a
// JetStream stream with Config.Replicas copies; a further stream,
// GlobalShard, carries the writes every node needs (tokens, policies,
// operator settings).
//
// Members. Every node writes its signed record (id, advertised URL, shards
// it serves) to a members bucket each second and watches the bucket; a
// record older than six seconds is a dead node. A shard is held by the
// Replicas live members of highest rendezvous weight for it (every member,
// for the global log). A node that comes to hold a shard applies its log
// from where its store stopped (from the start for a new node) and serves
// it once caught up with the log as it stood when it began; a node that no
// longer holds a shard keeps applying it until every holder serves it, so
// an org always has a node answering in full.
//
// Writes. The API turns every write into a service.Write and hands it to
// Node.Write, which publishes it, signed, to the org's shard (Publish) and
// returns once JetStream acknowledged it (stored on a majority of the
// stream's replicas) and this node applied it, with its sequence; the API
// answers the position in the X-Kgctx-Sequence header. Every holder runs
// an Applier: it reads the stream in order from the sequence after the
// last it recorded, applies each write with service.App.Apply, with ids
// drawn from a seed keyed by the cluster secret, the stream's name and the
// sequence, and the time JetStream stamped on the message (so every
// replica ends byte-identical), and records the sequence in its store. A
// restart resumes there; a write applied twice (a crash between the write
// and the record) changes nothing the second time. A write the service
// refuses (invalid input) is refused alike on every replica and recorded
// as applied; any other failure is retried, never skipped.
//
// Reads. Any node that serves the org's shard answers; the others proxy
// the request to one that does (never forwarded twice; a node that has
// stopped serving the shard answers such a request 503 rather than from
// its past). A request naming positions in X-Kgctx-Sequence waits, once
// authenticated and within Config.ReadWait, until this node has applied
// them: read-your-writes on any node. Scopes and the Cedar check run on
// the answering node, with the policies of the global log.
//
// Trust. Everything the cluster trusts derives from one secret
// (Config.Secret, serve --cluster-secret-file, the same on every node;
// Keys): the credentials of the embedded NATS servers (one user, limited
// to the cluster's subjects, the JetStream API and its buckets; routes
// with a password of their own), and a MAC key per use. Every logged write
// carries an HMAC-SHA256 over its bytes, its stream, its id, time, origin,
// part and version; an Applier refuses (records as applied, counts in
// Counters, logs) a write without a valid MAC, one stored more than 90 s after it
// was made or under another message id than its own (a replay: JetStream
// drops a replay under its own id within the streams' 2-minute duplicate
// window), one of an org its shard does not hold (Placement.MayHold), and
// a kind of another log (the global log takes only Write.Global kinds).
// Member records and placement entries are signedRecords; a value without
// a valid MAC, and a delete marker, is ignored, and of two valid values of
// a key the later wins. The placement bucket's marker record, signed,
// tells a node started with another secret (ErrSecretMismatch); with
// embedded servers the others refuse its routes first. A logged write's
// ids are drawn from a seed keyed by the secret. The API forwards a
// proxied request's caller as a principal MACed with the secret
// (api.PrincipalHeader), never the caller's bearer token. So a party
// without the secret, even on a NATS that lets it publish, changes no
// node's store, membership or routing.
//
// Big writes. A write over the connection's max payload is published in
// parts (Kgctx-Chunk: index/count/bytes, each signed); the Applier keeps
// the parts in order (and, across a restart, reads them again from the
// log) and applies the write whole with its last part; parts out of place,
// of a mismatched set, over Config.MaxWriteBytes or not complete within 2
// minutes of the log's time are refused. A write over MaxWriteBytes is
// refused before anything is published (engine.ErrTooLarge: 413).
//
// Idempotency. A write's id is random, or, for a request with an
// idempotency key (service.WithIdempotencyKey: the HTTP Idempotency-Key),
// derived from the key, the caller and the write's index in the request,
// keyed by the secret (Keys.keyedID); JetStream drops a retry within its
// duplicate window (the same message id; Publish reports the duplicate and
// the node answers the first result, Applier.Replayed), and every Applier
// remembers the keyed ids it applied, with their results, for 24 h of the
// log's time, in its store in the transaction of the applied sequence, and
// skips a later retry alike on every replica: a keyed write is applied
// once however often it is sent.
//
// Versions. Every logged write carries its format version (LogVersion;
// none: version 1, the format before versions), under its MAC. An
// Applier that meets a write of the cluster it cannot apply (a newer
// version, a kind service.KnownKind does not know) stops the shard there
// (Stall): it records nothing past it and never skips it, the node stops
// offering the shard, refuses writes to it and answers a wait past it
// with ErrStalled (503); a binary that knows the write resumes from it.
// A node publishes in the version of the oldest live node (member records
// carry the version a node applies; none: version 1), so that in a
// rolling upgrade the nodes not yet upgraded apply every write; a write
// of a kind an older node does not know still stalls it, never skips.
//
// Failures. With NATS out of reach or without a quorum, a write JetStream
// certainly did not store (no stream answered, an error answer, nothing
// sent) is refused with service.ErrUnavailable (503, nothing written); one
// sent whose acknowledgement did not come within 10 s, or stored but not
// applied here within Config.ReadWait, is ErrOutcomeUnknown (504): it may
// take effect, and only a retry with the same key is safe. Reads go on
// from what each node applied. An Applier waits out NATS errors and makes
// its consumer again when it idles while the stream has more. Start
// retries every NATS step (connect, streams, buckets, the marker, the
// watchers, the first member record) with backoff within
// Config.StartTimeout, and fails at once only for good (ErrSecretMismatch,
// credentials refused).
//
// Sessions. Leases, the inject queue, injection logs, feedback and tool
// results are service.Writes of the org's shard like any other: a lease
// claim or an inject claim is decided by the state every replica has at
// its place in the log (with the log's time for expiries), so two workers
// on two nodes never both hold a session and an acked inject is never
// handed out again by another node. The JetStream log is the
// compare-and-set: a claim takes effect only if no live lease precedes it
// in the log. The in-session injector's memory (compose.Injector: the
// blocks pending a session's next turn, what it was shown) is not logged:
// it lives on one node per session, the live node serving the org's shard
// of highest rendezvous weight for the session (Node.RouteSession), to
// which every node sends the session's tool calls, drains and forgetting.
package cluster
