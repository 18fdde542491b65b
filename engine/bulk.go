package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	badger "github.com/dgraph-io/badger/v4"
)

// An import commits in chunks, each in two short holds of the writer lock
// with the slow part (reading descriptions, embedding, reading merged
// edges) between them; see "Concurrency" in doc.go for the contract.

// Chunk bounds. A chunk holds at most chunkTriplets triplets and stops
// early once it has chunkNodes nodes to (re)index. Its two lock holds cost
// about 5 µs a triplet, and the indexers, which a later write waits for,
// about 0.15 ms a node (HNSW and bleve, FB15k-237 on 2 cores), so a chunk
// keeps a small write of another org waiting well under a second; larger
// triplet bounds save the indexers' fixed cost per change set (a bleve
// segment, an HNSW snapshot) when most nodes exist already. An import of
// at most bulkMin triplets (chunkNodes / 2: two nodes a triplet) is
// always one chunk.
const (
	defaultChunkTriplets = 32768
	defaultChunkNodes    = 4096
)

// chunking overrides the chunk bounds (tests); zero fields mean defaults.
type chunking struct {
	triplets, nodes int
}

func (c chunking) limits() (triplets, nodes int) {
	return cmpOrInt(c.triplets, defaultChunkTriplets), cmpOrInt(c.nodes, defaultChunkNodes)
}

func (c chunking) bulkMin() int {
	_, n := c.limits()
	return max(n/2, 1)
}

func cmpOrInt(a, b int) int {
	if a > 0 {
		return a
	}
	return b
}

// importRun is one Import: its input, its running result and, for a bulk
// import (more than one chunk possible), the undo log of what its
// committed chunks did.
type importRun struct {
	s    *Store
	t    Tenant
	in   []TripletInput
	o    ImportOptions
	now  int64
	bulk bool

	done int          // triplets committed
	res  ImportResult // counts of the committed chunks

	// The undo log (bulk only): nodes and edges the import created, the
	// records before the import of those it changed, the nodes it gave
	// their own vector, the dictionary entries it created.
	created, createdEdges *roaring.Bitmap
	nodes                 map[uint32]*nodeUndo
	edges                 map[uint32]*edgeUndo
	own                   *roaring.Bitmap
	newTenants, newRels   []uint32
	// pendingNodes and pendingEdges are the current chunk's additions to
	// nodes and edges, kept once it commits.
	pendingNodes []idUndo[nodeUndo]
	pendingEdges []idUndo[edgeUndo]

	// carry is the last committed chunk: its names, nodes and edges as
	// committed, which the next chunk starts from instead of resolving
	// every name again, as long as no other batch changed the tenants
	// they belong to (carryGens) or dropped a dictionary entry.
	carry      *batch
	carryGens  []tenantGen
	carryDrops uint64
}

type idUndo[T any] struct {
	id uint32
	u  *T
}

// nodeUndo is a node as it was before the import changed it.
type nodeUndo struct {
	rec     nodeRec
	desc    string // when hasDesc: the import changed the description
	hasDesc bool
	vec     []float32 // when hasVec: the import wrote a vector; nil if there was none
	hasVec  bool
	setW    bool    // the import set the weight,
	postW   float64 // last to this
}

// edgeUndo is an edge as it was before the import changed it.
type edgeUndo struct {
	rec   edgeRec
	meta  edgeMeta
	setW  bool
	postW float64
}

// counts reports whether a change to existing node id counts as an update
// in the import's result: once per import, and never for a node the import
// created (as in one batch).
func (r *importRun) counts(id uint32) bool {
	if r == nil || !r.bulk {
		return true
	}
	return !r.created.Contains(id) && r.nodes[id] == nil
}

// ownVector reports whether the import gave node id its own vector in an
// earlier chunk: a later change of type or description does not re-embed
// it, as in one batch.
func (r *importRun) ownVector(id uint32) bool {
	return r != nil && r.own != nil && r.own.Contains(id)
}

