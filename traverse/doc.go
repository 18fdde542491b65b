// Package traverse expands seed nodes into their depth-N neighbourhood and
// scores every edge it meets as a candidate triplet, reading the query.
//
// # The walk
//
// A walk follows paths from the seeds. Each seed s carries a score σ(s) in
// (0,1] (the caller's calibrated seed score). Hop 1 extends every seed by
// each of its edges; later hops extend the Query.Beam best paths (one per
// end node), never stepping straight back to the node a path came from.
// Each node offers its MaxFanout strongest edges and, beyond them, up to
// 4 × MaxFanout more that explain a query word the path has not (so a hub's
// few relevant edges are not cut off by its first 64), or, reading
// enumerations (Query.Alike), that are the node's only edge of their
// relationship and direction (a person's one nationality past sixty-four
// award nominations), these whatever the first cap (an award's one
// category past a hundred nominations that explain "award"). To bound a hub's
// cost, a node's edges are scanned for such matches only so far (8 ×
// MaxFanout by relationship and far name, 128 × MaxFanout by relationship
// alone); past that, a hub offers the edges of Query.MatchedRels through
// their relationship bitmaps. At most MaxVisited nodes enter the walk.
// Options.Rels restricts the walk to chosen relationships; DepthZero keeps
// only edges between seeds. Without a Query (Options.Query nil) the walk
// is the first version's, query-blind.
//
// # The score
//
// The query is a set of words (at most 64), each with a weight; the caller
// (compose) says which words each relationship and each node name match
// (Query). A path explains the words its seed's name, its relationships and
// the nodes it reaches match. An edge's importance is the best score of a
// path that ends with it:
//
//	importance = σ(seed) × F(explained) × hopDecay^(hop-1) × hub × ef × wf / 1.44
//	F(m)       = floor + (1-floor) × weight(m) / weight(query)          (floor 0.3)
//	hub        = Π over the nodes passed through, for edges that explain no
//	             new word, of min(1, sqrt(HubDegree / degree))          (HubDegree 32),
//	             and, with Query.Alike, Π over the path's edges, each one of n
//	             edges of its relationship and direction at its node, of
//	             1/(1 + Alike × ln n) if it matches no query word, or
//	             min(1, sqrt(HubDegree / n)) if it explains a new word
//	             through its relationship alone
//	ef         = Π over the path's edges of Query.RelFactor (by relationship
//	             and direction) × Query.AsideFactor (an edge to or from a
//	             node of Query.Aside); 1 when the query sets neither
//	wf         = (0.8 + 0.4 w(edge)) × (0.8 + 0.4 mean(w(src), w(dst)))
//
// So an edge whose relationship or far endpoint names what the question
// asks ranks up to 1/floor above one that names nothing; a second hop that
// explains more than the first can outrank it; a path that wanders through
// a node of thousands of edges weakens unless the query chose the edge;
// and learnt weights move the order within a factor of 2.25, less than
// 1/floor, so they cannot on their own lift an edge that explains nothing
// above one that explains the whole question. An edge reached by a longer
// path lends that path's score to the edges before it, so a path's edges
// rank together, the earlier first. Without a query (or without content
// words) F is 1 and the ranking is seeds, hops, hubs and weights.
//
// Expand returns the candidates unordered; they are ranked by importance
// descending, then hop, then edge id (Less, Ranker). The same graph, seeds
// and query give the same candidates and order whatever the order the
// graph was built in.
//
// # Concurrency and memory
//
// Expand is safe for concurrent use: per-call scratch (a table of the
// nodes the walk entered, sized by what it entered rather than by the
// graph, paths, the candidate table) comes from a sync.Pool and is reset
// by epoch, so a warm call allocates nothing per candidate. The
// returned slice is the caller's: it is dst[:0], grown, so dst's old
// contents are overwritten, and the caller may change the candidates (the
// composer copies them into its own render records). Candidate ids are the View's
// dense ids: the View passed in must stay valid while the result is used
// with it. A Query is read by one Expand at a time (its Rel may memoise);
// a Ranker belongs to one goroutine. Options.Validate reports fields out
// of range (ErrInvalidOptions); Expand itself takes zero fields as the
// defaults.
package traverse
