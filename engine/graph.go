package engine

import (
	"slices"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"
)

// graph is the in-memory image of the stored graph: everything a block
// needs without touching Badger. It is guarded by Store.mu: readers hold the
// read lock for the whole of their work (a View), the single writer takes
// the write lock only to apply a batch that Badger has already committed.
// So a reader always sees whole batches (a consistent snapshot) and a write
// holds readers back only for the in-memory apply.
type graph struct {
	nodes []nodeRec // by dense id; !live for deleted or never-written slots
	// nodeW mirrors nodes[i].weight in a dense array: the walk reads two
	// node weights per edge it scores, and a 150-byte record per read
	// would cost a cache miss each. putNode keeps it in step.
	nodeW []float64
	// plainW has bit i set when nodeW[i] is DefaultWeight, as most nodes'
	// weights stay (feedback moves few). An eighth of a byte a node stays
	// in cache where the 8 MB of nodeW at a million nodes does not: the
	// walk reads the weight of every far end it scores, and a set bit
	// answers without reading nodeW (View.NodeWeight).
	plainW []uint64
	// liveW has bit i set when nodes[i].live: a block asks whether its
	// seeds and the nodes it names are live, and a node's record is a
	// cache miss (View.Live).
	liveW []uint64
	// exactW has bit i set when nodes[i].exact: a block asks it of every
	// search hit its words name (View.NodeExact), whose records are
	// otherwise cache misses.
	exactW []uint64
	edges  []edgeRec // by edge id
	// edgeLiveW has bit i set when edge i is live: a flag in edgeRec
	// would pad the record from 24 bytes to 32 (40 MB at 5M edges).
	edgeLiveW []uint64

	out, in []*roaring.Bitmap // by dense id: incident edge ids; nil when empty

	// ranked caches, per node, its incident edges sorted by weight
	// descending then id, with what the walk needs of each (other end,
	// weight) so that walking a node reads one contiguous slice instead of
	// an edge record per edge. Readers fill it lazily (under the read lock,
	// hence atomic); writers clear a node's entry whenever one of its
	// edges appears, goes or changes weight.
	ranked []atomic.Pointer[[]Incident]

	rels     []string          // by relationship id
	relIndex map[string]uint32 // normalised name -> id
	relEdges []*roaring.Bitmap // by relationship id: live edge ids

	tenants     []Tenant          // by tenant id
	tenantIndex map[Tenant]uint32 // -> tenant id
	orgTenants  map[string][]uint32
	projNodes   []*roaring.Bitmap // by tenant id: live node ids
	projEdges   []*roaring.Bitmap // by tenant id: live edge ids (an edge belongs to the project it was imported into)
	orgNodes    map[string]*roaring.Bitmap
	// gens counts, by tenant id, the batches that changed the tenant's
	// nodes or edges (see batch.deps); drops counts the dictionary entries
	// dropped, after which an id may name another entry.
	gens  []uint64
	drops uint64

	deletedNodes *roaring.Bitmap // ids below len(nodes) that are not live
	deletedEdges *roaring.Bitmap
	// provEdges holds the live edges whose record lists provenance, so a
	// block reads Badger only for those.
	provEdges *roaring.Bitmap

	// byName, byUUID and byTriple find a live node by (tenant,
	// normalised name) or external id and a live edge by its triple; see
	// idSet and nodeByName, nodeByUUID, edgeByTriple.
	byName, byUUID, byTriple idSet
	// legacy holds the name keys, other than its own, under which a node
	// merged by an older identity rule is still found: version 2 deleted
	// separators, so "kill_src_21_0" resolved to the node named
	// "kill_src_2_10" and is kept as its alias (migrate.go). A legacy key
	// never equals the key of a live node of its tenant, so nodeByName
	// tries it second. Empty unless the store was upgraded.
	legacy map[nameKey]uint32
	// exactFold lists, by (tenant, folded name), the live nodes with exact
	// names that fold to it, so that a lookup by the folded form finds an
	// exact node when only one folds so (graph.lookup). Empty unless the
	// store holds exact names.
	exactFold map[nameKey][]uint32

	// Observations: table by dense id, per-project and per-org bitmaps,
	// per-session bitmaps (the session's turns in recording order),
	// external id index.
	obs        []obsRec
	projObs    []*roaring.Bitmap // by tenant id
	orgObs     map[string]*roaring.Bitmap
	sessObs    map[sessKey]*roaring.Bitmap
	deletedObs *roaring.Bitmap
	byObs      map[string]uint32

	liveNodes, liveEdges, liveObs int
}

