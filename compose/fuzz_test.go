package compose

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/engine"
)

// rendererSeeds is the seed corpus of the renderer fuzz tests: the attack
// strings as names and texts, line and paragraph separators, bidi
// controls, ordered-list and fence look-alikes, empty and over-long input.
func rendererSeeds(f *testing.F) {
	for _, a := range attacks {
		f.Add(a, "related_to", a+" observed")
		f.Add("node", "calls", a)
	}
	f.Add("1. x", "depends_on", "---")
	f.Add("```", "calls", "```go\nfmt.Println()\n```")
	f.Add("a\u2028b\u2029c\u0085d", "rel\nx", "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069 bidi")
	f.Add("", "", "")
	f.Add(strings.Repeat("#", 400), "calls", strings.Repeat("- ", 300))
	f.Add("12345678901.", "calls", "9) nine")
	f.Add("\\# already escaped", "calls", "\\")
}

// FuzzRenderers feeds untrusted names, relationships and texts to the
// renderers and checks each holds exactly the lines its format intends
// (see shape_test.go): a graph line, an observation line, and the Graph
// RAG layout (entry lines, content lines, expanded lines) at a roomy and a
// tight budget. These are pure, so the fuzzer runs fast;
// FuzzRenderersStore drives the same inputs through a store and every
// block type. `go test` runs both seed corpora; explore with
// `go test -run '^$' -fuzz '^FuzzRenderers$' ./compose`.
func FuzzRenderers(f *testing.F) {
	rendererSeeds(f)
	f.Fuzz(func(t *testing.T, name, rel, content string) {
		checkPureRenderers(t, name, rel, content)
	})
}

// FuzzRenderersStore loads each input into a fresh project of an
// in-memory store (as node names, a relationship, observation text) and
// checks the graph block, the session block, Graph RAG and the in-session
// injector's block. Slower (the text index takes every input), so it is a
// separate target.
func FuzzRenderersStore(f *testing.F) {
	rendererSeeds(f)
	e := newEnv(f)
	e.c.Settings = NewSettings(e.st)
	cfg := DefaultInSessionConfig()
	cfg.LatencyBudgetMs, cfg.MinRelevanceScore = 10_000, 0.01
	if err := e.c.Settings.SetInSessionConfig(cfg); err != nil {
		f.Fatal(err)
	}
	in := NewInjector(e.c)
	iter := 0
	f.Fuzz(func(t *testing.T, name, rel, content string) {
		iter++
		checkStoreRenderers(t, e, in, fmt.Sprintf("f%d", iter), name, rel, content)
	})
}

