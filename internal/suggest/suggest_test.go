package suggest

import "testing"

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
