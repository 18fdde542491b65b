package compose

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/delivery"
	"github.com/kgctx/kgctx/index"
	"github.com/kgctx/kgctx/index/fuse"
	"github.com/kgctx/kgctx/policy"
)

// InSessionConfig is the references' InSessionMemoryConfig.
type InSessionConfig struct {
	Enabled                bool     `json:"enabled"`
	DisabledForAgents      []string `json:"disabledForAgents"`
	LatencyBudgetMs        int      `json:"latencyBudgetMs"`
	MinRelevanceScore      float64  `json:"minRelevanceScore"`
	BudgetTokens           int      `json:"budgetTokens"`
	WorkType               string   `json:"workType"`
	MaxSuggestionsPerEvent int      `json:"maxSuggestionsPerEvent"`
	SkipTools              []string `json:"skipTools"`
}

// DefaultInSessionConfig is DEFAULT_IN_SESSION_CONFIG, enabled.
func DefaultInSessionConfig() InSessionConfig {
	return InSessionConfig{Enabled: true, DisabledForAgents: []string{}, LatencyBudgetMs: 100, MinRelevanceScore: 0.4,
		BudgetTokens: 200, WorkType: WorkFeature, MaxSuggestionsPerEvent: 3, SkipTools: []string{"TodoWrite", "BashOutput"}}
}

// Validate checks ranges; zero fields take the defaults (see withDefaults).
func (c InSessionConfig) Validate() error {
	switch {
	case c.LatencyBudgetMs < 0 || c.LatencyBudgetMs > 10_000:
		return fmt.Errorf("%w: latencyBudgetMs %d is outside 0..10000", ErrInvalidRequest, c.LatencyBudgetMs)
	case c.MinRelevanceScore < 0 || c.MinRelevanceScore > 1:
		return fmt.Errorf("%w: minRelevanceScore %v is outside [0,1]", ErrInvalidRequest, c.MinRelevanceScore)
	case c.BudgetTokens < 0 || c.BudgetTokens > MaxBudgetTokens:
		return fmt.Errorf("%w: budgetTokens %d is outside 0..%d", ErrInvalidRequest, c.BudgetTokens, MaxBudgetTokens)
	case c.MaxSuggestionsPerEvent < 0 || c.MaxSuggestionsPerEvent > 100:
		return fmt.Errorf("%w: maxSuggestionsPerEvent %d is outside 0..100", ErrInvalidRequest, c.MaxSuggestionsPerEvent)
	case len(c.SkipTools) > 1000 || len(c.DisabledForAgents) > 10_000:
		return fmt.Errorf("%w: too many skipTools or disabledForAgents", ErrInvalidRequest)
	}
	if c.WorkType != "" {
		if err := engine.ValidateID(c.WorkType); err != nil {
			return fmt.Errorf("%w: workType: %v", ErrInvalidRequest, err)
		}
	}
	return nil
}

func (c InSessionConfig) withDefaults() InSessionConfig {
	d := DefaultInSessionConfig()
	if c.LatencyBudgetMs == 0 {
		c.LatencyBudgetMs = d.LatencyBudgetMs
	}
	if c.BudgetTokens == 0 {
		c.BudgetTokens = d.BudgetTokens
	}
	if c.MaxSuggestionsPerEvent == 0 {
		c.MaxSuggestionsPerEvent = d.MaxSuggestionsPerEvent
	}
	if c.WorkType == "" {
		c.WorkType = d.WorkType
	}
	if c.SkipTools == nil {
		c.SkipTools = d.SkipTools
	}
	if c.DisabledForAgents == nil {
		c.DisabledForAgents = []string{}
	}
	return c
}

// VerbEvent is the references' VerbBusEvent: one tool call of an agent.
type VerbEvent struct {
	Phase           string   `json:"phase" oas:"required,enum=pre-verb|post-verb"`
	SessionID       string   `json:"sessionId"`
	OrgID           string   `json:"orgId"`
	ProjectID       string   `json:"projectId"`
	AgentID         string   `json:"agentId"`
	Tool            string   `json:"tool" oas:"required"`
	Paths           []string `json:"paths"`
	Query           string   `json:"query"`
	EmittedAt       int64    `json:"emittedAt"`
	MemoryScope     string   `json:"memoryScope" oas:"enum=project|org|session"`
	MemoryNamespace string   `json:"memoryNamespace"`
	// Explain asks for the triplets' score parts (not in the references'
	// VerbBusEvent; kgctx's addition).
	Explain bool `json:"explain,omitempty"`
}

