package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	badger "github.com/dgraph-io/badger/v4"
	"github.com/kgctx/kgctx/engine/model"
)

// ImportOptions tune one Import call.
type ImportOptions struct {
	// AllowCrossOrg permits targetOrgId (operators only).
	AllowCrossOrg bool
	// Now stamps created/updated times; zero means time.Now().
	Now time.Time
	// FirstLine is the line number of in[0] in the caller's input, so
	// errors name the caller's lines (default 1).
	FirstLine int
	// Lines, when set, gives the input line of each triplet (it wins over
	// FirstLine); readers skip blank lines, so lines need not be contiguous.
	Lines []int
	// Relationships, when set, is the project's strict vocabulary: a
	// relationship whose snake_case form is not in it is invalid.
	Relationships map[string]bool
	// NoWait returns as soon as the batch is durable in the store, before
	// the text and vector indexes have it (they follow in the background,
	// in order; Store.Sync waits for them). Bulk loaders use it so that
	// indexing one batch overlaps storing the next. Without it, Import
	// returns when searches see the batch.
	NoWait bool
	// IDs, when set, draws the ids of new nodes and observations (see
	// IDSource); nil draws them at random.
	IDs *IDSource
}

// Import validates and writes a batch of triplets into tenant t. It is all
// or nothing: a *ValidationError (wrapping ErrInvalidInput) or ErrForbidden
// means nothing was written, and so does any other error (ctx's included):
// a large import commits in chunks and, when it fails after some, undoes
// them before it returns (see "Concurrency" in doc.go). Validation trims
// in's strings in place. Re-importing the same triplets creates nothing:
// nodes are identified per project by normalised name, or by the name
// itself when the input marks it exact (code.go), edges by (source,
// relationship, target). The result is the same however the import is
// chunked.
func (s *Store) Import(ctx context.Context, t Tenant, in []TripletInput, o ImportOptions) (ImportResult, error) {
	var res ImportResult
	if err := s.checkOpen(); err != nil {
		return res, err
	}
	if err := ValidateID(t.Org); err != nil {
		return res, fmt.Errorf("org: %w", err)
	}
	if err := ValidateID(t.Project); err != nil {
		return res, fmt.Errorf("project: %w", err)
	}
	lim := s.opts.Limits.WithDefaults()
	if len(in) > lim.MaxBatch {
		return res, fmt.Errorf("%w: %d triplets, the limit is %d", ErrTooLarge, len(in), lim.MaxBatch)
	}
	first := o.FirstLine
	if first <= 0 {
		first = 1
	}
	line := func(i int) int {
		if i < len(o.Lines) {
			return o.Lines[i]
		}
		return first + i
	}
	verr := &ValidationError{}
	for i := range in {
		tr := &in[i]
		if err := ValidateTriplet(tr, lim, s.dim); err != nil {
			verr.add(line(i), err)
			continue
		}
		if o.Relationships != nil {
			if rel := NormalizeRelationship(tr.Relationship); !o.Relationships[rel] {
				verr.add(line(i), fmt.Errorf("relationship %q is not in the project's vocabulary (strict mode)", rel))
				continue
			}
		}
		if tr.TargetOrgID != "" && tr.TargetOrgID != t.Org && !o.AllowCrossOrg {
			return res, fmt.Errorf("%w: line %d: targetOrgId links to another org, which only operators may do", ErrForbidden, line(i))
		}
	}
	if len(verr.Lines) > 0 {
		return res, verr
	}
	if len(in) == 0 {
		return res, nil
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	r := &importRun{s: s, t: t, in: in, o: o, now: now.UnixNano(), bulk: len(in) > s.chunks.bulkMin()}
	release, err := s.tlocks.lock(ctx, importTenants(t, in), r.bulk)
	if err != nil {
		return res, fmt.Errorf("engine: import: waiting for another import into its projects: %w", err)
	}
	res, err = r.run(ctx)
	// What is committed stays: other imports may build on it.
	release()
	if err != nil || o.NoWait || res.Seq == 0 {
		return res, err
	}
	// Committed: a cancelled wait does not undo it.
	return res, s.waitApplied(context.WithoutCancel(ctx), res.Seq)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// batch accumulates one write under the writer lock: new and changed nodes
// and edges, then commits them to Badger and applies them to memory.
type batch struct {
	s   *Store
	g   *graph
	now int64
	ids *IDSource // nil: random ids

	newTenants []Tenant
	tenantIDs  map[Tenant]uint32
	newRels    []string
	relIDs     map[string]uint32

	nodes    map[nameKey]*pnode
	byRaw    map[nameKey]*pnode // (tenant, name as sent): skips normalising repeats
	rawRels  map[string]uint32  // relationship as sent -> id
	nodeList []*pnode
	edges    map[tripleKey]*pedge
	edgeList []*pedge
	arena    []pedge // pedges are carved from here: one allocation per chunk
	normBuf  []byte

	delNodes []uint32 // nodes deleted by this batch
	delEdges []uint32
	obsList  []*pobs  // observations created or changed
	delObs   []uint32 // observations deleted
	extra    []kv     // other records written with the batch (e.g. logs)
	unvec    []uint32 // nodes whose stored vector goes (an import undone)
	// dropTenants and dropRels are dictionary entries an undone import
	// created, removed with it (the last entries, and empty).
	dropTenants, dropRels []uint32
	edgeBase              uint32 // the first edge id not in use when the batch began
	edgeEnd               uint32 // one past the last edge id the batch took
	next0                 struct{ node, edge, obs uint32 }

	// imp is the import the batch is a chunk of (nil for other writes),
	// and chunk its number: pnodes and pedges carried over from the
	// import's previous chunk (importRun.carry) join this one when first
	// touched (stampNode, stampEdge).
	imp   *importRun
	chunk uint32
	// reindexed counts the staged nodes the indexers will have to see:
	// what a chunk costs them.
	reindexed int
	// deps are the generations of the tenants the staged nodes and edges
	// belong to, and nt, nr the dictionary sizes, when staging ended: a
	// chunk committed after the writer lock was let go commits only if
	// they are unchanged (see importRun.step).
	deps   []tenantGen
	nt, nr int
	drops  uint64                           // graph.drops
	next1  struct{ node, edge, obs uint32 } // s.next when staging ended

	seq                        uint64
	nodesCreated, nodesUpdated int
	edgesCreated               int
}

// tenantGen is a tenant's generation (graph.gens) as a batch saw it.
type tenantGen struct {
	tenant uint32
	gen    uint64
}

type pnode struct {
	id       uint32
	rec      nodeRec
	desc     string
	descSet  bool // desc must be written (new node or changed description)
	vec      []float32
	isNew    bool
	dirty    bool // record must be written
	reindex  bool // indexed text or vector changed: indexers must see it
	revector bool // the embedded text changed: a new vector is needed
	ownVec   bool // vec came with the input
	setW     bool // the input set the weight
	chunk    uint32
	doc      *NodeDoc
	// pre is the record before the batch changed it, for a bulk
	// import's undo (existing nodes only; set by touch).
	pre *nodeRec
}

type pedge struct {
	id    uint32
	rec   edgeRec
	meta  edgeMeta
	isNew bool
	dirty bool
	setW  bool // the input set the weight
	// metaOK: meta holds the stored provenance (loaded, or committed by
	// an earlier chunk of the import).
	metaOK bool
	chunk  uint32
	// restore writes meta as it is (an undo) instead of merging prov and
	// stamping the batch's time.
	restore bool
	prov    []Provenance // provenance to merge in
	pre     edgeRec      // the record before the batch (existing edges)
}

func (s *Store) newBatch(now int64) *batch {
	return &batch{
		s: s, g: s.g, now: now, edgeBase: s.next.edge, edgeEnd: s.next.edge, next0: s.next, chunk: 1,
		tenantIDs: make(map[Tenant]uint32),
		relIDs:    make(map[string]uint32),
		nodes:     make(map[nameKey]*pnode),
		byRaw:     make(map[nameKey]*pnode),
		rawRels:   make(map[string]uint32),
		edges:     make(map[tripleKey]*pedge),
	}
}

func (b *batch) tenant(t Tenant) uint32 {
	if id, ok := b.g.tenantIndex[t]; ok {
		return id
	}
	if id, ok := b.tenantIDs[t]; ok {
		return id
	}
	id := uint32(len(b.g.tenants) + len(b.newTenants))
	b.newTenants = append(b.newTenants, t)
	b.tenantIDs[t] = id
	return id
}

func (b *batch) rel(name string) uint32 {
	if id, ok := b.g.relIndex[name]; ok {
		return id
	}
	if id, ok := b.relIDs[name]; ok {
		return id
	}
	id := uint32(len(b.g.rels) + len(b.newRels))
	b.newRels = append(b.newRels, name)
	b.relIDs[name] = id
	return id
}

// rawRel resolves a relationship as sent to its id, normalising each
// distinct spelling once per batch.
func (b *batch) rawRel(raw string) uint32 {
	if id, ok := b.rawRels[raw]; ok {
		return id
	}
	id := b.rel(NormalizeRelationship(raw))
	b.rawRels[raw] = id
	return id
}

// maxAliases bounds the surface names remembered per node.
const maxAliases = model.MaxAliases

// node resolves (or creates) the node named name in tenant t, exact or
// not, and merges the optional fields into it.
func (b *batch) node(tid uint32, name string, exact bool, typ, desc string, vec []float32, aliases []string) *pnode {
	var p *pnode
	if exact {
		p = b.resolve(tid, name, true) // its key is the name: nothing to save
	} else if p = b.byRaw[nameKey{tid, name}]; p == nil {
		p = b.resolve(tid, name, false)
		b.byRaw[nameKey{tid, name}] = p
	}
	b.stampNode(p)
	p.alias(b, name)
	for _, a := range aliases {
		p.alias(b, a)
	}
	// touch comes before each change: it keeps the record as it was.
	if typ != "" && typ != p.rec.typ {
		p.touch(b)
		p.rec.typ = typ
		p.markReindex(b)
		p.revector = true
	}
	if desc != "" && desc != p.desc {
		if h := descHash(desc); h != p.rec.descHash {
			p.touch(b)
			p.rec.descHash = h
			p.desc, p.descSet = desc, true
			p.markReindex(b)
			p.revector = true
		}
	}
	if vec != nil {
		p.touch(b)
		p.vec = slices.Clone(vec)
		p.ownVec = true
		p.markReindex(b)
	}
	return p
}

func (p *pnode) markReindex(b *batch) {
	if !p.reindex {
		p.reindex = true
		b.reindexed++
	}
}

// resolve finds or creates the node of tenant tid whose identity key
// (nameKeyOf) is name's.
func (b *batch) resolve(tid uint32, name string, exact bool) *pnode {
	b.normBuf = appendNameKey(b.normBuf[:0], name, exact)
	p := b.nodes[nameKey{tid, string(b.normBuf)}] // no allocation for the lookup
	if p == nil {
		norm := string(b.normBuf)
		k := nameKey{tid, norm}
		if id, ok := b.g.nodeByName(k.tenant, k.norm); ok {
			// Found by a legacy key: the node may already be in the
			// batch under its own key, and must be staged only once.
			own := nameKey{tid, b.g.nodes[id].norm}
			if p = b.nodes[own]; p != nil {
				b.nodes[k] = p
				return p
			}
			p = &pnode{id: id, rec: b.g.nodes[id]}
			b.nodes[own] = p
		} else {
			p = &pnode{id: b.s.next.node, isNew: true, dirty: true, reindex: true, revector: true, descSet: true}
			b.s.next.node++
			b.reindexed++
			p.rec = nodeRec{uuid: b.ids.uuid(), tenant: tid, name: name, norm: norm, exact: exact, weight: DefaultWeight, created: b.now, updated: b.now}
			b.nodesCreated++
		}
		b.nodes[k] = p
	}
	return p
}

// stampNode makes p part of the batch (nodeList) the first time the batch
// touches it. A pnode carried over from the import's previous chunk holds
// what that chunk committed: it starts clean.
func (b *batch) stampNode(p *pnode) {
	if p.chunk == b.chunk {
		return
	}
	if p.chunk != 0 {
		p.isNew, p.dirty, p.reindex, p.revector, p.ownVec, p.setW = false, false, false, false, false, false
		p.vec, p.doc, p.pre = nil, nil, nil
	}
	p.chunk = b.chunk
	b.nodeList = append(b.nodeList, p)
}

// stampEdge is stampNode for edges.
func (b *batch) stampEdge(p *pedge) {
	if p.chunk == b.chunk {
		return
	}
	if p.chunk != 0 {
		p.isNew, p.dirty, p.setW, p.restore = false, false, false, false
		p.prov = nil
	}
	p.chunk = b.chunk
	p.pre = p.rec
	b.edgeList = append(b.edgeList, p)
}

// setWeight sets the node's weight when the input names one.
func (p *pnode) setWeight(b *batch, w *float64) {
	if w != nil && *w != p.rec.weight {
		p.touch(b)
		p.rec.weight = *w
		p.setW = true
	}
}

// setCode merges an import's location and signature into the node (what
// the import omits stays).
func (p *pnode) setCode(b *batch, l *Location, sig string) {
	if c := mergeCode(p.rec.code, l, sig); c != p.rec.code {
		p.rec.code = c
		p.touch(b)
	}
}

// alias records name as a surface form of the node (if new and room).
func (p *pnode) alias(b *batch, name string) {
	if name != p.rec.name && !slices.Contains(p.rec.aliases, name) && len(p.rec.aliases) < maxAliases {
		p.touch(b)
		// Clipped: the slice may be the graph's (or a pre-image's), which
		// must not see the append.
		p.rec.aliases = append(slices.Clip(p.rec.aliases), name)
		p.markReindex(b)
	}
}

// touch marks p changed, before the change: a bulk import's undo needs
// the record as it was before the chunk (pre).
func (p *pnode) touch(b *batch) {
	if !p.dirty {
		p.dirty = true
		if !p.isNew {
			if b.imp != nil && b.imp.bulk {
				pre := p.rec
				p.pre = &pre
			}
			if b.imp.counts(p.id) {
				b.nodesUpdated++
			}
		}
	}
	p.rec.updated = b.now
}

// newPedge carves a pedge out of the batch's arena (chunks never move, so
// the pointers stay valid).
func (b *batch) newPedge() *pedge {
	if len(b.arena) == cap(b.arena) {
		b.arena = make([]pedge, 0, 4096)
	}
	b.arena = b.arena[:len(b.arena)+1]
	return &b.arena[len(b.arena)-1]
}

func (b *batch) edge(tenant uint32, src *pnode, rid uint32, dst *pnode, w *float64, prov *Provenance) {
	k := tripleKey{src.id, rid, dst.id}
	p := b.edges[k]
	if p == nil {
		if id, ok := b.g.edgeByTriple(k.src, k.rel, k.dst); ok {
			p = b.newPedge()
			*p = pedge{id: id, rec: b.g.edges[id]}
		} else {
			p = b.newPedge()
			*p = pedge{id: b.s.next.edge, isNew: true, dirty: true,
				rec:  edgeRec{src: src.id, dst: dst.id, rel: rid, tenant: tenant, weight: DefaultWeight},
				meta: edgeMeta{created: b.now}}
			b.s.next.edge++
			b.edgeEnd = b.s.next.edge
			b.edgesCreated++
		}
		b.edges[k] = p
	}
	b.stampEdge(p)
	if w != nil && *w != p.rec.weight {
		p.rec.weight = *w
		p.dirty, p.setW = true, true
	}
	if prov != nil && (*prov != Provenance{}) {
		p.prov = append(p.prov, *prov)
		p.dirty = true
	}
}

// prepareDocs makes the index documents of the nodes the indexers must
// see, all but their descriptions (describe adds them). It reads the
// graph: the writer lock must be held.
func (b *batch) prepareDocs() {
	for _, p := range b.nodeList {
		if !p.reindex {
			continue
		}
		t := b.tenantOf(p.rec.tenant)
		p.doc = &NodeDoc{Dense: p.id, ID: p.rec.uuid.String(), OrgID: t.Org, ProjectID: t.Project,
			Name: p.rec.name, Aliases: p.rec.aliases, Type: p.rec.typ, Vector: p.vec}
	}
}

// describe reads the stored descriptions the batch needs (of the nodes it
// writes or reindexes) and completes their documents. It reads Badger
// only, so it runs without the writer lock.
func (b *batch) describe() error {
	for _, p := range b.nodeList {
		if !p.dirty && !p.reindex {
			continue
		}
		if err := p.loadDesc(b.s); err != nil {
			return err
		}
		if p.doc != nil {
			p.doc.Description = p.desc
		}
	}
	return nil
}

// embed computes the vectors of the new or re-described nodes that came
// without one, in one call to the Vectorizer. It runs without the writer
// lock: an HTTP embedder may take seconds. A node this import gave its
// own vector in an earlier chunk keeps it, as it would in one batch.
func (b *batch) embed(ctx context.Context) error {
	if b.s.opts.Vectorizer == nil {
		return nil
	}
	var need []*NodeDoc
	var needP []*pnode
	for _, p := range b.nodeList {
		if p.doc != nil && p.vec == nil && p.revector && !b.imp.ownVector(p.id) {
			need = append(need, p.doc)
			needP = append(needP, p)
		}
	}
	if len(need) == 0 {
		return nil
	}
	vecs, err := b.s.opts.Vectorizer.Vectorize(ctx, need)
	if err != nil {
		return fmt.Errorf("engine: embed %d nodes: %w", len(need), err)
	}
	if len(vecs) != len(need) {
		return fmt.Errorf("engine: embedder returned %d vectors for %d nodes", len(vecs), len(need))
	}
	for i, v := range vecs {
		if len(v) != b.s.dim {
			return fmt.Errorf("%w: embedder returned %d dimensions, the store has %d", ErrDimensionMismatch, len(v), b.s.dim)
		}
		needP[i].vec = v
		needP[i].doc.Vector = v
	}
	return nil
}

func (b *batch) tenantOf(id uint32) Tenant {
	if int(id) < len(b.g.tenants) {
		return b.g.tenants[id]
	}
	return b.newTenants[int(id)-len(b.g.tenants)]
}

// loadEdgeMeta reads the stored provenance of merged edges that gain some.
func (b *batch) loadEdgeMeta() error {
	var need []*pedge
	for _, p := range b.edgeList {
		if !p.isNew && p.dirty && !p.metaOK {
			need = append(need, p)
		}
	}
	if len(need) == 0 {
		return nil
	}
	return b.s.db.View(func(txn *badger.Txn) error {
		for _, p := range need {
			rec, err := readEdge(txn, p.id)
			if err != nil {
				return fmt.Errorf("engine: read edge %d: %w", p.id, err)
			}
			if rec == nil {
				return fmt.Errorf("%w: edge %d is live but not stored", ErrCorrupt, p.id)
			}
			if _, p.meta, err = decodeEdge(rec); err != nil {
				return err
			}
			p.metaOK = true
		}
		return nil
	})
}

// loadDesc fetches the stored description of an existing node unless the
// batch already set one.
func (p *pnode) loadDesc(s *Store) error {
	if p.descSet {
		return nil
	}
	desc, err := s.nodeDescription(p.id)
	if err != nil {
		return err
	}
	p.desc, p.descSet = desc, true
	return nil
}

// nodeDescription reads a node's description from Badger.
func (s *Store) nodeDescription(id uint32) (string, error) {
	var desc string
	err := s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(key32(pfxNode, id))
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error {
			_, d, err := decodeNode(v, true)
			desc = d
			return err
		})
	})
	if err != nil {
		return "", fmt.Errorf("engine: read node %d: %w", id, err)
	}
	return desc, nil
}

