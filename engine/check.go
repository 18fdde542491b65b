package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
)

// Check verifies the store's invariants and returns every violation found
// (joined), or nil:
//   - every live edge has live endpoints and sits in its source's out
//     bitmap, its target's in bitmap, its relationship's and its project's
//     edge bitmaps; those bitmaps hold nothing else;
//   - tenant node bitmaps hold exactly the live nodes of their tenant;
//     org bitmaps are disjoint (no node in two orgs);
//   - the deleted bitmaps are the complement of the live records;
//   - the name, id and triple indexes agree with the tables; every legacy
//     name key names a live node of its tenant that holds an alias with
//     that key, and no node's own key is a legacy key;
//   - Badger holds exactly the live nodes and edges memory holds, with the
//     same fields, and exactly its legacy name keys;
//   - every attached indexer that implements Checker passes its own check
//     (e.g. HNSW neighbours exist).
//
// Check takes the writer lock, so it sees a quiescent store. It is meant for
// tests (every engine test runs it in cleanup) and for `kgctx graph status
// --check`.
func (s *Store) Check() error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	// Indexers are checked against the store: let them catch up first.
	if err := s.Sync(context.Background()); err != nil {
		return err
	}
	var errs []error
	bad := func(f string, a ...any) {
		if len(errs) < 50 {
			errs = append(errs, fmt.Errorf("%w: "+f, append([]any{ErrInvariant}, a...)...))
		}
	}
	g := s.g
	if len(g.out) != len(g.nodes) || len(g.in) != len(g.nodes) || len(g.nodeW) != len(g.nodes) || len(g.plainW) != (len(g.nodes)+63)/64 || len(g.liveW) != len(g.plainW) || len(g.exactW) != len(g.plainW) || len(g.ranked) != len(g.nodes) {
		bad("adjacency arrays have %d/%d slots for %d nodes", len(g.out), len(g.in), len(g.nodes))
		return errors.Join(errs...)
	}
	if len(g.edgeLiveW) != (len(g.edges)+63)/64 {
		bad("edge live bits have %d words for %d edges", len(g.edgeLiveW), len(g.edges))
		return errors.Join(errs...)
	}
	live := 0
	for id := range g.nodes {
		n := &g.nodes[id]
		d := uint32(id)
		if bit := g.liveW[d>>6]&(1<<(d&63)) != 0; bit != n.live {
			bad("node %d live bit %v, record live %v", d, bit, n.live)
		}
		if bit := g.exactW[d>>6]&(1<<(d&63)) != 0; bit != n.exact {
			bad("node %d exact bit %v, record says %v", d, bit, n.exact)
		}
		if !n.live {
			if !g.deletedNodes.Contains(d) {
				bad("node %d is not live but not in the deleted bitmap", d)
			}
			if g.out[d] != nil || g.in[d] != nil {
				bad("deleted node %d keeps adjacency", d)
			}
			continue
		}
		live++
		if g.deletedNodes.Contains(d) {
			bad("live node %d is in the deleted bitmap", d)
		}
		if int(n.tenant) >= len(g.tenants) {
			bad("node %d has unknown tenant %d", d, n.tenant)
			continue
		}
		if !g.projNodes[n.tenant].Contains(d) {
			bad("node %d missing from its project bitmap", d)
		}
		org := g.tenants[n.tenant].Org
		if b := g.orgNodes[org]; b == nil || !b.Contains(d) {
			bad("node %d missing from org %q bitmap", d, org)
		}
		if id, ok := g.nodeByName(n.tenant, n.norm); !ok || id != d {
			bad("name index of node %d (%q) points elsewhere", d, n.norm)
		}
		if id, ok := g.nodeByUUID(n.uuid); !ok || id != d {
			bad("id index of node %d points elsewhere", d)
		}
		if g.nodeW[d] != n.weight {
			bad("node %d weight mirror %v differs from its record's %v", d, g.nodeW[d], n.weight)
		}
		if plain := g.plainW[d>>6]&(1<<(d&63)) != 0; plain != (n.weight == DefaultWeight) {
			bad("node %d default-weight bit %v, weight %v", d, plain, n.weight)
		}
		if n.norm != nameKeyOf(n.name, n.exact) {
			bad("node %d normalised name is stale", d)
		}
		if n.exact && !slices.Contains(g.exactFold[nameKey{n.tenant, NormalizeName(n.name)}], d) {
			bad("exact node %d missing from the folded-name index", d)
		}
		if c := n.code; c != nil && (c.file == "" && c.line != 0 || c.file != "" && (c.line < 1 || c.endLine < c.line)) {
			bad("node %d has a malformed location %q %d-%d", d, c.file, c.line, c.endLine)
		}
		if p := g.ranked[d].Load(); p != nil {
			cached := *p
			g.ranked[d].Store(nil)
			fresh := (&View{g: g}).Ranked(d)
			if !slices.Equal(cached, fresh) {
				bad("node %d cached edge ranking is stale", d)
			}
		}
		for _, b := range []*roaring.Bitmap{g.out[d], g.in[d]} {
			if b != nil && b.IsEmpty() {
				bad("node %d keeps an empty adjacency bitmap", d)
			}
		}
	}
	if live != g.liveNodes {
		bad("live node count %d, counted %d", g.liveNodes, live)
	}
	if g.byName.n != live || g.byUUID.n != live {
		bad("indexes hold %d names and %d ids for %d live nodes", g.byName.n, g.byUUID.n, live)
	}
	for k, ids := range g.exactFold {
		for _, id := range ids {
			if int(id) >= len(g.nodes) || !g.nodes[id].live || !g.nodes[id].exact || g.nodes[id].tenant != k.tenant || NormalizeName(g.nodes[id].name) != k.norm {
				bad("folded-name index entry %q of tenant %d names node %d, not a live exact node so named", k.norm, k.tenant, id)
			}
		}
	}
	for lk, id := range g.legacy {
		if !g.legacyValid(lk, id) {
			bad("legacy name key %q of tenant %d names node %d, which is not live there, has no such alias, or is shadowed by a node's own key", lk.norm, lk.tenant, id)
		}
	}
	if c := g.deletedNodes.GetCardinality(); c != uint64(len(g.nodes)-live) {
		bad("deleted node bitmap holds %d ids, expected %d", c, len(g.nodes)-live)
	}
	liveE := 0
	for id := range g.edges {
		e := &g.edges[id]
		d := uint32(id)
		if !g.edgeLive(d) {
			if !g.deletedEdges.Contains(d) {
				bad("edge %d is not live but not in the deleted bitmap", d)
			}
			continue
		}
		liveE++
		if int(e.src) >= len(g.nodes) || !g.nodes[e.src].live || int(e.dst) >= len(g.nodes) || !g.nodes[e.dst].live {
			bad("edge %d dangles (%d -> %d)", d, e.src, e.dst)
			continue
		}
		if g.out[e.src] == nil || !g.out[e.src].Contains(d) {
			bad("edge %d missing from out bitmap of node %d", d, e.src)
		}
		if g.in[e.dst] == nil || !g.in[e.dst].Contains(d) {
			bad("edge %d missing from in bitmap of node %d", d, e.dst)
		}
		if int(e.rel) >= len(g.rels) || !g.relEdges[e.rel].Contains(d) {
			bad("edge %d missing from its relationship bitmap", d)
		}
		if int(e.tenant) >= len(g.tenants) || !g.projEdges[e.tenant].Contains(d) {
			bad("edge %d missing from its project edge bitmap", d)
		}
		if id, ok := g.edgeByTriple(e.src, e.rel, e.dst); !ok || id != d {
			bad("triple index of edge %d points elsewhere", d)
		}
		if e.weight < 0 || e.weight > 1 {
			bad("edge %d weight %v outside [0,1]", d, e.weight)
		}
	}
	if liveE != g.liveEdges || g.byTriple.n != liveE {
		bad("live edge count %d, triple index %d, counted %d", g.liveEdges, g.byTriple.n, liveE)
	}
	// Reverse direction: bitmaps hold only matching live records.
	for n := range g.out {
		for _, dir := range []struct {
			b   *roaring.Bitmap
			out bool
		}{{g.out[n], true}, {g.in[n], false}} {
			if dir.b == nil {
				continue
			}
			it := dir.b.Iterator()
			for it.HasNext() {
				e := it.Next()
				if int(e) >= len(g.edges) || !g.edgeLive(e) {
					bad("node %d adjacency holds dead edge %d", n, e)
					continue
				}
				if end := g.edges[e].src; !dir.out {
					end = g.edges[e].dst
					if end != uint32(n) {
						bad("in bitmap of node %d holds edge %d into %d", n, e, end)
					}
				} else if end != uint32(n) {
					bad("out bitmap of node %d holds edge %d from %d", n, e, end)
				}
			}
		}
	}
	for r, b := range g.relEdges {
		it := b.Iterator()
		for it.HasNext() {
			if e := it.Next(); int(e) >= len(g.edges) || !g.edgeLive(e) || g.edges[e].rel != uint32(r) {
				bad("relationship %q bitmap holds foreign edge %d", g.rels[r], e)
			}
		}
	}
	for t, b := range g.projNodes {
		it := b.Iterator()
		for it.HasNext() {
			if n := it.Next(); int(n) >= len(g.nodes) || !g.nodes[n].live || g.nodes[n].tenant != uint32(t) {
				bad("project %v bitmap holds foreign node %d", g.tenants[t], n)
			}
		}
		it = g.projEdges[t].Iterator()
		for it.HasNext() {
			if e := it.Next(); int(e) >= len(g.edges) || !g.edgeLive(e) || g.edges[e].tenant != uint32(t) {
				bad("project %v edge bitmap holds foreign edge %d", g.tenants[t], e)
			}
		}
	}
	total := uint64(0)
	for org, b := range g.orgNodes {
		total += b.GetCardinality()
		it := b.Iterator()
		for it.HasNext() {
			if n := it.Next(); int(n) >= len(g.nodes) || !g.nodes[n].live || g.tenants[g.nodes[n].tenant].Org != org {
				bad("org %q bitmap holds foreign node %d", org, n)
			}
		}
	}
	if total != uint64(live) {
		bad("org bitmaps hold %d nodes for %d live nodes: orgs overlap", total, live)
	}
	liveO := 0
	for id := range g.obs {
		o := &g.obs[id]
		d := uint32(id)
		if !o.live {
			if !g.deletedObs.Contains(d) {
				bad("observation %d is not live but not in the deleted bitmap", d)
			}
			continue
		}
		liveO++
		if int(o.tenant) >= len(g.tenants) || !g.projObs[o.tenant].Contains(d) || !g.orgObs[g.tenants[o.tenant].Org].Contains(d) {
			bad("observation %d missing from its tenant bitmaps", d)
		}
		if g.byObs[o.id] != d {
			bad("observation id index of %d points elsewhere", d)
		}
		if o.session != "" && !g.sessObs[sessKey{o.tenant, o.session}].Contains(d) {
			bad("observation %d missing from its session's bitmap", d)
		}
		if o.weight < 0 || o.weight > 1 {
			bad("observation %d weight %v outside [0,1]", d, o.weight)
		}
	}
	if liveO != g.liveObs || len(g.byObs) != liveO {
		bad("live observation count %d, id index %d, counted %d", g.liveObs, len(g.byObs), liveO)
	}
	totalO := uint64(0)
	for _, b := range g.orgObs {
		totalO += b.GetCardinality()
	}
	if totalO != uint64(liveO) {
		bad("org observation bitmaps hold %d for %d live observations", totalO, liveO)
	}
	for k, b := range g.sessObs {
		if b.IsEmpty() {
			bad("session %q of tenant %d has an empty bitmap", k.session, k.tenant)
		}
		for it := b.Iterator(); it.HasNext(); {
			if d := it.Next(); int(d) >= len(g.obs) || !g.obs[d].live || g.obs[d].tenant != k.tenant || g.obs[d].session != k.session {
				bad("session %q of tenant %d holds observation %d, not one of its own", k.session, k.tenant, d)
			}
		}
	}
	errs = append(errs, s.checkStored()...)
	for _, ix := range s.attached() {
		if c, ok := ix.(Checker); ok {
			if err := c.Check(); err != nil {
				errs = append(errs, fmt.Errorf("%w: indexer %s: %w", ErrInvariant, ix.Name(), err))
			}
		}
	}
	return errors.Join(errs...)
}

