package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgctx/kgctx/api"
	"github.com/kgctx/kgctx/api/apitest"
	"github.com/kgctx/kgctx/api/client"
	"github.com/kgctx/kgctx/api/mcp"
	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/auth"
)

// server starts a real kgctx server on loopback and returns its URL, its
// App and a token maker.
func server(t *testing.T) (*apitest.Server, *service.App, func(org, role string, projects ...string) string) {
	t.Helper()
	s := apitest.Start(t, api.Config{Version: "test"})
	return s, s.App, func(org, role string, projects ...string) string {
		return s.Token(org, "agent_"+role, role, projects...)
	}
}

type bearer struct {
	tok  string
	base http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return b.base.RoundTrip(r)
}

// overHTTP connects the SDK's client to /mcp with tok.
func overHTTP(t *testing.T, srv *apitest.Server, tok string) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	s, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{tok, srv.HTTP.Transport}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// overPipe connects the SDK's client to NewServer, the server kgctx mcp
// runs on stdio, over an in-memory pipe: the same tools forwarding to the
// server over HTTP.
func overPipe(t *testing.T, srv *apitest.Server, tok string, o mcp.Options) *sdk.ClientSession {
	t.Helper()
	cl, err := client.New(srv.URL, tok, srv.HTTP)
	if err != nil {
		t.Fatal(err)
	}
	ct, st := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	go mcp.NewServer(cl, o).Run(ctx, st)
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	s, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); cancel() })
	return s
}

func call(t *testing.T, s *sdk.ClientSession, name string, args map[string]any) (*sdk.CallToolResult, string) {
	t.Helper()
	r, err := s.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	var text strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	return r, text.String()
}

func TestToolsOverBothTransports(t *testing.T) {
	srv, app, token := server(t)
	admin := token("org_a", auth.RoleOrgAdmin, "p1")
	for name, s := range map[string]*sdk.ClientSession{
		"http":  overHTTP(t, srv, admin),
		"stdio": overPipe(t, srv, admin, mcp.Options{}),
	} {
		t.Run(name, func(t *testing.T) {
			tools, err := s.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range tools.Tools {
				names = append(names, tl.Name)
				if tl.Description == "" || tl.InputSchema == nil {
					t.Errorf("%s: no description or schema", tl.Name)
				}
			}
			slices.Sort(names)
			want := []string{"add_observations", "add_triplets", "delete_observation", "graph_context", "rag_context", "record_tool_result",
				"search_observations", "search_triplets", "session_context", "session_feedback", "update_observation"}
			if !slices.Equal(names, want) {
				t.Fatalf("tools %v, want %v", names, want)
			}
			session := "ses_" + name
			if r, text := call(t, s, "add_triplets", map[string]any{"triplets": []map[string]any{
				{"source": "AuthMiddleware", "relationship": "calls", "target": "AuthService"},
				{"source": "AuthService", "relationship": "depends_on", "target": "PostgresDB"}}}); r.IsError {
				t.Fatalf("add_triplets: %s", text)
			}
			if r, text := call(t, s, "add_observations", map[string]any{"observations": []map[string]any{
				{"content": "Auth middleware rejects expired tokens", "paths": []string{"pkg/auth/mw.go"}}}}); r.IsError {
				t.Fatalf("add_observations: %s", text)
			}
			if err := app.Store.Sync(context.Background()); err != nil {
				t.Fatal(err)
			}
			r, text := call(t, s, "graph_context", map[string]any{"query": "auth middleware"})
			if r.IsError || !strings.Contains(text, "- AuthMiddleware → calls → AuthService") || r.StructuredContent == nil {
				t.Fatalf("graph_context: %v %s", r.IsError, text)
			}
			if r, text := call(t, s, "session_context", map[string]any{"sessionId": session, "workType": "bug_fix",
				"workItem": map[string]any{"title": "auth middleware rejects tokens"}}); r.IsError || !strings.Contains(text, "expired tokens") {
				t.Fatalf("session_context: %s", text)
			}
			if r, text := call(t, s, "rag_context", map[string]any{"query": "auth middleware"}); r.IsError || text == "" {
				t.Fatalf("rag_context: %s", text)
			}
			if r, text := call(t, s, "search_triplets", map[string]any{"subject": "AuthService"}); r.IsError || !strings.Contains(text, "AuthService → depends_on → PostgresDB") {
				t.Fatalf("search_triplets: %s", text)
			}
			if r, text := call(t, s, "record_tool_result", map[string]any{"sessionId": session, "tool": "go_test", "success": false, "error": "nil pointer in mw.go"}); r.IsError {
				t.Fatalf("record_tool_result: %s", text)
			}
			if r, text := call(t, s, "session_feedback", map[string]any{"sessionId": session, "outcome": "helpful"}); r.IsError {
				t.Fatalf("session_feedback: %s", text)
			}
			// Bad arguments: a tool error with the API's code, nothing changed.
			before, _ := app.Store.Stats(engine.Tenant{Org: "org_a", Project: "p1"})
			for _, bad := range []struct {
				tool string
				args map[string]any
				code string
			}{
				{"graph_context", map[string]any{"query": "auth", "budget": 99999}, "invalid"},
				{"add_triplets", map[string]any{"triplets": []map[string]any{{"source": "A", "relationship": "", "target": "B"}}}, "invalid"},
				{"add_triplets", map[string]any{"triplets": []map[string]any{}}, "invalid_field"},
				{"session_feedback", map[string]any{"sessionId": session, "outcome": "great"}, "invalid"},
				{"search_triplets", map[string]any{"subject": "x", "org": "org_b"}, "forbidden"},
			} {
				r, text := call(t, s, bad.tool, bad.args)
				if !r.IsError || !strings.Contains(text, bad.code) {
					t.Errorf("%s %v: error %v, %q", bad.tool, bad.args, r.IsError, text)
				}
			}
			after, _ := app.Store.Stats(engine.Tenant{Org: "org_a", Project: "p1"})
			if before.Triplets != after.Triplets || before.Nodes != after.Nodes {
				t.Errorf("bad calls changed the store: %+v -> %+v", before, after)
			}
		})
	}
	// Another org's token sees nothing of org_a, over either transport.
	other := token("org_b", auth.RoleAgent, "p1")
	for name, s := range map[string]*sdk.ClientSession{"http": overHTTP(t, srv, other), "stdio": overPipe(t, srv, other, mcp.Options{})} {
		if r, text := call(t, s, "graph_context", map[string]any{"query": "auth middleware"}); r.IsError || strings.Contains(text, "Auth") {
			t.Errorf("%s: org_b's graph_context shows org_a: %s", name, text)
		}
		if r, text := call(t, s, "search_triplets", map[string]any{"subject": "AuthService", "org": "org_a"}); !r.IsError || !strings.Contains(text, "forbidden") {
			t.Errorf("%s: org_b searched org_a: %s", name, text)
		}
	}
	// No token, or a wrong one: /mcp is refused like every route.
	for _, tok := range []string{"", "kgx_not_a_token"} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		res, err := srv.HTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("token %q: %d, want 401", tok, res.StatusCode)
		}
	}
}

