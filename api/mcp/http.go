package mcp

import (
	"net/http"
	"net/http/httptest"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgctx/kgctx/api/client"
)

// Handler serves MCP over streamable HTTP, stateless: each request gets a
// server whose tools call api (the kgctx HTTP handler, in process) with
// the request's own bearer token, so one MCP endpoint serves every org and
// role exactly as the routes do. The caller authenticates the request
// first (a missing or unknown token never reaches it).
func Handler(api http.Handler, o Options) http.Handler {
	return sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || tok == "" {
			return nil // 400; the route's authentication refuses it first
		}
		c, err := client.New("http://kgctx.in-process", strings.TrimSpace(tok), &http.Client{Transport: inProcess{api}})
		if err != nil {
			return nil
		}
		return NewServer(c, o)
	}, &sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
}

// inProcess answers HTTP requests with a handler in the same process.
type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	res := rec.Result()
	res.Request = r
	return res, nil
}