// Verb event limits.
const (
	MaxToolBytes  = 256
	MaxEventPaths = 256
)

// Validate checks an event; the error names the field.
func (e *VerbEvent) Validate() error {
	bad := func(f string, a ...any) error { return fmt.Errorf("%w: "+f, append([]any{ErrInvalidRequest}, a...)...) }
	switch {
	case e.Phase != "pre-verb" && e.Phase != "post-verb":
		return bad("phase %q: want pre-verb or post-verb", e.Phase)
	case e.Tool == "" || len(e.Tool) > MaxToolBytes || !utf8.ValidString(e.Tool) || hasCtl(e.Tool):
		return bad("tool must be 1 to %d bytes of UTF-8 without control characters", MaxToolBytes)
	case len(e.Paths) > MaxEventPaths:
		return bad("paths has %d entries, the limit is %d", len(e.Paths), MaxEventPaths)
	case len(e.Query) > index.MaxQueryBytes || !utf8.ValidString(e.Query):
		return bad("query must be at most %d bytes of UTF-8", index.MaxQueryBytes)
	case e.MemoryScope != "" && e.MemoryScope != "project" && e.MemoryScope != "org" && e.MemoryScope != "session":
		return bad("memoryScope %q: want project, org or session", e.MemoryScope)
	case e.ProjectID == "" && (e.MemoryScope == "" || e.MemoryScope == "project"):
		return bad("projectId is required when memoryScope is project (the default); org and session scopes may omit it")
	case len(e.MemoryNamespace) > 256 || !utf8.ValidString(e.MemoryNamespace) || hasCtl(e.MemoryNamespace):
		return bad("memoryNamespace must be at most 256 bytes of UTF-8 without control characters")
	}
	for _, p := range e.Paths {
		if p == "" || len(p) > 4096 || !utf8.ValidString(p) || hasCtl(p) {
			return bad("paths: %q must be 1 to 4096 bytes of UTF-8 without control characters", p)
		}
	}
	if e.AgentID != "" {
		if err := engine.ValidateID(e.AgentID); err != nil {
			return bad("agentId: %v", err)
		}
	}
	return nil
}

func hasCtl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// Injection outcomes.
const (
	OutcomeInjected       = "injected"
	OutcomeQueued         = "queued"
	OutcomeNoMatch        = "no-match"
	OutcomeSkipped        = "skipped"
	OutcomeBudgetExceeded = "budget-exceeded"
	OutcomeDisabled       = "disabled"
)

// InjectionResult is handleVerbEvent's answer.
type InjectionResult struct {
	Outcome        string         `json:"outcome" oas:"required,enum=injected|queued|no-match|skipped|budget-exceeded|disabled"`
	Block          string         `json:"block"`
	ObservationIDs []string       `json:"observationIds"`
	Triplets       []GraphTriplet `json:"triplets"`
	ElapsedMs      float64        `json:"elapsedMs"`
	// Pushed is false when a block matched but was not delivered
	// (runtimeInjectEnabled off, or no agent runtime to push to).
	Pushed bool   `json:"pushed"`
	Note   string `json:"note,omitempty"`
	// Duplicate: the same block was already on the session's durable queue.
	Duplicate bool `json:"duplicate,omitempty"`
}

// PendingInjection is a block kept for the agent's next turn.
type PendingInjection struct {
	Block          string    `json:"block"`
	ObservationIDs []string  `json:"observationIds"`
	QueuedAt       time.Time `json:"queuedAt"`
}

// Injector is the in-session injector: per-session memory of what was
// delivered and of blocks pending the next turn. Safe for concurrent use.
//
// The memory is bounded and not durable. At most MaxInjectorSessions
// sessions are kept (the least recently used go first, an eighth at a
// time) and at most MaxPendingPerSession blocks per session (the oldest
// go first). A restart, or an eviction, loses a session's pending blocks
// and what it was shown in-session; what the start-of-session block
// delivered is read back from the injection logs, so only in-session
// blocks can be shown a second time. Blocks pushed to a runtime go through
// the durable inject queue (engine/delivery), which survives both. In a
// cluster one node holds a session's memory: the others send it the
// session's requests (cluster.Node.RouteSession).
type Injector struct {
	C *Composer

	mu       sync.Mutex
	sessions map[sessionRef]*sessionState
	clock    uint64 // use counter: sessionState.used

	// slow, when set (tests), runs before the lookups: an artificially
	// slow store.
	slow func(ctx context.Context)
}

