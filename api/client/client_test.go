package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/api"
	"github.com/kgctx/kgctx/api/apitest"
	"github.com/kgctx/kgctx/api/client"
	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine/auth"
	"github.com/kgctx/kgctx/engine/model"
	"github.com/kgctx/kgctx/engine/tripletio"
)

// serve runs the real server on a loopback port and returns its URL and an
// importer token of org "o".
// Its HTTP client checks every answer against the OpenAPI document.
func serve(t *testing.T) (url, token string, app *service.App, hc *http.Client) {
	t.Helper()
	s := apitest.Start(t, api.Config{})
	return s.URL, s.Token("o", "loader", auth.RoleImporter), s.App, s.HTTP
}

func TestImportFiles(t *testing.T) {
	url, tok, _, hc := serve(t)
	c, err := client.New(url, tok, hc)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var lines []string
	for i := range 2500 {
		lines = append(lines, fmt.Sprintf("S%d\tcalls\tT%d", i, i%100))
	}
	path := filepath.Join(dir, "g.tsv")
	os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644)
	var last int
	res, err := c.ImportFiles(context.Background(), "o", "p", []tripletio.File{{Path: path}},
		client.FileOptions{Batch: 300, Written: func(n int) { last = n }})
	if err != nil || res.Accepted != 2500 || res.EdgesCreated != 2500 || last != 2500 {
		t.Fatalf("import: %+v %v (progress %d)", res, err, last)
	}
	st, err := c.Stats(context.Background(), "o", "p")
	if err != nil || st.Triplets != 2500 || st.Nodes != 2600 {
		t.Fatalf("stats: %+v %v", st, err)
	}
	// Another org's project: the server's 403 comes back as an APIError.
	_, err = c.ImportTriplets(context.Background(), "other", "p", []model.TripletInput{{Source: "a", Relationship: "r", Target: "b"}})
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != 403 || ae.Code != "forbidden" {
		t.Fatalf("other org: %v", err)
	}
	// A line the server refuses (a vector of the wrong dimension: only the
	// server knows the store's) is named by file and line.
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"source": "a", "relationship": "r", "target": "b"}
{"source": "c", "relationship": "r", "target": "d", "sourceVector": [1, 2]}
`), 0o644)
	_, err = c.ImportFiles(context.Background(), "o", "p", []tripletio.File{{Path: bad, Name: "bad.jsonl"}}, client.FileOptions{})
	if err == nil || !strings.Contains(err.Error(), "bad.jsonl: line 2") {
		t.Fatalf("bad line: %v", err)
	}
	if _, err := client.New(url, "", nil); !errors.Is(err, client.ErrNoToken) {
		t.Fatal(err)
	}
}

// Against a cluster, a client sends back the log positions its writes got,
// the highest per shard, so that any node answers after applying them.
func TestClientSendsItsWritePositions(t *testing.T) {
	var got []string
	answers := []string{"s1:4", "global:2,s1:3", "", ""}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get(client.SequenceHeader))
		if h := answers[len(got)-1]; h != "" {
			w.Header().Set(client.SequenceHeader, h)
		}
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	c, err := client.New(srv.URL, "tok", nil)
	if err != nil {
		t.Fatal(err)
	}
	for range answers {
		if err := c.GetJSON(context.Background(), "/v1/whoami", nil); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"", "s1:4", "global:2,s1:4", "global:2,s1:4"}
	if !slices.Equal(got, want) {
		t.Fatalf("sent %q, want %q", got, want)
	}
}
