package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/kgctx/kgctx/api/ui"
	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/auth"
)

// Config configures a Server. Zero fields mean defaults.
type Config struct {
	App *service.App
	// MaxImportBytes bounds triplet and observation import bodies
	// (default 64 MiB); MaxBodyBytes every other body (default 1 MiB).
	MaxImportBytes int64
	MaxBodyBytes   int64
	// RequestTimeout bounds the work of one request (default 60 s).
	RequestTimeout time.Duration
	// ReadHeaderTimeout bounds reading a request's headers (default
	// 10 s); ReadTimeout reading the whole request, body included
	// (default 60 s: a stalled body gets 408 and the connection closes);
	// IdleTimeout how long a kept-alive connection waits for the next
	// request (default 120 s).
	ReadHeaderTimeout, ReadTimeout, IdleTimeout time.Duration
	// Version is what the MCP endpoint reports to clients.
	Version string
	// Cluster, when set, makes this server one node of a cluster
	// (compose/service/cluster): requests wait for the log positions they
	// name (SequenceHeader), and those of an org this node does not serve
	// are proxied to one that does.
	Cluster Cluster
}

// Cluster is what a cluster node gives the server.
type Cluster interface {
	// WaitApplied waits, within a bound, until this node has applied the
	// log positions a request names (SequenceHeader's value).
	WaitApplied(ctx context.Context, positions string) error
	// WaitGlobal is WaitApplied for the global log's position alone,
	// where tokens are written: all that a request whose bearer token
	// this node does not know yet may wait for before it is
	// authenticated again.
	WaitGlobal(ctx context.Context, positions string) error
	// PrincipalMAC is the MAC, keyed by the cluster secret, of a
	// principal forwarded with a proxied request (PrincipalHeader).
	PrincipalMAC(data []byte) []byte
	// Counters are the logged writes the node refused and the records it
	// ignored (kgctx_cluster_rejected_writes_total).
	Counters() ClusterCounters
	// Route answers none when this node serves org's requests, else the
	// base URLs of the nodes that do, best first.
	Route(ctx context.Context, org string) ([]string, error)
	// Status is the node's view of the cluster.
	Status() ClusterStatus
	// Placement says on which shard org is, whether an override puts it
	// there, and its latest move between shards (nil: none). Place places
	// org on shard ("" removes its override), moving its data when it has
	// some: it returns that move (nil: none was needed), ended, or in
	// progress when it outlasts the request's wait; a move of the org
	// elsewhere in progress refuses it (409), but for one placing it on
	// the move's source (the move is given up).
	Placement(ctx context.Context, org string) (shard string, override bool, move *OrgMove, err error)
	Place(ctx context.Context, org, shard string) (*OrgMove, error)
}

// PlacementRequest places an org on a shard (PUT
// /v1/admin/orgs/{org}/shard); an empty shard removes the override.
type PlacementRequest struct {
	Shard string `json:"shard" oas:"required"`
}

// PlacementResponse is an org's shard.
type PlacementResponse struct {
	OrgID string `json:"orgId"`
	Shard string `json:"shard"`
	// Override: the shard is the org's override, not rendezvous hashing's
	// choice.
	Override bool `json:"override"`
	// Move is the org's latest move between shards (absent: none): in
	// progress (the PUT that started it answers 202 while it is), done
	// or given up.
	Move *OrgMove `json:"move,omitempty"`
}

