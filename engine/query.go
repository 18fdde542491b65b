package engine

import (
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
	badger "github.com/dgraph-io/badger/v4"
)

// TripletQuery selects triplets of a project by subject, predicate and/or
// object name (any combination; none = all). Names match by normalised
// identity, the predicate by its snake_case form.
type TripletQuery struct {
	Subject, Predicate, Object string
	// Limit caps the result (default 100, at most MaxQueryLimit).
	Limit int
	// Allow, when set, keeps only the triplets it accepts; it is asked
	// before Limit counts a triplet, so a filtered page is as full as an
	// unfiltered one. It runs inside the View (see View's ownership rules).
	Allow func(v *View, src, dst uint32) bool `json:"-"`
}

// MaxQueryLimit bounds TripletQuery.Limit.
const MaxQueryLimit = 10000

// QueryTriplets returns the live triplets of project t matching q, in edge
// id (import) order. An unknown subject, object or predicate gives an
// empty result, not an error.
func (s *Store) QueryTriplets(t Tenant, q TripletQuery) ([]Triplet, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	if limit > MaxQueryLimit {
		return nil, fmt.Errorf("%w: limit %d is over %d", ErrInvalidInput, limit, MaxQueryLimit)
	}
	var out []Triplet
	err := s.View(func(v *View) error {
		g := v.g
		cand := roaring.New()
		switch {
		case q.Subject != "":
			n, ok := v.Lookup(t, q.Subject)
			if !ok || g.out[n] == nil {
				return nil
			}
			cand.Or(g.out[n])
		case q.Object != "":
			n, ok := v.Lookup(t, q.Object)
			if !ok || g.in[n] == nil {
				return nil
			}
			cand.Or(g.in[n])
		default:
			pe := v.ProjectEdges(t)
			if pe == nil {
				return nil
			}
			cand.Or(pe)
		}
		if q.Predicate != "" {
			r, ok := v.RelID(NormalizeRelationship(q.Predicate))
			if !ok {
				return nil
			}
			cand.And(g.relEdges[r])
		}
		obj := uint32(0)
		hasObj := false
		if q.Object != "" && q.Subject != "" {
			n, ok := v.Lookup(t, q.Object)
			if !ok {
				return nil
			}
			obj, hasObj = n, true
		}
		it := cand.Iterator()
		for it.HasNext() && len(out) < limit {
			e := it.Next()
			r := &g.edges[e]
			if hasObj && r.dst != obj {
				continue
			}
			if q.Allow != nil && !q.Allow(v, r.src, r.dst) {
				continue
			}
			out = append(out, v.triplet(e))
		}
		return nil
	})
	return out, err
}

func (v *View) triplet(e uint32) Triplet {
	r := &v.g.edges[e]
	return Triplet{EdgeID: e, Src: r.src, Dst: r.dst, Source: v.g.nodes[r.src].name, Relationship: v.g.rels[r.rel],
		Target: v.g.nodes[r.dst].name, SourceNodeID: v.g.nodes[r.src].uuid.String(),
		TargetNodeID: v.g.nodes[r.dst].uuid.String(), Weight: r.weight}
}

// Triplet returns live edge e resolved (ErrNotFound if it is gone).
func (s *Store) Triplet(e uint32) (Triplet, error) {
	var t Triplet
	err := s.View(func(v *View) error {
		if !v.EdgeLive(e) {
			return ErrNotFound
		}
		t = v.triplet(e)
		return nil
	})
	return t, err
}

// Stats counts project t's nodes and triplets, and triplets per predicate.
// The known vocabulary is always listed, with zero counts where absent.
func (s *Store) Stats(t Tenant) (Stats, error) {
	st := Stats{Predicates: make(map[string]int, len(KnownRelationships))}
	for _, r := range KnownRelationships {
		st.Predicates[r] = 0
	}
	err := s.View(func(v *View) error {
		if b := v.ScopeNodes(t); b != nil {
			st.Nodes = int(b.GetCardinality())
		}
		pe := v.ProjectEdges(t)
		if pe == nil {
			return nil
		}
		st.Triplets = int(pe.GetCardinality())
		for r, name := range v.g.rels {
			if c := pe.AndCardinality(v.g.relEdges[r]); c > 0 {
				st.Predicates[name] = int(c)
			}
		}
		return nil
	})
	return st, err
}

// Node returns the node with external id id in project t, description
// included (ErrNotFound if absent or in another project).
func (s *Store) Node(t Tenant, id string) (Node, error) {
	var n Node
	var dense uint32
	err := s.View(func(v *View) error {
		d, ok := v.NodeByID(id)
		if !ok || v.NodeTenant(d) != t {
			return ErrNotFound
		}
		dense = d
		n = v.Node(d)
		return nil
	})
	if err != nil {
		return n, err
	}
	desc, err := s.nodeDescription(dense)
	if err == nil {
		n.Description = desc
	} else if isNotFound(err) {
		return n, ErrNotFound // deleted between the two reads
	}
	return n, err
}

func isNotFound(err error) bool {
	return err != nil && (err == ErrNotFound || errorsIs(err, badger.ErrKeyNotFound))
}

// EdgeProvenance returns the stored provenance of edges, by position (nil
// entries for edges without any, or gone).
func (s *Store) EdgeProvenance(edges []uint32) ([][]Provenance, error) {
	out := make([][]Provenance, len(edges))
	s.mu.RLock()
	need := make([]bool, len(edges))
	anyProv := false
	for i, e := range edges {
		need[i] = s.g.provEdges.Contains(e)
		anyProv = anyProv || need[i]
	}
	s.mu.RUnlock()
	if !anyProv {
		return out, nil
	}
	err := s.db.View(func(txn *badger.Txn) error {
		for i, e := range edges {
			if !need[i] {
				continue
			}
			rec, err := readEdge(txn, e)
			if err != nil {
				return err
			}
			if rec == nil {
				continue
			}
			_, m, err := decodeEdge(rec)
			if err != nil {
				return err
			}
			out[i] = m.prov
		}
		return nil
	})
	return out, err
}
