package api

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
)

// metrics are the server's Prometheus series, in a registry of its own (no
// global state: two servers in one test process do not collide).
type metrics struct {
	reg       *prometheus.Registry
	requests  *prometheus.HistogramVec
	stages    *prometheus.HistogramVec
	triplets  *prometheus.CounterVec
	blockSize *prometheus.HistogramVec
	blocks    *prometheus.CounterVec
	denied    *prometheus.CounterVec
}

var latencyBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10}

func newMetrics(app *service.App) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "kgctx_http_request_duration_seconds", Help: "HTTP request latency by route, method and status.",
		Buckets: latencyBuckets}, []string{"route", "method", "code"})
	m.stages = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "kgctx_block_stage_duration_seconds", Help: "Time spent in each stage of composing a block.",
		Buckets: latencyBuckets}, []string{"block", "stage"})
	m.triplets = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kgctx_import_triplets_total", Help: "Triplets accepted by imports."}, []string{"result"})
	m.blockSize = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "kgctx_block_tokens", Help: "Tokens of composed blocks.", Buckets: prometheus.ExponentialBuckets(16, 2, 12)}, []string{"block"})
	m.blocks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kgctx_blocks_total", Help: "Blocks composed, by block and outcome (empty or not)."}, []string{"block", "outcome"})
	m.denied = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kgctx_block_denied_lines_total", Help: "Lines left out of blocks by the Cedar check."}, []string{"block"})
	m.reg.MustRegister(m.requests, m.stages, m.triplets, m.blockSize, m.blocks, m.denied,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.reg.MustRegister(newStoreCollector(app))
	return m
}

// storeCollector reads the store's sizes, whether its search index is
// behind, the delivery queues and the embedder's counters at each scrape. No org or project label: the
// series stay few however many tenants there are.
type storeCollector struct {
	app                                       *service.App
	nodes, edges, obs, leases, injects        *prometheus.Desc
	embedCalls, embedErrors, embedSeconds, up *prometheus.Desc
	indexBehind                               *prometheus.Desc
}

func newStoreCollector(app *service.App) *storeCollector {
	d := func(name, help string) *prometheus.Desc { return prometheus.NewDesc(name, help, nil, nil) }
	return &storeCollector{app: app,
		nodes: d("kgctx_nodes", "Live nodes, every org."), edges: d("kgctx_edges", "Live edges (triplets), every org."),
		obs: d("kgctx_observations", "Live observations, every org."), leases: d("kgctx_leases_held", "Session leases not expired."),
		injects:      d("kgctx_inject_queue_depth", "Injects enqueued and not yet acked, every session."),
		embedCalls:   d("kgctx_embedder_calls_total", "Calls of the embedder (imports, observations, queries)."),
		embedErrors:  d("kgctx_embedder_errors_total", "Failed calls of the embedder."),
		embedSeconds: d("kgctx_embedder_seconds_total", "Time spent in the embedder."),
		up:           d("kgctx_store_scrape_ok", "1 when the store's gauges could be read at this scrape."),
		indexBehind:  d("kgctx_index_behind", "1 when a search index failed to apply a stored write and has not caught up: searches miss writes."),
	}
}

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.nodes, c.edges, c.obs, c.leases, c.injects, c.embedCalls, c.embedErrors, c.embedSeconds, c.up, c.indexBehind} {
		ch <- d
	}
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	g := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	ok := 1.0
	if err := c.app.Store.View(func(v *engine.View) error {
		g(c.nodes, float64(v.NodeCount()))
		g(c.edges, float64(v.EdgeCount()))
		g(c.obs, float64(v.ObservationCount()))
		return nil
	}); err != nil {
		ok = 0
	}
	if leases, injects, err := c.app.Delivery.Depth(time.Now()); err == nil {
		g(c.leases, float64(leases))
		g(c.injects, float64(injects))
	} else {
		ok = 0
	}
	if e := c.app.Embedder; e != nil {
		calls, errs, secs := e.Stats()
		ch <- prometheus.MustNewConstMetric(c.embedCalls, prometheus.CounterValue, float64(calls))
		ch <- prometheus.MustNewConstMetric(c.embedErrors, prometheus.CounterValue, float64(errs))
		ch <- prometheus.MustNewConstMetric(c.embedSeconds, prometheus.CounterValue, secs)
	}
	behind := 0.0
	if c.app.Store.IndexFailure() != nil {
		behind = 1
	}
	g(c.indexBehind, behind)
	g(c.up, ok)
}

// observeBlock counts a composed block by outcome and its denied lines.
func (m *metrics) observeBlock(block string, empty bool, denied int) {
	outcome := "nonempty"
	if empty {
		outcome = "empty"
	}
	m.blocks.WithLabelValues(block, outcome).Inc()
	if denied > 0 {
		m.denied.WithLabelValues(block).Add(float64(denied))
	}
}

// MetricsHandler serves the server's metrics in the Prometheus text
// format, without a token (for --metrics-addr's own listener).
func (s *Server) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{})
}

func (m *metrics) observeGraphBlock(b *compose.GraphBlock) {
	m.stages.WithLabelValues("graph", "seed").Observe(b.Timings.SeedMs / 1e3)
	m.stages.WithLabelValues("graph", "expand").Observe(b.Timings.ExpandMs / 1e3)
	m.stages.WithLabelValues("graph", "policy").Observe(b.Timings.PolicyMs / 1e3)
	m.stages.WithLabelValues("graph", "render").Observe(b.Timings.RenderMs / 1e3)
	m.blockSize.WithLabelValues("graph").Observe(float64(b.ActualTokens))
	m.observeBlock("graph", b.Block == "", b.Denied)
}

// observe times every request under its route pattern (not its raw path,
// which would make a series per node id).
func (s *Server) observe(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		id := c.Request().Header.Get(requestIDHeader)
		if !validRequestID(id) {
			id = newRequestID()
		}
		c.Response().Header().Set(requestIDHeader, id)
		if err := next(c); err != nil {
			// Answered here rather than by Echo after this returns, so
			// that the status and the bytes of an error answer are known
			// to the metrics and the access log.
			c.Error(err)
		}
		status := c.Response().Status
		route := c.Path()
		if route == "" {
			route = "unmatched"
		}
		method := methodLabel(c.Request().Method)
		took := time.Since(start)
		s.metrics.requests.WithLabelValues(route, method, strconv.Itoa(status)).Observe(took.Seconds())
		if ctx := c.Request().Context(); s.log.Enabled(ctx, slog.LevelInfo) {
			// The access log: never a token, a body or a query string
			// (names in a query are the caller's data).
			s.log.LogAttrs(ctx, slog.LevelInfo, "request", slog.String("method", method), slog.String("route", route),
				slog.Int("status", status), slog.Int64("bytes", c.Response().Size), slog.Float64("durationMs", float64(took.Microseconds())/1e3),
				slog.String("org", token(c).OrgID), slog.String("requestId", id))
		}
		return nil
	}
}

// methodLabel is a request's method as a label value: one of the methods
// HTTP defines, else "other". A label value never comes from a request as
// sent: made-up methods would make a series each.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete,
		http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "other"
}

func (s *Server) handleMetrics(c echo.Context) error {
	promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}).ServeHTTP(c.Response(), c.Request())
	return nil
}

// requestIDHeader names a request for the logs: taken from the caller when
// it sends a sane one, else made, and echoed in the answer.
const requestIDHeader = "X-Request-Id"

// validRequestID accepts 1 to 128 printable ASCII characters other than
// spaces (what a log line can carry as is).
func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}

// newRequestID makes a request id: 16 random hex digits.
func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