// sessionRef names a session: session ids are scoped by org, so two orgs
// using one id have two states.
type sessionRef struct{ org, session string }

type sessionState struct {
	delivered map[string]bool
	seeded    bool // delivered holds the start-of-session block's ids
	pending   []PendingInjection
	used      uint64 // the injector's clock at its last use
}

// queue keeps p for the next turn, dropping the oldest beyond
// MaxPendingPerSession.
func (st *sessionState) queue(p PendingInjection) {
	if len(st.pending) >= MaxPendingPerSession {
		st.pending = slices.Delete(st.pending, 0, len(st.pending)-MaxPendingPerSession+1)
	}
	st.pending = append(st.pending, p)
}

// Bounds of the injector's memory (see Injector).
const (
	MaxInjectorSessions  = 10_000
	MaxPendingPerSession = 32
)

// NewInjector returns an injector over c.
func NewInjector(c *Composer) *Injector {
	return &Injector{C: c, sessions: map[sessionRef]*sessionState{}}
}

// state returns org's session's state, made when missing; in.mu is held.
func (in *Injector) state(org, session string) *sessionState {
	k := sessionRef{org, session}
	st := in.sessions[k]
	if st == nil {
		if len(in.sessions) >= MaxInjectorSessions {
			in.evict()
		}
		st = &sessionState{delivered: map[string]bool{}}
		in.sessions[k] = st
	}
	in.clock++
	st.used = in.clock
	return st
}

// evict drops the least recently used eighth of the sessions; in.mu is
// held.
func (in *Injector) evict() {
	used := make([]uint64, 0, len(in.sessions))
	for _, st := range in.sessions {
		used = append(used, st.used)
	}
	slices.Sort(used)
	cut := used[len(used)/8]
	for k, st := range in.sessions {
		if st.used <= cut {
			delete(in.sessions, k)
		}
	}
}

// Sessions is how many sessions the injector holds state for.
func (in *Injector) Sessions() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.sessions)
}

// Forget drops org's session's in-memory state (forgetSession).
func (in *Injector) Forget(org, session string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	delete(in.sessions, sessionRef{org, session})
}

// Drain returns and clears the blocks queued for org's session's next
// turn, oldest first (drainPendingForNextTurn).
func (in *Injector) Drain(org, session string) []PendingInjection {
	in.mu.Lock()
	defer in.mu.Unlock()
	st := in.sessions[sessionRef{org, session}]
	if st == nil || len(st.pending) == 0 {
		return []PendingInjection{}
	}
	out := st.pending
	st.pending = nil
	return out
}