type nodeRec struct {
	uuid     uuid
	tenant   uint32
	live     bool
	exact    bool // the name is exact (code.go); beside live, where the record has room
	name     string
	norm     string // the identity key: NormalizeName(name), or exactKey(name) when exact
	typ      string
	aliases  []string
	descHash uint64 // detects a changed description without keeping it in memory
	weight   float64
	created  int64
	updated  int64
	code     *codeInfo // location and signature; nil when neither (code.go)
}

// edgeRec is an edge's in-memory record; whether it is live is
// graph.edgeLiveW's bit.
type edgeRec struct {
	src, dst uint32
	rel      uint32
	tenant   uint32
	weight   float64
}

type nameKey struct {
	tenant uint32
	norm   string
}

type tripleKey struct{ src, rel, dst uint32 }

// sessKey names a session: its id within a tenant.
type sessKey struct {
	tenant  uint32
	session string
}

func newGraph() *graph {
	return &graph{
		relIndex:     make(map[string]uint32),
		tenantIndex:  make(map[Tenant]uint32),
		orgTenants:   make(map[string][]uint32),
		orgNodes:     make(map[string]*roaring.Bitmap),
		deletedNodes: roaring.New(),
		deletedEdges: roaring.New(),
		provEdges:    roaring.New(),
		orgObs:       make(map[string]*roaring.Bitmap),
		sessObs:      make(map[sessKey]*roaring.Bitmap),
		deletedObs:   roaring.New(),
		byObs:        make(map[string]uint32),
		legacy:       make(map[nameKey]uint32),
		exactFold:    make(map[nameKey][]uint32),
	}
}

func (g *graph) ensureTenant(id uint32, t Tenant) {
	for uint32(len(g.tenants)) <= id {
		g.tenants = append(g.tenants, Tenant{})
		g.projNodes = append(g.projNodes, roaring.New())
		g.projEdges = append(g.projEdges, roaring.New())
		g.projObs = append(g.projObs, roaring.New())
		g.gens = append(g.gens, 0)
	}
	g.tenants[id] = t
	if _, ok := g.tenantIndex[t]; !ok {
		g.orgTenants[t.Org] = append(g.orgTenants[t.Org], id)
	}
	g.tenantIndex[t] = id
	if g.orgNodes[t.Org] == nil {
		g.orgNodes[t.Org] = roaring.New()
		g.orgObs[t.Org] = roaring.New()
	}
}

func (g *graph) ensureRel(id uint32, name string) {
	for uint32(len(g.rels)) <= id {
		g.rels = append(g.rels, "")
		g.relEdges = append(g.relEdges, roaring.New())
	}
	g.rels[id] = name
	g.relIndex[name] = id
}

// dropTenant forgets tenant id, the last one, which holds nothing: an
// undone import created it.
func (g *graph) dropTenant(id uint32) {
	if int(id) != len(g.tenants)-1 || !g.projNodes[id].IsEmpty() || !g.projEdges[id].IsEmpty() || !g.projObs[id].IsEmpty() {
		panic("BUG: engine: dropTenant of a tenant in use or not the last")
	}
	g.drops++
	t := g.tenants[id]
	g.tenants, g.projNodes, g.projEdges, g.projObs, g.gens = g.tenants[:id], g.projNodes[:id], g.projEdges[:id], g.projObs[:id], g.gens[:id]
	delete(g.tenantIndex, t)
	ot := slices.DeleteFunc(g.orgTenants[t.Org], func(x uint32) bool { return x == id })
	if len(ot) > 0 {
		g.orgTenants[t.Org] = ot
		return
	}
	delete(g.orgTenants, t.Org)
	if g.orgNodes[t.Org].IsEmpty() && g.orgObs[t.Org].IsEmpty() {
		delete(g.orgNodes, t.Org)
		delete(g.orgObs, t.Org)
	}
}

