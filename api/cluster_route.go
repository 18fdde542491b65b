package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
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
// not this one: it reports done once the answer is proxied.
func (s *Server) route(c echo.Context, r *route, tok auth.Token) (done bool, err error) {
	req := c.Request()
	org, err := s.orgOf(c, r, tok)
	if err != nil || org == "" {
		return false, err // the handler refuses what is wrong
	}
	targets, err := s.cfg.Cluster.Route(req.Context(), org)
	if err != nil || len(targets) == 0 {
		return false, err
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
	if req.Header.Get(ProxiedHeader) != "" {
		// Forwarded here by a node whose view of the cluster is a beat
		// old: this node has stopped applying the org's shard, and its
		// store would answer from the past. Never forwarded twice.
		return false, apiErr(http.StatusServiceUnavailable, "unavailable", "this node no longer serves org %s; retry", org).retry(1)
	}
	u, err := url.Parse(target)
	if err != nil {
		return false, err
	}
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.Header.Set(ProxiedHeader, "1")
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			s.downNodes.Store(target, time.Now())
			s.errorHandler(apiErr(http.StatusServiceUnavailable, "unavailable", "the node serving org %s (%s) did not answer: %v", org, target, err), c)
		},
	}
	p.ServeHTTP(c.Response(), req)
	return true, nil
}

// orgOf is the org a request acts on: the path's, else the orgId query
// parameter's or JSON body's (operators name the org so), else the
// token's.
func (s *Server) orgOf(c echo.Context, r *route, tok auth.Token) (string, error) {
	if strings.Contains(r.path, ":org") {
		return c.Param("org"), nil
	}
	if o := c.QueryParam("orgId"); o != "" {
		return o, nil
	}
	req := c.Request()
	if r.req != nil && !r.importBody && req.Body != nil && req.Method != http.MethodGet {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return "", err
		}
		req.Body = &trackedBody{ReadCloser: io.NopCloser(bytes.NewReader(body)), done: true}
		var v struct {
			OrgID string `json:"orgId"`
		}
		if json.Unmarshal(body, &v) == nil && v.OrgID != "" {
			return v.OrgID, nil
		}
	}
	return tok.OrgID, nil
}
