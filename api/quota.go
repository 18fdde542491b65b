package api

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/auth"
)

// quotas enforce the operator's quotas (compose.QuotaConfig): request
// rates per token and imported triplets per org, in token buckets kept on
// this node, and project sizes, checked against the store before a write
// is accepted.
//
// Concurrency: safe for concurrent use; one lock guards the buckets (a
// request takes it once, for a few map operations).
type quotas struct {
	settings *compose.Settings
	now      func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket // "r"|"w" + token id, "i" + org
	swept   time.Time
}

// bucket is a token bucket: level tokens, refilled at rate per second up
// to capacity.
type bucket struct {
	level, rate, capacity float64
	at                    time.Time
}

// take takes n tokens if it can; else it reports the seconds until it
// could (whole, at least 1).
func (b *bucket) take(now time.Time, n, rate, capacity float64) (ok bool, wait int) {
	if b.rate != rate || b.capacity != capacity { // the quota changed
		b.rate, b.capacity = rate, capacity
		b.level = math.Min(b.level, capacity)
	}
	b.level = math.Min(capacity, b.level+now.Sub(b.at).Seconds()*rate)
	b.at = now
	if b.level >= n {
		b.level -= n
		return true, 0
	}
	return false, max(1, int(math.Ceil((n-b.level)/rate)))
}

func newQuotas(settings *compose.Settings) *quotas {
	return &quotas{settings: settings, now: time.Now, buckets: map[string]*bucket{}}
}

// bucketIdle is how long an untouched bucket is kept: it is full again by
// then, so forgetting it changes nothing.
const bucketIdle = 2 * time.Minute

// takeLocked takes n from the bucket under key, made full if new.
func (q *quotas) takeLocked(key string, n, rate, capacity float64) (bool, int) {
	now := q.now()
	if now.Sub(q.swept) > bucketIdle {
		for k, b := range q.buckets {
			if now.Sub(b.at) > bucketIdle {
				delete(q.buckets, k)
			}
		}
		q.swept = now
	}
	b := q.buckets[key]
	if b == nil {
		b = &bucket{level: capacity, rate: rate, capacity: capacity, at: now}
		q.buckets[key] = b
	}
	return b.take(now, n, rate, capacity)
}

// writeRoute reports whether a route changes something (its requests
// count against writesPerSecond); the context blocks, queries, verb
// events and drains are reads.
func writeRoute(r *route) bool {
	switch r.method {
	case http.MethodGet, http.MethodHead:
		return false
	}
	if strings.HasPrefix(r.path, "/v1/context/") {
		return false
	}
	for _, read := range []string{"/verb-events", "/pending/drain"} {
		if strings.HasSuffix(r.path, read) {
			return false
		}
	}
	return true
}

// allowRequest charges one request of tok to its read or write rate.
// Operators are not limited, nor is /mcp (each tool call is a request of
// its own route, charged there).
func (q *quotas) allowRequest(tok auth.Token, r *route) error {
	if tok.Role == auth.RoleOperator || r.path == "/mcp" || tok.ID == "" {
		return nil
	}
	l, err := q.settings.QuotaFor(tok.OrgID)
	if err != nil {
		return err
	}
	kind, rate, name := "r", l.ReadsPerSecond, "readsPerSecond"
	if writeRoute(r) {
		kind, rate, name = "w", l.WritesPerSecond, "writesPerSecond"
	}
	if compose.Unlimited(rate) || rate == 0 {
		return nil
	}
	q.mu.Lock()
	ok, wait := q.takeLocked(kind+tok.ID, 1, rate, math.Max(1, rate))
	q.mu.Unlock()
	if !ok {
		return apiErr(http.StatusTooManyRequests, "rate_limited", "this token is over its quota of %s requests per second (%s); retry in %d s", fmtRate(rate), name, wait).retry(wait)
	}
	return nil
}

func fmtRate(r float64) string { return strconv.FormatFloat(r, 'f', -1, 64) }

// takeImport charges n imported triplets to org's per-minute quota; the
// returned func gives them back (the write failed).
func (q *quotas) takeImport(org string, n int) (refund func(), err error) {
	none := func() {}
	l, err := q.settings.QuotaFor(org)
	if err != nil {
		return none, err
	}
	lim := l.ImportTripletsPerMinute
	if compose.Unlimited(lim) || lim == 0 {
		return none, nil
	}
	if int64(n) > lim {
		return none, quotaExceeded("the import has %d triplets, over org %s's quota of %d imported triplets per minute (importTripletsPerMinute); split it", n, org, lim)
	}
	q.mu.Lock()
	ok, wait := q.takeLocked("i"+org, float64(n), float64(lim)/60, float64(lim))
	q.mu.Unlock()
	if !ok {
		return none, apiErr(http.StatusTooManyRequests, "rate_limited", "org %s is over its quota of %d imported triplets per minute (importTripletsPerMinute); retry in %d s", org, lim, wait).retry(wait)
	}
	return func() {
		q.mu.Lock()
		if b := q.buckets["i"+org]; b != nil {
			b.level = math.Min(b.capacity, b.level+float64(n))
		}
		q.mu.Unlock()
	}, nil
}

func quotaExceeded(format string, a ...any) *Error {
	return apiErr(http.StatusUnprocessableEntity, "quota_exceeded", format, a...)
}

// checkSizes refuses a write that would take a project past its size
// quotas: grow is what the write adds, per project.
func (q *quotas) checkSizes(st *engine.Store, grow map[engine.Tenant]engine.Growth) error {
	for t, g := range grow {
		l, err := q.settings.QuotaFor(t.Org)
		if err != nil {
			return err
		}
		have, err := st.Size(t)
		if err != nil {
			return err
		}
		for _, c := range []struct {
			name      string
			have, add int
			limit     int64
			what      string
		}{
			{"nodesPerProject", have.Nodes, g.Nodes, l.NodesPerProject, "nodes"},
			{"edgesPerProject", have.Edges, g.Edges, l.EdgesPerProject, "edges"},
			{"observationsPerProject", have.Observations, g.Observations, l.ObservationsPerProject, "observations"},
		} {
			if c.add > 0 && !compose.Unlimited(c.limit) && c.limit > 0 && int64(c.have+c.add) > c.limit {
				return quotaExceeded("project %s of org %s holds %d %s and this write adds %d, over its quota of %d (%s); nothing was written",
					t.Project, t.Org, c.have, c.what, c.add, c.limit, c.name)
			}
		}
	}
	return nil
}

// checkImport applies the import quotas to an import of ts into t:
// project sizes, then the org's triplets per minute. refund gives the
// triplets back when the write then fails.
func (s *Server) checkImport(t engine.Tenant, ts []engine.TripletInput) (refund func(), err error) {
	grow, err := s.app.Store.ImportGrowth(t, ts)
	if err != nil {
		return func() {}, err
	}
	if err := s.quota.checkSizes(s.app.Store, grow); err != nil {
		return func() {}, err
	}
	return s.quota.takeImport(t.Org, len(ts))
}

func (s *Server) handleGetQuotas(c echo.Context) error {
	q, err := s.app.Settings.Quotas()
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, q)
}

func (s *Server) handlePutQuotas(c echo.Context) error {
	var q compose.QuotaConfig
	if err := decodeJSON(c, &q); err != nil {
		return err
	}
	if err := q.Validate(); err != nil {
		return err
	}
	if _, err := s.app.Write(c.Request().Context(), service.Write{Kind: service.WriteQuotas, Doc: mustJSON(q)}); err != nil {
		return err
	}
	return s.handleGetQuotas(c)
}