// dropRel forgets relationship id, the last one, which no edge has: an
// undone import created it.
func (g *graph) dropRel(id uint32) {
	if int(id) != len(g.rels)-1 || !g.relEdges[id].IsEmpty() {
		panic("BUG: engine: dropRel of a relationship in use or not the last")
	}
	g.drops++
	delete(g.relIndex, g.rels[id])
	g.rels, g.relEdges = g.rels[:id], g.relEdges[:id]
}

// setNodeW sets node id's weight in nodeW and plainW.
func (g *graph) setNodeW(id uint32, w float64) {
	g.nodeW[id] = w
	if w == DefaultWeight {
		g.plainW[id>>6] |= 1 << (id & 63)
	} else {
		g.plainW[id>>6] &^= 1 << (id & 63)
	}
}

// nodeWeight is node n's weight (nodeW[n], read only when plainW does not
// say it is DefaultWeight).
func (g *graph) nodeWeight(n uint32) float64 {
	if g.plainW[n>>6]&(1<<(n&63)) != 0 {
		return DefaultWeight
	}
	return g.nodeW[n]
}

// growNodes makes room for dense ids below n; new slots are deleted until set.
func (g *graph) growNodes(n uint32) {
	old := uint32(len(g.nodes))
	if n <= old {
		return
	}
	if uint32(cap(g.nodes)) < n {
		c := max(n, uint32(cap(g.nodes))*5/4+1024)
		nn := make([]nodeRec, len(g.nodes), c)
		copy(nn, g.nodes)
		g.nodes = nn
		no := make([]*roaring.Bitmap, len(g.out), c)
		copy(no, g.out)
		g.out = no
		ni := make([]*roaring.Bitmap, len(g.in), c)
		copy(ni, g.in)
		g.in = ni
		nw := make([]float64, len(g.nodeW), c)
		copy(nw, g.nodeW)
		g.nodeW = nw
		pw := make([]uint64, len(g.plainW), (c+63)/64)
		copy(pw, g.plainW)
		g.plainW = pw
		lw := make([]uint64, len(g.liveW), (c+63)/64)
		copy(lw, g.liveW)
		g.liveW = lw
		xw := make([]uint64, len(g.exactW), (c+63)/64)
		copy(xw, g.exactW)
		g.exactW = xw
		nr := make([]atomic.Pointer[[]Incident], len(g.ranked), c)
		for i := range g.ranked {
			nr[i].Store(g.ranked[i].Load())
		}
		g.ranked = nr
	}
	g.nodes = g.nodes[:n]
	g.nodeW = g.nodeW[:n]
	g.plainW = g.plainW[:(n+63)/64] // new slots: clear (weight 0, not live)
	g.liveW = g.liveW[:(n+63)/64]
	g.exactW = g.exactW[:(n+63)/64]
	g.out = g.out[:n]
	g.in = g.in[:n]
	g.ranked = g.ranked[:n]
	g.deletedNodes.AddRange(uint64(old), uint64(n))
}

func (g *graph) growEdges(n uint32) {
	g.edges = growRecords(g.edges, n, 4096, g.deletedEdges)
	if w := (len(g.edges) + 63) / 64; w > len(g.edgeLiveW) {
		if w > cap(g.edgeLiveW) {
			nl := make([]uint64, len(g.edgeLiveW), (cap(g.edges)+63)/64)
			copy(nl, g.edgeLiveW)
			g.edgeLiveW = nl
		}
		g.edgeLiveW = g.edgeLiveW[:w] // new words: clear (not live)
	}
}

// edgeLive reports whether edge id is live (id below len(g.edges)).
func (g *graph) edgeLive(id uint32) bool { return g.edgeLiveW[id>>6]&(1<<(id&63)) != 0 }

