package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
)

// DeleteNode deletes the node with external id id from project t, with every
// edge touching it (whatever project the edge belongs to), its vector and,
// through the indexers, its text and vector index entries. ErrNotFound if
// the node is not in t.
func (s *Store) DeleteNode(ctx context.Context, t Tenant, id string) error {
	return s.deleteWhere(ctx, func(v *View, b *batch) error {
		n, ok := v.NodeByID(id)
		if !ok || v.NodeTenant(n) != t {
			return ErrNotFound
		}
		b.deleteNodes(roaring.BitmapOf(n))
		return nil
	})
}

// DeleteTriplet deletes the edge (source, relationship, target) of project
// t. The endpoint nodes stay. ErrNotFound if there is no such edge.
func (s *Store) DeleteTriplet(ctx context.Context, t Tenant, source, relationship, target string) error {
	return s.deleteWhere(ctx, func(v *View, b *batch) error {
		src, ok1 := v.Lookup(t, source)
		dst, ok2 := v.Lookup(t, target)
		rel, ok3 := v.RelID(NormalizeRelationship(relationship))
		if !ok1 || !ok2 || !ok3 {
			return ErrNotFound
		}
		e, ok := v.g.edgeByTriple(src, rel, dst)
		if !ok {
			return ErrNotFound
		}
		b.delEdges = append(b.delEdges, e)
		return nil
	})
}

// ClearProject deletes every node of project t (with their edges) and every
// edge imported into t. It returns the number of nodes and edges deleted.
//
// A large project is deleted in chunks (as many nodes and edges as an
// import's chunk), so that other writers, and the indexers' work for them,
// go on in between. It holds t's import lock (no import into t runs
// meanwhile) and, once it has started, runs to its end whatever ctx says:
// it cannot stop halfway (Close waits for it). ctx bounds the wait for
// the import lock only.
func (s *Store) ClearProject(ctx context.Context, t Tenant) (nodes, edges int, err error) {
	if err := s.checkOpen(); err != nil {
		return 0, 0, err
	}
	release, err := s.tlocks.lock(ctx, []Tenant{t}, true)
	if err != nil {
		return 0, 0, fmt.Errorf("engine: clear: waiting for an import into the project: %w", err)
	}
	defer release()
	if err := s.beginBulk(); err != nil {
		return 0, 0, err
	}
	defer s.endBulk()
	var ns, es []uint32
	s.View(func(v *View) error {
		if pn := v.ScopeNodes(t); pn != nil && t.Project != "" {
			ns = pn.ToArray()
		}
		if pe := v.ProjectEdges(t); pe != nil {
			es = pe.ToArray()
		}
		return nil
	})
	bg := context.WithoutCancel(ctx)
	maxT, maxN := s.chunks.limits()
	var last uint64
	for len(ns)+len(es) > 0 {
		if err := s.waitRoom(bg, min(maxN, len(ns))); err != nil {
			return nodes, edges, err
		}
		seq, err := func() (uint64, error) {
			s.wmu.Lock()
			defer s.wmu.Unlock()
			b := s.newBatch(time.Now().UnixNano())
			// A chunk's nodes take their edges with them: it stops at a
			// chunk's worth of either.
			chunk := roaring.New()
			k, deg := 0, uint64(0)
			for ; k < len(ns) && k < maxN && deg < uint64(maxT); k++ {
				if n := ns[k]; s.g.nodes[n].live {
					chunk.Add(n)
					for _, b := range []*roaring.Bitmap{s.g.out[n], s.g.in[n]} {
						if b != nil {
							deg += b.GetCardinality()
						}
					}
				}
			}
			ns = ns[k:]
			b.deleteNodes(chunk)
			all := roaring.BitmapOf(b.delEdges...)
			k = min(maxT, len(es))
			for _, e := range es[:k] {
				if s.g.edgeLive(e) {
					all.Add(e)
				}
			}
			es = es[k:]
			b.delEdges = all.ToArray()
			if len(b.delNodes) == 0 && len(b.delEdges) == 0 {
				return 0, nil
			}
			if err := b.commit(); err != nil {
				return 0, err
			}
			nodes, edges = nodes+len(b.delNodes), edges+len(b.delEdges)
			s.notify(b.changeSet())
			return b.seq, nil
		}()
		if err != nil {
			return nodes, edges, err
		}
		last = max(last, seq)
	}
	return nodes, edges, s.waitApplied(bg, last)
}

