package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgctx/kgctx/api/client"
	"github.com/kgctx/kgctx/api/mcp"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/auth"
)

// page decodes search_observations' structured answer.
func page(t *testing.T, r *sdk.CallToolResult) client.ObservationPage {
	t.Helper()
	b, err := json.Marshal(r.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var p client.ObservationPage
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatalf("search_observations answer %s: %v", b, err)
	}
	return p
}

// search_observations, update_observation and delete_observation over
// both transports: scores on a search, filters, an update a search sees
// (new words, not old), the weight kept, a delete; refusals carry the
// API's code and change nothing.
func TestObservationTools(t *testing.T) {
	srv, app, token := server(t)
	imp := token("org_a", auth.RoleImporter, "p1")
	ten := engine.Tenant{Org: "org_a", Project: "p1"}
	for name, s := range map[string]*sdk.ClientSession{
		"http":  overHTTP(t, srv, imp),
		"stdio": overPipe(t, srv, imp, mcp.Options{}),
	} {
		t.Run(name, func(t *testing.T) {
			r, text := call(t, s, "add_observations", map[string]any{"observations": []map[string]any{
				{"content": "wombat burrows collapse " + name, "tags": []string{"fauna"}},
				{"content": "postgres pool capped at 20 " + name, "tags": []string{"db"}, "paths": []string{"deploy/" + name + "/staging.yaml"}}}})
			if r.IsError {
				t.Fatalf("add_observations: %s", text)
			}
			var added struct{ IDs []string }
			b, _ := json.Marshal(r.StructuredContent)
			json.Unmarshal(b, &added)
			id := added.IDs[0]

			r, text = call(t, s, "search_observations", map[string]any{"query": "wombat burrows"})
			p := page(t, r)
			if r.IsError || len(p.Observations) == 0 || p.Observations[0].ID != id || p.Observations[0].Score == nil || !strings.Contains(text, "(score: ") {
				t.Fatalf("search: %s", text)
			}
			r, text = call(t, s, "search_observations", map[string]any{"path": "deploy/" + name})
			if p := page(t, r); r.IsError || len(p.Observations) != 1 || p.Observations[0].Score != nil || !strings.Contains(text, "postgres pool") {
				t.Fatalf("list by path: %s", text)
			}
			r, text = call(t, s, "search_observations", map[string]any{"tag": "fauna", "limit": 1})
			if p := page(t, r); r.IsError || len(p.Observations) != 1 {
				t.Fatalf("list by tag: %s", text)
			}

			r, text = call(t, s, "update_observation", map[string]any{"id": id, "content": "quokka habitats shrink " + name})
			if r.IsError || !strings.Contains(text, "quokka habitats shrink") || !strings.Contains(text, "(weight: 0.50)") {
				t.Fatalf("update: %s", text)
			}
			if r, text := call(t, s, "search_observations", map[string]any{"query": "quokka habitats " + name}); r.IsError || page(t, r).Observations[0].ID != id {
				t.Fatalf("search for the new words: %s", text)
			}
			if r, text := call(t, s, "search_observations", map[string]any{"query": "wombat burrows"}); r.IsError || strings.Contains(text, id) {
				t.Fatalf("search for the old words: %s", text)
			}
			if r, text := call(t, s, "update_observation", map[string]any{"id": id, "weight": 0.9, "metadata": map[string]any{"tags": []string{"marsupial"}}}); r.IsError || !strings.Contains(text, "(weight: 0.90)") {
				t.Fatalf("update weight and metadata: %s", text)
			}
			o, err := app.Store.Observation(ten, id)
			if err != nil || o.Weight != 0.9 || len(o.Metadata.Tags) != 1 || o.Metadata.Tags[0] != "marsupial" || !strings.HasPrefix(o.Content, "quokka") {
				t.Fatalf("stored: %+v %v", o, err)
			}

			for _, bad := range []struct {
				tool string
				args map[string]any
				code string
			}{
				{"update_observation", map[string]any{"id": "obs_nope", "content": "x"}, "not_found"},
				{"update_observation", map[string]any{"id": id}, "invalid_observation"},
				{"update_observation", map[string]any{"id": id, "weight": 3}, "invalid_observation"},
				{"update_observation", map[string]any{"id": id, "content": "x", "org": "org_b"}, "forbidden"},
				{"search_observations", map[string]any{"since": "yesterday"}, "invalid_field"},
				{"search_observations", map[string]any{"cursor": "nope"}, "invalid_field"},
				{"search_observations", map[string]any{"query": "x", "org": "org_b"}, "forbidden"},
				{"delete_observation", map[string]any{"id": "obs_nope"}, "not_found"},
			} {
				r, text := call(t, s, bad.tool, bad.args)
				if !r.IsError || !strings.Contains(text, bad.code) {
					t.Errorf("%s %v: error %v, %q", bad.tool, bad.args, r.IsError, text)
				}
			}
			if now, _ := app.Store.Observation(ten, id); now.Content != o.Content || now.Weight != o.Weight {
				t.Fatalf("a refused call changed %+v", now)
			}

			if r, text := call(t, s, "delete_observation", map[string]any{"id": id}); r.IsError || !strings.Contains(text, "deleted "+id) {
				t.Fatalf("delete: %s", text)
			}
			if _, err := app.Store.Observation(ten, id); err == nil {
				t.Fatal("deleted observation still there")
			}
		})
	}
	// An agent may search but not update or delete (the routes' roles).
	ag := overHTTP(t, srv, token("org_a", auth.RoleAgent, "p1"))
	if r, text := call(t, ag, "search_observations", map[string]any{"query": "postgres"}); r.IsError || len(page(t, r).Observations) == 0 {
		t.Fatalf("agent search: %s", text)
	}
	list, _ := app.Store.ListObservations(ten, engine.ObservationQuery{})
	for tool, args := range map[string]map[string]any{
		"update_observation": {"id": list.Observations[0].ID, "content": "x"},
		"delete_observation": {"id": list.Observations[0].ID},
	} {
		if r, text := call(t, ag, tool, args); !r.IsError || !strings.Contains(text, "forbidden") {
			t.Errorf("agent %s: %s", tool, text)
		}
	}
}
