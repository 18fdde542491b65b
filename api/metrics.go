package api

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kgctx/kgctx/compose"
)

// metrics are the server's Prometheus series, in a registry of its own (no
// global state: two servers in one test process do not collide).
type metrics struct {
	reg       *prometheus.Registry
	requests  *prometheus.HistogramVec
	stages    *prometheus.HistogramVec
	triplets  *prometheus.CounterVec
	blockSize *prometheus.HistogramVec
}

var latencyBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10}

func newMetrics() *metrics {
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
	m.reg.MustRegister(m.requests, m.stages, m.triplets, m.blockSize,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) observeGraphBlock(b *compose.GraphBlock) {
	m.stages.WithLabelValues("graph", "seed").Observe(b.Timings.SeedMs / 1e3)
	m.stages.WithLabelValues("graph", "expand").Observe(b.Timings.ExpandMs / 1e3)
	m.stages.WithLabelValues("graph", "policy").Observe(b.Timings.PolicyMs / 1e3)
	m.stages.WithLabelValues("graph", "render").Observe(b.Timings.RenderMs / 1e3)
	m.blockSize.WithLabelValues("graph").Observe(float64(b.ActualTokens))
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
		err := next(c)
		status := c.Response().Status
		if err != nil {
			status = toError(err).Status
			var he *echo.HTTPError
			if errors.As(err, &he) {
				status = he.Code
			}
		}
		route := c.Path()
		if route == "" {
			route = "unmatched"
		}
		took := time.Since(start)
		s.metrics.requests.WithLabelValues(route, c.Request().Method, strconv.Itoa(status)).Observe(took.Seconds())
		if ctx := c.Request().Context(); s.log.Enabled(ctx, slog.LevelInfo) {
			// The access log: never a token, a body or a query string
			// (names in a query are the caller's data).
			s.log.LogAttrs(ctx, slog.LevelInfo, "request", slog.String("method", c.Request().Method), slog.String("route", route),
				slog.Int("status", status), slog.Int64("bytes", c.Response().Size), slog.Float64("durationMs", float64(took.Microseconds())/1e3),
				slog.String("org", token(c).OrgID), slog.String("requestId", id))
		}
		return err
	}
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
