package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kgctx/kgctx/api"
	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/compose/service/cluster"
)

// clusterFlags are serve's flags for running as a node of a cluster
// (README "Running a cluster").
type clusterFlags struct {
	name, nodeID, natsURL, routes, advertise, shards string
	secretFile, creds, tlsCert, tlsKey, tlsCA        string
	embed                                            bool
	natsPort, natsClusterPort, replicas              int
	readWait                                         time.Duration
	secret                                           []byte // read by check
}

func (f *clusterFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.name, "cluster", "", "run as a node of this cluster (on NATS JetStream); without it kgctx runs alone and needs no NATS")
	fs.StringVar(&f.nodeID, "node-id", "", "this node's id in the cluster (with --cluster)")
	fs.StringVar(&f.natsURL, "nats-url", "", "the NATS cluster to join, nats://HOST:PORT[,...] (with --cluster)")
	fs.BoolVar(&f.embed, "nats-embed", false, "start an embedded nats-server with JetStream in this process (with --cluster), its data under DIR/nats")
	fs.StringVar(&f.routes, "nats-routes", "", "with --nats-embed: the NATS route URLs of every server of the NATS cluster, nats://HOST:PORT,... (this one's included)")
	fs.IntVar(&f.natsPort, "nats-port", 4222, "with --nats-embed: the NATS client port (127.0.0.1)")
	fs.IntVar(&f.natsClusterPort, "nats-cluster-port", 6222, "with --nats-embed and --nats-routes: this server's NATS route port")
	fs.StringVar(&f.advertise, "advertise", "", "this node's HTTP URL for the other nodes (default http:// and the --addr it listens on)")
	fs.StringVar(&f.shards, "shards", "s0,s1,s2", "the shard ids the cluster's first node writes to the placement map")
	fs.IntVar(&f.replicas, "replicas", 3, "copies of every shard's log in JetStream and nodes applying each shard (at most the NATS servers)")
	fs.DurationVar(&f.readWait, "read-wait", 10*time.Second, "how long a request waits for the log positions it names in X-Kgctx-Sequence")
	fs.StringVar(&f.secretFile, "cluster-secret-file", "", "the cluster secret (required with --cluster): a file only its owner can read (chmod 600) holding 32+ bytes, the same on every node; NATS credentials and every MAC of the cluster derive from it")
	fs.StringVar(&f.creds, "nats-creds", "", "with --nats-url: a NATS credentials file (user JWT and nkey seed) for a NATS of your own")
	fs.StringVar(&f.tlsCert, "nats-tls-cert", "", "with --nats-url: the client certificate (PEM) to present to NATS")
	fs.StringVar(&f.tlsKey, "nats-tls-key", "", "with --nats-url: the client certificate's key (PEM)")
	fs.StringVar(&f.tlsCA, "nats-tls-ca", "", "with --nats-url: the CA certificates (PEM) NATS's certificate is checked against")
}

func (f *clusterFlags) check(addr, adminToken string) error {
	if f.name == "" {
		if f.nodeID != "" || f.natsURL != "" || f.embed || f.routes != "" || f.advertise != "" || f.secretFile != "" ||
			f.creds != "" || f.tlsCert != "" || f.tlsKey != "" || f.tlsCA != "" {
			return errors.New("--node-id, --nats-*, --cluster-secret-file and --advertise need --cluster NAME")
		}
		return nil
	}
	if f.nodeID == "" {
		return errors.New("--cluster needs --node-id ID")
	}
	if (f.natsURL == "") == !f.embed {
		return errors.New("--cluster needs --nats-url URL (an existing NATS cluster) or --nats-embed, one of them")
	}
	if f.routes != "" && !f.embed {
		return errors.New("--nats-routes goes with --nats-embed")
	}
	if f.embed && (f.creds != "" || f.tlsCert != "" || f.tlsKey != "" || f.tlsCA != "") {
		return errors.New("--nats-creds and --nats-tls-* go with --nats-url (an embedded NATS takes the credentials derived from --cluster-secret-file)")
	}
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return errors.New("--nats-tls-cert and --nats-tls-key go together")
	}
	if adminToken == "" {
		return errors.New("a cluster node needs the operator token given ($KGCTX_ADMIN_TOKEN or --admin-token-file), the same on every node")
	}
	if err := (cluster.Config{Cluster: f.name, NodeID: f.nodeID, Shards: f.shardList()}).Validate(); err != nil {
		return err
	}
	if f.replicas < 1 {
		return errors.New("--replicas must be at least 1")
	}
	if f.readWait <= 0 {
		return errors.New("--read-wait must be positive")
	}
	if f.secretFile == "" {
		return errors.New("--cluster needs --cluster-secret-file PATH, the same secret on every node (e.g. umask 077; head -c 32 /dev/urandom | base64 > cluster.secret)")
	}
	var err error
	if f.secret, err = cluster.ReadSecret(f.secretFile); err != nil {
		return fmt.Errorf("--cluster-secret-file: %w", err)
	}
	return nil
}