// deleteNodes stages the deletion of nodes and of every edge incident to them.
func (b *batch) deleteNodes(nodes *roaring.Bitmap) {
	edges := roaring.BitmapOf(b.delEdges...)
	it := nodes.Iterator()
	for it.HasNext() {
		n := it.Next()
		if o := b.g.out[n]; o != nil {
			edges.Or(o)
		}
		if i := b.g.in[n]; i != nil {
			edges.Or(i)
		}
		b.delNodes = append(b.delNodes, n)
	}
	b.delEdges = edges.ToArray()
}

// errNothing tells write that a stage has nothing to commit.
var errNothing = errors.New("nothing to write")

// deleteWhere runs plan under the writer lock to stage deletions, then
// commits them and tells the indexers.
func (s *Store) deleteWhere(ctx context.Context, plan func(v *View, b *batch) error) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	_, err := s.write(ctx, func(b *batch) error {
		// The writer lock keeps the graph stable; plan only reads it.
		if err := plan(&View{g: s.g}, b); err != nil {
			return err
		}
		if len(b.delNodes) == 0 && len(b.delEdges) == 0 && len(b.delObs) == 0 {
			return errNothing
		}
		return nil
	}, time.Now(), false)
	if err == errNothing {
		return nil
	}
	return err
}

// ClearObservations deletes every observation of project t, or of the
// whole org when t.Project is "", from the store and (through the
// indexers) from every index, and returns how many it deleted. Like
// ClearProject it works in chunks, so other writers go on in between, and
// once started runs to its end whatever ctx says (ctx bounds the waits
// for the indexers' room only between chunks).
func (s *Store) ClearObservations(ctx context.Context, t Tenant) (int, error) {
	if err := s.checkOpen(); err != nil {
		return 0, err
	}
	if err := s.beginBulk(); err != nil {
		return 0, err
	}
	defer s.endBulk()
	var ids []uint32
	s.View(func(v *View) error {
		if b := v.ScopeObservations(t); b != nil {
			ids = b.ToArray()
		}
		return nil
	})
	bg := context.WithoutCancel(ctx)
	deleted, last, err := s.deleteObsChunks(bg, ids, true)
	if err != nil {
		return deleted, err
	}
	return deleted, s.waitApplied(bg, last)
}

// deleteObsChunks deletes the live observations among ids in chunks of
// the store's size, each its own batch, and returns how many it deleted
// and the last batch's sequence. With flow, each chunk waits for the
// indexers' room and hands its change set on as writes do; without (an
// import's undo, which must not wait on the room its own chunks took),
// the change sets are handed on without waiting.
func (s *Store) deleteObsChunks(ctx context.Context, ids []uint32, flow bool) (int, uint64, error) {
	_, maxN := s.chunks.limits()
	var last uint64
	deleted := 0
	for len(ids) > 0 {
		part := ids[:min(maxN, len(ids))]
		ids = ids[len(part):]
		if flow {
			if err := s.waitRoom(ctx, len(part)); err != nil {
				return deleted, last, err
			}
		}
		seq, err := func() (uint64, error) {
			s.wmu.Lock()
			defer s.wmu.Unlock()
			b := s.newBatch(time.Now().UnixNano())
			for _, id := range part {
				if s.g.obs[id].live {
					b.delObs = append(b.delObs, id)
				}
			}
			if len(b.delObs) == 0 {
				return 0, nil
			}
			if err := b.commit(); err != nil {
				return 0, err
			}
			deleted += len(b.delObs)
			if flow {
				s.notify(b.changeSet())
			} else {
				s.notifyNoWait(b.changeSet())
			}
			return b.seq, nil
		}()
		if err != nil {
			return deleted, last, err
		}
		last = max(last, seq)
	}
	return deleted, last, nil
}
