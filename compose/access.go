package compose

import (
	"fmt"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/sessionlog"
	"github.com/kgctx/kgctx/policy"
)

// The read routes besides the blocks (triplet queries, one node, one
// observation, a session's injection logs) answer through the same scope
// and Cedar check as the blocks: what a block would not show, they do not
// show either, not even as an id. A denied node or observation is "not
// found", so that a caller cannot tell a forbidden item from a missing one.

// nodeResource is the Cedar resource of node n.
func nodeResource(v *engine.View, n uint32) policy.Resource {
	t := v.NodeTenant(n)
	return policy.Resource{Kind: policy.GraphNode, ID: v.NodeID(n), OrgID: t.Org, ProjectID: t.Project, Type: v.NodeType(n)}
}

// obsResource is the Cedar resource of observation d.
func obsResource(v *engine.View, d uint32) policy.Resource {
	t := v.ObsTenant(d)
	return policy.Resource{Kind: policy.Observation, ID: v.ObsID(d), OrgID: t.Org, ProjectID: t.Project}
}

// allowNode reports whether pr lets its identity read live node n.
func allowNode(pr *policy.Request, v *engine.View, n uint32) bool {
	if !v.Live(n) {
		return false
	}
	if d, ok := pr.Cached(uint64(n)); ok {
		return d
	}
	return pr.Allow(uint64(n), nodeResource(v, n))
}

// allowObs reports whether pr lets its identity read live observation d.
// Observation decisions are cached under keys apart from node ones.
func allowObs(pr *policy.Request, v *engine.View, d uint32) bool {
	if !v.ObsLive(d) {
		return false
	}
	if a, ok := pr.Cached(1<<32 | uint64(d)); ok {
		return a
	}
	return pr.Allow(1<<32|uint64(d), obsResource(v, d))
}

// QueryTriplets is the triplet query of project t as id may see it: only
// triplets whose two endpoints both pass the Cedar check are listed, and
// the limit counts those.
func (c *Composer) QueryTriplets(id policy.Identity, t engine.Tenant, q engine.TripletQuery) ([]engine.Triplet, error) {
	pr := c.PEP.NewRequest(id, policy.VerbRead)
	defer pr.Release()
	q.Allow = func(v *engine.View, src, dst uint32) bool {
		return allowNode(pr, v, src) && allowNode(pr, v, dst)
	}
	return c.Store.QueryTriplets(t, q)
}

// Node returns node nodeID of project t if id may read it, else
// engine.ErrNotFound.
func (c *Composer) Node(id policy.Identity, t engine.Tenant, nodeID string) (engine.Node, error) {
	pr := c.PEP.NewRequest(id, policy.VerbRead)
	defer pr.Release()
	ok := false
	if err := c.Store.View(func(v *engine.View) error {
		n, found := v.NodeByID(nodeID)
		ok = found && v.NodeTenant(n) == t && allowNode(pr, v, n)
		return nil
	}); err != nil {
		return engine.Node{}, err
	}
	if !ok {
		return engine.Node{}, fmt.Errorf("%w: node %q", engine.ErrNotFound, nodeID)
	}
	return c.Store.Node(t, nodeID)
}

// CheckTriplet answers engine.ErrNotFound unless id may read both
// endpoints of the triplet (source, relationship, target) of project t, as
// engine.Store.DeleteTriplet finds them (by name in t): what the caller
// may not read it may not delete, and a triplet with a hidden endpoint is
// answered as one that does not exist. Whether the edge itself exists is
// the delete's to say (alike for every caller).
func (c *Composer) CheckTriplet(id policy.Identity, t engine.Tenant, source, target string) error {
	pr := c.PEP.NewRequest(id, policy.VerbRead)
	defer pr.Release()
	ok := false
	if err := c.Store.View(func(v *engine.View) error {
		src, ok1 := v.Lookup(t, source)
		dst, ok2 := v.Lookup(t, target)
		ok = ok1 && ok2 && allowNode(pr, v, src) && allowNode(pr, v, dst)
		return nil
	}); err != nil {
		return err
	}
	if !ok {
		return engine.ErrNotFound
	}
	return nil
}

// Observation returns observation obsID of project t if id may read it,
// else engine.ErrNotFound.
func (c *Composer) Observation(id policy.Identity, t engine.Tenant, obsID string) (engine.Observation, error) {
	pr := c.PEP.NewRequest(id, policy.VerbRead)
	defer pr.Release()
	ok := false
	if err := c.Store.View(func(v *engine.View) error {
		d, found := v.ObsByID(obsID)
		ok = found && v.ObsTenant(d) == t && allowObs(pr, v, d)
		return nil
	}); err != nil {
		return engine.Observation{}, err
	}
	if !ok {
		return engine.Observation{}, fmt.Errorf("%w: observation %q", engine.ErrNotFound, obsID)
	}
	return c.Store.Observation(t, obsID)
}

