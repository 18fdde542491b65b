package mcp

import (
	"bytes"
	"encoding/json"
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
//
// Transport errors (a wrong Accept or Content-Type, a body that is not
// JSON-RPC) answer the API's JSON error body, never the SDK's plain text.
func Handler(api http.Handler, o Options) http.Handler {
	h := sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
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
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		jw := &jsonErrors{ResponseWriter: w}
		h.ServeHTTP(jw, r)
		jw.finish()
	})
}

// jsonErrors turns an error answer that is not JSON into the API's error
// body, {"error": {"code", "message"}}, with the text as the message.
type jsonErrors struct {
	http.ResponseWriter
	status int // an error being rewritten, else 0
	text   bytes.Buffer
}

func (w *jsonErrors) WriteHeader(code int) {
	if code >= 400 && !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
		w.status = code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *jsonErrors) Write(b []byte) (int, error) {
	if w.status != 0 {
		if w.text.Len() < 4096 {
			w.text.Write(b[:min(len(b), 4096-w.text.Len())])
		}
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

func (w *jsonErrors) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && w.status == 0 {
		f.Flush()
	}
}

// finish writes the rewritten error, if any.
func (w *jsonErrors) finish() {
	if w.status == 0 {
		return
	}
	code := map[int]string{400: "invalid_mcp_request", 404: "not_found", 405: "method_not_allowed", 406: "not_acceptable",
		415: "unsupported_media_type"}[w.status]
	if code == "" {
		code = "mcp_error"
	}
	msg := strings.TrimSpace(w.text.String())
	if msg == "" {
		msg = http.StatusText(w.status)
	}
	body, _ := json.Marshal(map[string]any{"error": map[string]string{"code": code, "message": "MCP transport: " + msg}})
	h := w.Header()
	h.Del("Content-Length")
	h.Set("Content-Type", "application/json; charset=UTF-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.ResponseWriter.WriteHeader(w.status)
	w.ResponseWriter.Write(body)
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