// run imports r.in chunk by chunk. A bulk import waits before each chunk
// until the indexers are at most one change set behind, so that what it
// commits never queues far ahead of another writer's change set, and
// checks ctx and the store between chunks. On failure it undoes the
// committed chunks.
func (r *importRun) run(ctx context.Context) (ImportResult, error) {
	s := r.s
	if r.bulk {
		if err := s.beginBulk(); err != nil {
			return ImportResult{}, err
		}
		defer s.endBulk()
		r.created, r.createdEdges, r.own = roaring.New(), roaring.New(), roaring.New()
		r.nodes, r.edges = make(map[uint32]*nodeUndo), make(map[uint32]*edgeUndo)
	}
	for r.done < len(r.in) {
		var err error
		if r.bulk {
			if err = s.checkOpen(); err == nil {
				err = ctx.Err()
			}
		}
		if err == nil {
			err = r.step(ctx)
		}
		if err != nil {
			return ImportResult{}, r.fail(err)
		}
		if h := s.hooks.chunk; h != nil {
			h(r.t, r.done)
		}
	}
	res := r.res
	res.Accepted = len(r.in)
	res.EdgesMerged = len(r.in) - res.EdgesCreated
	return res, nil
}

// step stages, prepares and commits the next chunk. Staging resolves the
// chunk's names against the graph under the writer lock; the lock is let
// go while descriptions are read and nodes embedded, and taken again to
// commit, which happens only if the nodes and edges staged are as they
// were (batch.current); otherwise the chunk is staged again and committed
// without letting the lock go.
func (r *importRun) step(ctx context.Context) error {
	s := r.s
	s.wmu.Lock()
	if err := s.checkOpen(); err != nil {
		s.wmu.Unlock()
		return err
	}
	mark := r.o.IDs.mark()
	b, n := r.stage()
	s.wmu.Unlock()

	err := r.prepare(ctx, b)
	if err == nil && r.bulk {
		// The chunk commits once the indexers have room for it (it was
		// staged and embedded while they worked): a write that comes
		// after waits for the indexing of one chunk's worth of nodes.
		err = s.waitRoom(ctx, b.reindexed)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if cerr := s.checkOpen(); cerr != nil {
		err = cerr
	} else if !b.current() {
		// A write changed (or deleted) something the chunk staged, which
		// may also be why a read of prepare failed.
		s.giveBack(b)
		r.o.IDs.reset(mark)
		b, n = r.stage()
		err = r.prepare(ctx, b)
	}
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		err = b.commit()
	}
	if err != nil {
		s.giveBack(b)
		return err
	}
	s.notify(b.changeSet())
	r.absorb(b, n)
	r.keep(b)
	return nil
}

// keep makes committed batch b the state the next chunk starts from
// (writer lock held), with the generations of every tenant it holds nodes
// or edges of.
func (r *importRun) keep(b *batch) {
	g := r.s.g
	if b.chunk == 1 { // staged afresh: its maps hold only its own
		r.carryGens = r.carryGens[:0]
	}
	add := func(t uint32) {
		for _, d := range r.carryGens {
			if d.tenant == t {
				return
			}
		}
		r.carryGens = append(r.carryGens, tenantGen{tenant: t})
	}
	for _, d := range b.deps {
		add(d.tenant)
	}
	for i := range b.newTenants {
		add(uint32(b.nt + i))
	}
	for i := range r.carryGens {
		r.carryGens[i].gen = g.gens[r.carryGens[i].tenant]
	}
	for _, p := range b.edgeList {
		if p.dirty {
			p.metaOK = true // meta is what the commit wrote
		}
	}
	r.carry, r.carryDrops = b, g.drops
}

// carried reports whether the carried chunk is still what the store holds
// (writer lock held).
func (r *importRun) carried() bool {
	g := r.s.g
	if g.drops != r.carryDrops {
		return false
	}
	for _, d := range r.carryGens {
		if g.gens[d.tenant] != d.gen {
			return false
		}
	}
	return true
}

