package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/kgctx/kgctx/engine/auth"
)

// routedByOrg reports whether a route acts on one org's data, so that a
// cluster serves it on a node holding the org (the /v1 routes but whoami
// and the operator's cluster-wide settings).
func routedByOrg(r *route) bool {
	switch {
	case r.minRole == "", !strings.HasPrefix(r.path, "/v1/"), r.path == "/v1/whoami":
		return false
	case strings.HasPrefix(r.path, "/v1/admin/"):
		return strings.Contains(r.path, ":org")
	}
	return true
}

// route serves the request from the node that serves its org when that is
// not this one: it reports done once the answer is proxied. The proxied
// request carries the caller as a principal signed with the cluster
// secret (PrincipalHeader), never the caller's bearer token.
func (s *Server) route(c echo.Context, r *route, tok auth.Token) (done bool, err error) {
	req := c.Request()
	org, err := s.orgOf(c, r, tok)
	if err != nil || org == "" {
		return false, err // the handler refuses what is wrong
	}
	targets, err := s.routeTargets(c, r, org)
	if err != nil {
		return false, err
	}
	if len(targets) == 0 {
		// Served here: from a shard this node may have stopped applying
		// at a write it cannot apply (a newer binary's), when no other
		// node serves it. The answer is what was applied: say so.
		if st, ok := s.cfg.Cluster.(staleShards); ok && st.Stale(req.Context(), org) {
			c.Response().Before(func() { c.Response().Header().Add("Warning", staleWarning) })
		}
		return false, nil
	}
	if slices.Contains(targets, "") && isForwarded(c) {
		// A session sent here by a node that reads the members otherwise
		// for a moment: this node serves the org; never forwarded twice.
		return false, nil
	}
	if isForwarded(c) {
		// Forwarded here by a node whose view of the cluster is a beat
		// old: this node has stopped applying the org's shard, and its
		// store would answer from the past. Never forwarded twice.
		return false, apiErr(http.StatusServiceUnavailable, "unavailable", "this node no longer serves org %s; retry", org).retry(1)
	}
	// The first candidate that did not fail lately: a node killed a
	// moment ago is listed until the members bucket forgets it (or, NATS
	// without a quorum, until it is back).
	target := targets[0]
	for _, t := range targets {
		if at, ok := s.downNodes.Load(t); !ok || time.Since(at.(time.Time)) > 10*time.Second {
			target = t
			break
		}
	}
	if target == "" {
		return false, nil // the session's node, this one, is the first that answers
	}
	u, err := url.Parse(target)
	if err != nil {
		return false, err
	}
	pr := NewPrincipal(tok, req)
	pr.To = target
	sealed := pr.Seal(s.cfg.Cluster.PrincipalMAC)
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.Header.Del("Authorization")
			pr.Out.Header.Set(PrincipalHeader, sealed)
			pr.Out.Header.Set(ProxiedHeader, "1")
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			s.downNodes.Store(target, time.Now())
			// The node's address stays in the log: a client is not told
			// where the cluster's nodes are.
			s.log.Warn("cluster: a proxied request failed", "org", org, "node", target, "err", err)
			s.errorHandler(apiErr(http.StatusServiceUnavailable, "unavailable", "the node serving org %s did not answer; retry", org).retry(1), c)
		},
	}
	p.ServeHTTP(c.Response(), req)
	return true, nil
}

// sessionRouter is a cluster that serves each session's in-session
// requests on one node (cluster.Node.RouteSession): the injector's
// memory of a session lives in that node's memory.
type sessionRouter interface {
	// RouteSession answers none when this node serves org's session,
	// else the base URLs of the nodes serving org, that session's node
	// first, "" standing for this node.
	RouteSession(ctx context.Context, org, session string) ([]string, error)
}

// routeTargets are the nodes that serve the request (Cluster.Route), or
// for a session's in-session route the session's node first
// (sessionRouter).
func (s *Server) routeTargets(c echo.Context, r *route, org string) ([]string, error) {
	if sr, ok := s.cfg.Cluster.(sessionRouter); ok && r.session {
		return sr.RouteSession(c.Request().Context(), org, c.Param("sessionId"))
	}
	return s.cfg.Cluster.Route(c.Request().Context(), org)
}

// orgOf is the org the route's handler will act on, so that the request
// is served where that org is: the token's for any caller but an operator
// (every handler refuses, or ignores, another org named by one); for an
// operator, the path's org, else the one the handler reads from the body
// (a session route: its orgId, else ?orgId=; a block: scope.orgId, else
// identity.orgId; any other: orgId). "" routes nowhere: the handler
// answers here.
func (s *Server) orgOf(c echo.Context, r *route, tok auth.Token) (string, error) {
	if tok.Role != auth.RoleOperator {
		return tok.OrgID, nil
	}
	if strings.Contains(r.path, ":org") {
		return c.Param("org"), nil
	}
	var v struct {
		OrgID string `json:"orgId"`
		Scope struct {
			OrgID string `json:"orgId"`
		} `json:"scope"`
		Identity struct {
			OrgID string `json:"orgId"`
		} `json:"identity"`
	}
	req := c.Request()
	if r.req != nil && !r.importBody && req.Body != nil && req.Method != http.MethodGet {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return "", err
		}
		req.Body = &trackedBody{ReadCloser: io.NopCloser(bytes.NewReader(body)), done: true}
		if json.Unmarshal(body, &v) != nil {
			return "", nil // the handler refuses it
		}
	}
	switch {
	case r.path == "/v1/context/graph" || r.path == "/v1/context/rag":
		if v.Scope.OrgID != "" {
			return v.Scope.OrgID, nil
		}
		return v.Identity.OrgID, nil
	case strings.HasPrefix(r.path, "/v1/sessions/"):
		if v.OrgID != "" {
			return v.OrgID, nil
		}
		return c.QueryParam("orgId"), nil
	}
	return v.OrgID, nil
}

// staleShards is implemented by a Cluster that can say whether it answers
// an org from a shard it stopped applying (a stall: a write of a newer
// binary it cannot apply). Optional: a Cluster without it never warns.
type staleShards interface {
	Stale(ctx context.Context, org string) bool
}

// staleWarning is the Warning header (RFC 9111, code 110: response is
// stale) of an answer from a shard this node stopped applying.
const staleWarning = `110 kgctx "this node stopped applying the org's shard at a write of a newer kgctx: the answer leaves out the writes since; upgrade this node"`
