package compose

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/configstore"
)

// Work types the references name; any other string is "unknown".
const (
	WorkBugFix   = "bug_fix"
	WorkFeature  = "feature"
	WorkRefactor = "refactor"
	WorkChore    = "chore"
)

// MemoryConfig is a project's memory configuration
// (project_memory_config).
type MemoryConfig struct {
	MemoryEnabled        bool     `json:"memoryEnabled"`
	GraphEnabled         bool     `json:"graphEnabled"`
	RuntimeInjectEnabled bool     `json:"runtimeInjectEnabled"`
	TechStack            []string `json:"techStack"`
}

// DefaultMemoryConfig applies to a project with no stored configuration:
// memory, graph and runtime injection on (a new project works out of the
// box; an org admin turns parts off), no tech stack (so no cross-project
// peers).
var DefaultMemoryConfig = MemoryConfig{MemoryEnabled: true, GraphEnabled: true, RuntimeInjectEnabled: true, TechStack: []string{}}

// OrgPlan is an org's plan: feature flags, kg_enabled among them.
type OrgPlan struct {
	Features map[string]bool `json:"features"`
}

// RecallMatrix selects, per work type, whether a session's block gets graph
// context; org overrides win over the operator's defaults, and a work type
// neither names is included.
type RecallMatrix struct {
	Defaults     map[string]bool            `json:"defaults"`
	OrgOverrides map[string]map[string]bool `json:"orgOverrides"`
}

// DefaultRecallMatrix is the console's safe default.
func DefaultRecallMatrix() RecallMatrix {
	return RecallMatrix{Defaults: map[string]bool{WorkBugFix: true, WorkRefactor: true, WorkFeature: true, WorkChore: false},
		OrgOverrides: map[string]map[string]bool{}}
}

// Graph reports whether workType gets graph context in org.
func (m RecallMatrix) Graph(org, workType string) bool {
	if v, ok := m.OrgOverrides[org][workType]; ok {
		return v
	}
	if v, ok := m.Defaults[workType]; ok {
		return v
	}
	return true
}

// BudgetConfig is the references' ContextBudgetConfig: token budgets per
// work type, org overrides winning.
type BudgetConfig struct {
	Defaults     map[string]int            `json:"defaults"`
	OrgOverrides map[string]map[string]int `json:"orgOverrides"`
}

// UnknownBudget is the budget of a work type no map names.
const UnknownBudget = 500

// DefaultBudgets are DEFAULT_CONTEXT_BUDGET.
func DefaultBudgets() BudgetConfig {
	return BudgetConfig{Defaults: map[string]int{WorkBugFix: 750, WorkFeature: 400, WorkRefactor: 600, WorkChore: 300},
		OrgOverrides: map[string]map[string]int{}}
}

// Budget returns the token budget of workType in org.
func (c BudgetConfig) Budget(org, workType string) int {
	if v, ok := c.OrgOverrides[org][workType]; ok {
		return v
	}
	if v, ok := c.Defaults[workType]; ok {
		return v
	}
	return UnknownBudget
}