// OrgMove is an org's move from one shard to another: its data copied
// (the source's log of its writes, entry by entry, to the target's log),
// its writes paused for the last entries, the placement flipped, the
// source's copy removed.
type OrgMove struct {
	ID    string `json:"id" oas:"required"`
	OrgID string `json:"orgId" oas:"required"`
	From  string `json:"from" oas:"required"`
	To    string `json:"to" oas:"required"`
	// Phase: copying (writes go on at the source), fenced (the org's
	// writes answer 503 with Retry-After while the last entries copy),
	// flipped (it lives on the target; the source's copy is being
	// removed), done; aborting and aborted (given up: it stays on the
	// source, the target's copy goes).
	Phase string `json:"phase" oas:"required"`
	// Node is the node running the move (another takes it over if it
	// falls silent).
	Node       string     `json:"node"`
	StartedAt  time.Time  `json:"startedAt"`
	UpdatedAt  time.Time  `json:"updatedAt"`
	FinishedAt *time.Time `json:"finishedAt,omitempty"`
	// Copied and Bytes: the entries of the org's history copied so far
	// and their size; Left: those known left at the last update.
	Copied int   `json:"copied"`
	Bytes  int64 `json:"bytes"`
	Left   int   `json:"left"`
	// Fence, Flip and Drop are the log positions of those steps
	// (SHARD:SEQ; absent until made).
	Fence string `json:"fence,omitempty"`
	Flip  string `json:"flip,omitempty"`
	Drop  string `json:"drop,omitempty"`
	// PausedMs is how long the org's writes paused (fence to flip).
	PausedMs int64 `json:"pausedMs,omitempty"`
	// Error is the last error the move met (it retries) or why it was
	// given up.
	Error string `json:"error,omitempty"`
}

// Ended reports whether the move is over (done or aborted).
func (m *OrgMove) Ended() bool { return m.Phase == "done" || m.Phase == "aborted" }

// ClusterStatus is a cluster node's view of the cluster
// (GET /v1/admin/cluster).
type ClusterStatus struct {
	Cluster string `json:"cluster"`
	Node    string `json:"node"`
	// Applied is, per shard this node applies, the last log sequence it
	// applied.
	Applied map[string]uint64 `json:"applied"`
	// Serving are the shards this node has caught up with and serves.
	Serving []string        `json:"serving"`
	Members []ClusterMember `json:"members"`
	// Stalled are the shards whose log this node stopped applying at a
	// write it cannot apply: one a newer kgctx wrote. The node applies
	// nothing of the shard past it, and never skips it, until it is
	// upgraded; it hands the shard's requests to nodes that apply it
	// (kgctx_cluster_stalled_shards).
	Stalled []ClusterStall `json:"stalled"`
	// Moves are the orgs' moves between shards in progress, and those
	// that ended in the last day.
	Moves []OrgMove `json:"moves"`
}

// ClusterStall is where a node stopped applying a shard's log.
type ClusterStall struct {
	Shard string `json:"shard"`
	// Seq is the sequence of the write the node cannot apply: applied up
	// to the one before.
	Seq uint64 `json:"seq"`
	// Version is the write's format version (0: unreadable here); Kind
	// its kind when this node does not know the kind.
	Version int    `json:"version"`
	Kind    string `json:"kind,omitempty"`
	Reason  string `json:"reason"`
}

// ClusterCounters are what a cluster node refused or ignored since it
// started: per reason, logged writes its appliers refused; per bucket,
// records without the cluster's MAC.
type ClusterCounters struct {
	RejectedWrites map[string]uint64
	IgnoredRecords map[string]uint64
}

// ClusterMember is a live node of the cluster.
type ClusterMember struct {
	ID      string   `json:"id"`
	URL     string   `json:"url"`
	Serving []string `json:"serving"`
}

// ProxiedHeader marks a request one node forwarded to another. Only a
// valid PrincipalHeader makes a request forwarded (served where it lands,
// never forwarded again); this header alone changes nothing.
const ProxiedHeader = "X-Kgctx-Proxied"

// Timeout defaults (Config).
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 60 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
)

// Server is the HTTP face of an App.
//
// Concurrency: a Server serves requests concurrently; the App's parts are
// safe for that. Shutdown stops accepting, waits for in-flight requests.
type Server struct {
	cfg     Config
	app     *service.App
	e       *echo.Echo
	log     *slog.Logger
	metrics *metrics
	quota   *quotas
	routes  []route
	http    *http.Server
	// downNodes: cluster nodes a proxied request failed to reach, and
	// when (api/cluster_route.go).
	downNodes sync.Map
	// nonces: the forwarded principals used (api/cluster_principal.go).
	nonces nonces
}

// role ranks: a route names the least role it admits.
var roleRank = map[string]int{auth.RoleAgent: 1, auth.RoleImporter: 2, auth.RoleOrgAdmin: 3, auth.RoleOperator: 4}

