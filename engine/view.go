package engine

import (
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
)

// View is a read-only, consistent view of the graph, valid only inside the
// Store.View callback that handed it out. Bitmaps it returns are the
// store's own: never modify them, never keep them past the callback.
type View struct{ g *graph }

// EdgeInfo is an edge's in-memory state.
type EdgeInfo struct {
	Src, Dst, Rel uint32
	Weight        float64
}

// NodeCap is one more than the highest dense node id ever assigned; dense
// ids range over [0, NodeCap).
func (v *View) NodeCap() int { return len(v.g.nodes) }

// EdgeCap is one more than the highest edge id ever assigned.
func (v *View) EdgeCap() int { return len(v.g.edges) }

// NodeCount and EdgeCount are the live totals of the whole store.
func (v *View) NodeCount() int { return v.g.liveNodes }
func (v *View) EdgeCount() int { return v.g.liveEdges }

// Live reports whether dense id n is a live node.
func (v *View) Live(n uint32) bool {
	return int(n) < len(v.g.nodes) && v.g.liveW[n>>6]&(1<<(n&63)) != 0
}

// Out and In return node n's outgoing and incoming edge ids (nil if none).
func (v *View) Out(n uint32) *roaring.Bitmap { return v.g.out[n] }
func (v *View) In(n uint32) *roaring.Bitmap  { return v.g.in[n] }

// Degree is the number of edges incident to n (a self-loop counts twice).
func (v *View) Degree(n uint32) int {
	d := 0
	if b := v.g.out[n]; b != nil {
		d += int(b.GetCardinality())
	}
	if b := v.g.in[n]; b != nil {
		d += int(b.GetCardinality())
	}
	return d
}

// Edge returns edge e's endpoints, relationship id and weight.
func (v *View) Edge(e uint32) EdgeInfo {
	r := &v.g.edges[e]
	return EdgeInfo{Src: r.src, Dst: r.dst, Rel: r.rel, Weight: r.weight}
}

// EdgeLive reports whether e is a live edge.
func (v *View) EdgeLive(e uint32) bool { return int(e) < len(v.g.edges) && v.g.edgeLive(e) }

// NodeWeight is node n's EMA weight.
func (v *View) NodeWeight(n uint32) float64 { return v.g.nodeWeight(n) }

// NodeName is node n's display name.
func (v *View) NodeName(n uint32) string { return v.g.nodes[n].name }

// NodeType is node n's type ("" if none).
func (v *View) NodeType(n uint32) string { return v.g.nodes[n].typ }

// NodeID is node n's external id (a UUID string; allocates).
func (v *View) NodeID(n uint32) string { return v.g.nodes[n].uuid.String() }

// NodeTenant is the (org, project) node n belongs to.
func (v *View) NodeTenant(n uint32) Tenant { return v.g.tenants[v.g.nodes[n].tenant] }

// RelName is the normalised name of relationship id r.
func (v *View) RelName(r uint32) string { return v.g.rels[r] }

// RelID looks up a normalised relationship name.
func (v *View) RelID(name string) (uint32, bool) {
	id, ok := v.g.relIndex[name]
	return id, ok
}

// RelEdges is the bitmap of live edges with relationship r.
func (v *View) RelEdges(r uint32) *roaring.Bitmap { return v.g.relEdges[r] }

// ScopeNodes returns the live nodes of a project, or of the whole org when
// t.Project is "". The result may be nil (no such scope).
func (v *View) ScopeNodes(t Tenant) *roaring.Bitmap {
	if t.Project == "" {
		return v.g.orgNodes[t.Org]
	}
	if id, ok := v.g.tenantIndex[t]; ok {
		return v.g.projNodes[id]
	}
	return nil
}

// ProjectEdges returns the live edges imported into project t (nil if none).
func (v *View) ProjectEdges(t Tenant) *roaring.Bitmap {
	if id, ok := v.g.tenantIndex[t]; ok {
		return v.g.projEdges[id]
	}
	return nil
}

