// Package apitest is the test kit of the HTTP API, for tests outside
// package api (the client's, the MCP server's): it opens an App in a
// temporary directory and serves it on a loopback port, checking the
// store (engine.Store.Check) and closing everything when the test ends.
package apitest

import (
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/kgctx/kgctx/api"
	"github.com/kgctx/kgctx/api/internal/oascheck"
	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine/auth"
)

// Server is a running kgctx server of a test.
type Server struct {
	URL string
	App *service.App
	// HTTP is a client whose every answer is checked against the
	// server's OpenAPI document (a mismatch fails the test).
	HTTP *http.Client
	t    testing.TB
}

// Start opens an App in t.TempDir() and serves it with cfg (its App field
// is set) on a loopback port until the test ends.
func Start(t testing.TB, cfg api.Config) *Server {
	t.Helper()
	app, err := service.Open(context.Background(), service.Config{DataDir: filepath.Join(t.TempDir(), "data")})
	if err != nil {
		t.Fatal(err)
	}
	cfg.App = app
	srv, err := api.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() {
		srv.Shutdown(context.Background())
		if err := app.Store.Check(); err != nil {
			t.Errorf("store check at the end of the test: %v", err)
		}
		app.Close()
	})
	s := &Server{URL: "http://" + ln.Addr().String(), App: app, t: t}
	s.HTTP = CheckedClient(t, s.URL, s.Token("", "apitest", auth.RoleOperator))
	return s
}

// CheckedClient reads the OpenAPI document of the server at url (GET
// /openapi.json with token) and returns a client whose every answer is
// checked against it: a mismatch fails t. For the end-to-end tests of
// any package, the real binary's included.
func CheckedClient(t testing.TB, url, token string) *http.Client {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url+"/openapi.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	doc, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET /openapi.json: %d %v", res.StatusCode, err)
	}
	c, err := oascheck.New(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Transport: c.Transport(t, nil)}
}

// Token stores a token for org with role and projects and returns its
// secret.
func (s *Server) Token(org, agent, role string, projects ...string) string {
	s.t.Helper()
	sec := auth.NewTokenSecret()
	if err := s.App.Tokens.PutToken(sec, auth.Token{OrgID: org, AgentID: agent, Role: role, ProjectIDs: projects}); err != nil {
		s.t.Fatal(err)
	}
	return sec
}