type route struct {
	method, path string
	minRole      string // "" = no token needed
	importBody   bool   // the large body limit applies
	summary      string
	// req and resp are zero values of the body's and the success
	// answer's Go types (nil = no body), from which the OpenAPI document
	// is generated (oas.go; textBody, anyJSON, tripletsBody and
	// observationsBody name the bodies that are not one JSON type).
	req, resp any
	status    int         // success status
	also      map[int]any // other success answers and their bodies
	query     []param     // query parameters
	errs      []int       // error statuses beyond those the route's shape implies (openapi.go)
	// session: the route uses the in-session injector's memory of the
	// path's session, so a cluster serves it on that session's node
	// (sessionRouter).
	session bool
	h       echo.HandlerFunc
}

// param is a query parameter of a route.
type param struct {
	name, typ, doc string
	required       bool
}

// New builds the server and its routes.
func New(cfg Config) (*Server, error) {
	if cfg.App == nil {
		return nil, errors.New("api: Config.App is required")
	}
	if cfg.MaxImportBytes <= 0 {
		cfg.MaxImportBytes = 64 << 20
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 60 * time.Second
	}
	if cfg.ReadHeaderTimeout <= 0 {
		cfg.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = DefaultReadTimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	s := &Server{cfg: cfg, app: cfg.App, e: echo.New(), log: cfg.App.Logger, metrics: newMetrics(cfg.App), quota: newQuotas(cfg.App.Settings)}
	if cfg.Cluster != nil {
		s.metrics.reg.MustRegister(newClusterCollector(cfg.Cluster))
	}
	// Made here, not in Serve: Shutdown may run while Serve starts.
	s.http = &http.Server{Handler: s.e, ReadHeaderTimeout: cfg.ReadHeaderTimeout, ReadTimeout: cfg.ReadTimeout,
		IdleTimeout: cfg.IdleTimeout, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
	s.e.HideBanner, s.e.HidePort = true, true
	s.e.HTTPErrorHandler = s.errorHandler
	s.e.Use(s.observe, s.recoverPanic)
	s.routes = s.routeTable()
	for i := range s.routes {
		r := &s.routes[i]
		s.e.Add(r.method, r.path, s.wrap(r))
	}
	// The graph explorer (api/ui): a static page that needs no token (its
	// API calls carry the person's), outside the API document.
	page := echo.WrapHandler(ui.Handler())
	for _, p := range []string{"/ui", "/ui/*"} {
		s.e.GET(p, page)
		s.e.HEAD(p, page)
	}
	return s, nil
}

// wrap applies the route's auth and body limit around its handler. Both
// are decided from the headers alone, before a byte of the body is read: a
// caller without a valid token, or with a body declared over the limit, is
// answered at once and the connection closed (errorHandler), whatever it
// does with the rest of its body. Every answer, error or not, carries the
// Warning header while a search index is behind (warnIndexBehind).
func (s *Server) wrap(r *route) echo.HandlerFunc {
	limit := s.cfg.MaxBodyBytes
	if r.importBody {
		limit = s.cfg.MaxImportBytes
	}
	routed := s.cfg.Cluster != nil && routedByOrg(r)
	return func(c echo.Context) error {
		c.Response().Before(func() { s.warnIndexBehind(c) })
		req := c.Request()
		var tok auth.Token
		if r.minRole != "" {
			var err error
			if tok, err = s.authenticate(c); err != nil {
				return err
			}
			if roleRank[tok.Role] < roleRank[r.minRole] {
				return apiErr(http.StatusForbidden, "forbidden", "this route needs the %s role or above; the token has %s", r.minRole, tok.Role)
			}
			c.Set(ctxToken, tok)
			if err := s.quota.allowRequest(tok, r); err != nil {
				return err
			}
			if s.cfg.Cluster != nil {
				// Read your writes, for a caller known: a request
				// without a valid token never waits.
				if err := s.cfg.Cluster.WaitApplied(req.Context(), req.Header.Get(SequenceHeader)); err != nil {
					return err
				}
			}
		}
		idemKey, err := idempotencyKey(req)
		if err != nil {
			return err
		}
		if req.ContentLength > limit {
			return apiErr(http.StatusRequestEntityTooLarge, "body_too_large", "the request body is %d bytes, over the limit of %d", req.ContentLength, limit)
		}
		req.Body = &trackedBody{ReadCloser: http.MaxBytesReader(c.Response(), req.Body, limit)}
		ctx, cancel := context.WithTimeout(req.Context(), s.cfg.RequestTimeout)
		defer cancel()
		if s.cfg.Cluster != nil {
			var positions *engine.Positions
			ctx, positions = service.WithPositions(ctx)
			c.Response().Before(func() {
				// The log positions of the writes the request made: the
				// client sends them back to read its writes.
				if p := positions.String(); p != "" {
					c.Response().Header().Set(SequenceHeader, p)
				}
			})
		}
		if idemKey != "" {
			// Scoped to the caller: another org's (or agent's) equal key
			// names other writes.
			var idem *service.Idempotency
			ctx, idem = service.WithIdempotencyKey(ctx, tok.OrgID+"\x00"+tok.AgentID, idemKey)
			c.Response().Before(func() {
				if idem.Replayed() {
					c.Response().Header().Set(IdempotentReplayedHeader, "true")
				}
			})
		}
		req = req.WithContext(ctx)
		c.SetRequest(req)
		if routed {
			if done, err := s.route(c, r, tok); done || err != nil {
				return err
			}
		}
		return r.h(c)
	}
}

// indexBehindWarning is the Warning header (RFC 9111 section 5.5, code
// 199: miscellaneous) of every answer given while a search index is behind
// the store (engine.Store.IndexFailure). A write is stored all the same
// and answered as usual: a write answered 4xx or 5xx must have changed
// nothing, so the index's failure cannot be the write's.
const indexBehindWarning = `199 kgctx "search index behind the store: searches miss recent writes until it catches up"`

// warnIndexBehind sets the Warning header while a search index is behind.
// It runs right before the header is written (Response.Before), so a write
// is judged after its wait for the indexes: the write whose index update
// failed carries it, the one that caught the index up does not.
func (s *Server) warnIndexBehind(c echo.Context) {
	if s.app.Store.IndexFailure() != nil {
		c.Response().Header().Add("Warning", indexBehindWarning)
	}
}

// trackedBody remembers whether the body was read to its end, so that an
// error answer knows whether the connection can carry another request,
// and marks a read that timed out as the body's (bodyReadError), so that
// only it is answered 408.
type trackedBody struct {
	io.ReadCloser
	done bool
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.done = true
	}
	return n, bodyReadError(err)
}

// bodyDone reports whether r's body was read to its end.
func bodyDone(r *http.Request) bool {
	tb, ok := r.Body.(*trackedBody)
	return ok && tb.done
}

const (
	ctxToken = "kgctx.token"
	// ctxForwarded: the request was proxied here by another node of the
	// cluster, with a valid principal.
	ctxForwarded = "kgctx.forwarded"
)

// authenticate finds the request's caller: its bearer token's grant or,
// on a cluster node, the principal another node forwarded with it. A
// token this node does not know may be one just made on another node: if
// the request names a position of the global log (where tokens are
// written), it waits for that position alone, then looks again.
func (s *Server) authenticate(c echo.Context) (auth.Token, error) {
	req := c.Request()
	if sealed := req.Header.Get(PrincipalHeader); sealed != "" && s.cfg.Cluster != nil {
		tok, err := s.forwarded(req, sealed)
		if err != nil {
			return tok, err
		}
		c.Set(ctxForwarded, true)
		return tok, nil
	}
	h := req.Header.Get("Authorization")
	secret, ok := strings.CutPrefix(h, "Bearer ")
	if secret = strings.TrimSpace(secret); !ok || secret == "" {
		return auth.Token{}, apiErr(http.StatusUnauthorized, "unauthorized", "missing bearer token: send Authorization: Bearer <token>")
	}
	tok, err := s.app.Tokens.LookupToken(secret)
	if err != nil && s.cfg.Cluster != nil && req.Header.Get(SequenceHeader) != "" {
		if err := s.cfg.Cluster.WaitGlobal(req.Context(), req.Header.Get(SequenceHeader)); err != nil && !errors.Is(err, service.ErrBadSequence) {
			return auth.Token{}, err
		}
		tok, err = s.app.Tokens.LookupToken(secret)
	}
	if err != nil {
		return auth.Token{}, apiErr(http.StatusUnauthorized, "unauthorized", "unknown token")
	}
	return tok, nil
}

// isForwarded reports whether another node proxied the request here.
func isForwarded(c echo.Context) bool {
	f, _ := c.Get(ctxForwarded).(bool)
	return f
}

func token(c echo.Context) auth.Token {
	t, _ := c.Get(ctxToken).(auth.Token)
	return t
}

// checkOrg enforces that the org (and project, when given) named by a path
// or body is one the token may act on: its own org (operators: any), and
// one of its projects when it lists some.
func checkOrg(tok auth.Token, org, project string) error {
	if tok.Role == auth.RoleOperator {
		return nil
	}
	if org != tok.OrgID {
		return apiErr(http.StatusForbidden, "forbidden", "the token belongs to org %q, not %q", tok.OrgID, org)
	}
	if project != "" && len(tok.ProjectIDs) > 0 && !slices.Contains(tok.ProjectIDs, project) {
		return apiErr(http.StatusForbidden, "forbidden", "the token may not act on project %q", project)
	}
	return nil
}

func (s *Server) recoverPanic(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				s.log.Error("panic in handler", "panic", r, "path", c.Request().URL.Path)
				err = apiErr(http.StatusInternalServerError, "internal", "internal error")
			}
		}()
		return next(c)
	}
}