// InjectionLogs returns org's session's injection logs, newest first, as
// id may see them: every observation, session summary and node id, and
// every edge key, that id may not read is left out of the copy it gets
// (ids of items deleted since cannot be checked, so they are left out
// too). The stored logs keep everything, so feedback still reaches all
// that the session was shown.
func (c *Composer) InjectionLogs(id policy.Identity, org, session string) ([]sessionlog.InjectionLog, error) {
	logs, err := c.Logs.InjectionLogs(org, session)
	if err != nil || len(logs) == 0 {
		return logs, err
	}
	pr := c.PEP.NewRequest(id, policy.VerbRead)
	defer pr.Release()
	err = c.Store.View(func(v *engine.View) error {
		node := func(nid string) bool {
			n, ok := v.NodeByID(nid)
			return ok && allowNode(pr, v, n)
		}
		obs := func(oid string) bool {
			d, ok := v.ObsByID(oid)
			return ok && allowObs(pr, v, d)
		}
		for i := range logs {
			l := &logs[i]
			l.ObservationIDs = keep(l.ObservationIDs, obs)
			l.SessionSummaryIDs = keep(l.SessionSummaryIDs, obs)
			l.GraphNodeIDs = keep(l.GraphNodeIDs, node)
			l.GraphEdgeKeys = keep(l.GraphEdgeKeys, func(k engine.EdgeKey) bool { return node(k.SourceID) && node(k.TargetID) })
		}
		return nil
	})
	return logs, err
}

// keep filters s in place to the elements ok accepts (never nil).
func keep[T any](s []T, ok func(T) bool) []T {
	out := s[:0]
	for _, x := range s {
		if ok(x) {
			out = append(out, x)
		}
	}
	if out == nil {
		return []T{}
	}
	return out
}

// CheckLogIDs checks that every id an injection log names is an item id
// may read, in the log's org (and project, when the log names one): an
// observation or session summary, a node, an edge (imported into that
// scope, both endpoints readable). It returns an error wrapping
// engine.ErrInvalidInput that names the first other id; a missing item and
// a forbidden one get the same answer, so the check tells nothing of
// another tenant.
func (c *Composer) CheckLogIDs(id policy.Identity, l sessionlog.InjectionLog) error {
	pr := c.PEP.NewRequest(id, policy.VerbRead)
	defer pr.Release()
	scope := engine.Tenant{Org: l.OrgID, Project: l.ProjectID}
	in := func(t engine.Tenant) bool {
		return t.Org == scope.Org && (scope.Project == "" || t.Project == scope.Project)
	}
	var bad error
	refuse := func(field, item string) {
		if bad == nil {
			where := "org " + scope.Org
			if scope.Project != "" {
				where += ", project " + scope.Project
			}
			bad = fmt.Errorf("%w: %s: %s is not an item this token may read in %s", engine.ErrInvalidInput, field, item, where)
		}
	}
	err := c.Store.View(func(v *engine.View) error {
		node := func(nid string) bool {
			n, ok := v.NodeByID(nid)
			return ok && in(v.NodeTenant(n)) && allowNode(pr, v, n)
		}
		obs := func(oid string) bool {
			d, ok := v.ObsByID(oid)
			return ok && in(v.ObsTenant(d)) && allowObs(pr, v, d)
		}
		for _, ids := range []struct {
			field string
			ids   []string
		}{{"observationIds", l.ObservationIDs}, {"sessionSummaryIds", l.SessionSummaryIDs}} {
			for _, o := range ids.ids {
				if !obs(o) {
					refuse(ids.field, fmt.Sprintf("%q", o))
				}
			}
		}
		for _, n := range l.GraphNodeIDs {
			if !node(n) {
				refuse("graphNodeIds", fmt.Sprintf("%q", n))
			}
		}
		for _, k := range l.GraphEdgeKeys {
			e, ok := v.EdgeByKey(k)
			if !ok || !in(v.EdgeTenant(e)) || !node(k.SourceID) || !node(k.TargetID) {
				refuse("graphEdgeKeys", fmt.Sprintf("%s -%s-> %s", k.SourceID, k.RelationshipName, k.TargetID))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return bad
}
