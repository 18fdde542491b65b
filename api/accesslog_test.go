package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kgctx/kgctx/compose/service"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// One access line per request, with the request id taken or made and
// echoed; never the token or the body.
func TestAccessLog(t *testing.T) {
	var logs syncBuffer
	app, err := service.Open(context.Background(), service.Config{DataDir: filepath.Join(t.TempDir(), "data"),
		Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	s := serveApp(t, app, nil)
	tok := s.token("org_log", "importer")
	body := []byte(`{"source":"SecretSauce","relationship":"calls","target":"Billing"}` + "\n")
	req := func(id string) resp {
		r, err := http.NewRequest("POST", s.url+"/v1/orgs/org_log/projects/p/triplets", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Authorization", "Bearer "+tok)
		r.Header.Set("Content-Type", "application/x-ndjson")
		r.Header.Set("X-Request-Id", id)
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return resp{status: res.StatusCode, header: res.Header}
	}
	r := req("req-123")
	if r.status != 200 || r.header.Get("X-Request-Id") != "req-123" {
		t.Fatalf("taken id: %d %q", r.status, r.header.Get("X-Request-Id"))
	}
	made := req("bad id with spaces").header.Get("X-Request-Id")
	if !validRequestID(made) || made == "bad id with spaces" {
		t.Fatalf("made id %q", made)
	}
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "request" {
			lines = append(lines, m)
		}
	}
	found := map[string]bool{}
	for _, m := range lines {
		if m["route"] == "/v1/orgs/:org/projects/:project/triplets" {
			found[m["requestId"].(string)] = true
			if m["method"] != "POST" || m["status"] != float64(200) || m["org"] != "org_log" || m["bytes"].(float64) <= 0 || m["durationMs"] == nil {
				t.Errorf("access line %v", m)
			}
		}
	}
	if !found["req-123"] || !found[made] {
		t.Fatalf("access lines %v, want ids req-123 and %s", lines, made)
	}
	if all := logs.String(); strings.Contains(all, tok) || strings.Contains(all, "SecretSauce") {
		t.Fatalf("the log holds the token or the body:\n%s", all)
	}
}

// Made-up methods are one label value ("other"), and an error answer's
// bytes are counted in the access log.
func TestMetricsBoundedAndErrorBytes(t *testing.T) {
	var logs syncBuffer
	app, err := service.Open(context.Background(), service.Config{DataDir: filepath.Join(t.TempDir(), "data"),
		Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	s := serveApp(t, app, nil)
	for i := range 200 {
		r, err := http.NewRequest(fmt.Sprintf("MADEUP%d", i), s.url+"/v1/whoami", nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	m := s.do("GET", "/metrics", s.admin, "", nil)
	if strings.Contains(string(m.body), "MADEUP") {
		t.Fatal("a made-up method became a label value")
	}
	series := 0
	for _, l := range strings.Split(string(m.body), "\n") {
		if strings.HasPrefix(l, "kgctx_http_request_duration_seconds_count") && strings.Contains(l, `method="other"`) {
			series++
		}
	}
	if series != 1 {
		t.Fatalf("%d series of method other, want 1:\n%s", series, m.body)
	}
	// An error answer's size is in its access line.
	if r := s.do("GET", "/v1/whoami", "", "", nil); r.status != 401 {
		t.Fatalf("no token: %d", r.status)
	}
	ok := false
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "request" && m["status"] == float64(401) {
			ok = m["bytes"].(float64) > 0
		}
	}
	if !ok {
		t.Fatalf("no access line of the 401 with its bytes:\n%s", logs.String())
	}
}