// stage stages the next chunk (writer lock held): triplets from r.done on,
// up to the chunk bounds for a bulk import, all of them otherwise.
func (r *importRun) stage() (*batch, int) {
	s := r.s
	b := s.newBatch(r.now)
	b.ids, b.imp = r.o.IDs, r
	if c := r.carry; c != nil && r.carried() {
		b.nodes, b.byRaw, b.rawRels, b.edges, b.chunk = c.nodes, c.byRaw, c.rawRels, c.edges, c.chunk+1
	}
	r.carry = nil // staging changes the carried state: it is the committed state again only if this chunk commits
	r.pendingNodes, r.pendingEdges = r.pendingNodes[:0], r.pendingEdges[:0]
	maxT, maxN := s.chunks.limits()
	home := b.tenant(r.t)
	n := 0
	for i := r.done; i < len(r.in); i++ {
		tr := &r.in[i]
		srcT, dstT := home, home
		if tr.SourceProjectID != "" {
			srcT = b.tenant(Tenant{Org: r.t.Org, Project: tr.SourceProjectID})
		}
		if tr.TargetOrgID != "" || tr.TargetProjectID != "" {
			dstT = b.tenant(Tenant{Org: cmpOr(tr.TargetOrgID, r.t.Org), Project: cmpOr(tr.TargetProjectID, r.t.Project)})
		}
		src := b.node(srcT, tr.Source, tr.SourceExact, tr.SourceType, tr.SourceDescription, tr.SourceVector, tr.SourceAliases)
		dst := b.node(dstT, tr.Target, tr.TargetExact, tr.TargetType, tr.TargetDescription, tr.TargetVector, tr.TargetAliases)
		src.setCode(b, tr.SourceLocation, tr.SourceSignature)
		dst.setCode(b, tr.TargetLocation, tr.TargetSignature)
		src.setWeight(b, tr.SourceWeight)
		dst.setWeight(b, tr.TargetWeight)
		b.edge(home, src, b.rawRel(tr.Relationship), dst, tr.Weight, tr.Provenance)
		n++
		if r.bulk && (n >= maxT || b.reindexed >= maxN) {
			break
		}
	}
	b.prepareDocs()
	b.snapshot()
	return b, n
}

// prepare does a staged chunk's reads and embedding, without the writer
// lock (or with it, for a chunk staged again), and notes what undoing it
// would need.
func (r *importRun) prepare(ctx context.Context, b *batch) error {
	if err := b.describe(); err != nil {
		return err
	}
	if err := b.embed(ctx); err != nil {
		return err
	}
	if err := b.loadEdgeMeta(); err != nil {
		return err
	}
	if r.bulk {
		return r.capture(b)
	}
	return nil
}

// capture notes the state before the import of the existing nodes and
// edges the chunk changes for the first time. Stored descriptions and
// vectors are read the first time the import changes them: until then
// they are as before the import (no other import writes its projects).
func (r *importRun) capture(b *batch) error {
	for _, p := range b.nodeList {
		if p.isNew || !p.dirty || r.created.Contains(p.id) {
			continue
		}
		u := r.nodes[p.id]
		if u == nil {
			u = &nodeUndo{rec: *p.pre}
			r.pendingNodes = append(r.pendingNodes, idUndo[nodeUndo]{p.id, u})
		}
		if !u.hasDesc && p.rec.descHash != u.rec.descHash {
			desc, err := r.s.nodeDescription(p.id)
			if err != nil {
				return err
			}
			u.desc, u.hasDesc = desc, true
		}
		if !u.hasVec && p.vec != nil {
			v, err := r.s.Vector(p.id)
			if err != nil && !errors.Is(err, ErrNotFound) {
				return fmt.Errorf("engine: read vector of node %d: %w", p.id, err)
			}
			u.vec, u.hasVec = v, true
		}
	}
	for _, p := range b.edgeList {
		if p.isNew || !p.dirty || r.createdEdges.Contains(p.id) || r.edges[p.id] != nil {
			continue
		}
		meta := p.meta
		meta.prov = slices.Clone(meta.prov) // the commit merges into it
		r.pendingEdges = append(r.pendingEdges, idUndo[edgeUndo]{p.id, &edgeUndo{rec: p.pre, meta: meta}})
	}
	return nil
}