// putNode makes id live with rec (insert or replace).
func (g *graph) putNode(id uint32, rec nodeRec) {
	g.growNodes(id + 1)
	old := &g.nodes[id]
	newName, newUUID := true, true
	if old.live {
		if old.norm != rec.norm || old.tenant != rec.tenant {
			g.byName.remove(hashName(old.tenant, old.norm), id)
			g.unfoldExact(id, old)
		} else {
			newName = false
		}
		if old.uuid != rec.uuid {
			g.byUUID.remove(hashUUID(old.uuid), id)
		} else {
			newUUID = false
		}
	} else {
		g.liveNodes++
		g.deletedNodes.Remove(id)
		t := g.tenants[rec.tenant]
		g.projNodes[rec.tenant].Add(id)
		g.orgNodes[t.Org].Add(id)
	}
	rec.live = true
	g.nodes[id] = rec
	g.liveW[id>>6] |= 1 << (id & 63)
	if rec.exact {
		g.exactW[id>>6] |= 1 << (id & 63)
	} else {
		g.exactW[id>>6] &^= 1 << (id & 63)
	}
	g.setNodeW(id, rec.weight)
	if newName {
		g.byName.insert(hashName(rec.tenant, rec.norm), id, g.nameHashOf)
		if rec.exact {
			k := nameKey{rec.tenant, NormalizeName(rec.name)}
			g.exactFold[k] = append(g.exactFold[k], id)
		}
	}
	if newUUID {
		g.byUUID.insert(hashUUID(rec.uuid), id, g.uuidHashOf)
	}
}

// unfoldExact drops node id, whose record is n, from exactFold.
func (g *graph) unfoldExact(id uint32, n *nodeRec) {
	if !n.exact {
		return
	}
	k := nameKey{n.tenant, NormalizeName(n.name)}
	ids := slices.DeleteFunc(g.exactFold[k], func(x uint32) bool { return x == id })
	if len(ids) == 0 {
		delete(g.exactFold, k)
	} else {
		g.exactFold[k] = ids
	}
}

// lookup finds the live node of tenant called name, as a person or an
// agent names it: the node whose exact name is name; else the node whose
// folded name is name's (NormalizeName, legacy keys included); else the
// one exact node whose name folds as name's does ("conn.close" finds
// Conn.close when no other exact name folds to it). Two or more such
// exact nodes: none (the name is ambiguous; name one exactly).
func (g *graph) lookup(tenant uint32, name string) (uint32, bool) {
	if len(g.exactFold) > 0 {
		if id, ok := g.nodeByName(tenant, exactPrefix+name); ok {
			return id, true
		}
	}
	norm := NormalizeName(name)
	if id, ok := g.nodeByName(tenant, norm); ok {
		return id, true
	}
	if ids := g.exactFold[nameKey{tenant, norm}]; len(ids) == 1 {
		return ids[0], true
	}
	return 0, false
}

// removeNode drops a node; its edges must already be gone.
func (g *graph) removeNode(id uint32) {
	n := &g.nodes[id]
	if !n.live {
		return
	}
	g.byName.remove(hashName(n.tenant, n.norm), id)
	g.unfoldExact(id, n)
	for _, k := range g.legacyKeysOf(id) {
		delete(g.legacy, k)
	}
	g.byUUID.remove(hashUUID(n.uuid), id)
	g.projNodes[n.tenant].Remove(id)
	g.orgNodes[g.tenants[n.tenant].Org].Remove(id)
	g.deletedNodes.Add(id)
	g.out[id], g.in[id] = nil, nil
	g.ranked[id].Store(nil)
	*n = nodeRec{}
	g.liveW[id>>6] &^= 1 << (id & 63)
	g.exactW[id>>6] &^= 1 << (id & 63)
	g.setNodeW(id, 0)
	g.liveNodes--
}