// checkStored compares Badger's node and edge records with memory.
func (s *Store) checkStored() []error {
	var errs []error
	g := s.g
	bad := func(f string, a ...any) {
		if len(errs) < 20 {
			errs = append(errs, fmt.Errorf("%w: stored: "+f, append([]any{ErrInvariant}, a...)...))
		}
	}
	nodes, edges := 0, 0
	err := s.iterate([]byte{pfxNode}, func(k, v []byte) error {
		id := binary.BigEndian.Uint32(k[1:])
		nodes++
		rec, _, err := decodeNode(v, false)
		if err != nil {
			bad("node %d: %v", id, err)
			return nil
		}
		if int(id) >= len(g.nodes) || !g.nodes[id].live {
			bad("node %d is stored but not live in memory", id)
			return nil
		}
		m := &g.nodes[id]
		if m.uuid != rec.uuid || m.tenant != rec.tenant || m.name != rec.name || m.typ != rec.typ || m.weight != rec.weight ||
			m.descHash != rec.descHash || len(m.aliases) != len(rec.aliases) || m.exact != rec.exact ||
			(m.code == nil) != (rec.code == nil) || m.code != nil && *m.code != *rec.code {
			bad("node %d differs between memory and disk", id)
		}
		return nil
	})
	if err != nil {
		bad("iterate nodes: %v", err)
	}
	err = s.eachStoredEdge(func(id uint32, v []byte) error {
		edges++
		rec, err := decodeEdgeHead(v)
		if err != nil {
			bad("edge %d: %v", id, err)
			return nil
		}
		if int(id) >= len(g.edges) || !g.edgeLive(id) {
			bad("edge %d is stored but not live in memory", id)
			return nil
		}
		if m := g.edges[id]; m != rec {
			bad("edge %d differs between memory and disk", id)
		}
		if edgeHasProvenance(v) != g.provEdges.Contains(id) {
			bad("edge %d provenance flag differs from its record", id)
		}
		return nil
	})
	if err != nil {
		bad("iterate edges: %v", err)
	}
	legacy := 0
	err = s.iterate([]byte{pfxLegacy}, func(k, v []byte) error {
		legacy++
		if len(k) < 5 || len(v) != 4 {
			bad("malformed legacy key %q", k)
			return nil
		}
		lk := nameKey{binary.BigEndian.Uint32(k[1:5]), string(k[5:])}
		if id, ok := g.legacy[lk]; !ok || id != binary.BigEndian.Uint32(v) {
			bad("legacy key %q of tenant %d differs between memory and disk", lk.norm, lk.tenant)
		}
		return nil
	})
	if err != nil {
		bad("iterate legacy keys: %v", err)
	}
	if legacy != len(g.legacy) {
		bad("%d legacy keys stored, %d in memory", legacy, len(g.legacy))
	}
	if nodes != g.liveNodes || edges != g.liveEdges {
		bad("%d nodes and %d edges stored, %d and %d live in memory", nodes, edges, g.liveNodes, g.liveEdges)
	}
	obs := 0
	err = s.iterate([]byte{pfxObs}, func(k, v []byte) error {
		id := binary.BigEndian.Uint32(k[1:])
		obs++
		rec, _, err := decodeObs(v, false)
		if err != nil {
			bad("observation %d: %v", id, err)
			return nil
		}
		if int(id) >= len(g.obs) || !g.obs[id].live {
			bad("observation %d is stored but not live in memory", id)
			return nil
		}
		m := &g.obs[id]
		if m.id != rec.id || m.tenant != rec.tenant || m.weight != rec.weight || m.session != rec.session || m.namespace != rec.namespace || m.head != rec.head ||
			m.workType != rec.workType || !slices.Equal(m.paths, rec.paths) || !slices.Equal(m.tags, rec.tags) || m.created != rec.created {
			bad("observation %d differs between memory and disk", id)
		}
		return nil
	})
	if err != nil {
		bad("iterate observations: %v", err)
	}
	if obs != g.liveObs {
		bad("%d observations stored, %d live in memory", obs, g.liveObs)
	}
	return errs
}