// stageEdges writes the pages holding the batch's new, changed and deleted
// edges into wb. A page that may hold other edges is read and merged; a
// page wholly inside the ids the batch took is written fresh.
func (b *batch) stageEdges(wb *badger.WriteBatch) error {
	type edit struct {
		recs    page
		touched [pageSize]bool
	}
	edits := make(map[uint32]*edit)
	var order []uint32
	at := func(id uint32) (*edit, int) {
		pg := pageOf(id)
		e := edits[pg]
		if e == nil {
			e = &edit{}
			edits[pg] = e
			order = append(order, pg)
		}
		return e, int(id & (pageSize - 1))
	}
	var arena []byte
	for _, p := range b.edgeList {
		if !p.dirty {
			continue
		}
		if !p.restore {
			for _, pr := range p.prov {
				p.meta.prov = mergeProvenance(p.meta.prov, pr)
			}
			p.meta.updated = b.now
		}
		start := len(arena)
		arena = encodeEdge(arena, &p.rec, &p.meta)
		e, slot := at(p.id)
		e.recs[slot], e.touched[slot] = arena[start:len(arena):len(arena)], true
	}
	for _, id := range b.delEdges {
		e, slot := at(id)
		e.recs[slot], e.touched[slot] = nil, true
	}
	var old page
	for _, pg := range order {
		e := edits[pg]
		if pg<<pageBits < b.edgeBase || (pg+1)<<pageBits > b.edgeEnd {
			// The page may hold edges this batch does not touch: keep them.
			// Only a page wholly inside the ids the batch took is new:
			// another writer may have taken the ids after them and
			// written the rest of the last page while this batch was
			// embedding (an import commits after letting the lock go).
			err := b.s.db.View(func(txn *badger.Txn) error {
				item, err := txn.Get(key32(pfxEdge, pg))
				if err == badger.ErrKeyNotFound {
					return nil
				} else if err != nil {
					return err
				}
				return item.Value(func(v []byte) error {
					if err := decodePage(v, &old); err != nil {
						return err
					}
					for i, r := range old {
						if !e.touched[i] && r != nil {
							e.recs[i] = append([]byte(nil), r...)
						}
					}
					return nil
				})
			})
			if err != nil {
				return fmt.Errorf("engine: read edge page %d: %w", pg, err)
			}
		}
		empty := true
		for _, r := range e.recs {
			empty = empty && r == nil
		}
		if empty {
			if err := wb.Delete(key32(pfxEdge, pg)); err != nil {
				return err
			}
			continue
		}
		if err := wb.Set(key32(pfxEdge, pg), encodePage(nil, &e.recs)); err != nil {
			return err
		}
	}
	return nil
}