// Transport errors of POST /mcp (a wrong Accept, a body that is not
// JSON-RPC, a GET) answer JSON: the API's error body or a JSON-RPC error,
// never plain text.
func TestTransportErrorsAreJSON(t *testing.T) {
	srv, _, token := server(t)
	tok := token("org_m", "agent")
	for _, c := range []struct {
		name, method, accept, ctype, body string
	}{
		{"wrong accept", "POST", "text/html", "application/json", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
		{"not json", "POST", "application/json, text/event-stream", "application/json", `hello`},
		{"json, not json-rpc", "POST", "application/json, text/event-stream", "application/json", `{"hello": "world"}`},
		{"wrong content type", "POST", "application/json, text/event-stream", "text/plain", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
		{"empty batch", "POST", "application/json, text/event-stream", "application/json", `[]`},
	} {
		req, err := http.NewRequest(c.method, srv.URL+"/mcp", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Accept", c.accept)
		req.Header.Set("Content-Type", c.ctype)
		res, err := srv.HTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var v struct {
			Error json.RawMessage `json:"error"`
		}
		if res.StatusCode < 400 && !strings.Contains(string(b), `"error"`) {
			t.Errorf("%s: %d %s: not an error", c.name, res.StatusCode, b)
			continue
		}
		if !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") || json.Unmarshal(b, &v) != nil || len(v.Error) == 0 {
			t.Errorf("%s: %d %q %s: not a JSON error", c.name, res.StatusCode, res.Header.Get("Content-Type"), b)
		}
	}
}

// A block's warnings reach the agent as a second text.
func TestToolsPassWarnings(t *testing.T) {
	srv, _, token := server(t)
	s := overHTTP(t, srv, token("org_w", "agent"))
	r, text := call(t, s, "session_context", map[string]any{"sessionId": "ses_1", "workType": "bugfix", "project": "nothing_here"})
	if r.IsError || len(r.Content) != 2 || !strings.Contains(text, "warning: workType bugfix is not configured") || !strings.Contains(text, "warning: project nothing_here holds no") {
		t.Fatalf("warnings not passed on: %v %q", r.IsError, text)
	}
}

// Required arrays are typed "array" in the tools' schemas, never
// ["null", "array"], in and out.
func TestToolSchemasTypeRequiredArrays(t *testing.T) {
	srv, _, token := server(t)
	s := overHTTP(t, srv, token("org_s", "agent"))
	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	var walk func(tool, where string, sc map[string]any)
	walk = func(tool, where string, sc map[string]any) {
		props, _ := sc["properties"].(map[string]any)
		req, _ := sc["required"].([]any)
		for _, r := range req {
			p, _ := props[r.(string)].(map[string]any)
			if ts, ok := p["type"].([]any); ok {
				t.Errorf("%s %s.%s: type %v", tool, where, r, ts)
			}
			if p["type"] == "array" {
				checked++
			}
		}
		for name, p := range props {
			if pm, ok := p.(map[string]any); ok {
				walk(tool, where+"."+name, pm)
				if it, ok := pm["items"].(map[string]any); ok {
					walk(tool, where+"."+name+"[]", it)
				}
			}
		}
	}
	for _, tool := range res.Tools {
		for what, sc := range map[string]any{"input": tool.InputSchema, "output": tool.OutputSchema} {
			b, _ := json.Marshal(sc)
			var m map[string]any
			json.Unmarshal(b, &m)
			walk(tool.Name, what, m)
		}
	}
	if checked < 3 {
		t.Fatalf("only %d required arrays seen", checked)
	}
}