// Handler returns the server as an http.Handler.
func (s *Server) Handler() http.Handler { return s.e }

// Serve accepts connections on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	err := s.http.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops accepting connections and waits (up to ctx) for in-flight
// requests. The App stays open: the caller closes it afterwards.
func (s *Server) Shutdown(ctx context.Context) error {
	return s.http.Shutdown(ctx)
}

// IdempotencyKeyHeader names a write request: a retry with the same key
// (from the same caller) is applied at most once, and answered with the
// first attempt's result when it was kept (IdempotentReplayedHeader says
// so). In a cluster the key makes a write that was answered 504
// outcome_unknown safe to retry; a single node, whose writes never end
// unknown, accepts it and applies every request.
const IdempotencyKeyHeader = "Idempotency-Key"

// IdempotentReplayedHeader ("true") answers a write that its
// Idempotency-Key showed to be a retry of one applied before: nothing
// was applied again.
const IdempotentReplayedHeader = "Idempotent-Replayed"

// maxIdempotencyKey bounds an Idempotency-Key (a UUID is 36).
const maxIdempotencyKey = 255

// idempotencyKey is the request's Idempotency-Key ("" for none) once
// checked: 1 to 255 visible ASCII characters, one header.
func idempotencyKey(req *http.Request) (string, error) {
	vs := req.Header.Values(IdempotencyKeyHeader)
	if len(vs) == 0 {
		return "", nil
	}
	bad := func(why string) error {
		return apiErr(http.StatusBadRequest, "invalid_field", "%s: %s; want one value of 1 to %d visible ASCII characters (letters, digits, punctuation; no spaces), e.g. a UUID",
			IdempotencyKeyHeader, why, maxIdempotencyKey)
	}
	if len(vs) > 1 {
		return "", bad(fmt.Sprintf("sent %d times", len(vs)))
	}
	k := vs[0]
	if k == "" || len(k) > maxIdempotencyKey {
		return "", bad(fmt.Sprintf("%d characters", len(k)))
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return "", bad(fmt.Sprintf("character %d is %q", i+1, rune(k[i])))
		}
	}
	return k, nil
}

// SequenceHeader carries a write's place in the cluster's log
// ("SHARD:SEQ"): a write answers it, and a request that sends back the
// ones it got is served once this node has applied them (read your writes).
// A single node answers none.
const SequenceHeader = "X-Kgctx-Sequence"

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("BUG: a decoded request does not encode: " + err.Error())
	}
	return b
}
