package compose

import (
	"slices"
	"strings"

	"github.com/kgctx/kgctx/engine"
)

// ProjectSummary is one project of an org with its sizes: nodes in the
// project, edges imported into it, observations.
type ProjectSummary struct {
	ProjectID    string `json:"projectId" oas:"required"`
	Nodes        int    `json:"nodes" oas:"required"`
	Edges        int    `json:"edges" oas:"required"`
	Observations int    `json:"observations" oas:"required"`
}

// Projects lists org's projects that hold data (nodes, edges or
// observations) or a stored configuration (memory-config, predicates),
// sorted by id, with their sizes. only, when not empty, keeps those
// projects alone (a token limited to some projects).
func (c *Composer) Projects(org string, only []string) ([]ProjectSummary, error) {
	ids := map[string]bool{}
	for _, t := range c.Store.Tenants() {
		if t.Org == org && t.Project != "" {
			ids[t.Project] = false // known; kept if it holds data
		}
	}
	configured, err := c.Settings.ConfiguredProjects(org)
	if err != nil {
		return nil, err
	}
	for _, p := range configured {
		ids[p] = true
	}
	out := []ProjectSummary{}
	for p, keep := range ids {
		if len(only) > 0 && !slices.Contains(only, p) {
			continue
		}
		g, err := c.Store.Size(engine.Tenant{Org: org, Project: p})
		if err != nil {
			return nil, err
		}
		if !keep && g == (engine.Growth{}) {
			continue // a project emptied (cleared, its observations deleted)
		}
		out = append(out, ProjectSummary{ProjectID: p, Nodes: g.Nodes, Edges: g.Edges, Observations: g.Observations})
	}
	slices.SortFunc(out, func(a, b ProjectSummary) int { return strings.Compare(a.ProjectID, b.ProjectID) })
	return out, nil
}

// ConfiguredProjects lists the projects of org with a stored memory
// configuration or predicate vocabulary (unsorted, each once).
func (s *Settings) ConfiguredProjects(org string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, kind := range []string{cfgMemory, cfgPreds} {
		err := s.cs.Each(kind, func(key string, _ []byte) error {
			if o, p, ok := strings.Cut(key, "/"); ok && o == org && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
