package api

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// stalled sends a request whose body never fully arrives (Content-Length
// 1000, 10 bytes sent) and returns what the server answers, or "" when it
// closed the connection without a word. It fails the test if the server
// keeps the connection open past wait.
func stalled(t *testing.T, s *testServer, path, tok string, wait time.Duration) (status int, closed bool) {
	return stalledBody(t, s, path, tok, `{"a": 123`, wait)
}

func stalledBody(t *testing.T, s *testServer, path, tok, head string, wait time.Duration) (status int, closed bool) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	auth := ""
	if tok != "" {
		auth = "Authorization: Bearer " + tok + "\r\n"
	}
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\n%sContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n%s", path, auth, head)
	conn.SetReadDeadline(time.Now().Add(wait))
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("%s: the connection is still open after %s with no answer", path, wait)
		}
		return 0, true // closed without an answer
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	// After the answer the server must close rather than wait for the
	// rest of the body.
	if _, err := br.ReadByte(); err == nil {
		t.Fatalf("%s: more bytes after the answer", path)
	} else {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("%s: answered %d but kept the connection open", path, res.StatusCode)
		}
	}
	return res.StatusCode, false
}

// Item 6: a body that never arrives does not hold a connection: without a
// token it is answered 401 from the headers at once; with one, the read
// timeout ends it with 408 (or a closed connection).
func TestStalledBodyTimesOut(t *testing.T) {
	s := startServerWith(t, func(c *Config) { c.ReadTimeout = 300 * time.Millisecond })
	ag := s.token("org_a", "agent")
	// No token: 401 from the headers, before any body byte is waited for.
	// The wait is far below the read timeout's multiples only to catch a
	// server that waits for the body; 401 needs no timeout at all.
	if st, _ := stalled(t, s, "/v1/context/graph", "", 5*time.Second); st != 401 {
		t.Fatalf("no token: %d, want 401", st)
	}
	if st, _ := stalled(t, s, "/v1/context/graph", "not-a-token", 5*time.Second); st != 401 {
		t.Fatalf("bad token: %d, want 401", st)
	}
	// A valid token and a stalled body: 408 within the read timeout.
	for path, head := range map[string]string{"/v1/context/graph": `{"queryText": "a`,
		"/v1/orgs/org_a/projects/p/triplets": `[{"source": "a", "relationship": "r", "target": "b"}, {"source": "c`} {
		tok := ag
		if strings.Contains(path, "triplets") {
			tok = s.token("org_a", "importer")
		}
		st, closed := stalledBody(t, s, path, tok, head, 10*time.Second)
		if !closed && st != http.StatusRequestTimeout {
			t.Fatalf("%s stalled body: %d, want 408 or a closed connection", path, st)
		}
	}
	if st := s.stats("org_a", "p"); st.Triplets != 0 {
		t.Fatalf("a stalled import wrote: %+v", st)
	}
}