// checkPureRenderers checks the renderers that need no store.
func checkPureRenderers(t *testing.T, name, rel, content string) {
	var ln lineBuf
	s, r, d := graphLine(&ln, name, rel, content)
	line := string(ln.b)
	item, ok := strings.CutPrefix(line, "- ")
	want := Sanitize(name, MaxNameRunes) + " → " + Sanitize(rel, MaxNameRunes) + " → " + Sanitize(content, MaxNameRunes)
	if !ok || strings.Contains(line, "\n") || startsBlock(item) || item != escaped(Sanitize(name, MaxNameRunes))+" → "+Sanitize(rel, MaxNameRunes)+" → "+Sanitize(content, MaxNameRunes) {
		t.Fatalf("graph line %q, want the item %q", line, want)
	}
	if s.plain(line) != Sanitize(name, MaxNameRunes) || r.plain(line) != Sanitize(rel, MaxNameRunes) || d.plain(line) != Sanitize(content, MaxNameRunes) {
		t.Fatalf("graph line parts of %q", line)
	}
	// A code map's file line and symbol line: one line each, the path
	// neither a block nor a list item, the signature after trusted
	// markup.
	fileLine(&ln, name)
	if fl := string(ln.b); strings.Contains(fl, "\n") || !strings.HasSuffix(fl, ":") || startsBlock(fl) || listMarker.MatchString(fl) ||
		strings.ReplaceAll(fl, `\`, "") != strings.ReplaceAll(Sanitize(name, MaxNameRunes), `\`, "")+":" {
		t.Fatalf("file line %q of %q", fl, name)
	}
	symLine(&ln, 42, content)
	if sl := string(ln.b); sl != "  42│ "+Sanitize(content, maxSignatureRunes) {
		t.Fatalf("symbol line %q of %q", sl, content)
	}
	observationLine(&ln, name, content, 0.5)
	if got, want := string(ln.b), "- ["+Sanitize(name, MaxNameRunes)+"] "+Sanitize(content, MaxExcerptRunes)+" (weight: 0.50)"; got != want {
		t.Fatalf("observation line %q, want %q", got, want)
	}
	c := &Composer{}
	sc := c.scratch()
	for _, limit := range []int{1 << 20, 20 + (len(name)+3*len(content))%300} {
		b := &RAGBlock{
			Semantic: []RAGSemantic{{Kind: "observation", ID: name, Content: content, Score: 0.9},
				{Kind: "node", ID: "n-1", Content: name + ": " + content, Score: 0.8},
				{Kind: "observation", ID: "o-2", Content: name, Score: 0.7}},
			Expanded: []RAGExpanded{{Node: name, Predicate: rel, Origin: content, Score: 0.5},
				{Node: content, Predicate: "related_to", Origin: name, Score: 0.4}, {Node: name, Predicate: rel, Origin: name, Score: 0.3}},
		}
		c.renderRAG(sc, limit, b)
		checkRAGShape(t, b)
		if l := repeatedLine(b.Block); l != "" {
			t.Fatalf("RAG block repeats %q:\n%s", l, b.Block)
		}
		if n := len([]rune(b.Block)); n > limit {
			t.Fatalf("RAG block of %d code points, limit %d", n, limit)
		}
	}
}

// checkStoreRenderers loads the input into a fresh project of org_a and
// checks the four store-level blocks. Input the store refuses (an empty
// name, a relationship that normalises to nothing) is tried with a valid
// relationship, then left out.
func checkStoreRenderers(t *testing.T, e *env, in *Injector, project, name, rel, content string) {
	ctx := context.Background()
	ten := engine.Tenant{Org: "org_a", Project: project}
	triplets := func(rel string) []engine.TripletInput {
		return []engine.TripletInput{
			{Source: name, Relationship: rel, Target: "anchor_node", Weight: w(0.9)},
			{Source: "anchor_node", Relationship: "related_to", Target: content, Weight: w(0.8)},
			{Source: name + " anchor_node", Relationship: "related_to", Target: "anchor_node", Weight: w(0.7)},
		}
	}
	if _, err := e.st.Import(ctx, ten, triplets(rel), engine.ImportOptions{}); err != nil {
		if _, err := e.st.Import(ctx, ten, triplets("related_to"), engine.ImportOptions{}); err != nil {
			return
		}
	}
	if _, err := e.st.AddObservations(ctx, ten, []engine.ObservationInput{{Content: content + "\nanchor_node"}, {Content: name + "\nanchor_node"}},
		engine.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	// The same names as a code graph: the name a file path, the content a
	// signature (what the store accepts of them).
	code := engine.Tenant{Org: "org_a", Project: project + "_code"}
	_, codeErr := e.st.Import(ctx, code, []engine.TripletInput{
		{Source: name, Relationship: "defines", Target: "pkg.anchor_node", TargetExact: true, SourceExact: true,
			SourceLocation: &engine.Location{File: name, Line: 1, EndLine: 90},
			TargetLocation: &engine.Location{File: name, Line: 7, EndLine: 60}, TargetSignature: content},
		{Source: "pkg.anchor_node", Relationship: "calls", Target: "pkg.callee", SourceExact: true, TargetExact: true,
			TargetLocation: &engine.Location{File: content, Line: 3, EndLine: 30}, TargetSignature: name}}, engine.ImportOptions{})
	scopes := []engine.Tenant{ten, code}
	if codeErr != nil {
		scopes = scopes[:1] // input the store refuses as a path or signature
	}
	id := agent("org_a")
	on := true
	for _, sc := range scopes {
		g, err := e.c.GraphBlock(ctx, GraphRequest{Identity: id, Scope: sc, QueryText: "anchor_node", BudgetTokens: 2000, TopK: 5, Depth: 2, CodeMap: &on})
		if err != nil {
			t.Fatal(err)
		}
		if g.Block == "" {
			if sc == code {
				continue
			}
			t.Fatalf("no graph block for %q %q %q", name, rel, content)
		}
		graph, cmap := splitCodeMap(g.Block)
		if cmap != "" {
			checkCodeMapPart(t, cmap, g.CodeMap)
		}
		if graph != "" {
			checkGraphPart(t, graph, g.Triplets)
		}
		if l := repeatedLine(g.Block); l != "" {
			t.Fatalf("block repeats %q:\n%s", l, g.Block)
		}
	}
	g, err := e.c.GraphBlock(ctx, GraphRequest{Identity: id, Scope: ten, QueryText: "anchor_node", BudgetTokens: 2000, TopK: 5, Depth: 2})
	if err != nil {
		t.Fatal(err)
	}
	s, err := e.c.SessionBlock(ctx, SessionRequest{SessionID: "ses_" + project, WorkType: WorkBugFix, Scope: ten, Identity: id,
		QueryText: "anchor_node", Graph: true})
	if err != nil {
		t.Fatal(err)
	}
	checkTwoParts(t, s.Block, s.ObservationIDs, nil, len(s.GraphEdgeKeys))
	if l := repeatedLine(s.Block); l != "" {
		t.Fatalf("session block repeats %q:\n%s", l, s.Block)
	}
	r, err := e.c.RAG(ctx, RAGRequest{Identity: id, Scope: ten, QueryText: "anchor_node", TopK: 10})
	if err != nil {
		t.Fatal(err)
	}
	checkRAGShape(t, r)
	x := Event{VerbEvent: VerbEvent{Phase: "pre-verb", SessionID: "live_" + project, OrgID: "org_a", ProjectID: project, Tool: "Edit",
		Query: "anchor_node"}, Identity: id}
	res, err := in.Handle(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	checkTwoParts(t, res.Block, res.ObservationIDs, res.Triplets, len(res.Triplets))
	for _, b := range []string{g.Block, r.Block, res.Block} {
		if l := repeatedLine(b); l != "" {
			t.Fatalf("block repeats %q:\n%s", l, b)
		}
	}
}
