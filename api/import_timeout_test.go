package api

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// TestImportTimeoutChangesNothing: an import that runs past the request
// timeout answers 503 "timeout", and what its first chunks wrote is gone.
func TestImportTimeoutChangesNothing(t *testing.T) {
	s := startServerWith(t, func(c *Config) {
		c.RequestTimeout = time.Second
		c.MaxImportBytes = 64 << 20
	})
	imp := s.token("org_123", "importer")
	var body bytes.Buffer
	for i := range 50_000 { // 100k new nodes to index: far more than a second
		fmt.Fprintf(&body, `{"source":"Service%d","relationship":"calls","target":"Store%d"}`+"\n", i, i)
	}
	r := s.do(http.MethodPost, projPath+"/triplets", imp, "application/x-ndjson", body.Bytes())
	if r.status != http.StatusServiceUnavailable || r.errCode() != "timeout" {
		t.Fatalf("import past the timeout: %d %s", r.status, r.body)
	}
	if st := s.stats("org_123", "proj_xyz"); st.Nodes != 0 || st.Triplets != 0 {
		t.Fatalf("a timed-out import left %+v", st)
	}
}
