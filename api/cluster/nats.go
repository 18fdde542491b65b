package cluster

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// EmbedOptions configure a nats-server run inside the kgctx process
// (serve --nats-embed), for small deployments and tests.
type EmbedOptions struct {
	Name     string // server name, unique in the NATS cluster
	StoreDir string // JetStream's directory
	Host     string // client listener host (default 127.0.0.1)
	Port     int    // client port (-1: a free one)
	// Cluster, ClusterPort and Routes join the other servers: the NATS
	// cluster's name, this server's route port (-1: a free one) and the
	// others' route URLs (nats://host:port).
	Cluster     string
	ClusterPort int
	Routes      []string
}

// StartNATS starts an embedded nats-server with JetStream and waits until
// it accepts connections.
func StartNATS(o EmbedOptions) (*server.Server, error) {
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	opts := &server.Options{ServerName: o.Name, Host: o.Host, Port: o.Port, JetStream: true, StoreDir: o.StoreDir,
		NoSigs: true, NoLog: os.Getenv("KGCTX_NATS_LOG") == "", Logtime: true}
	if o.Cluster != "" {
		opts.Cluster = server.ClusterOpts{Name: o.Cluster, Host: o.Host, Port: o.ClusterPort}
		for _, r := range o.Routes {
			u, err := url.Parse(r)
			if err != nil {
				return nil, fmt.Errorf("cluster: route %q: %w", r, err)
			}
			opts.Routes = append(opts.Routes, u)
		}
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("cluster: nats-server: %w", err)
	}
	if !opts.NoLog {
		s.ConfigureLogger()
	}
	go s.Start()
	if !s.ReadyForConnections(20 * time.Second) {
		s.Shutdown()
		return nil, fmt.Errorf("cluster: nats-server %s did not start", o.Name)
	}
	return s, nil
}

// WaitJetStream waits until every server's JetStream answers: in a
// cluster, a meta leader elected and each server current with it and with
// the streams it holds. A freshly started cluster refuses requests ("no
// responders") until then.
func WaitJetStream(ctx context.Context, srvs ...*server.Server) error {
	for _, s := range srvs {
		for {
			h := s.Healthz(nil)
			if h.Status == "ok" && (!s.JetStreamIsClustered() || s.JetStreamIsCurrent()) {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("cluster: JetStream of %s not ready: %s (%w)", s.Name(), h.Error, ctx.Err())
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return nil
}