// shardList is --shards as a list.
func (f *clusterFlags) shardList() []string {
	var out []string
	for _, s := range strings.Split(f.shards, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// start joins the cluster. listenAddr is where the API listens.
func (f *clusterFlags) start(ctx context.Context, app *service.App, dataDir, listenAddr string, log *slog.Logger) (*cluster.Node, error) {
	adv := f.advertise
	if adv == "" {
		host, port, err := net.SplitHostPort(listenAddr)
		if err != nil {
			return nil, err
		}
		if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
			host = "127.0.0.1"
		}
		adv = "http://" + net.JoinHostPort(host, port)
	}
	if _, err := url.Parse(adv); err != nil {
		return nil, fmt.Errorf("--advertise: %w", err)
	}
	cfg := cluster.Config{Cluster: f.name, NodeID: f.nodeID, NATSURL: f.natsURL, Advertise: adv,
		Replicas: f.replicas, ReadWait: f.readWait, Logger: log, Secret: f.secret,
		NATSCreds: f.creds, NATSTLSCert: f.tlsCert, NATSTLSKey: f.tlsKey, NATSTLSCA: f.tlsCA}
	cfg.Shards = f.shardList()
	if f.embed {
		e := &cluster.EmbedOptions{Name: f.nodeID, StoreDir: filepath.Join(dataDir, "nats"), Port: f.natsPort}
		if f.routes != "" {
			e.Cluster, e.ClusterPort = f.name, f.natsClusterPort
			for _, r := range strings.Split(f.routes, ",") {
				if r = strings.TrimSpace(r); r != "" {
					e.Routes = append(e.Routes, r)
				}
			}
		}
		cfg.Embed = e
	}
	// Start bounds its own retries (Config.StartTimeout).
	n, err := cluster.Start(ctx, app, cfg)
	if err != nil {
		return nil, fmt.Errorf("join cluster %s as %s: %w", f.name, f.nodeID, err)
	}
	return n, nil
}

// clusterNode is a cluster.Node as the API sees it (api.Cluster).
type clusterNode struct{ *cluster.Node }

func (n clusterNode) Status() api.ClusterStatus {
	st := n.Node.Status()
	out := api.ClusterStatus{Cluster: st.Cluster, Node: st.Node, Applied: st.Applied, Serving: st.Serving, Members: []api.ClusterMember{},
		Stalled: []api.ClusterStall{}}
	for _, m := range st.Members {
		out.Members = append(out.Members, api.ClusterMember{ID: m.ID, URL: m.URL, Serving: m.Serving})
	}
	for _, s := range st.Stalled {
		out.Stalled = append(out.Stalled, api.ClusterStall{Shard: s.Shard, Seq: s.Seq, Version: s.Version, Kind: s.Kind, Reason: s.Reason})
	}
	out.Moves = []api.OrgMove{}
	for _, m := range st.Moves {
		out.Moves = append(out.Moves, *orgMove(&m))
	}
	return out
}

func (n clusterNode) Placement(ctx context.Context, org string) (string, bool, *api.OrgMove, error) {
	shard, over, err := n.Node.Placement(ctx, org)
	if err != nil {
		return "", false, nil, err
	}
	return shard, over, orgMove(n.Node.Move(org)), nil
}

func (n clusterNode) Place(ctx context.Context, org, shard string) (*api.OrgMove, error) {
	m, err := n.Node.Place(ctx, org, shard)
	return orgMove(m), err
}

// orgMove is a move record as the API answers it (nil for none).
func orgMove(m *cluster.MoveRecord) *api.OrgMove {
	if m == nil {
		return nil
	}
	pos := func(shard string, seq uint64) string {
		if seq == 0 {
			return ""
		}
		return shard + ":" + strconv.FormatUint(seq, 10)
	}
	out := &api.OrgMove{ID: m.ID, OrgID: m.Org, From: m.From, To: m.To, Phase: m.Phase, Node: m.Node,
		StartedAt: time.UnixMilli(m.Started).UTC(), UpdatedAt: time.UnixMilli(m.Beat).UTC(), Copied: m.Copied, Bytes: m.Bytes, Left: m.Left,
		Fence: pos(m.From, m.Fence), Flip: pos(m.To, m.Flip), Drop: pos(m.From, m.Drop), PausedMs: m.PausedMs, Error: m.Error}
	if m.Finished > 0 {
		f := time.UnixMilli(m.Finished).UTC()
		out.FinishedAt = &f
	}
	return out
}

func (n clusterNode) Counters() api.ClusterCounters {
	c := n.Node.Counters()
	return api.ClusterCounters{RejectedWrites: c.RejectedWrites, IgnoredRecords: c.IgnoredRecords}
}
