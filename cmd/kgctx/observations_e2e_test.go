package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

type cliPage struct {
	Observations []struct {
		ID       string
		Content  string
		Weight   float64
		Score    *float64
		Metadata struct {
			Paths, Tags []string
		}
	}
	NextCursor string
}

// kgctx observations list|search|update|delete, nodes search and projects,
// through a server and then offline on the same data directory.
func TestObservationsCLI(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	s := startServe(t, data)
	imp := s.token("org_c", "importer")
	body := `[{"content": "wombat burrows collapse in spring", "metadata": {"tags": ["fauna"], "paths": ["zoo/wombat.go"]}},
	 {"content": "postgres pool capped at 20 in staging", "metadata": {"tags": ["db"], "paths": ["deploy/staging.yaml"]}, "weight": 0.9},
	 {"content": "postgres pool exhausted under load"}]`
	code, out, err := s.do("POST", "/v1/orgs/org_c/projects/p1/observations", imp, "application/json", []byte(body))
	if err != nil || code != 201 {
		t.Fatalf("add: %d %s %v", code, out, err)
	}
	var added struct{ IDs []string }
	json.Unmarshal(out, &added)
	ids := added.IDs
	if code, out, err := s.do("POST", "/v1/orgs/org_c/projects/p1/triplets", imp, "application/json",
		[]byte(`[{"source": "AuthService", "relationship": "depends_on", "target": "PostgresDB", "sourceType": "service"}]`)); err != nil || code != 200 {
		t.Fatalf("import: %d %s %v", code, out, err)
	}
	remote := []string{"--server", s.url, "--token", imp, "--org", "org_c", "--project", "p1"}
	run := func(args ...string) (string, string) {
		t.Helper()
		stdout, stderr, err := kgctx(t, nil, args...)
		if err != nil {
			t.Fatalf("kgctx %v: %v\n%s%s", args, err, stdout, stderr)
		}
		return stdout, stderr
	}
	page := func(args ...string) cliPage {
		t.Helper()
		stdout, _ := run(append(args, "--json")...)
		var p cliPage
		if err := json.Unmarshal([]byte(stdout), &p); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stdout)
		}
		return p
	}
	ids3 := func(p cliPage) []string {
		var out []string
		for _, o := range p.Observations {
			out = append(out, o.ID)
		}
		return out
	}

	for _, where := range []string{"server", "offline"} {
		target := remote
		if where == "offline" {
			s.stop()
			target = []string{"--data", data, "--org", "org_c", "--project", "p1"}
		}
		args := func(a ...string) []string { return append(a, target...) }

		// list: newest first (one batch: last input first), filters, pages.
		p := page(args("observations", "list")...)
		if got := ids3(p); len(got) != 3 || got[0] != ids[2] || got[2] != ids[0] {
			t.Fatalf("%s list: %v (added %v)", where, got, ids)
		}
		if p := page(args("observations", "list", "--path", "deploy")...); len(p.Observations) != 1 || p.Observations[0].ID != ids[1] {
			t.Fatalf("%s list --path deploy: %v", where, ids3(p))
		}
		stdout, stderr := run(args("observations", "list", "--limit", "1")...)
		if strings.Count(stdout, "obs_") != 1 || !strings.Contains(stdout, "CONTENT") || !strings.Contains(stderr, "more: --cursor ") {
			t.Fatalf("%s list --limit 1: %s%s", where, stdout, stderr)
		}
		if p := page(args("observations", "list", "--limit", "1", "--all")...); len(p.Observations) != 3 || p.NextCursor != "" {
			t.Fatalf("%s list --all: %v", where, ids3(p))
		}
		// search: by score, the heavier twin first.
		p = page(args("observations", "search", "postgres", "pool")...)
		if len(p.Observations) < 2 || p.Observations[0].ID != ids[1] || p.Observations[0].Score == nil {
			t.Fatalf("%s search: %+v", where, p)
		}
		if stdout, _ := run(args("observations", "search", "postgres", "pool")...); !strings.HasPrefix(stdout, "SCORE") {
			t.Fatalf("%s search table: %s", where, stdout)
		}

		// update: content (a search finds the new words), then a tag only
		// (the paths and the weight kept).
		word := map[string]string{"server": "quokka", "offline": "numbat"}[where]
		if stdout, _ := run(args("observations", "update", ids[0], "--content", word+" habitats shrink")...); !strings.Contains(stdout, "updated - ["+ids[0]+"] "+word+" habitats shrink (weight: 0.50)") {
			t.Fatalf("%s update: %s", where, stdout)
		}
		if p := page(args("observations", "search", word)...); len(p.Observations) != 1 || p.Observations[0].ID != ids[0] {
			t.Fatalf("%s search for the new words: %v", where, ids3(p))
		}
		if p := page(args("observations", "search", "wombat", "burrows")...); slices.Contains(ids3(p), ids[0]) {
			t.Fatalf("%s search for the old words: %+v (ids %v)", where, p, ids)
		}
		run(args("observations", "update", ids[0], "--tags", "marsupial,"+where)...)
		p = page(args("observations", "list", "--tag", where)...)
		if len(p.Observations) != 1 || strings.Join(p.Observations[0].Metadata.Paths, ",") != "zoo/wombat.go" || p.Observations[0].Weight != 0.5 {
			t.Fatalf("%s after a tag update: %+v", where, p)
		}

		// nodes search and projects.
		stdout, _ = run(args("nodes", "search", "auth_service")...)
		if !strings.Contains(stdout, "exact") || !strings.Contains(stdout, "AuthService") {
			t.Fatalf("%s nodes search: %s", where, stdout)
		}
		projArgs := []string{"projects", "--org", "org_c", "--json"}
		if where == "server" {
			projArgs = append(projArgs, "--server", s.url, "--token", imp)
		} else {
			projArgs = append(projArgs, "--data", data)
		}
		if stdout, _ := run(projArgs...); !strings.Contains(stdout, `"projectId": "p1"`) || !strings.Contains(stdout, `"nodes": 2`) {
			t.Fatalf("%s projects: %s", where, stdout)
		}

		// Refused: a bad time and nothing to update (usage, exit 2), an
		// unknown id (exit 1, named).
		for _, bad := range [][]string{
			args("observations", "list", "--since", "yesterday"),
			args("observations", "update", ids[0]),
			args("observations", "search"),
			args("nodes", "search", "x", "--limit", "500"),
		} {
			if _, stderr, err := kgctx(t, nil, bad...); err == nil || !strings.Contains(stderr, "--help") {
				t.Errorf("%s %v: %v %s", where, bad[:2], err, stderr)
			}
		}
		if _, stderr, err := kgctx(t, nil, args("observations", "update", "obs_nope", "--weight", "0.1")...); err == nil || !strings.Contains(stderr, "not found") {
			t.Errorf("%s update of an unknown id: %v %s", where, err, stderr)
		}
	}

	// delete, offline (the server stopped above).
	off := []string{"--data", data, "--org", "org_c", "--project", "p1"}
	if stdout, _, err := kgctx(t, nil, append([]string{"observations", "delete", ids[2]}, off...)...); err != nil || strings.TrimSpace(stdout) != "deleted "+ids[2] {
		t.Fatalf("delete: %v %s", err, stdout)
	}
	if p := page(append([]string{"observations", "list"}, off...)...); len(p.Observations) != 2 {
		t.Fatalf("after delete: %v", ids3(p))
	}
	// And through a server again.
	s = startServe(t, data)
	remote[1] = s.url
	if stdout, _, err := kgctx(t, nil, append([]string{"observations", "delete", ids[1]}, remote...)...); err != nil || strings.TrimSpace(stdout) != "deleted "+ids[1] {
		t.Fatalf("delete through the server: %v %s", err, stdout)
	}
	if p := page(append([]string{"observations", "list"}, remote...)...); len(p.Observations) != 1 || p.Observations[0].ID != ids[0] {
		t.Fatalf("after the server's delete: %v", ids3(p))
	}
}
