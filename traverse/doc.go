// Package traverse expands seed nodes into their depth-N neighbourhood and
// scores every edge it meets as a candidate triplet.
//
// # The walk
//
// Each seed s carries a score σ(s) in (0,1]. Reach r(v) is the best
// σ(s) × hopDecay^dist(s,v) over seeds s with dist(s,v) <= depth-1, found by
// depth-1 rounds of max-product relaxation from the seeds over the capped
// adjacency: a node v "offers" only TopEdges(v, maxFanout), its strongest
// incident edges (outgoing and incoming). A node enters the walk when it
// first gets a reach; at most maxVisited nodes do, admitted in order of
// reach (then node id) round by round.
//
// # The score
//
// Every edge e = (a, b) offered by a visited node v is a candidate with
//
//	importance = r(v) × w(e) × (w(a) + w(b)) / 2
//
// maximised over the visited endpoints that offer it. Because r(v) already
// is σ(origin) × hopDecay^(hop-1) with hop = dist(origin, v)+1, this is
// DESIGN.md's formula
//
//	seedScore(origin) × hopDecay^(hop-1) × edgeWeight × mean(nodeWeight(src), nodeWeight(dst))
//
// with the best origin and hop for the edge. Options.Rels restricts the
// walk to chosen relationships (the capped adjacency is then filtered:
// other edges are neither followed nor offered). Depth 0 keeps only edges whose
// two endpoints are both seeds (scored as hop 1). Candidates are ranked by
// importance descending, ties by lower edge id.
//
// # Concurrency and memory
//
// Expand is safe for concurrent use: per-call scratch (reach arrays sized to
// the graph, frontiers, the candidate table) comes from a sync.Pool and is
// reset by epoch, so a warm call allocates nothing per candidate. The
// returned Candidates slice is the caller's (it is dst, grown); the View
// passed in must stay valid while the result is used with it.
package traverse
