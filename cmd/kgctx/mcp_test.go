package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// kgctx mcp, spawned as an agent spawns it, serves the tools on stdio and
// forwards them to the running server.
func TestMCPStdio(t *testing.T) {
	srv := startServe(t, t.TempDir())
	imp, agent := srv.token("org_m", "importer"), srv.token("org_m", "agent")
	if code, body, err := srv.do("POST", "/v1/orgs/org_m/projects/p/triplets", imp, "application/x-ndjson",
		[]byte(`{"source":"Router","relationship":"calls","target":"AuthMiddleware"}`+"\n")); err != nil || code != 200 {
		t.Fatalf("import: %d %s %v", code, body, err)
	}
	cmd := exec.Command(binary, "mcp", "--server", srv.url, "--project", "p")
	cmd.Env = append(os.Environ(), "KGCTX_TOKEN="+agent)
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	ctx := context.Background()
	s, err := c.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "search_triplets", Arguments: map[string]any{"subject": "Router"}})
	if err != nil {
		t.Fatal(err)
	}
	text := r.Content[0].(*sdk.TextContent).Text
	if r.IsError || !strings.Contains(text, "Router → calls → AuthMiddleware") {
		t.Fatalf("search_triplets over stdio: %v %q", r.IsError, text)
	}
	// The agent token may not write: the API's 403 comes back as a tool error.
	r, err = s.CallTool(ctx, &sdk.CallToolParams{Name: "add_triplets", Arguments: map[string]any{"triplets": []map[string]any{{"source": "A", "relationship": "calls", "target": "B"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if text := r.Content[0].(*sdk.TextContent).Text; !r.IsError || !strings.Contains(text, "forbidden") {
		t.Fatalf("an agent token wrote through MCP: %v %q", r.IsError, text)
	}
}

// serve --log-format json writes one JSON access line per request.
func TestServeLogFormatJSON(t *testing.T) {
	srv := startServe(t, t.TempDir(), "--log-format", "json")
	if code, _, err := srv.do("GET", "/healthz", "", "", nil); err != nil || code != 200 {
		t.Fatalf("healthz: %d %v", code, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(srv.stderr(), `"route":"/healthz"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no JSON access line on stderr:\n%s", srv.stderr())
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, l := range strings.Split(strings.TrimSpace(srv.stderr()), "\n") {
		if strings.Contains(l, `"msg":"request"`) && (!strings.HasPrefix(l, "{") || !strings.Contains(l, `"route":"/`) || !strings.Contains(l, `"requestId":"`)) {
			t.Fatalf("access line %s", l)
		}
	}
	if _, stderr, err := kgctx(t, nil, "serve", "--log-format", "xml"); err == nil || !strings.Contains(stderr, "want text or json") {
		t.Fatalf("--log-format xml: %v %s", err, stderr)
	}
}

// --metrics-addr serves /metrics without a token on its own listener; the
// token-protected route stays.
func TestServeMetricsAddr(t *testing.T) {
	srv := startServe(t, t.TempDir(), "--metrics-addr", "127.0.0.1:0")
	if code, _, _ := srv.do("GET", "/metrics", "", "", nil); code != 401 {
		t.Fatalf("the API's /metrics without a token: %d", code)
	}
	deadline := time.Now().Add(10 * time.Second)
	var url string
	for url == "" && time.Now().Before(deadline) {
		for _, l := range strings.Split(srv.stdout(), "\n") {
			if u, ok := strings.CutPrefix(l, "kgctx metrics on "); ok {
				url = strings.TrimSpace(u)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if url == "" {
		t.Fatalf("no metrics listener announced")
	}
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(b), "kgctx_nodes ") || !strings.Contains(string(b), "go_goroutines ") {
		t.Fatalf("metrics listener: %d %.300s", res.StatusCode, b)
	}
}
