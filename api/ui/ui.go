// Package ui is the graph explorer: a static page at /ui, embedded in the
// binary, that reads everything through the API with the token a person
// pastes (kept in the tab's sessionStorage only). It lists the org's
// projects to pick from, shows a query's or a work item's block exactly
// as the agent gets it, each line's score parts, the subgraph drawn in
// SVG at its panel's size (seeds in the middle, hops as rings, line
// thickness by score, no two labels overlapping), a node's edges,
// description, weight and provenance, and the counts per relationship.
//
// The page needs no token and is not part of the API document. A strict
// Content-Security-Policy allows only the page's own script, style and
// API calls: no inline code, no other origin.
package ui

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed static
var static embed.FS

// CSP is the Content-Security-Policy of every answer under /ui.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

var types = map[string]string{".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
	".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}

// Handler serves the page at /ui and /ui/, its assets at /ui/NAME.
func Handler() http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/ui"), "/")
		if name == "" {
			name = "index.html"
		}
		ct, ok := types[path.Ext(name)]
		b, err := fs.ReadFile(sub, name)
		if !ok || err != nil || strings.Contains(name, "/") {
			http.NotFound(w, r)
			return
		}
		h.Set("Content-Type", ct)
		h.Set("Cache-Control", "no-cache")
		if r.Method == http.MethodHead {
			return
		}
		w.Write(b)
	})
}