// Validate checks budgets are within 1..MaxBudgetTokens and keys are ids.
func (c BudgetConfig) Validate() error {
	check := func(where string, m map[string]int) error {
		for k, v := range m {
			if err := engine.ValidateID(k); err != nil {
				return fmt.Errorf("%w: %s: work type %q: %v", ErrInvalidRequest, where, k, err)
			}
			if v < 1 || v > MaxBudgetTokens {
				return fmt.Errorf("%w: %s.%s = %d is outside 1..%d", ErrInvalidRequest, where, k, v, MaxBudgetTokens)
			}
		}
		return nil
	}
	if err := check("defaults", c.Defaults); err != nil {
		return err
	}
	for org, m := range c.OrgOverrides {
		if err := engine.ValidateID(org); err != nil {
			return fmt.Errorf("%w: orgOverrides: %q: %v", ErrInvalidRequest, org, err)
		}
		if err := check("orgOverrides."+org, m); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks the matrix's keys are ids.
func (m RecallMatrix) Validate() error {
	for k := range m.Defaults {
		if err := engine.ValidateID(k); err != nil {
			return fmt.Errorf("%w: defaults: work type %q: %v", ErrInvalidRequest, k, err)
		}
	}
	for org, o := range m.OrgOverrides {
		if err := engine.ValidateID(org); err != nil {
			return fmt.Errorf("%w: orgOverrides: %q: %v", ErrInvalidRequest, org, err)
		}
		for k := range o {
			if err := engine.ValidateID(k); err != nil {
				return fmt.Errorf("%w: orgOverrides.%s: work type %q: %v", ErrInvalidRequest, org, k, err)
			}
		}
	}
	return nil
}

// Validate checks the tech stack entries.
func (c MemoryConfig) Validate() error {
	if len(c.TechStack) > 256 {
		return fmt.Errorf("%w: techStack has %d entries, the limit is 256", ErrInvalidRequest, len(c.TechStack))
	}
	for _, t := range c.TechStack {
		if strings.TrimSpace(t) == "" || len(t) > 128 || strings.ContainsFunc(t, func(r rune) bool { return r < 0x20 }) {
			return fmt.Errorf("%w: techStack entry %q must be 1 to 128 bytes without control characters", ErrInvalidRequest, t)
		}
	}
	return nil
}

// PredicateConfig is a project's relationship vocabulary: open accepts any
// relationship (normalised to snake_case), strict only those listed.
type PredicateConfig struct {
	Mode    string   `json:"mode" oas:"enum=open|strict"`
	Allowed []string `json:"allowed"`
}

// Predicate modes.
const (
	PredicatesOpen   = "open"
	PredicatesStrict = "strict"
)

// DefaultPredicates is the strict list when none is given: the reference's
// nine predicates plus depends_on, implements and calls.
var DefaultPredicates = []string{"related_to", "caused_by", "resolved_by", "follows", "similar_to", "contains",
	"in_session", "reflects_on", "learned_from", "depends_on", "implements", "calls"}

// Normalize checks the mode and normalises the list (empty: the default).
func (c PredicateConfig) Normalize() (PredicateConfig, error) {
	switch c.Mode {
	case "":
		c.Mode = PredicatesOpen
	case PredicatesOpen, PredicatesStrict:
	default:
		return c, fmt.Errorf("%w: mode %q: want open or strict", ErrInvalidRequest, c.Mode)
	}
	if len(c.Allowed) == 0 {
		c.Allowed = slices.Clone(DefaultPredicates)
	}
	if len(c.Allowed) > 1000 {
		return c, fmt.Errorf("%w: allowed has %d entries, the limit is 1000", ErrInvalidRequest, len(c.Allowed))
	}
	out := make([]string, 0, len(c.Allowed))
	for _, p := range c.Allowed {
		// The store's bound on relationships, as sent and in snake_case.
		n := engine.NormalizeRelationship(p)
		if n == "" || len(p) > engine.DefaultMaxRelBytes || len(n) > engine.DefaultMaxRelBytes {
			return c, fmt.Errorf("%w: allowed: %q is not a relationship name of 1 to %d bytes", ErrInvalidRequest, p, engine.DefaultMaxRelBytes)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	c.Allowed = out
	return c, nil
}

// Set returns the strict vocabulary as a set, nil in open mode.
func (c PredicateConfig) Set() map[string]bool {
	if c.Mode != PredicatesStrict {
		return nil
	}
	m := make(map[string]bool, len(c.Allowed))
	for _, p := range c.Allowed {
		m[p] = true
	}
	return m
}

// Config kinds in the store.
const (
	cfgMemory    = "memory-config"
	cfgPlan      = "org-plan"
	cfgRecall    = "recall-matrix"
	cfgBudgets   = "budgets"
	cfgPreds     = "predicates"
	cfgInSession = "in-session"
	cfgQuotas    = "quotas"
	cfgSingle    = "current"
)

// Settings reads and writes the configuration documents, each a document
// (durable in the store, cached in memory, copies handed out). Safe for
// concurrent use.
type Settings struct {
	cs        *configstore.Store
	memory    document[engine.Tenant, MemoryConfig]
	plans     document[string, OrgPlan]
	recall    document[struct{}, RecallMatrix]
	budgets   document[struct{}, BudgetConfig]
	insession document[struct{}, InSessionConfig]
	preds     document[engine.Tenant, PredicateConfig]
	quotas    document[struct{}, QuotaConfig]
}

func tenantKey(t engine.Tenant) string { return t.Org + "/" + t.Project }

func single(struct{}) string { return cfgSingle }

// NewSettings returns the settings of st.
func NewSettings(st *engine.Store) *Settings {
	cs := configstore.New(st)
	return &Settings{cs: cs,
		memory: document[engine.Tenant, MemoryConfig]{cs: cs, kind: cfgMemory, key: tenantKey,
			def: func() MemoryConfig { return DefaultMemoryConfig.clone() }, normalize: (*MemoryConfig).normalize, clone: MemoryConfig.clone},
		plans: document[string, OrgPlan]{cs: cs, kind: cfgPlan, key: func(org string) string { return org },
			def: func() OrgPlan { return OrgPlan{Features: map[string]bool{}} }, normalize: (*OrgPlan).normalize, clone: OrgPlan.clone},
		recall: document[struct{}, RecallMatrix]{cs: cs, kind: cfgRecall, key: single,
			def: DefaultRecallMatrix, normalize: (*RecallMatrix).normalize, clone: RecallMatrix.clone},
		budgets: document[struct{}, BudgetConfig]{cs: cs, kind: cfgBudgets, key: single,
			def: DefaultBudgets, normalize: (*BudgetConfig).normalize, clone: BudgetConfig.clone},
		insession: document[struct{}, InSessionConfig]{cs: cs, kind: cfgInSession, key: single,
			def: DefaultInSessionConfig, normalize: (*InSessionConfig).normalize, clone: InSessionConfig.clone},
		quotas: document[struct{}, QuotaConfig]{cs: cs, kind: cfgQuotas, key: single,
			def: DefaultQuotas, normalize: (*QuotaConfig).normalize, clone: QuotaConfig.clone},
		preds: document[engine.Tenant, PredicateConfig]{cs: cs, kind: cfgPreds, key: tenantKey,
			def: func() PredicateConfig { return PredicateConfig{Mode: PredicatesOpen} }, normalize: (*PredicateConfig).normalize, clone: PredicateConfig.clone},
	}
}

// MemoryConfig returns project t's memory configuration (the default when
// none is stored).
func (s *Settings) MemoryConfig(t engine.Tenant) (MemoryConfig, error) { return s.memory.Get(t) }

// SetMemoryConfig stores project t's configuration.
func (s *Settings) SetMemoryConfig(t engine.Tenant, c MemoryConfig) error { return s.memory.Set(t, c) }

// Plan returns org's plan (no features when none is stored).
func (s *Settings) Plan(org string) (OrgPlan, error) { return s.plans.Get(org) }

// SetPlan stores org's plan.
func (s *Settings) SetPlan(org string, p OrgPlan) error { return s.plans.Set(org, p) }

// RecallMatrix returns the operator recall matrix.
func (s *Settings) RecallMatrix() (RecallMatrix, error) { return s.recall.Get(struct{}{}) }

// SetRecallMatrix stores the recall matrix.
func (s *Settings) SetRecallMatrix(m RecallMatrix) error { return s.recall.Set(struct{}{}, m) }

// Budgets returns the budget configuration.
func (s *Settings) Budgets() (BudgetConfig, error) { return s.budgets.Get(struct{}{}) }

// SetBudgets stores the budget configuration.
func (s *Settings) SetBudgets(c BudgetConfig) error { return s.budgets.Set(struct{}{}, c) }

// InSessionConfig returns the in-session configuration (the default when
// none is stored).
func (s *Settings) InSessionConfig() (InSessionConfig, error) { return s.insession.Get(struct{}{}) }

// SetInSessionConfig stores the in-session configuration.
func (s *Settings) SetInSessionConfig(c InSessionConfig) error {
	return s.insession.Set(struct{}{}, c)
}

// Quotas returns the operator's quotas (the defaults when none are
// stored).
func (s *Settings) Quotas() (QuotaConfig, error) { return s.quotas.Get(struct{}{}) }

// QuotaFor returns the limits that apply to org, without copying the
// configuration.
func (s *Settings) QuotaFor(org string) (QuotaLimits, error) {
	var l QuotaLimits
	err := s.quotas.read(struct{}{}, func(c QuotaConfig) { l = c.For(org) })
	return l, err
}

// SetQuotas stores the quotas.
func (s *Settings) SetQuotas(c QuotaConfig) error { return s.quotas.Set(struct{}{}, c) }

// Predicates returns project t's relationship vocabulary (open, with the
// default list, when none is stored).
func (s *Settings) Predicates(t engine.Tenant) (PredicateConfig, error) { return s.preds.Get(t) }

// SetPredicates stores project t's vocabulary.
func (s *Settings) SetPredicates(t engine.Tenant, c PredicateConfig) error { return s.preds.Set(t, c) }

// DropOrg deletes org's documents: its plan and its projects' memory
// configurations and vocabularies (the org's data moved to another shard
// of a cluster). The operator's documents stay.
func (s *Settings) DropOrg(org string) error {
	ofOrg := func(t engine.Tenant) bool { return t.Org == org }
	inOrg := func(key string) bool { return strings.HasPrefix(key, org+"/") }
	if err := s.memory.drop(inOrg, ofOrg); err != nil {
		return err
	}
	if err := s.preds.drop(inOrg, ofOrg); err != nil {
		return err
	}
	return s.plans.drop(func(key string) bool { return key == org }, func(k string) bool { return k == org })
}

// HasOrg reports whether org has a stored document (a plan, a project's
// memory configuration or vocabulary).
func (s *Settings) HasOrg(org string) (bool, error) {
	if _, err := s.cs.Get(cfgPlan, org); err == nil {
		return true, nil
	} else if !errors.Is(err, engine.ErrNotFound) {
		return false, err
	}
	ps, err := s.ConfiguredProjects(org)
	return len(ps) > 0, err
}

// ConfiguredOrgs lists the orgs with a stored document (a plan, a
// project's memory configuration or vocabulary), sorted, each once.
func (s *Settings) ConfiguredOrgs() ([]string, error) {
	seen := map[string]bool{}
	for _, kind := range []string{cfgMemory, cfgPreds, cfgPlan} {
		err := s.cs.Each(kind, func(key string, _ []byte) error {
			org, _, _ := strings.Cut(key, "/")
			seen[org] = true
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return slices.Sorted(maps.Keys(seen)), nil
}

// The documents' normalisers (validate, then fill the empty parts) and
// deep copies.

func (c *MemoryConfig) normalize() error {
	if err := c.Validate(); err != nil {
		return err
	}
	if c.TechStack == nil {
		c.TechStack = []string{}
	}
	return nil
}

func (c MemoryConfig) clone() MemoryConfig {
	c.TechStack = slices.Clone(c.TechStack)
	return c
}

func (p *OrgPlan) normalize() error {
	for k := range p.Features {
		if err := engine.ValidateID(k); err != nil {
			return fmt.Errorf("%w: features: %q: %v", ErrInvalidRequest, k, err)
		}
	}
	if p.Features == nil {
		p.Features = map[string]bool{}
	}
	return nil
}

func (p OrgPlan) clone() OrgPlan { return OrgPlan{Features: maps.Clone(p.Features)} }

func (m *RecallMatrix) normalize() error {
	if err := m.Validate(); err != nil {
		return err
	}
	if m.Defaults == nil {
		m.Defaults = map[string]bool{}
	}
	if m.OrgOverrides == nil {
		m.OrgOverrides = map[string]map[string]bool{}
	}
	return nil
}

func (m RecallMatrix) clone() RecallMatrix {
	return RecallMatrix{Defaults: maps.Clone(m.Defaults), OrgOverrides: cloneNested(m.OrgOverrides)}
}

func (c *BudgetConfig) normalize() error {
	if err := c.Validate(); err != nil {
		return err
	}
	if c.Defaults == nil {
		c.Defaults = map[string]int{}
	}
	if c.OrgOverrides == nil {
		c.OrgOverrides = map[string]map[string]int{}
	}
	return nil
}

func (c BudgetConfig) clone() BudgetConfig {
	return BudgetConfig{Defaults: maps.Clone(c.Defaults), OrgOverrides: cloneNested(c.OrgOverrides)}
}

func (c *InSessionConfig) normalize() error {
	if err := c.Validate(); err != nil {
		return err
	}
	*c = c.withDefaults()
	return nil
}

func (c InSessionConfig) clone() InSessionConfig {
	c.DisabledForAgents, c.SkipTools = slices.Clone(c.DisabledForAgents), slices.Clone(c.SkipTools)
	return c
}

func (c *PredicateConfig) normalize() error {
	n, err := c.Normalize()
	if err != nil {
		return err
	}
	*c = n
	return nil
}

func (c PredicateConfig) clone() PredicateConfig {
	c.Allowed = slices.Clone(c.Allowed)
	return c
}

// cloneNested copies a map of maps.
func cloneNested[V any](m map[string]map[string]V) map[string]map[string]V {
	if m == nil {
		return nil
	}
	out := make(map[string]map[string]V, len(m))
	for k, v := range m {
		out[k] = maps.Clone(v)
	}
	return out
}

// GraphEnabledForProject is isGraphEnabledForProject: memory on, and graph
// on for the project either by its own toggle or by the org plan's
// kg_enabled feature.
func (s *Settings) GraphEnabledForProject(t engine.Tenant) (bool, error) {
	c, err := s.MemoryConfig(t)
	if err != nil {
		return false, err
	}
	p, err := s.Plan(t.Org)
	if err != nil {
		return false, err
	}
	return c.MemoryEnabled && (c.GraphEnabled || p.Features["kg_enabled"]), nil
}

// Projects returns every tenant with a stored memory configuration.
func (s *Settings) Projects() ([]engine.Tenant, error) {
	var out []engine.Tenant
	err := s.cs.Each(cfgMemory, func(key string, _ []byte) error {
		org, project, ok := strings.Cut(key, "/")
		if ok {
			out = append(out, engine.Tenant{Org: org, Project: project})
		}
		return nil
	})
	return out, err
}

// Jaccard is |a ∩ b| / |a ∪ b| over case-folded, trimmed entries (0 when
// both are empty).
func Jaccard(a, b []string) float64 {
	set := func(xs []string) map[string]bool {
		m := map[string]bool{}
		for _, x := range xs {
			if x = strings.ToLower(strings.TrimSpace(x)); x != "" {
				m[x] = true
			}
		}
		return m
	}
	sa, sb := set(a), set(b)
	union := maps.Clone(sa)
	maps.Copy(union, sb)
	if len(union) == 0 {
		return 0
	}
	inter := 0
	for k := range sa {
		if sb[k] {
			inter++
		}
	}
	return float64(inter) / float64(len(union))
}
