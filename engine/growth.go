package engine

// Growth is what a write would add to one project: new nodes, edges and
// observations.
type Growth struct {
	Nodes, Edges, Observations int
}

// ImportGrowth reports, per project, how many nodes and edges importing in
// into t would create, resolving names and edges as Import does, against
// the store as it is now (a concurrent write may change the answer). The
// quotas of the API check it before a write is accepted. in must be valid
// (ValidateTriplet).
func (s *Store) ImportGrowth(t Tenant, in []TripletInput) (map[Tenant]Growth, error) {
	out := map[Tenant]Growth{}
	err := s.View(func(v *View) error {
		type key struct {
			t    Tenant
			norm string
		}
		newNodes := map[key]bool{}
		type ekey struct {
			src, dst key
			rel      string
		}
		newEdges := map[ekey]bool{}
		// node resolves an endpoint as Import does: by its identity key
		// (an exact name's never meets a folded one's); its key, and its
		// id when it exists.
		node := func(t Tenant, name string, exact bool) (key, uint32, bool) {
			k := key{t, nameKeyOf(name, exact)}
			if newNodes[k] {
				return k, 0, false
			}
			if tid, ok := v.g.tenantIndex[t]; ok {
				if id, ok := v.resolve(tid, name, exact); ok && v.Live(id) {
					return k, id, true
				}
			}
			newNodes[k] = true
			g := out[t]
			g.Nodes++
			out[t] = g
			return k, 0, false
		}
		for i := range in {
			tr := &in[i]
			srcT, dstT := t, t
			if tr.SourceProjectID != "" {
				srcT = Tenant{Org: t.Org, Project: tr.SourceProjectID}
			}
			if tr.TargetOrgID != "" || tr.TargetProjectID != "" {
				dstT = Tenant{Org: cmpOr(tr.TargetOrgID, t.Org), Project: cmpOr(tr.TargetProjectID, t.Project)}
			}
			sk, sid, sok := node(srcT, tr.Source, tr.SourceExact)
			dk, did, dok := node(dstT, tr.Target, tr.TargetExact)
			rel := NormalizeRelationship(tr.Relationship)
			ek := ekey{sk, dk, rel}
			if newEdges[ek] {
				continue
			}
			if sok && dok {
				if r, ok := v.g.relIndex[rel]; ok {
					if _, ok := v.g.edgeByTriple(sid, r, did); ok {
						continue
					}
				}
			}
			newEdges[ek] = true
			g := out[t]
			g.Edges++
			out[t] = g
		}
		return nil
	})
	return out, err
}

// Size is what project t holds now: live nodes, edges imported into it
// and observations.
func (s *Store) Size(t Tenant) (Growth, error) {
	var g Growth
	err := s.View(func(v *View) error {
		if b := v.ScopeNodes(t); b != nil && t.Project != "" {
			g.Nodes = int(b.GetCardinality())
		}
		if b := v.ProjectEdges(t); b != nil {
			g.Edges = int(b.GetCardinality())
		}
		if b := v.ScopeObservations(t); b != nil {
			g.Observations = int(b.GetCardinality())
		}
		return nil
	})
	return g, err
}