func (g *graph) putEdge(id uint32, rec edgeRec) {
	g.growEdges(id + 1)
	old := &g.edges[id]
	if g.edgeLive(id) {
		if old.weight != rec.weight {
			old.weight = rec.weight
			g.ranked[old.src].Store(nil)
			g.ranked[old.dst].Store(nil)
		}
		return
	}
	g.edges[id] = rec
	g.edgeLiveW[id>>6] |= 1 << (id & 63)
	g.deletedEdges.Remove(id)
	g.liveEdges++
	if g.out[rec.src] == nil {
		g.out[rec.src] = roaring.New()
	}
	g.out[rec.src].Add(id)
	if g.in[rec.dst] == nil {
		g.in[rec.dst] = roaring.New()
	}
	g.in[rec.dst].Add(id)
	g.relEdges[rec.rel].Add(id)
	g.projEdges[rec.tenant].Add(id)
	g.byTriple.insert(hashTriple(rec.src, rec.rel, rec.dst), id, g.tripleHashOf)
	g.ranked[rec.src].Store(nil)
	g.ranked[rec.dst].Store(nil)
}

func (g *graph) removeEdge(id uint32) {
	e := &g.edges[id]
	if !g.edgeLive(id) {
		return
	}
	if b := g.out[e.src]; b != nil {
		b.Remove(id)
		if b.IsEmpty() {
			g.out[e.src] = nil
		}
	}
	if b := g.in[e.dst]; b != nil {
		b.Remove(id)
		if b.IsEmpty() {
			g.in[e.dst] = nil
		}
	}
	g.relEdges[e.rel].Remove(id)
	g.projEdges[e.tenant].Remove(id)
	g.byTriple.remove(hashTriple(e.src, e.rel, e.dst), id)
	g.ranked[e.src].Store(nil)
	g.ranked[e.dst].Store(nil)
	g.deletedEdges.Add(id)
	g.provEdges.Remove(id)
	*e = edgeRec{}
	g.edgeLiveW[id>>6] &^= 1 << (id & 63)
	g.liveEdges--
}

// addToSession and removeFromSession keep sessObs: an observation with
// a session id is in its session's bitmap; an emptied bitmap is dropped.
func (g *graph) addToSession(id, tenant uint32, session string) {
	if session == "" {
		return
	}
	k := sessKey{tenant, session}
	b := g.sessObs[k]
	if b == nil {
		b = roaring.New()
		g.sessObs[k] = b
	}
	b.Add(id)
}

func (g *graph) removeFromSession(id, tenant uint32, session string) {
	k := sessKey{tenant, session}
	if b := g.sessObs[k]; b != nil {
		b.Remove(id)
		if b.IsEmpty() {
			delete(g.sessObs, k)
		}
	}
}

// growObs makes room for observation ids below n.
func (g *graph) growObs(n uint32) {
	g.obs = growRecords(g.obs, n, 1024, g.deletedObs)
}

// growRecords extends recs to n records (capacity grows by a quarter plus
// step at least), marking the new ids deleted until they are put.
func growRecords[R any](recs []R, n uint32, step uint32, deleted *roaring.Bitmap) []R {
	old := uint32(len(recs))
	if n <= old {
		return recs
	}
	if uint32(cap(recs)) < n {
		nr := make([]R, len(recs), max(n, uint32(cap(recs))*5/4+step))
		copy(nr, recs)
		recs = nr
	}
	deleted.AddRange(uint64(old), uint64(n))
	return recs[:n]
}

// putObs makes observation id live with rec (insert or replace).
func (g *graph) putObs(id uint32, rec obsRec) {
	g.growObs(id + 1)
	old := &g.obs[id]
	if !old.live {
		g.liveObs++
		g.deletedObs.Remove(id)
		g.projObs[rec.tenant].Add(id)
		g.orgObs[g.tenants[rec.tenant].Org].Add(id)
		g.addToSession(id, rec.tenant, rec.session)
	} else if old.session != rec.session {
		g.removeFromSession(id, old.tenant, old.session)
		g.addToSession(id, rec.tenant, rec.session)
	}
	rec.live = true
	g.obs[id] = rec
	g.byObs[rec.id] = id
}

func (g *graph) removeObs(id uint32) {
	r := &g.obs[id]
	if !r.live {
		return
	}
	delete(g.byObs, r.id)
	g.projObs[r.tenant].Remove(id)
	g.orgObs[g.tenants[r.tenant].Org].Remove(id)
	g.removeFromSession(id, r.tenant, r.session)
	g.deletedObs.Add(id)
	*r = obsRec{}
	g.liveObs--
}
