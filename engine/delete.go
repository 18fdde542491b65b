package engine

import (
	"context"
	"errors"
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
func (s *Store) ClearProject(ctx context.Context, t Tenant) (nodes, edges int, err error) {
	err = s.deleteWhere(ctx, func(v *View, b *batch) error {
		if pn := v.ScopeNodes(t); pn != nil && t.Project != "" {
			b.deleteNodes(pn.Clone())
		}
		if pe := v.ProjectEdges(t); pe != nil {
			all := roaring.BitmapOf(b.delEdges...)
			all.Or(pe)
			b.delEdges = all.ToArray()
		}
		nodes, edges = len(b.delNodes), len(b.delEdges)
		return nil
	})
	return nodes, edges, err
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
