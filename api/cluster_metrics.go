package api

import (
	"github.com/prometheus/client_golang/prometheus"
)

// clusterCollector reads a cluster node's counters at each scrape: the
// logged writes its appliers refused, by reason, and the records without
// the cluster's MAC it ignored, by bucket; and the shards it stalled on
// (its status).
type clusterCollector struct {
	c                          Cluster
	rejected, ignored, stalled *prometheus.Desc
}

func newClusterCollector(c Cluster) *clusterCollector {
	return &clusterCollector{c: c,
		rejected: prometheus.NewDesc("kgctx_cluster_rejected_writes_total",
			"Logged writes this node's appliers refused (recorded as applied, nothing changed), by reason: mac, stale, shard, kind, chunk, write.", []string{"reason"}, nil),
		ignored: prometheus.NewDesc("kgctx_cluster_ignored_records_total",
			"Member and placement records without the cluster's MAC this node ignored, by bucket.", []string{"bucket"}, nil),
		stalled: prometheus.NewDesc("kgctx_cluster_stalled_shards",
			"Shards whose log this node stopped applying at a write it cannot apply (a newer kgctx wrote it): upgrade the node; GET /v1/admin/cluster names them.", nil, nil)}
}

func (c *clusterCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.rejected
	ch <- c.ignored
	ch <- c.stalled
}

func (c *clusterCollector) Collect(ch chan<- prometheus.Metric) {
	n := c.c.Counters()
	for reason, v := range n.RejectedWrites {
		ch <- prometheus.MustNewConstMetric(c.rejected, prometheus.CounterValue, float64(v), reason)
	}
	for bucket, v := range n.IgnoredRecords {
		ch <- prometheus.MustNewConstMetric(c.ignored, prometheus.CounterValue, float64(v), bucket)
	}
	ch <- prometheus.MustNewConstMetric(c.stalled, prometheus.GaugeValue, float64(len(c.c.Status().Stalled)))
}