// absorb adds a committed chunk to the result and the undo log.
func (r *importRun) absorb(b *batch, n int) {
	r.done += n
	r.res.NodesCreated += b.nodesCreated
	r.res.NodesUpdated += b.nodesUpdated
	r.res.EdgesCreated += b.edgesCreated
	if b.seq != 0 {
		r.res.Seq = b.seq
	}
	if !r.bulk {
		return
	}
	for _, x := range r.pendingNodes {
		r.nodes[x.id] = x.u
	}
	for _, x := range r.pendingEdges {
		r.edges[x.id] = x.u
	}
	for _, p := range b.nodeList {
		if p.isNew {
			r.created.Add(p.id)
		} else if u := r.nodes[p.id]; u != nil && p.dirty {
			u.setW = u.setW || p.setW
			u.postW = p.rec.weight
		}
		if p.ownVec {
			r.own.Add(p.id)
		}
	}
	for _, p := range b.edgeList {
		if p.isNew {
			r.createdEdges.Add(p.id)
		} else if u := r.edges[p.id]; u != nil && p.dirty {
			u.setW = u.setW || p.setW
			u.postW = p.rec.weight
		}
	}
	for i := range b.newTenants {
		r.newTenants = append(r.newTenants, uint32(b.nt+i))
	}
	for i := range b.newRels {
		r.newRels = append(r.newRels, uint32(b.nr+i))
	}
}

// fail undoes the committed chunks, if any, and returns the import's error.
func (r *importRun) fail(err error) error {
	if r.done == 0 {
		return err
	}
	if uerr := r.undo(); uerr != nil {
		r.s.log.Error("undoing a failed import failed: the store keeps part of it", "org", r.t.Org, "project", r.t.Project,
			"committed", r.done, "triplets", len(r.in), "err", uerr)
		return fmt.Errorf("engine: import failed after %d of %d triplets: %w; undoing them failed: %w", r.done, len(r.in), err, uerr)
	}
	return fmt.Errorf("engine: import stopped after %d of %d triplets, which were undone: %w", r.done, len(r.in), err)
}

// undo takes back what the committed chunks did, in batches as large as
// chunks (each under the writer lock, so other writers go on in between),
// whatever ctx or the store's closing say: nodes and edges the import
// created are deleted, the others get back their fields from before the
// import. A node or edge deleted since stays deleted; a weight moved since
// by someone else (feedback) keeps its move. Dictionary entries the import
// created go too when they are still the last ones. Store.Close waits for
// it. It returns once the indexers have the result.
func (r *importRun) undo() error {
	s := r.s
	bg := context.Background()
	delE, delN := r.createdEdges.ToArray(), r.created.ToArray()
	preN, preE := sortedKeys(r.nodes), sortedKeys(r.edges)
	maxT, maxN := s.chunks.limits()
	var last uint64
	take := func(list *[]uint32, k int) []uint32 {
		k = min(k, len(*list))
		out := (*list)[:k]
		*list = (*list)[k:]
		return out
	}
	// No flow control here: an undo is bounded by what the import wrote,
	// and a person who pressed Ctrl-C (or a request past its timeout)
	// waits for it; the indexers apply it after what they have, in order.
	for len(delE)+len(delN)+len(preN)+len(preE) > 0 {
		seq, err := func() (uint64, error) {
			s.wmu.Lock()
			defer s.wmu.Unlock()
			b := s.newBatch(time.Now().UnixNano())
			for _, e := range take(&delE, maxT) {
				if s.g.edgeLive(e) {
					b.delEdges = append(b.delEdges, e)
				}
			}
			nodes := roaring.New()
			for _, n := range take(&delN, maxN) {
				if s.g.nodes[n].live {
					nodes.Add(n)
				}
			}
			b.deleteNodes(nodes)
			for _, id := range take(&preN, maxN) {
				if err := r.restoreNode(b, id); err != nil {
					return 0, err
				}
			}
			if err := r.restoreEdges(b, take(&preE, maxT)); err != nil {
				return 0, err
			}
			if err := b.commit(); err != nil {
				return 0, err
			}
			s.notifyNoWait(b.changeSet())
			return b.seq, nil
		}()
		if err != nil {
			return err
		}
		last = max(last, seq)
	}
	if err := r.dropDictionaries(); err != nil {
		return err
	}
	if r.o.NoWait {
		return nil // as the import itself: durable now, searchable soon
	}
	return s.waitApplied(bg, last)
}

