package compose

import (
	"fmt"
	"slices"
	"sort"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/internal/suggest"
	"github.com/kgctx/kgctx/policy"
)

// Warnings say that a request is probably a mistake though it is valid:
// an empty or unknown project, a work type no budget names, a session
// block without a work item. A block answers them beside its text
// (GraphBlock.Warnings, SessionBlock.Warnings, RAGBlock.Warnings); they
// never change the block.

// ScopeWarnings warns when scope holds nothing a block could show:
// project (or org) without nodes (and, with obs, without observations).
// A suggestion names only projects the identity may read, so a warning
// tells a token nothing it could not list itself.
func (c *Composer) ScopeWarnings(id policy.Identity, scope engine.Tenant, obs bool) []string {
	var have engine.Growth
	var projects []string
	err := c.Store.View(func(v *engine.View) error {
		if b := v.ScopeNodes(scope); b != nil {
			have.Nodes = int(b.GetCardinality())
		}
		if b := v.ScopeObservations(scope); b != nil {
			have.Observations = int(b.GetCardinality())
		}
		return nil
	})
	if err != nil || have.Nodes > 0 || (obs && have.Observations > 0) {
		return nil
	}
	what := "nodes"
	if obs {
		what = "nodes or observations"
	}
	if scope.Project == "" {
		return []string{fmt.Sprintf("org %s holds no %s", scope.Org, what)}
	}
	for _, t := range c.Store.Tenants() {
		if t.Org != scope.Org || t.Project == scope.Project || (len(id.ProjectIDs) > 0 && !slices.Contains(id.ProjectIDs, t.Project)) {
			continue
		}
		if s, err := c.Store.Size(t); err == nil && (s.Nodes > 0 || s.Observations > 0) {
			projects = append(projects, t.Project)
		}
	}
	w := fmt.Sprintf("project %s holds no %s", scope.Project, what)
	if s := suggest.Nearest(scope.Project, projects); s != "" {
		w += fmt.Sprintf("; did you mean %s?", s)
	} else if len(projects) > 0 && len(projects) <= 10 {
		sort.Strings(projects)
		w += fmt.Sprintf(" (projects of org %s with data: %v)", scope.Org, projects)
	}
	return []string{w}
}

// workTypeWarning warns of a work type no budget names: the default
// budget applies, which a typo (bugfix for bug_fix) makes easy to miss.
func workTypeWarning(b BudgetConfig, org, workType string) []string {
	if workType == "" || workType == "unknown" {
		return nil
	}
	known := map[string]bool{}
	for k := range b.Defaults {
		known[k] = true
	}
	for k := range b.OrgOverrides[org] {
		known[k] = true
	}
	if known[workType] {
		return nil
	}
	names := make([]string, 0, len(known))
	for k := range known {
		names = append(names, k)
	}
	w := fmt.Sprintf("workType %s is not configured, the default budget %d applies", workType, UnknownBudget)
	if s := suggest.Nearest(workType, names); s != "" {
		w += fmt.Sprintf("; did you mean %s?", s)
	} else {
		sort.Strings(names)
		w += fmt.Sprintf(" (configured: %v)", names)
	}
	return []string{w}
}
