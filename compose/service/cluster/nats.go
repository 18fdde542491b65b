package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
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
	// Keys, when set, require credentials derived from the cluster secret
	// of every client (one user, limited to the cluster's subjects) and
	// route; nil serves anyone (tests of an open NATS).
	Keys *Keys
	// MaxPayload bounds a message (default 1 MiB, NATS's).
	MaxPayload int32
	// Logger receives the server's log lines when $KGCTX_NATS_LOG is set.
	Logger *slog.Logger
}

// nodePermissions are a node's on its cluster's embedded NATS: publish
// its writes and notices, the JetStream API calls it makes (account info,
// stream info and create, direct gets, its watchers' consumers: never a
// delete, purge or update of a stream), its buckets' puts and the flow
// control replies of its watchers; subscribe to its notices and to the
// replies of its requests (_INBOX, where the watchers' messages come
// too). TestEmbeddedNATSRefusesStrangers checks a node works within
// them, and the cluster's end-to-end test that no node meets a
// permissions violation.
func nodePermissions(cluster string) *server.Permissions {
	pub := []string{"kgctx." + cluster + ".>",
		"$JS.API.INFO", "$JS.API.STREAM.INFO.*", "$JS.API.STREAM.CREATE.*", "$JS.API.DIRECT.GET.>",
		"$JS.API.CONSUMER.CREATE.>", "$JS.API.CONSUMER.DELETE.>", "$JS.FC.>",
		"$KV.kgctx_" + cluster + "_placement.>", "$KV.kgctx_" + cluster + "_nodes.>"}
	sub := []string{"kgctx." + cluster + ".>", "_INBOX.>"}
	return &server.Permissions{Publish: &server.SubjectPermission{Allow: pub}, Subscribe: &server.SubjectPermission{Allow: sub}}
}

// StartNATS starts an embedded nats-server with JetStream and waits until
// it accepts connections.
func StartNATS(o EmbedOptions) (*server.Server, error) {
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	opts := &server.Options{ServerName: o.Name, Host: o.Host, Port: o.Port, JetStream: true, StoreDir: o.StoreDir,
		NoSigs: true, NoLog: true, MaxPayload: o.MaxPayload}
	if o.Keys != nil {
		user, pass := o.Keys.NATSUser()
		opts.Users = []*server.User{{Username: user, Password: pass, Permissions: nodePermissions(o.Keys.cluster)}}
	}
	if o.Cluster != "" {
		opts.Cluster = server.ClusterOpts{Name: o.Cluster, Host: o.Host, Port: o.ClusterPort}
		if o.Keys != nil {
			opts.Cluster.Username, opts.Cluster.Password = natsUser, o.Keys.natsRoute
		}
		for _, r := range o.Routes {
			u, err := url.Parse(r)
			if err != nil {
				return nil, fmt.Errorf("cluster: route %q: %w", r, err)
			}
			if o.Keys != nil && u.User == nil {
				u.User = url.UserPassword(natsUser, o.Keys.natsRoute)
			}
			opts.Routes = append(opts.Routes, u)
		}
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("cluster: nats-server: %w", err)
	}
	lg := &natsLogger{log: o.Logger, verbose: os.Getenv("KGCTX_NATS_LOG") != "", refused: map[string]time.Time{}}
	if lg.log == nil {
		lg.log = slog.Default()
	}
	s.SetLogger(lg, false, false)
	embedded.Store(s, lg)
	go s.Start()
	if !s.ReadyForConnections(20 * time.Second) {
		s.Shutdown()
		return nil, fmt.Errorf("cluster: nats-server %s did not start", o.Name)
	}
	return s, nil
}

// embedded maps the servers StartNATS started to their loggers.
var embedded sync.Map // *server.Server -> *natsLogger

// natsLogger passes an embedded server's log to slog ($KGCTX_NATS_LOG)
// and notes the routes that refused this server's credentials, or whose
// credentials it refused: the sign of a cluster secret that differs.
type natsLogger struct {
	log     *slog.Logger
	verbose bool

	mu      sync.Mutex
	refused map[string]time.Time // remote route address -> when
}

func (l *natsLogger) note(level slog.Level, format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	remote, rest, route := strings.Cut(msg, " - rid:")
	switch {
	case route && strings.Contains(rest, "Route Error") && strings.Contains(rest, "Authorization Violation"):
		// A server this one dialled refused its route credentials.
		l.mu.Lock()
		_, seen := l.refused[remote]
		l.refused[remote] = time.Now()
		l.mu.Unlock()
		if !seen {
			l.log.Warn("cluster: the NATS server at this route refused this server's credentials: its cluster secret differs from this node's", "route", remote)
		}
	case route && strings.Contains(rest, "authentication error"):
		l.log.Debug("cluster: a NATS route was refused: its credentials are not of this cluster's secret", "from", remote)
	}
	if l.verbose {
		l.log.Log(context.Background(), level, "nats: "+msg)
	}
}

func (l *natsLogger) Noticef(format string, v ...any) { l.note(slog.LevelInfo, format, v...) }
func (l *natsLogger) Warnf(format string, v ...any)   { l.note(slog.LevelWarn, format, v...) }
func (l *natsLogger) Fatalf(format string, v ...any)  { l.note(slog.LevelError, format, v...) }
func (l *natsLogger) Errorf(format string, v ...any)  { l.note(slog.LevelError, format, v...) }
func (l *natsLogger) Debugf(format string, v ...any) {
	if l.verbose {
		l.note(slog.LevelDebug, format, v...)
	}
}
func (l *natsLogger) Tracef(string, ...any) {}

// routesRefused says whether the embedded server s is cut off from its
// NATS cluster by credentials: no route up, and the servers of all its
// routes but one (itself, listed among them) refused its credentials.
func routesRefused(s *server.Server, routes int) bool {
	v, ok := embedded.Load(s)
	if !ok || routes == 0 || s.NumRoutes() > 0 {
		return false
	}
	l := v.(*natsLogger)
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.refused) >= max(1, routes-1)
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
