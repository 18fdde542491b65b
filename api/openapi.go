package api

import (
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/kgctx/kgctx/engine"
)

var pathParam = regexp.MustCompile(`:([A-Za-z]+)`)

// DefaultServerURL is the document's server when it is not served by a
// running server (kgctx openapi): serve's default address.
const DefaultServerURL = "http://127.0.0.1:7070"

// importTypes are the content types a triplet import takes; the format is
// also sniffed from the body when the type says nothing, and a gzip body
// (any format, compressed) is detected by its magic bytes.
var importTypes = []struct{ ctype, doc string }{
	{"application/json", "A JSON array of triplets."},
	{"application/x-ndjson", "One JSON triplet per line (also application/jsonl)."},
	{"text/tab-separated-values", "SOURCE<TAB>RELATIONSHIP<TAB>TARGET[<TAB>WEIGHT] lines (FB15k-style)."},
	{"text/csv", "source,relationship,target[,weight] rows; a header row is recognised."},
	{"application/n-triples", "N-Triples; IRIs are shortened to their last segment."},
	{"text/plain", "SUBJECT|PREDICATE|OBJECT[|WEIGHT] pipe lines (the extractor's format), or any of the above, sniffed."},
	{"application/gzip", "Any of the above, gzip-compressed (detected by content, whatever the type)."},
}

// errorDocs describe the error statuses of the document.
var errorDocs = map[int]string{
	400: "The request is malformed: unreadable JSON, an unknown field (named, with the nearest known one), a missing or invalid field or path id.",
	401: "No token, or one the server does not know.",
	403: "The token's org, projects or role do not allow this.",
	404: "Not found (or not readable under the policy: the two are not told apart).",
	408: "The body did not arrive within the server's read timeout.",
	409: "Conflict: the session is leased to another worker, or the inject is not the one in flight.",
	413: "The body is over the server's limit.",
	422: "The body parses but is refused: the lines at fault are named; or (code quota_exceeded) the write would pass a quota, named in the message.",
	429: "Over a rate quota (requests per second of this token, or imported triplets per minute of the org): Retry-After says when to try again; nothing was done.",
	504: "In a cluster, a write whose outcome is unknown (code outcome_unknown): JetStream did not acknowledge it in time, or it is stored but not yet applied on this node. It may or may not take effect; retrying with the same Idempotency-Key is safe (applied at most once), without one a retry may apply it twice.",
	503: "The embedder is unreachable (Retry-After says when to try again), or the server is shutting down; in a cluster, NATS has no quorum (a write: nothing written), the positions named in X-Kgctx-Sequence were not applied within the read wait, or no live node serves the org.",
}

// openAPI builds the OpenAPI 3 document from the route table and the Go
// types of its bodies; server is the document's servers entry.
func (s *Server) openAPI(server string) map[string]any {
	g := newSchemaGen()
	paths := map[string]any{}
	usedErrs := map[int]bool{}
	for _, r := range s.routes {
		p := pathParam.ReplaceAllString(r.path, "{$1}")
		item, _ := paths[p].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[p] = item
		}
		op := map[string]any{"summary": r.summary, "operationId": operationID(r.method, r.path),
			"tags": []any{routeTag(r.path)}}
		var params []any
		for _, m := range pathParam.FindAllStringSubmatch(r.path, -1) {
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
		}
		for _, q := range r.query {
			params = append(params, map[string]any{"name": q.name, "in": "query", "required": q.required, "description": q.doc,
				"schema": map[string]any{"type": q.typ}})
		}
		if r.minRole != "" {
			params = append(params, map[string]any{"name": SequenceHeader, "in": "header", "required": false,
				"description": "In a cluster: the log positions (SHARD:SEQ, comma-separated) of writes this request must see; the node waits until it has applied them. A write answers its own in the same header.",
				"schema":      map[string]any{"type": "string", "pattern": `^[a-z0-9-]+:[0-9]+(,[a-z0-9-]+:[0-9]+)*$`}})
		}
		if r.writes() {
			params = append(params, map[string]any{"name": IdempotencyKeyHeader, "in": "header", "required": false,
				"description": "In a cluster, names the request so that a retry of it (same key, same token's org and agent) is applied at most once: a 504 outcome_unknown is safe to retry with it (a single node accepts the key and applies every request). A retry answered from the first attempt carries Idempotent-Replayed: true. Kept 24 hours. 1-255 visible ASCII characters (a UUID); a malformed one is 400 with nothing done.",
				"schema":      map[string]any{"type": "string", "minLength": 1, "maxLength": maxIdempotencyKey, "pattern": `^[!-~]+$`}})
		}
		if len(params) > 0 {
			op["parameters"] = params
		}
		if r.minRole != "" {
			op["security"] = []any{map[string]any{"bearer": []any{}}}
			op["description"] = "Needs the " + r.minRole + " role or above."
		} else {
			op["security"] = []any{}
		}
		if r.req != nil {
			op["requestBody"] = map[string]any{"required": true, "content": g.content(r.req)}
		}
		responses := map[string]any{strconv.Itoa(r.status): g.response(r.status, r.resp)}
		for st, body := range r.also {
			responses[strconv.Itoa(st)] = g.response(st, body)
		}
		for _, st := range r.errorStatuses() {
			usedErrs[st] = true
			responses[strconv.Itoa(st)] = map[string]any{"$ref": "#/components/responses/E" + strconv.Itoa(st)}
		}
		op["responses"] = responses
		item[strings.ToLower(r.method)] = op
	}
	g.component(reflect.TypeFor[errorBody]())
	errResponses := map[string]any{}
	for st := range usedErrs {
		errResponses["E"+strconv.Itoa(st)] = map[string]any{"description": errorDocs[st],
			"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/ErrorBody"}}}}
	}
	var tagList []any
	for _, t := range tags {
		tagList = append(tagList, map[string]any{"name": t.name, "description": t.doc})
	}
	return map[string]any{
		"openapi": "3.0.3",
		"info": map[string]any{"title": "kgctx", "version": s.version(),
			"description": "Knowledge graph context blocks for AI coding agents. Every body is JSON unless a route says otherwise; errors are {\"error\": {\"code\", \"message\", \"lines\"?}}.",
			"license":     map[string]any{"name": "All rights reserved", "url": "https://github.com/kgctx/kgctx"}},
		"servers": []any{map[string]any{"url": server}},
		"tags":    tagList,
		"paths":   paths,
		"components": map[string]any{
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer",
				"description": "A token made by `kgctx token create` or POST /v1/admin/tokens."}},
			"schemas":   g.comps,
			"responses": errResponses,
		},
	}
}

