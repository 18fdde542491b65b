package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/delivery"
)

// OrgHasData reports whether this store holds anything of org: a node,
// an edge or an observation in one of its projects, a stored
// configuration (plan, memory configuration, vocabulary), a lease, a
// queued inject or an injection log.
func (a *App) OrgHasData(org string) (bool, error) {
	if err := engine.ValidateID(org); err != nil {
		return false, fmt.Errorf("%w: org: %v", engine.ErrInvalidInput, err)
	}
	found := false
	err := a.Store.View(func(v *engine.View) error {
		all := engine.Tenant{Org: org}
		if b := v.ScopeNodes(all); b != nil && !b.IsEmpty() {
			found = true
		}
		if b := v.ScopeObservations(all); b != nil && !b.IsEmpty() {
			found = true
		}
		return nil
	})
	if err != nil || found {
		return found, err
	}
	for _, t := range a.Store.Tenants() {
		if t.Org != org {
			continue
		}
		g, err := a.Store.Size(t)
		if err != nil {
			return false, err
		}
		if g.Edges > 0 {
			return true, nil
		}
	}
	if ok, err := a.Settings.HasOrg(org); ok || err != nil {
		return ok, err
	}
	for _, p := range []byte{engine.PrefixLease, engine.PrefixInject, engine.PrefixInjectHash, engine.PrefixLog} {
		k := engine.SessionKey(p, org, "")
		if ok, err := a.Store.KV().HasPrefix(k[:len(k)-1]); ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

// DropOrg removes everything of org from this store (what OrgHasData
// finds: its projects' graphs and observations, configurations, leases,
// inject queues and injection logs, and its sessions' entries in the
// session index), the search indexes following. A cluster calls it once
// the org lives on another shard. Other orgs' records stay, and so do
// the tenants' entries of the graph's dictionary (empty, they hold
// nothing).
func (a *App) DropOrg(ctx context.Context, org string) error {
	if err := engine.ValidateID(org); err != nil {
		return fmt.Errorf("%w: org: %v", engine.ErrInvalidInput, err)
	}
	for _, t := range a.Store.Tenants() {
		if t.Org != org || t.Project == "" {
			continue
		}
		if _, _, err := a.Store.ClearProject(ctx, t); err != nil {
			return fmt.Errorf("drop org %s: project %s: %w", org, t.Project, err)
		}
	}
	if _, err := a.Store.ClearObservations(ctx, engine.Tenant{Org: org}); err != nil {
		return fmt.Errorf("drop org %s: observations: %w", org, err)
	}
	if err := a.Settings.DropOrg(org); err != nil {
		return fmt.Errorf("drop org %s: configuration: %w", org, err)
	}
	if _, err := a.Delivery.DropOrg(org); err != nil {
		return fmt.Errorf("drop org %s: leases and injects: %w", org, err)
	}
	if _, err := a.Logs.DropOrg(org); err != nil {
		return fmt.Errorf("drop org %s: injection logs: %w", org, err)
	}
	if _, err := a.Store.KV().ForgetSessionOrg(org); err != nil {
		return fmt.Errorf("drop org %s: session index: %w", org, err)
	}
	return nil
}

// OrgRecords lists every record of org in this store as canonical text,
// one record a line, sorted: its projects' nodes (external id, name,
// aliases, type, description, code fields, weight, times) and edges
// (endpoints' ids, relationship, weight, provenance), its observations
// (id, content, metadata, weight, time), its configuration documents,
// leases, queued injects, dedupe hashes, injection logs and session
// index entries. What differs between two stores that applied the same
// writes is left out (dense ids, the inject queue's store sequence), so
// that such stores list the same lines: a cluster's replicas, a store an
// org was moved to and one it never left.
func (a *App) OrgRecords(org string) ([]string, error) {
	if err := engine.ValidateID(org); err != nil {
		return nil, fmt.Errorf("%w: org: %v", engine.ErrInvalidInput, err)
	}
	var lines []string
	add := func(kind string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		lines = append(lines, kind+" "+string(b))
		return nil
	}
	type nodeRef struct {
		t  engine.Tenant
		id string
	}
	var nodes []nodeRef
	a.Store.View(func(v *engine.View) error {
		if b := v.ScopeNodes(engine.Tenant{Org: org}); b != nil {
			it := b.Iterator()
			for it.HasNext() {
				n := it.Next()
				nodes = append(nodes, nodeRef{v.NodeTenant(n), v.NodeID(n)})
			}
		}
		return nil
	})
	for _, r := range nodes {
		n, err := a.Store.Node(r.t, r.id)
		if errors.Is(err, engine.ErrNotFound) {
			continue // deleted since
		}
		if err != nil {
			return nil, err
		}
		if err := add("node", n); err != nil {
			return nil, err
		}
	}
	for _, t := range a.Store.Tenants() {
		if t.Org != org || t.Project == "" {
			continue
		}
		ts, err := a.Store.QueryTriplets(t, engine.TripletQuery{Limit: engine.MaxQueryLimit})
		if err != nil {
			return nil, err
		}
		if len(ts) == engine.MaxQueryLimit {
			return nil, fmt.Errorf("%w: project %s/%s has more than %d triplets to list", engine.ErrTooLarge, org, t.Project, engine.MaxQueryLimit)
		}
		for _, tr := range ts {
			if err := add("edge "+t.Project, tr); err != nil {
				return nil, err
			}
		}
		for after := (*engine.ObsPosition)(nil); ; {
			page, err := a.Store.ListObservations(t, engine.ObservationQuery{Limit: engine.MaxObservationPage, After: after})
			if err != nil {
				return nil, err
			}
			for _, o := range page.Observations {
				if err := add("observation", o); err != nil {
					return nil, err
				}
			}
			if after = page.Next; after == nil {
				break
			}
		}
	}
	projects, err := a.Settings.ConfiguredProjects(org)
	if err != nil {
		return nil, err
	}
	for _, p := range projects {
		t := engine.Tenant{Org: org, Project: p}
		m, err := a.Settings.MemoryConfig(t)
		if err != nil {
			return nil, err
		}
		c, err := a.Settings.Predicates(t)
		if err != nil {
			return nil, err
		}
		if err := add("config "+p, []any{m, c}); err != nil {
			return nil, err
		}
	}
	plan, err := a.Settings.Plan(org)
	if err != nil {
		return nil, err
	}
	if err := add("plan", plan); err != nil {
		return nil, err
	}
	kv := a.Store.KV()
	for _, p := range []byte{engine.PrefixLease, engine.PrefixInject, engine.PrefixInjectHash, engine.PrefixLog} {
		k := engine.SessionKey(p, org, "")
		prefix := k[:len(k)-1]
		err := kv.Iterate(prefix, func(k, v []byte) error {
			rest := string(k[len(prefix):])
			switch p {
			case engine.PrefixInject:
				// The key ends in the store's own sequence, and so does the
				// record: the session and the record without it.
				var in delivery.Inject
				if err := json.Unmarshal(v, &in); err != nil {
					return err
				}
				in.Seq = 0
				return add("inject "+in.SessionID, in)
			case engine.PrefixInjectHash:
				// The value is the store's sequence of the inject.
				lines = append(lines, "hash "+strings.ReplaceAll(rest, "\x00", " "))
				return nil
			}
			lines = append(lines, fmt.Sprintf("%c %q %s", p, rest, v))
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	err = kv.Iterate([]byte{engine.PrefixSessionOrg}, func(k, _ []byte) error {
		if ses, o, ok := strings.Cut(string(k[1:]), "\x00"); ok && o == org {
			lines = append(lines, "session "+ses)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(lines)
	return lines, nil
}

// Orgs lists the orgs this store holds records of (a project, a stored
// configuration, a session), sorted, each once. An org listed may hold
// nothing any more (its records deleted): OrgHasData tells.
func (a *App) Orgs() ([]string, error) {
	seen := map[string]bool{}
	for _, t := range a.Store.Tenants() {
		seen[t.Org] = true
	}
	orgs, err := a.Settings.ConfiguredOrgs()
	if err != nil {
		return nil, err
	}
	for _, o := range orgs {
		seen[o] = true
	}
	err = a.Store.KV().Iterate([]byte{engine.PrefixSessionOrg}, func(k, _ []byte) error {
		if _, o, ok := strings.Cut(string(k[1:]), "\x00"); ok {
			seen[o] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	delete(seen, "")
	return slices.Sorted(maps.Keys(seen)), nil
}