// Lookup finds the node called name in project t: the node of that exact
// name (a code symbol's, case kept), else the node whose folded name is
// name's (any surface form that normalises the same), else the only exact
// node whose name folds as name's does (see graph.lookup).
func (v *View) Lookup(t Tenant, name string) (uint32, bool) {
	tid, ok := v.g.tenantIndex[t]
	if !ok {
		return 0, false
	}
	return v.g.lookup(tid, name)
}

// LookupScope appends to dst the live nodes called name (as Lookup finds
// them) in scope t: its project, or each project of the org when
// t.Project is "".
func (v *View) LookupScope(dst []uint32, t Tenant, name string) []uint32 {
	if NormalizeName(name) == "" && len(v.g.exactFold) == 0 {
		return dst
	}
	if t.Project != "" {
		if tid, ok := v.g.tenantIndex[t]; ok {
			if id, ok := v.g.lookup(tid, name); ok && v.Live(id) {
				dst = append(dst, id)
			}
		}
		return dst
	}
	for _, tid := range v.g.orgTenants[t.Org] {
		if id, ok := v.g.lookup(tid, name); ok && v.Live(id) {
			dst = append(dst, id)
		}
	}
	return dst
}

// resolve finds the node an import of name (exact or not) into tenant
// tid resolves to, by identity alone: no fallback from one kind of name
// to the other.
func (v *View) resolve(tid uint32, name string, exact bool) (uint32, bool) {
	return v.g.nodeByName(tid, nameKeyOf(name, exact))
}

// NodeByID resolves an external node id.
func (v *View) NodeByID(id string) (uint32, bool) {
	u, err := parseUUID(id)
	if err != nil {
		return 0, false
	}
	n, ok := v.g.nodeByUUID(u)
	return n, ok
}

// Node returns node n's in-memory fields (no description: see Store.Node).
func (v *View) Node(n uint32) Node {
	r := &v.g.nodes[n]
	t := v.g.tenants[r.tenant]
	nd := Node{ID: r.uuid.String(), Dense: n, OrgID: t.Org, ProjectID: t.Project, Name: r.name,
		Aliases: append([]string(nil), r.aliases...), Type: r.typ, Weight: r.weight,
		CreatedAt: unixTime(r.created), UpdatedAt: unixTime(r.updated),
		Exact: r.exact, Signature: r.code.signature()}
	if l, ok := r.code.location(); ok {
		nd.Location = &l
	}
	return nd
}

// Incident is one edge as seen from one of its endpoints.
type Incident struct {
	Edge uint32
	// other is the far endpoint; its top bit is set when the edge comes
	// in (the near endpoint is its target).
	other  uint32
	Weight float64
	Rel    uint32
	// Alike is how many of the near endpoint's live edges share this
	// edge's relationship and direction (itself included), as Ranked
	// counts them; 0 when not counted (IncidentOf). A node's one
	// birthplace says more of it than one of its twenty awards.
	Alike uint32
}

const incomingBit = 1 << 31

// IncidentOf returns live edge e as node n's incident edge (n must be one
// of its endpoints; a self-loop is outgoing).
func (v *View) IncidentOf(e, n uint32) Incident {
	r := &v.g.edges[e]
	in := Incident{Edge: e, Weight: r.weight, Rel: r.rel, other: r.dst}
	if r.src != n {
		in.other = r.src | incomingBit
	}
	return in
}

// RelCount is one more than the highest relationship id; ids range over
// [0, RelCount).
func (v *View) RelCount() int { return len(v.g.rels) }

// Other is the edge's far endpoint.
func (i Incident) Other() uint32 { return i.other &^ incomingBit }

// Ends returns the edge's (source, target) given its near endpoint n.
func (i Incident) Ends(n uint32) (src, dst uint32) {
	if i.other&incomingBit != 0 {
		return i.other &^ incomingBit, n
	}
	return n, i.other
}