func sortedKeys[V any](m map[uint32]V) []uint32 {
	ks := make([]uint32, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// restoreNode stages node id back to its state before the import (writer
// lock held).
func (r *importRun) restoreNode(b *batch, id uint32) error {
	u := r.nodes[id]
	cur := b.g.nodes[id]
	if !cur.live {
		return nil
	}
	rec := cur
	rec.aliases, rec.typ, rec.descHash = u.rec.aliases, u.rec.typ, u.rec.descHash
	if u.setW && cur.weight == u.postW {
		rec.weight = u.rec.weight
	}
	if cur.updated == r.now {
		rec.updated = u.rec.updated
	}
	p := &pnode{id: id, rec: rec, dirty: true, reindex: true}
	if u.hasDesc {
		p.desc, p.descSet = u.desc, true
	} else if err := p.loadDesc(b.s); err != nil {
		return err
	}
	if u.hasVec {
		if u.vec != nil {
			p.vec = u.vec
		} else {
			// The vector index keeps the import's vector: it has no
			// removal of a live node's vector (see doc.go).
			b.unvec = append(b.unvec, id)
		}
	}
	t := b.tenantOf(rec.tenant)
	p.doc = &NodeDoc{Dense: id, ID: rec.uuid.String(), OrgID: t.Org, ProjectID: t.Project, Name: rec.name,
		Aliases: rec.aliases, Type: rec.typ, Description: p.desc, Vector: p.vec}
	b.nodeList = append(b.nodeList, p)
	return nil
}

// restoreEdges stages edges ids back to their state before the import
// (writer lock held).
func (r *importRun) restoreEdges(b *batch, ids []uint32) error {
	if len(ids) == 0 {
		return nil
	}
	return b.s.db.View(func(txn *badger.Txn) error {
		for _, id := range ids {
			cur := b.g.edges[id]
			if !b.g.edgeLive(id) {
				continue
			}
			u := r.edges[id]
			raw, err := readEdge(txn, id)
			if err != nil {
				return fmt.Errorf("engine: read edge %d: %w", id, err)
			}
			if raw == nil {
				return fmt.Errorf("%w: edge %d is live but not stored", ErrCorrupt, id)
			}
			_, meta, err := decodeEdge(raw)
			if err != nil {
				return err
			}
			rec := cur
			if u.setW && cur.weight == u.postW {
				rec.weight = u.rec.weight
			}
			meta.prov = u.meta.prov
			if meta.updated == r.now {
				meta.updated = u.meta.updated
			}
			p := b.newPedge()
			*p = pedge{id: id, rec: rec, meta: meta, dirty: true, restore: true}
			b.edgeList = append(b.edgeList, p)
		}
		return nil
	})
}

// dropDictionaries removes the tenants and relationships the import
// created, as far as dropEntries can.
func (r *importRun) dropDictionaries() error { return r.s.dropEntries(r.newTenants, r.newRels) }

// dropEntries removes tenants and relationships an undone write created,
// from the last down, while they are the last and hold nothing.
func (s *Store) dropEntries(tenants, rels []uint32) error {
	if len(tenants)+len(rels) == 0 {
		return nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	b := s.newBatch(time.Now().UnixNano())
	g := s.g
	ts := slices.Clone(tenants)
	slices.Sort(ts)
	for i, n := len(ts)-1, len(g.tenants); i >= 0 && int(ts[i]) == n-1; i-- {
		if !g.projNodes[ts[i]].IsEmpty() || !g.projEdges[ts[i]].IsEmpty() || !g.projObs[ts[i]].IsEmpty() {
			break
		}
		b.dropTenants = append(b.dropTenants, ts[i])
		n--
	}
	rs := slices.Clone(rels)
	slices.Sort(rs)
	for i, n := len(rs)-1, len(g.rels); i >= 0 && int(rs[i]) == n-1 && g.relEdges[rs[i]].IsEmpty(); i-- {
		b.dropRels = append(b.dropRels, rs[i])
		n--
	}
	if len(b.dropTenants)+len(b.dropRels) == 0 {
		return nil
	}
	return b.commit()
}

// undoObservations deletes the observations of a batch that failed after
// some of its chunks committed, in chunks, and the tenant it created.
func (s *Store) undoObservations(ids, tenants []uint32) error {
	bg := context.Background()
	_, last, err := s.deleteObsChunks(bg, ids, false)
	if err != nil {
		return err
	}
	if err := s.dropEntries(tenants, nil); err != nil {
		return err
	}
	return s.waitApplied(bg, last)
}

// snapshot records what the staged batch depends on (writer lock held):
// the generations of the tenants of its nodes and edges, the dictionary
// sizes, the ids it took.
func (b *batch) snapshot() {
	g := b.g
	add := func(t uint32) {
		if int(t) >= len(g.tenants) {
			return // new with this batch: covered by nt
		}
		for _, d := range b.deps {
			if d.tenant == t {
				return
			}
		}
		b.deps = append(b.deps, tenantGen{t, g.gens[t]})
	}
	for _, p := range b.nodeList {
		add(p.rec.tenant)
	}
	for _, p := range b.edgeList {
		add(p.rec.tenant)
	}
	b.nt, b.nr, b.drops = len(g.tenants), len(g.rels), g.drops
	b.next1 = b.s.next
}

// current reports whether what the batch staged is still as it was (writer
// lock held): no batch changed its tenants' nodes or edges, its new
// dictionary entries still get the ids it gave them, and no entry it may
// name was dropped (an undone import's relationship).
func (b *batch) current() bool {
	g := b.g
	if (len(b.newTenants) > 0 && len(g.tenants) != b.nt) || (len(b.newRels) > 0 && len(g.rels) != b.nr) || g.drops != b.drops {
		return false
	}
	for _, d := range b.deps {
		if g.gens[d.tenant] != d.gen {
			return false
		}
	}
	return true
}

// giveBack returns the ids a batch that will not commit took, unless
// another writer took ids after them (writer lock held).
func (s *Store) giveBack(b *batch) {
	if s.next.node == b.next1.node {
		s.next.node = b.next0.node
	}
	if s.next.edge == b.next1.edge {
		s.next.edge = b.next0.edge
	}
}

// beginBulk registers a bulk import, which Close waits for; it fails once
// the store is closing.
func (s *Store) beginBulk() error {
	s.bulk.mu.Lock()
	defer s.bulk.mu.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	s.bulk.n++
	return nil
}

func (s *Store) endBulk() {
	s.bulk.mu.Lock()
	defer s.bulk.mu.Unlock()
	if s.bulk.n--; s.bulk.n == 0 && s.bulk.idle != nil {
		close(s.bulk.idle)
		s.bulk.idle = nil
	}
}

// waitBulk waits until no bulk import runs (Close, once closed is set: a
// running import stops at its next chunk and undoes what it wrote).
func (s *Store) waitBulk() {
	s.bulk.mu.Lock()
	if s.bulk.n == 0 {
		s.bulk.mu.Unlock()
		return
	}
	if s.bulk.idle == nil {
		s.bulk.idle = make(chan struct{})
	}
	idle := s.bulk.idle
	s.bulk.mu.Unlock()
	<-idle
}
