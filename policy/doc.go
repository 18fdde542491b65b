// Package policy is the Cedar policy enforcement point (PEP) of kgctx.
//
// Before a graph triplet or an observation reaches an agent's prompt, every
// endpoint node (or the observation itself) must pass a "read" decision under
// the active Cedar policy set. Cross-tenant leaks are the worst bug this
// product can have, so the PEP fails closed: a nil PEP, an incomplete
// identity or resource, an unknown verb, or any policy evaluation error all
// produce deny.
//
// # What it owns
//
//   - The Cedar entity model (SchemaText): principal Agent::"<agentId>" with
//     orgId, projectIds (Set<String>; empty = every project of the org) and
//     role; resources GraphNode::"<id>" and Observation::"<id>" with orgId,
//     projectId and type; actions Action::"read" and Action::"write"; an
//     optional context.projectId for the requesting session.
//   - The default policy set (DefaultPolicies): same org, and an
//     unrestricted or matching project scope. Nothing crosses orgs, not even
//     for operators (an operator acting on an org is a principal of it).
//   - Validation of replacement policy text: it must parse and must
//     type-check in strict mode against SchemaText (cedar-go's
//     x/exp/schema/validate). That rejects references to entity types other
//     than Agent, GraphNode, Observation and Action, unknown attributes,
//     unguarded optional attributes and type errors before they can reach
//     production. An empty policy set is accepted and denies everything.
//   - A per-request decision cache (Request) so that a graph walk touching
//     the same node many times pays for one Cedar evaluation per node.
//
// # Concurrency contract
//
// A *PEP is safe for concurrent use. The active policy set is an immutable
// value behind an atomic.Pointer: decisions load it without locks, Replace
// builds and validates a complete new set first and then swaps the pointer,
// so a decision sees either the old or the new set, never a mix. Replace
// calls are serialised among themselves so Version increases by exactly one
// per successful Replace.
//
// A *Request is owned by one goroutine. It pins the policy set that was
// current when NewRequest was called: a Replace during a long graph walk does
// not change answers half-way through it (and does not invalidate its
// cache); the next Request sees the new set.
//
// # Memory ownership
//
// Requests are pooled. Release returns one to the pool, clearing its cache
// maps (clear keeps their buckets, so a warm Request allocates nothing on
// cache hits and little on misses) and dropping every reference to caller
// strings. A Request must not be used after Release; Release is idempotent
// until the Request is handed out again. Unusually large caches are dropped
// instead of pooled so one huge walk does not pin memory forever.
//
// Identity and Resource strings are referenced, not copied, for the lifetime
// of a Request; callers must not mutate the backing bytes (ordinary Go
// strings are immutable, so this only matters for unsafe conversions).
//
// # Cache keys
//
// Request.Allow caches by a caller-chosen uint64 key (for example a dense
// node id). The key must identify the Resource uniquely within the Request:
// two different resources under the same key get the first one's decision.
package policy