// delivered returns a copy of org's session's delivered set, seeding it
// from the session's injection logs (the start-of-session block) once.
func (in *Injector) delivered(org, session string) (map[string]bool, error) {
	in.mu.Lock()
	st := in.state(org, session)
	seeded := st.seeded
	in.mu.Unlock()
	if !seeded {
		logs, err := in.C.Logs.InjectionLogs(org, session)
		if err != nil {
			return nil, err
		}
		in.mu.Lock()
		for _, l := range logs {
			for _, id := range l.ObservationIDs {
				st.delivered[id] = true
			}
		}
		st.seeded = true
		in.mu.Unlock()
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return maps.Clone(st.delivered), nil
}

// Event is what an event's caller knows beyond the event: who asks, and
// how the session's agent can be reached.
type Event struct {
	VerbEvent
	Identity policy.Identity
	// SupportsMessageInjection: the session's runtime takes injects (the
	// block goes on the durable queue); otherwise it waits for the next
	// turn (drain).
	SupportsMessageInjection bool
	// LeaseProjectID is the project the session was claimed for (its
	// lease), if any: an org- or session-scoped event that names no
	// project takes its project's gates from it.
	LeaseProjectID string
}

type match struct {
	block    string
	obsIDs   []string
	triplets []GraphTriplet
	err      error
}

// Handle is handleVerbEvent. The lookup, ranking and Cedar work runs under
// the configured latency budget; past it the answer is budget-exceeded at
// once and the work is cancelled, never late.
func (in *Injector) Handle(ctx context.Context, ev Event) (InjectionResult, error) {
	start := time.Now()
	res := InjectionResult{ObservationIDs: []string{}, Triplets: []GraphTriplet{}}
	done := func(outcome string) (InjectionResult, error) {
		res.Outcome = outcome
		res.ElapsedMs = ms(time.Since(start))
		return res, nil
	}
	if err := ev.Validate(); err != nil {
		return res, err
	}
	cfg, err := in.C.Settings.InSessionConfig()
	if err != nil {
		return res, err
	}
	if slices.Contains(cfg.SkipTools, ev.Tool) {
		return done(OutcomeSkipped)
	}
	agent := cmpOrStr(ev.AgentID, ev.Identity.AgentID)
	if !cfg.Enabled || slices.Contains(cfg.DisabledForAgents, agent) {
		return done(OutcomeDisabled)
	}
	// The gates are the project's: the event's, else the session's lease's;
	// an org- or session-scoped event with neither takes the defaults.
	ten := engine.Tenant{Org: ev.OrgID, Project: cmpOrStr(ev.ProjectID, ev.LeaseProjectID)}
	mem, err := in.C.Settings.MemoryConfig(ten)
	if err != nil {
		return res, err
	}
	if !mem.MemoryEnabled {
		res.Note = "memory is disabled for the project"
		return done(OutcomeDisabled)
	}
	delivered, err := in.delivered(ev.OrgID, ev.SessionID)
	if err != nil {
		return res, err
	}
	wctx, cancel := context.WithTimeout(ctx, time.Duration(cfg.LatencyBudgetMs)*time.Millisecond)
	defer cancel()
	ch := make(chan match, 1)
	go func() { ch <- in.match(wctx, ev, cfg, delivered) }()
	var m match
	select {
	case m = <-ch:
	case <-wctx.Done():
		return done(OutcomeBudgetExceeded)
	}
	if wctx.Err() != nil {
		return done(OutcomeBudgetExceeded)
	}
	if m.err != nil {
		return res, m.err
	}
	if m.block == "" {
		return done(OutcomeNoMatch)
	}
	res.Block, res.ObservationIDs, res.Triplets = m.block, m.obsIDs, m.triplets
	outcome := OutcomeQueued
	if ev.SupportsMessageInjection {
		outcome = OutcomeInjected
	}
	if !mem.RuntimeInjectEnabled {
		res.Note = "runtimeInjectEnabled is off for the project: matched, nothing pushed"
		return done(outcome)
	}
	if ev.SupportsMessageInjection {
		_, dup, err := in.C.enqueue(ctx, delivery.Inject{SessionID: ev.SessionID, OrgID: ev.OrgID, AgentID: agent,
			Text: m.block, ObservationIDs: m.obsIDs})
		if err != nil {
			in.C.log().Warn("enqueue in-session inject; kept for the next turn instead", "session", ev.SessionID, "err", err)
			outcome = OutcomeQueued
		}
		res.Duplicate = dup
	}
	in.mu.Lock()
	st := in.state(ev.OrgID, ev.SessionID)
	for _, id := range m.obsIDs {
		st.delivered[id] = true
	}
	if outcome == OutcomeQueued {
		st.queue(PendingInjection{Block: m.block, ObservationIDs: m.obsIDs, QueuedAt: time.Now().UTC()})
	}
	in.mu.Unlock()
	res.Pushed = true
	return done(outcome)
}

// match runs the two lookups, the boosts, the filters and the rendering.
//
// Relevance is the fused rank score scaled absolutely (index.Query
// Absolute: 1 for the top hit of both the vector and the text ranking, 0.5
// for the top hit of one), and a vector hit counts only when its cosine
// similarity reaches minRelevanceScore: so a query about nothing stored
// gets no-match instead of its nearest, unrelated neighbours.
func (in *Injector) match(ctx context.Context, ev Event, cfg InSessionConfig, delivered map[string]bool) match {
	if in.slow != nil {
		in.slow(ctx)
	}
	c := in.C
	var m match
	focal := ""
	if len(ev.Paths) > 0 {
		focal = ev.Paths[0]
	}
	lookups := make([]string, 0, 2)
	for _, q := range []string{focal, strings.TrimSpace(ev.Query)} {
		if q != "" {
			lookups = append(lookups, q)
		}
	}
	if len(lookups) == 0 {
		return m
	}
	scope := engine.Tenant{Org: ev.OrgID, Project: ev.ProjectID}
	if ev.MemoryScope == "org" {
		scope.Project = ""
	}
	err := c.Store.View(func(v *engine.View) error {
		allow := v.ScopeObservations(scope)
		rel := map[uint32]float64{}
		var hits []fuse.Ranked
		if allow != nil && !allow.IsEmpty() {
			allow = in.filterAllow(v, allow, ev)
			for _, q := range lookups {
				var err error
				hits, _, err = c.Index.SearchObservations(ctx, hits, index.Query{Text: q, Org: scope.Org, Project: scope.Project,
					Allow: allow, K: 20, Absolute: true, MinSimilarity: cfg.MinRelevanceScore})
				if err != nil {
					return err
				}
				for _, h := range hits {
					rel[h.ID] = max(rel[h.ID], h.Score)
				}
			}
		}
		cands := make([]ObsCandidate, 0, len(rel))
		for id, r := range rel {
			if delivered[v.ObsID(id)] {
				continue
			}
			cands = append(cands, ObsCandidate{Dense: id, Relevance: r, Weight: v.ObsWeight(id)})
		}
		// The path boost: metadata paths first, then the content.
		pr := c.PEP.NewRequest(ev.Identity, policy.VerbRead)
		defer pr.Release()
		kept := cands[:0]
		for _, x := range cands {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if focal != "" {
				boost, err := c.pathOverlap(v, x.Dense, focal)
				if err != nil {
					return err
				}
				if boost {
					x.Relevance = min(x.Relevance+0.2, 1)
				}
			}
			if x.Relevance < cfg.MinRelevanceScore || !allowObs(pr, v, x.Dense) {
				continue
			}
			x.Score = FeedbackScore(x.Relevance, x.Weight)
			kept = append(kept, x)
		}
		SortCandidates(kept)
		top := kept[:min(len(kept), cfg.MaxSuggestionsPerEvent)]
		limit := cfg.BudgetTokens * 4
		sc := c.scratch()
		defer c.pool.Put(sc)
		obsBlock, ids := c.renderObservations(v, sc, top, limit)
		m.obsIDs = ids
		// Graph triplets for the same text, through the same Cedar filter,
		// with what the observations left.
		room := limit - utf8.RuneCountInString(obsBlock)
		if obsBlock != "" {
			room -= 2
		}
		g := &GraphBlock{Triplets: []GraphTriplet{}}
		graphOn, err := c.Settings.GraphEnabledForProject(engine.Tenant{Org: ev.OrgID, Project: cmpOrStr(ev.ProjectID, ev.LeaseProjectID)})
		if err != nil {
			return err
		}
		if graphOn && room > 0 && ev.MemoryScope != "session" {
			greq := GraphRequest{Identity: ev.Identity, Scope: engine.Tenant{Org: ev.OrgID, Project: ev.ProjectID},
				QueryText: strings.Join(lookups, " "), TopK: 3, Depth: 1}
			if err := c.prepareGraph(ctx, v, greq, sc, g); err != nil {
				return err
			}
			c.renderGraph(v, ev.Identity, sc, g, room)
			c.finishGraph(v, sc, ev.Explain, g)
		}
		parts := make([]string, 0, 2)
		if obsBlock != "" {
			parts = append(parts, obsBlock)
		}
		if g.Block != "" {
			parts = append(parts, g.Block)
		}
		m.block = strings.Join(parts, "\n\n")
		m.triplets = g.Triplets
		return nil
	})
	m.err = err
	if ctx.Err() != nil {
		m.err = nil // the caller reports budget-exceeded
	}
	return m
}

// filterAllow narrows the scope's observations to the event's session
// (memoryScope session) and namespace (exact).
func (in *Injector) filterAllow(v *engine.View, allow *roaring.Bitmap, ev Event) *roaring.Bitmap {
	if ev.MemoryScope != "session" && ev.MemoryNamespace == "" {
		return allow
	}
	out := roaring.New()
	it := allow.Iterator()
	for it.HasNext() {
		d := it.Next()
		if ev.MemoryScope == "session" && v.ObsSession(d) != ev.SessionID {
			continue
		}
		if ev.MemoryNamespace != "" && v.ObsNamespace(d) != ev.MemoryNamespace {
			continue
		}
		out.Add(d)
	}
	return out
}

// pathOverlap is boostByPathOverlap's test: a metadata path equal to the
// focal path or one ending the other, else the focal path in the content
// (its head in memory, the stored content when the head is cut short).
func (c *Composer) pathOverlap(v *engine.View, d uint32, focal string) (bool, error) {
	for _, p := range v.ObsPaths(d) {
		if p == focal || strings.HasSuffix(focal, "/"+p) || strings.HasSuffix(p, "/"+focal) {
			return true, nil
		}
	}
	head, truncated := v.ObsHead(d)
	if strings.Contains(head, focal) || !truncated {
		return strings.Contains(head, focal), nil
	}
	full, err := c.Store.ObservationContents([]uint32{d})
	if err != nil {
		return false, err
	}
	return strings.Contains(full[0], focal), nil
}
