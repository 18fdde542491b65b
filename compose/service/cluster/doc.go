// Package cluster is kgctx's scale-out on NATS JetStream: `kgctx serve
// --cluster` runs a Node, which the API uses to write and to route.
//
// Placement. Orgs are placed on shards by rendezvous hashing over the
// shard ids (ShardOf), overridable per org; the shard list and the
// overrides live in a JetStream key-value bucket (Placement), which every
// node watches and keeps a copy of; Node.Place sets an override (PUT
// /v1/admin/orgs/{org}/shard), moving the org's data when it has some
// (Moves, below). Each shard is a
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
// proxied request's caller as a principal MACed with the secret, for the
// node it is sent to (Node.Advertised; api.PrincipalHeader), never the
// caller's bearer token. So a party
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
// Moves. An org's data on a store is the result of its history: the
// entries of its shard's log applied to it (its data entries; each
// replica keeps, per log, the org's record there, streamOrg, and an
// index of its entries). Node.Place of an org with data onto another
// shard starts a move (MoveRecord, key "move.ORG" of the placement
// bucket, signed; a mover runs it on the node serving the source):
// org_copy entries on the target's log copy each data entry of the
// source, as the source's appliers took it (the write, the log and
// sequence its ids are seeded by, the log's time, the record of its
// idempotency key), so that every replica of the target applies it as
// the source's did; once the target's nodes have taken the copies (their
// member records carry the sequences they applied), org_fence on the
// source refuses the org's writes there (RejectMoving: 503, retry), the
// last entries are copied, org_flip on the target makes the org live
// there, the placement's override names the target with the flip's
// sequence (Placement.Since: a node of the target serves the org only
// once it applied it, Route waiting for that within ReadWait), and
// org_drop on the source removes the source's copy. The steps are log
// version 3: published only once every live node applies it, stalling
// a node that does not. Steps are admitted only on the logs they belong
// to: a target's on a shard a signed move record named
// (Placement.MayReceive), a source's on a shard the org was placed on.
//
// A store may apply both logs. It keeps one copy of the org, and an
// orgState (per store, under the org's lock, recorded with each
// sequence) says which log's history it is and how far: an entry the
// copy has is skipped by whichever applier meets it second (the
// publisher's result kept for it), an entry after a gap first fills the
// gap from the applier's own log (its index), an entry of another log
// or era starts the copy again, and the drop waits (within 30 s) for the
// target's applier on the same store to flip, so that the copy stays.
// Whatever the order, the copy ends as the history says.
//
// A move survives its runner: the record, saved each second, is taken
// over (compare-and-set) by a node serving the source once its runner is
// silent for 15 s, or by the same node restarted; steps sent again carry
// the same message id (JetStream's duplicate) or are skipped as
// applied. Node.Place of the source while the move copies gives it up
// (org_unfence, org_abort: the target's copy goes where the source is
// not applied), and so does a fence not followed by a flip within 30 s.
// A store written by a release before moves has no index of the part of
// the log it applied then: that part is read from the log (legacyEntries)
// and its orgs get their state when the node starts (tagLegacy).
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