// writePages commits only the batch's edge pages (repairs at load).
func (b *batch) writePages() error {
	wb := b.s.db.NewWriteBatch()
	defer wb.Cancel()
	if err := b.stageEdges(wb); err != nil {
		return err
	}
	return wb.Flush()
}

// commit writes the batch to Badger, then applies it to memory. Records are
// written in dependency order (change log, dictionaries, nodes, vectors,
// edges, counters) so that a crash inside a multi-transaction batch leaves a
// prefix that load() can repair.
func (b *batch) commit() error {
	s := b.s
	changed := roaring.New()
	for _, p := range b.nodeList {
		if p.reindex {
			changed.Add(p.id)
		}
	}
	obsNew := roaring.New()
	for _, p := range b.obsList {
		if p.isNew {
			obsNew.Add(p.id)
		}
	}
	hasChanges := !changed.IsEmpty() || len(b.delNodes) > 0 || !obsNew.IsEmpty() || len(b.delObs) > 0
	if hasChanges {
		b.seq = s.seq + 1
	}
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	var arena []byte
	put := func(k []byte, enc func([]byte) []byte) error {
		start := len(arena)
		arena = enc(arena)
		return wb.Set(k, arena[start:len(arena):len(arena)])
	}
	if hasChanges {
		sets := [4]*roaring.Bitmap{changed, roaring.BitmapOf(b.delNodes...), obsNew, roaring.BitmapOf(b.delObs...)}
		if err := put(key64(pfxChange, b.seq), func(d []byte) []byte { return encodeChange(d, sets) }); err != nil {
			return err
		}
	}
	for i, t := range b.newTenants {
		id := uint32(len(b.g.tenants) + i)
		if err := put(key32(pfxTenant, id), func(d []byte) []byte { return append(append(append(d, t.Org...), 0), t.Project...) }); err != nil {
			return err
		}
	}
	for i, r := range b.newRels {
		id := uint32(len(b.g.rels) + i)
		if err := put(key32(pfxRel, id), func(d []byte) []byte { return append(d, r...) }); err != nil {
			return err
		}
	}
	for _, p := range b.nodeList {
		if !p.dirty {
			continue
		}
		if err := p.loadDesc(s); err != nil {
			return err
		}
		if err := put(key32(pfxNode, p.id), func(d []byte) []byte { return encodeNode(d, &p.rec, p.desc) }); err != nil {
			return err
		}
		if p.vec != nil {
			if err := put(key32(pfxVector, p.id), func(d []byte) []byte { return encodeVector(d, p.vec) }); err != nil {
				return err
			}
		}
	}
	if err := b.stageEdges(wb); err != nil {
		return err
	}
	for _, p := range b.obsList {
		content := p.content
		if !p.isNew {
			// A weight change rewrites the record: fetch what memory lacks.
			cs, err := s.ObservationContents([]uint32{p.id})
			if err != nil {
				return err
			}
			content = cs[0]
		}
		if err := put(key32(pfxObs, p.id), func(d []byte) []byte { return encodeObs(d, &p.rec, content) }); err != nil {
			return err
		}
		if p.vec != nil {
			if err := put(key32(pfxObsVec, p.id), func(d []byte) []byte { return encodeVector(d, p.vec) }); err != nil {
				return err
			}
		}
	}
	for _, id := range b.delObs {
		if err := wb.Delete(key32(pfxObs, id)); err != nil {
			return err
		}
		if err := wb.Delete(key32(pfxObsVec, id)); err != nil {
			return err
		}
	}
	for _, id := range b.delNodes {
		for _, k := range b.g.legacyKeysOf(id) {
			if err := wb.Delete(legacyKey(k)); err != nil {
				return err
			}
		}
		if err := wb.Delete(key32(pfxNode, id)); err != nil {
			return err
		}
		if err := wb.Delete(key32(pfxVector, id)); err != nil {
			return err
		}
	}
	for _, id := range b.unvec {
		if err := wb.Delete(key32(pfxVector, id)); err != nil {
			return err
		}
	}
	for _, id := range b.dropTenants {
		if err := wb.Delete(key32(pfxTenant, id)); err != nil {
			return err
		}
	}
	for _, id := range b.dropRels {
		if err := wb.Delete(key32(pfxRel, id)); err != nil {
			return err
		}
	}
	for _, x := range b.extra {
		if err := wb.Set(x.k, x.v); err != nil {
			return err
		}
	}
	if err := s.putCounters(wb, b.seq); err != nil {
		return err
	}
	if err := wb.Flush(); err != nil {
		return fmt.Errorf("engine: commit: %w", err)
	}
	if hasChanges {
		s.seq = b.seq
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	tbase := uint32(len(b.g.tenants))
	for i, t := range b.newTenants {
		b.g.ensureTenant(tbase+uint32(i), t)
	}
	base := uint32(len(b.g.rels))
	for i, r := range b.newRels {
		b.g.ensureRel(base+uint32(i), r)
	}
	// A tenant's generation moves with every change to its nodes and
	// edges: an import that staged some of them before letting the writer
	// lock go sees whether they are still as it saw them.
	for _, id := range b.delEdges {
		if e := &b.g.edges[id]; b.g.edgeLive(id) {
			b.g.gens[e.tenant]++
		}
		b.g.removeEdge(id)
	}
	for _, id := range b.delNodes {
		if n := &b.g.nodes[id]; n.live {
			b.g.gens[n.tenant]++
		}
		b.g.removeNode(id)
	}
	for _, p := range b.nodeList {
		if p.dirty {
			b.g.gens[p.rec.tenant]++
			b.g.putNode(p.id, p.rec)
		}
	}
	for _, p := range b.edgeList {
		if p.dirty {
			b.g.gens[p.rec.tenant]++
			b.g.putEdge(p.id, p.rec)
			if len(p.meta.prov) > 0 {
				b.g.provEdges.Add(p.id)
			} else {
				b.g.provEdges.Remove(p.id) // an undo took it back
			}
		}
	}
	for _, id := range b.delObs {
		b.g.removeObs(id)
	}
	for _, p := range b.obsList {
		b.g.putObs(p.id, p.rec)
	}
	b.g.growNodes(s.next.node)
	b.g.growEdges(s.next.edge)
	b.g.growObs(s.next.obs)
	for _, id := range b.dropRels {
		b.g.dropRel(id)
	}
	for _, id := range b.dropTenants {
		b.g.dropTenant(id)
	}
	return nil
}

func (s *Store) putCounters(wb *badger.WriteBatch, seq uint64) error {
	u64 := func(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
	for _, kv := range [...]struct {
		k string
		v uint64
	}{{keyMetaNode, uint64(s.next.node)}, {keyMetaEdge, uint64(s.next.edge)}, {keyMetaObs, uint64(s.next.obs)}, {keyMetaSeq, max(seq, s.seq)},
		{keyMetaDim, uint64(s.dim)}, {keyMetaVer, storeVersion}} {
		if err := wb.Set([]byte(kv.k), u64(kv.v)); err != nil {
			return err
		}
	}
	if s.opts.Vectorizer != nil {
		return wb.Set([]byte(keyMetaEmb), []byte(s.opts.Vectorizer.Name()))
	}
	return nil
}

func (b *batch) changeSet() *ChangeSet {
	if b.seq == 0 {
		return nil
	}
	cs := &ChangeSet{Seq: b.seq, Deletes: b.delNodes, ObsDeletes: b.delObs}
	for _, p := range b.nodeList {
		if p.reindex && p.doc != nil {
			cs.Upserts = append(cs.Upserts, p.doc)
		}
	}
	for _, p := range b.obsList {
		if p.isNew {
			t := b.tenantOf(p.rec.tenant)
			cs.ObsUpserts = append(cs.ObsUpserts, &ObsDoc{Dense: p.id, ID: p.rec.id, OrgID: t.Org, ProjectID: t.Project,
				Content: p.content, Tags: p.rec.tags, Namespace: p.rec.namespace, Vector: p.vec})
		}
	}
	return cs
}

// kv is a raw record written with a batch.
type kv struct{ k, v []byte }
