package suggest

import (
	"strings"
	"testing"
)

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"improt", "import", 1},
		{"stat", "stats", 1}, {"status", "stats", 1}, {"stat", "status", 2}, {"projet", "project", 1}, {"abc", "abc", 0}, {"ab", "ba", 1},
	} {
		if got := Distance(c.a, c.b); got != c.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
		if got := Distance(c.b, c.a); got != c.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.b, c.a, got, c.d)
		}
	}
}

func TestNearest(t *testing.T) {
	names := []string{"import", "serve", "graph", "token", "version"}
	for got, want := range map[string]string{"improt": "import", "servr": "serve", "GRAPH": "graph", "xyz": "", "verison": "version", "t": ""} {
		if s := Nearest(got, names); s != want {
			t.Errorf("Nearest(%q) = %q, want %q", got, s, want)
		}
	}
}

func TestPaths(t *testing.T) {
	type ident struct {
		OrgID string `json:"orgId"`
	}
	type item struct {
		Name string `json:"name"`
	}
	type req struct {
		Identity ident  `json:"identity"`
		Scope    *ident `json:"scope"`
		Items    []item `json:"items"`
		Query    string `json:"queryText"`
	}
	for name, want := range map[string]string{
		"orgId":     "identity.orgId scope.orgId",
		"name":      "items.name",
		"queryText": "", // at the top level: not somewhere else
		"nope":      "",
	} {
		if got := strings.Join(Paths(name, &req{}), " "); got != want {
			t.Errorf("Paths(%q) = %q, want %q", name, got, want)
		}
	}
}
