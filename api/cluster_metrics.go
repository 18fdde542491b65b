package api

import (
	"github.com/prometheus/client_golang/prometheus"
)

// clusterCollector reads a cluster node's counters at each scrape: the
// logged writes its appliers refused, by reason, and the records without
// the cluster's MAC it ignored, by bucket.
type clusterCollector struct {
	c                 Cluster
	rejected, ignored *prometheus.Desc
}

func newClusterCollector(c Cluster) *clusterCollector {
	return &clusterCollector{c: c,
		rejected: prometheus.NewDesc("kgctx_cluster_rejected_writes_total",
			"Logged writes this node's appliers refused (recorded as applied, nothing changed), by reason: mac, stale, shard, kind, chunk, write.", []string{"reason"}, nil),
		ignored: prometheus.NewDesc("kgctx_cluster_ignored_records_total",
			"Member and placement records without the cluster's MAC this node ignored, by bucket.", []string{"bucket"}, nil)}
}

func (c *clusterCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.rejected
	ch <- c.ignored
}

func (c *clusterCollector) Collect(ch chan<- prometheus.Metric) {
	n := c.c.Counters()
	for reason, v := range n.RejectedWrites {
		ch <- prometheus.MustNewConstMetric(c.rejected, prometheus.CounterValue, float64(v), reason)
	}
	for bucket, v := range n.IgnoredRecords {
		ch <- prometheus.MustNewConstMetric(c.ignored, prometheus.CounterValue, float64(v), bucket)
	}
}
