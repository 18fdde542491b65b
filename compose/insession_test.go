package compose

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kgctx/kgctx/engine"
)

func ev(tool string, paths []string, query string) Event {
	return Event{VerbEvent: VerbEvent{Phase: "pre-verb", SessionID: "ses_live", OrgID: "org_a", ProjectID: "proj_1", AgentID: "agent_dev",
		Tool: tool, Paths: paths, Query: query}, Identity: agent("org_a")}
}

func newInjectorEnv(t *testing.T) (*env, *Injector) {
	e := newSessionEnv(t)
	ctx := context.Background()
	_, err := e.st.AddObservations(ctx, tenA, []engine.ObservationInput{
		{Content: "The router retries twice on 503", Metadata: engine.ObservationMeta{Paths: []string{"pkg/http/router.go"}, Namespace: "backend", SessionID: "ses_live"}},
		{Content: "Never log tokens in pkg/auth/mw.go", Metadata: engine.ObservationMeta{Namespace: "backend"}},
		{Content: "Frontend build uses vite", Metadata: engine.ObservationMeta{Paths: []string{"web/vite.config.ts"}, Namespace: "frontend"}},
		{Content: "router timeouts are configured in one place", Metadata: engine.ObservationMeta{Namespace: "backend"}},
	}, engine.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.load(t, tenA, engine.TripletInput{Source: "Router", Relationship: "calls", Target: "AuthMiddleware"})
	return e, NewInjector(e.c)
}

func TestInjectorOutcomes(t *testing.T) {
	e, in := newInjectorEnv(t)
	ctx := context.Background()
	must := func(r InjectionResult, err error) InjectionResult {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := must(in.Handle(ctx, ev("TodoWrite", nil, "router"))); r.Outcome != OutcomeSkipped {
		t.Fatalf("skip: %+v", r)
	}
	// Queued (no live injection), path boost lets the router note through.
	r := must(in.Handle(ctx, ev("Edit", []string{"pkg/http/router.go"}, "")))
	if r.Outcome != OutcomeQueued || !r.Pushed || !strings.Contains(r.Block, "retries twice") || Tokens(r.Block) > 200 {
		t.Fatalf("queued: %+v", r)
	}
	first := r.ObservationIDs
	// The same event again: the delivered observation is not repeated.
	r = must(in.Handle(ctx, ev("Edit", []string{"pkg/http/router.go"}, "")))
	for _, id := range r.ObservationIDs {
		for _, f := range first {
			if id == f {
				t.Fatalf("observation %s repeated", id)
			}
		}
	}
	// Drain returns the pending blocks in order, then nothing.
	p := in.Drain("org_a", "ses_live")
	if len(p) < 1 || p[0].Block == "" {
		t.Fatalf("drain: %+v", p)
	}
	if len(in.Drain("org_a", "ses_live")) != 0 {
		t.Fatal("drain did not clear")
	}
	// Injected: on the durable queue.
	in.Forget("org_a", "ses_live")
	x := ev("Read", []string{"pkg/auth/mw.go"}, "logging tokens")
	x.SupportsMessageInjection = true
	r = must(in.Handle(ctx, x))
	if r.Outcome != OutcomeInjected || !r.Pushed {
		t.Fatalf("injected: %+v", r)
	}
	q, _ := e.c.Delivery.PendingInjects("org_a", "ses_live")
	if len(q) != 1 || q[0].Text != r.Block {
		t.Fatalf("durable queue: %+v", q)
	}
	// No match for an unrelated query.
	if r := must(in.Handle(ctx, ev("Bash", nil, "kubernetes helm chart"))); r.Outcome != OutcomeNoMatch {
		t.Fatalf("no-match: %+v", r)
	}
	// Disabled: globally and per agent.
	cfg := DefaultInSessionConfig()
	cfg.DisabledForAgents = []string{"agent_dev"}
	e.c.Settings.SetInSessionConfig(cfg)
	if r := must(in.Handle(ctx, ev("Edit", []string{"pkg/http/router.go"}, ""))); r.Outcome != OutcomeDisabled {
		t.Fatalf("disabled agent: %+v", r)
	}
	cfg = DefaultInSessionConfig()
	cfg.Enabled = false
	e.c.Settings.SetInSessionConfig(cfg)
	if r := must(in.Handle(ctx, ev("Edit", []string{"pkg/http/router.go"}, ""))); r.Outcome != OutcomeDisabled {
		t.Fatalf("disabled: %+v", r)
	}
	e.c.Settings.SetInSessionConfig(DefaultInSessionConfig())
	// runtimeInjectEnabled off: matched, nothing pushed.
	in.Forget("org_a", "ses_live")
	e.c.Settings.SetMemoryConfig(tenA, MemoryConfig{MemoryEnabled: true, GraphEnabled: true, RuntimeInjectEnabled: false})
	r = must(in.Handle(ctx, ev("Edit", []string{"pkg/http/router.go"}, "")))
	if r.Pushed || r.Block == "" || r.Note == "" || len(in.Drain("org_a", "ses_live")) != 0 {
		t.Fatalf("runtime inject off: %+v", r)
	}
}

func TestInjectorScopesAndStartOfSession(t *testing.T) {
	e, in := newInjectorEnv(t)
	ctx := context.Background()
	// Namespace: exact.
	x := ev("Read", nil, "vite build router")
	x.MemoryNamespace = "frontend"
	r, _ := in.Handle(ctx, x)
	if strings.Contains(r.Block, "router") || !strings.Contains(r.Block, "vite") {
		t.Fatalf("namespace: %q", r.Block)
	}
	// Session scope: only observations stamped with the session.
	in.Forget("org_a", "ses_live")
	x = ev("Read", nil, "router timeouts retries")
	x.MemoryScope = "session"
	r, _ = in.Handle(ctx, x)
	if !strings.Contains(r.Block, "retries twice") || strings.Contains(r.Block, "configured in one place") {
		t.Fatalf("session scope: %q", r.Block)
	}
	// Observations of the start-of-session block are never repeated.
	in.Forget("org_a", "ses_start")
	b, err := e.c.SessionBlock(ctx, SessionRequest{SessionID: "ses_start", WorkType: WorkBugFix, Scope: tenA, Identity: agent("org_a"), QueryText: "router retries"})
	if err != nil || len(b.ObservationIDs) == 0 {
		t.Fatalf("start block: %+v %v", b, err)
	}
	y := ev("Edit", []string{"pkg/http/router.go"}, "router retries")
	y.SessionID = "ses_start"
	r, _ = in.Handle(ctx, y)
	for _, id := range r.ObservationIDs {
		for _, s := range b.ObservationIDs {
			if id == s {
				t.Fatalf("start-of-session observation %s injected again", id)
			}
		}
	}
	// Another org's identity sees nothing of this org.
	z := ev("Edit", []string{"pkg/http/router.go"}, "router")
	z.Identity = agent("org_b")
	z.SessionID = "ses_other"
	if r, _ := in.Handle(ctx, z); r.Outcome != OutcomeNoMatch {
		t.Fatalf("other org: %+v", r)
	}
}

func TestInjectorLatencyBudget(t *testing.T) {
	_, in := newInjectorEnv(t)
	cfg := DefaultInSessionConfig()
	cfg.LatencyBudgetMs = 30
	in.C.Settings.SetInSessionConfig(cfg)
	cancelled := make(chan bool, 1)
	in.slow = func(ctx context.Context) {
		select {
		case <-ctx.Done():
			cancelled <- true
		case <-time.After(2 * time.Second):
			cancelled <- false
		}
	}
	start := time.Now()
	r, err := in.Handle(context.Background(), ev("Edit", []string{"pkg/http/router.go"}, "router"))
	el := time.Since(start)
	if err != nil || r.Outcome != OutcomeBudgetExceeded {
		t.Fatalf("slow store: %+v %v", r, err)
	}
	if el > 500*time.Millisecond {
		t.Fatalf("answered after %s, not at the budget", el)
	}
	if !<-cancelled {
		t.Fatal("the abandoned work was not cancelled")
	}
}

func TestVerbEventValidate(t *testing.T) {
	good := ev("Edit", []string{"a.go"}, "q").VerbEvent
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]func(e *VerbEvent){
		"phase":     func(e *VerbEvent) { e.Phase = "during" },
		"long tool": func(e *VerbEvent) { e.Tool = strings.Repeat("t", 257) },
		"no tool":   func(e *VerbEvent) { e.Tool = "" },
		"10k paths": func(e *VerbEvent) { e.Paths = make([]string, 10_000) },
		"scope":     func(e *VerbEvent) { e.MemoryScope = "world" },
		"namespace": func(e *VerbEvent) { e.MemoryNamespace = "a\nb" },
	} {
		e := good
		m(&e)
		if err := e.Validate(); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

// The injector's memory is bounded: the least recently used sessions go
// first, and a session keeps its newest pending blocks.
func TestInjectorBounds(t *testing.T) {
	_, in := newInjectorEnv(t)
	in.mu.Lock()
	for i := range MaxInjectorSessions + 10 {
		in.state("org_a", fmt.Sprintf("ses_%d", i))
		in.state("org_a", "ses_keep") // used all along
	}
	n := len(in.sessions)
	_, keep := in.sessions[sessionRef{"org_a", "ses_keep"}]
	_, first := in.sessions[sessionRef{"org_a", "ses_0"}]
	_, last := in.sessions[sessionRef{"org_a", fmt.Sprintf("ses_%d", MaxInjectorSessions+9)}]
	in.mu.Unlock()
	if n > MaxInjectorSessions || !keep || first || !last {
		t.Fatalf("sessions %d (max %d), recent kept %v, oldest kept %v, newest kept %v", n, MaxInjectorSessions, keep, first, last)
	}
	var st sessionState
	for i := range MaxPendingPerSession + 5 {
		st.queue(PendingInjection{Block: fmt.Sprint(i)})
	}
	if len(st.pending) != MaxPendingPerSession || st.pending[0].Block != "5" || st.pending[len(st.pending)-1].Block != fmt.Sprint(MaxPendingPerSession+4) {
		t.Fatalf("pending %d, first %q", len(st.pending), st.pending[0].Block)
	}
}