func (s *Server) version() string {
	if s.cfg.Version != "" {
		return s.cfg.Version
	}
	return "dev"
}

// errorStatuses are the error answers of r: those its shape implies (a
// token, a body, ids in the path) and its own.
func (r *route) errorStatuses() []int {
	var sts []int
	if r.minRole != "" {
		// In a cluster: a malformed X-Kgctx-Sequence (400), the cluster
		// out of reach (503).
		// Over a quota: 429 with Retry-After (api/quota.go).
		sts = append(sts, 400, 401, 403, 429, 503)
	}
	if r.req != nil {
		sts = append(sts, 400, 408, 413)
	}
	if r.writes() {
		sts = append(sts, 400, 504) // a malformed Idempotency-Key; an unknown outcome
	}
	if strings.Contains(r.path, ":") || len(r.query) > 0 {
		sts = append(sts, 400)
	}
	sts = append(sts, r.errs...)
	slices.Sort(sts)
	return slices.Compact(sts)
}

// writes reports whether r may make writes: an authenticated method
// other than GET and HEAD (the ones that take an Idempotency-Key).
func (r *route) writes() bool {
	return r.minRole != "" && r.method != http.MethodGet && r.method != http.MethodHead
}

func operationID(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	for _, part := range strings.Split(path, "/") {
		part = strings.TrimPrefix(part, ":")
		if part == "" || part == "v1" {
			continue
		}
		for _, w := range strings.FieldsFunc(part, func(r rune) bool { return r == '-' || r == '.' || r == '_' }) {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

// tags group the operations by what they serve.
var tags = []struct{ name, doc string }{
	{"graph", "Import, query and delete triplets, nodes and observations of a project."},
	{"context", "The blocks an agent gets: graph, session, Graph RAG."},
	{"sessions", "Session delivery (claim, refresh, injects), in-session events, injection logs and feedback."},
	{"admin", "Tokens, policies and the operator's configuration."},
	{"service", "Health, identity, metrics, MCP and this document."},
}

func routeTag(path string) string {
	switch {
	case strings.HasPrefix(path, "/v1/orgs/"):
		return "graph"
	case strings.HasPrefix(path, "/v1/context/"):
		return "context"
	case strings.HasPrefix(path, "/v1/sessions/"), path == "/v1/injection-logs":
		return "sessions"
	case strings.HasPrefix(path, "/v1/admin/"):
		return "admin"
	}
	return "service"
}

// content is the content map of a body of Go type v.
func (g *schemaGen) content(v any) map[string]any {
	switch v.(type) {
	case textBody:
		return map[string]any{"text/plain": map[string]any{"schema": map[string]any{"type": "string"}}}
	case anyJSON:
		return map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object"}}}
	case tripletsBody:
		c := map[string]any{}
		in := g.schema(reflect.TypeFor[engine.TripletInput]())
		for _, t := range importTypes {
			sch := map[string]any{"type": "string", "description": t.doc}
			switch t.ctype {
			case "application/json":
				sch = map[string]any{"type": "array", "items": in, "description": t.doc}
			case "application/gzip":
				sch["format"] = "binary"
			}
			c[t.ctype] = map[string]any{"schema": sch}
		}
		return c
	case observationsBody:
		one := g.schema(reflect.TypeFor[engine.ObservationInput]())
		return map[string]any{"application/json": map[string]any{"schema": map[string]any{
			"oneOf": []any{one, map[string]any{"type": "array", "items": one}}}}}
	}
	return map[string]any{"application/json": map[string]any{"schema": g.schema(reflect.TypeOf(v))}}
}

// response is the response object of a success status with body v.
func (g *schemaGen) response(status int, v any) map[string]any {
	r := map[string]any{"description": http.StatusText(status)}
	if v != nil {
		r["content"] = g.content(v)
	}
	return r
}

func (s *Server) handleOpenAPI(c echo.Context) error {
	scheme := "http"
	if c.Request().TLS != nil {
		scheme = "https"
	}
	return c.JSON(http.StatusOK, s.openAPI(scheme+"://"+c.Request().Host))
}
