package api

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// fuzzRoutes are the routes that decode a body, with a valid body each
// (the seed corpus) and the method they take.
var fuzzRoutes = []struct {
	method, path, ctype, body string
}{
	{http.MethodPost, "/v1/context/graph", "application/json", `{"orgId":"org_f","projectId":"p","queryText":"auth","budgetTokens":100}`},
	{http.MethodPost, "/v1/context/session", "application/json", `{"orgId":"org_f","projectId":"p","sessionId":"s1","workType":"bug_fix"}`},
	{http.MethodPost, "/v1/context/rag", "application/json", `{"orgId":"org_f","projectId":"p","queryText":"auth"}`},
	{http.MethodPost, "/v1/orgs/org_f/projects/p/triplets", "application/x-ndjson", `{"source":"A","relationship":"calls","target":"B"}`},
	{http.MethodPost, "/v1/orgs/org_f/projects/p/triplets", "text/tab-separated-values", "A\tcalls\tB\n"},
	{http.MethodPost, "/v1/orgs/org_f/projects/p/triplets", "text/csv", "source,relationship,target\nA,calls,B\n"},
	{http.MethodPost, "/v1/orgs/org_f/projects/p/triplets", "application/n-triples", "<A> <calls> <B> .\n"},
	{http.MethodPost, "/v1/orgs/org_f/projects/p/observations", "application/json", `{"content":"note"}`},
	{http.MethodPut, "/v1/orgs/org_f/projects/p/predicates", "application/json", `{"mode":"open"}`},
	{http.MethodPut, "/v1/orgs/org_f/projects/p/memory-config", "application/json", `{"memoryEnabled":true}`},
	{http.MethodPost, "/v1/injection-logs", "application/json", `{"orgId":"org_f","projectId":"p","sessionId":"s1"}`},
	{http.MethodPost, "/v1/sessions/s1/feedback", "application/json", `{"orgId":"org_f","outcome":"success"}`},
	{http.MethodPost, "/v1/sessions/s1/claim", "application/json", `{"orgId":"org_f","projectId":"p","workerId":"w","leaseSeconds":30}`},
	{http.MethodPost, "/v1/sessions/s1/refresh", "application/json", `{"orgId":"org_f","workerId":"w"}`},
	{http.MethodPost, "/v1/sessions/s1/injects", "application/json", `{"orgId":"org_f","block":"- x"}`},
	{http.MethodPost, "/v1/sessions/s1/verb-events", "application/json", `{"orgId":"org_f","projectId":"p","phase":"pre-verb","tool":"Edit"}`},
	{http.MethodPost, "/v1/sessions/s1/tool-results", "application/json", `{"orgId":"org_f","projectId":"p","tool":"go","success":false,"error":"boom"}`},
	{http.MethodPut, "/v1/admin/budgets", "application/json", `{}`},
	{http.MethodPut, "/v1/admin/policies", "text/plain", `permit(principal, action, resource);`},
}

// FuzzRequestDecoding sends arbitrary bodies and content types to every
// route that decodes a body, through the real server: the answer is
// never a 5xx (no panic, no internal error), and a refusal is one of the
// API's request errors.
func FuzzRequestDecoding(f *testing.F) {
	for i, r := range fuzzRoutes {
		f.Add(uint8(i), r.ctype, []byte(r.body))
		f.Add(uint8(i), r.ctype, []byte(r.body[:len(r.body)/2]))
		f.Add(uint8(i), "application/json", []byte(`{"unknown":1}`))
		f.Add(uint8(i), "application/gzip", []byte("\x1f\x8b\x08\x00garbage"))
	}
	s := startServer(f)
	// A request that takes seconds is a defect too (a stalled reader, a lock).
	client := &http.Client{Timeout: 10 * time.Second}
	allowed := map[int]bool{200: true, 201: true, 202: true, 204: true, 400: true, 403: true, 404: true, 409: true, 413: true, 415: true, 422: true}
	f.Fuzz(func(t *testing.T, route uint8, ctype string, body []byte) {
		r := fuzzRoutes[int(route)%len(fuzzRoutes)]
		if strings.ContainsFunc(ctype, func(c rune) bool { return c < ' ' && c != '\t' || c == 0x7f }) {
			return // no HTTP client sends it
		}
		req, err := http.NewRequest(r.method, s.url+r.path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+s.admin)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if !allowed[res.StatusCode] {
			t.Fatalf("%s %s (%q, %q): %d %s", r.method, r.path, ctype, body, res.StatusCode, out)
		}
	})
}