// Ranked returns node n's live incident edges (outgoing and incoming; a
// self-loop once), highest weight first, ties by lower edge id. The ranking
// is computed once per node and cached until one of its edges changes; the
// slice is the cache itself: read it, never modify it, never keep it past
// the View. The walk takes a prefix of it to cap hubs.
func (v *View) Ranked(n uint32) []Incident {
	g := v.g
	if p := g.ranked[n].Load(); p != nil {
		return *p
	}
	var ids []uint32
	out, in := g.out[n], g.in[n]
	if out != nil {
		ids = appendBitmap(ids, out)
	}
	if in != nil {
		mark := len(ids)
		ids = appendBitmap(ids, in)
		if out != nil {
			// Drop self-loops, already listed as outgoing.
			w := mark
			for _, e := range ids[mark:] {
				if g.edges[e].src != n {
					ids[w] = e
					w++
				}
			}
			ids = ids[:w]
		}
	}
	list := make([]Incident, len(ids))
	for i, e := range ids {
		r := &g.edges[e]
		other := r.dst
		if r.src != n {
			other = r.src | incomingBit
		}
		list[i] = Incident{Edge: e, other: other, Weight: r.weight, Rel: r.rel}
	}
	countAlike(list)
	slices.SortFunc(list, func(a, b Incident) int {
		switch {
		case a.Weight > b.Weight:
			return -1
		case a.Weight < b.Weight:
			return 1
		case a.Edge < b.Edge:
			return -1
		case a.Edge > b.Edge:
			return 1
		}
		return 0
	})
	// Concurrent readers may both compute it; either result is the same.
	g.ranked[n].Store(&list)
	return list
}

// countAlike sets each incident's Alike: the incidents of list with its
// relationship and direction.
func countAlike(list []Incident) {
	key := func(in *Incident) uint64 { return uint64(in.Rel)<<1 | uint64(in.other>>31) }
	// Most nodes have a few relationships: a short list, searched from
	// the last key found (runs of one relationship are common), costs
	// less than a map; a node with many falls back to one.
	type kc struct {
		key uint64
		n   uint32
	}
	var small [16]kc
	kinds := small[:0]
	last := 0
	for i := range list {
		k := key(&list[i])
		if last < len(kinds) && kinds[last].key == k {
			kinds[last].n++
			continue
		}
		last = slices.IndexFunc(kinds, func(x kc) bool { return x.key == k })
		if last < 0 {
			if len(kinds) == cap(small) {
				countAlikeMap(list)
				return
			}
			last = len(kinds)
			kinds = append(kinds, kc{key: k})
		}
		kinds[last].n++
	}
	for i := range list {
		k := key(&list[i])
		if kinds[last].key != k {
			last = slices.IndexFunc(kinds, func(x kc) bool { return x.key == k })
		}
		list[i].Alike = kinds[last].n
	}
}

// countAlikeMap is countAlike for a node of many relationships.
func countAlikeMap(list []Incident) {
	key := func(in *Incident) uint64 { return uint64(in.Rel)<<1 | uint64(in.other>>31) }
	alike := make(map[uint64]uint32, 64)
	for i := range list {
		alike[key(&list[i])]++
	}
	for i := range list {
		list[i].Alike = alike[key(&list[i])]
	}
}

// TopEdges appends to dst[:0] the ids of the first limit edges of
// Ranked(n) (all when limit <= 0).
func (v *View) TopEdges(dst []uint32, n uint32, limit int) []uint32 {
	list := v.Ranked(n)
	if limit <= 0 || limit > len(list) {
		limit = len(list)
	}
	dst = dst[:0]
	for _, in := range list[:limit] {
		dst = append(dst, in.Edge)
	}
	return dst
}

func appendBitmap(dst []uint32, b *roaring.Bitmap) []uint32 {
	n := int(b.GetCardinality())
	start := len(dst)
	dst = slices.Grow(dst, n)[:start+n]
	tail := dst[start:]
	b.ToExistingArray(&tail)
	return dst
}
