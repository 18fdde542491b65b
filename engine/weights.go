package engine

import (
	"context"
	"fmt"
	"time"
)

// EdgeKey names an edge by its endpoints' node ids and relationship.
type EdgeKey struct {
	SourceID         string `json:"sourceId"`
	TargetID         string `json:"targetId"`
	RelationshipName string `json:"relationshipName"`
}

// WeightRefs names graph items of one scope by their external ids:
// observation ids, node ids, edge keys. An item named n times moves n
// times; an id that names nothing (any more), or an item outside Scope,
// is skipped.
type WeightRefs struct {
	// Scope is the org (and, when Project is set, the project) the items
	// must belong to: an edge by the project it was imported into. A zero
	// Scope moves nothing.
	Scope          Tenant
	ObservationIDs []string
	NodeIDs        []string
	EdgeKeys       []EdgeKey
}

// WeightsMoved counts the distinct items whose weight moved.
type WeightsMoved struct {
	Observations, Nodes, Edges int
}

// Record is a raw key-value pair committed with a batch of the graph. Its
// key lies in the key space of a package beside engine (keys.go).
type Record struct {
	Key, Value []byte
}

// inScope reports whether tenant t lies in scope s.
func inScope(t, s Tenant) bool {
	return s.Org != "" && t.Org == s.Org && (s.Project == "" || t.Project == s.Project)
}

// MoveWeights moves the weight w of every item refs names toward target,
// w <- (1 - alpha) w + alpha target (EMA), once per time it is named, and
// commits extra in the same batch, so that a caller's record of what it
// applied (engine/sessionlog's feedback) is durable exactly when the
// weights are. Items outside their refs' Scope are left alone: an id a
// client named cannot move another tenant's weights. With nothing to move
// and no extra it writes nothing.
func (s *Store) MoveWeights(ctx context.Context, refs []WeightRefs, alpha, target float64, extra ...Record) (WeightsMoved, error) {
	var res WeightsMoved
	if !(alpha > 0 && alpha <= 1) || target < 0 || target > 1 {
		return res, fmt.Errorf("%w: alpha %v / target %v out of range", ErrInvalidInput, alpha, target)
	}
	ema := func(w float64) float64 { return (1-alpha)*w + alpha*target }
	_, err := s.write(ctx, func(b *batch) error {
		obs := map[uint32]*pobs{}
		nodes := map[uint32]*pnode{}
		edges := map[uint32]*pedge{}
		for _, r := range refs {
			for _, id := range r.ObservationIDs {
				d, ok := b.g.byObs[id]
				if !ok || !inScope(b.g.tenants[b.g.obs[d].tenant], r.Scope) {
					continue // deleted since, or not the scope's
				}
				p := obs[d]
				if p == nil {
					p = &pobs{id: d, rec: b.g.obs[d]}
					obs[d] = p
					b.obsList = append(b.obsList, p)
				}
				p.rec.weight = ema(p.rec.weight)
			}
			for _, id := range r.NodeIDs {
				u, err := parseUUID(id)
				if err != nil {
					continue
				}
				n, ok := b.g.nodeByUUID(u)
				if !ok || !inScope(b.g.tenants[b.g.nodes[n].tenant], r.Scope) {
					continue
				}
				p := nodes[n]
				if p == nil {
					p = &pnode{id: n, rec: b.g.nodes[n], dirty: true}
					nodes[n] = p
					b.nodeList = append(b.nodeList, p)
				}
				p.rec.weight = ema(p.rec.weight)
				p.rec.updated = b.now
			}
			for _, k := range r.EdgeKeys {
				e, ok := b.edgeByKey(k)
				if !ok || !inScope(b.g.tenants[b.g.edges[e].tenant], r.Scope) {
					continue
				}
				p := edges[e]
				if p == nil {
					p = &pedge{id: e, rec: b.g.edges[e], dirty: true}
					edges[e] = p
					b.edgeList = append(b.edgeList, p)
				}
				p.rec.weight = ema(p.rec.weight)
			}
		}
		res = WeightsMoved{Observations: len(obs), Nodes: len(nodes), Edges: len(edges)}
		if res == (WeightsMoved{}) && len(extra) == 0 {
			return errNothing
		}
		if err := b.loadEdgeMeta(); err != nil {
			return err
		}
		for _, r := range extra {
			b.extra = append(b.extra, kv{r.Key, r.Value})
		}
		return nil
	}, time.Now(), true)
	if err == errNothing {
		return res, nil
	}
	return res, err
}

// edgeByKey resolves an EdgeKey against the batch's graph.
func (b *batch) edgeByKey(k EdgeKey) (uint32, bool) { return (&View{g: b.g}).EdgeByKey(k) }

// UpdateEdgeWeights moves the weight of each live edge in edges with
// w <- (1 - alpha) w + alpha target (EMA), durably. Gone edges are skipped.
// It returns how many edges moved.
func (s *Store) UpdateEdgeWeights(ctx context.Context, edges []uint32, alpha, target float64) (int, error) {
	if !(alpha > 0 && alpha <= 1) || target < 0 || target > 1 {
		return 0, fmt.Errorf("%w: alpha %v / target %v out of range", ErrInvalidInput, alpha, target)
	}
	n := 0
	_, err := s.write(ctx, func(b *batch) error {
		seen := map[uint32]bool{}
		for _, e := range edges {
			if seen[e] || int(e) >= len(b.g.edges) || !b.g.edgeLive(e) {
				continue
			}
			seen[e] = true
			p := &pedge{id: e, rec: b.g.edges[e], dirty: true}
			p.rec.weight = (1-alpha)*p.rec.weight + alpha*target
			b.edgeList = append(b.edgeList, p)
		}
		n = len(b.edgeList)
		if n == 0 {
			return errNothing
		}
		return b.loadEdgeMeta()
	}, time.Now(), true)
	if err == errNothing {
		return 0, nil
	}
	return n, err
}

// EdgeByKey resolves an EdgeKey to a live edge.
func (v *View) EdgeByKey(k EdgeKey) (uint32, bool) {
	su, err1 := parseUUID(k.SourceID)
	tu, err2 := parseUUID(k.TargetID)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	src, ok1 := v.g.nodeByUUID(su)
	dst, ok2 := v.g.nodeByUUID(tu)
	rel, ok3 := v.g.relIndex[k.RelationshipName]
	if !ok1 || !ok2 || !ok3 {
		return 0, false
	}
	e, ok := v.g.edgeByTriple(src, rel, dst)
	return e, ok && v.EdgeLive(e)
}

// EdgeTenant is the project edge e was imported into.
func (v *View) EdgeTenant(e uint32) Tenant { return v.g.tenants[v.g.edges[e].tenant] }
