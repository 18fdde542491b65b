package bench

import (
	"bufio"
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kgctx/kgctx/api"
	"github.com/kgctx/kgctx/bench/workload"
	"github.com/kgctx/kgctx/engine"
)

// ClusterConfig configures `kgctx bench cluster`: the same FB15k-237
// import and blocks over HTTP against `kgctx serve` alone, a cluster of one
// node and a cluster of three, each node its own process on loopback.
type ClusterConfig struct {
	// Executable is the kgctx binary the nodes run (`kgctx serve`).
	Executable string
	Datasets   string
	// Triplets imported (default 50,000 of FB15k-237's train split), in
	// batches of Batch (default 1,000) by Workers concurrent clients
	// (default 2) spread over the nodes.
	Triplets, Batch, Workers int
	// Queries: blocks asked, round robin over the nodes (default 500).
	Queries  int
	Seed     uint64
	Progress io.Writer
	// UpgradeFrom, when set, is an older kgctx binary: the run ends with
	// a rolling upgrade from it to Executable (RunUpgrade).
	UpgradeFrom string
	// MoveTriplets, when positive, adds an org's move under writes
	// (RunMove): the org holds that many triplets before it moves.
	MoveTriplets int
}

// ClusterReport is what `kgctx bench cluster` measured.
type ClusterReport struct {
	Machine Machine      `json:"machine"`
	Graph   string       `json:"graph"`
	Runs    []ClusterRun `json:"runs"`
	// Upgrade: the rolling upgrade, with UpgradeFrom.
	Upgrade *UpgradeReport `json:"upgrade,omitempty"`
	// Move: the org's move under writes, with MoveTriplets.
	Move *MoveReport `json:"move,omitempty"`
}

// ClusterRun is one deployment's figures.
type ClusterRun struct {
	Deployment string `json:"deployment"`
	Nodes      int    `json:"nodes"`
	// Write throughput: triplets acknowledged per second over HTTP (a
	// cluster acknowledges after JetStream's replicated ack and after the
	// receiving node applied the write).
	Triplets     int     `json:"triplets"`
	TripletsPerS float64 `json:"tripletsPerS"`
	// CaughtUpMs: after the last acknowledgement, until every node had
	// applied every write.
	CaughtUpMs float64 `json:"caughtUpMs"`
	// Blocks over HTTP, round robin over the nodes.
	Blocks  Latency `json:"blocks"`
	StartMs float64 `json:"startMs"` // until every node listened
}

func (c *ClusterConfig) say(format string, a ...any) {
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, format+"\n", a...)
	}
}

// RunCluster runs the three deployments in turn.
func RunCluster(ctx context.Context, cfg ClusterConfig) (*ClusterReport, error) {
	if cfg.Executable == "" {
		return nil, errors.New("bench cluster: the kgctx binary is required")
	}
	if cfg.Triplets <= 0 {
		cfg.Triplets = 50_000
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 1000
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	if cfg.Queries <= 0 {
		cfg.Queries = 500
	}
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	fb, err := workload.LoadFB15k(cfg.Datasets)
	if err != nil {
		return nil, err
	}
	var lines [][]byte
	err = fb.Each(func(t *engine.TripletInput) error {
		if len(lines) >= cfg.Triplets {
			return errStop
		}
		b, err := json.Marshal(t)
		lines = append(lines, b)
		return err
	})
	if err != nil && !errors.Is(err, errStop) {
		return nil, err
	}
	var batches [][]byte
	for i := 0; i < len(lines); i += cfg.Batch {
		batches = append(batches, bytes.Join(lines[i:min(i+cfg.Batch, len(lines))], []byte("\n")))
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 3))
	var bodies [][]byte
	for range cfg.Queries {
		q := fb.Queries[rng.IntN(len(fb.Queries))]
		b, _ := json.Marshal(map[string]any{"scope": map[string]string{"orgId": Tenant.Org, "projectId": Tenant.Project},
			"queryText": q, "budgetTokens": 500, "topK": 10, "neighborhoodDepth": 2})
		bodies = append(bodies, b)
	}
	rep := &ClusterReport{Machine: machine(), Graph: fmt.Sprintf("FB15k-237 train, first %d triplets", len(lines))}
	for _, d := range []struct {
		name  string
		nodes int
		alone bool
	}{{"kgctx serve (no cluster)", 1, true}, {"cluster of 1 (JetStream R1)", 1, false}, {"cluster of 3 (JetStream R3)", 3, false}} {
		cfg.say("%s: starting", d.name)
		run, err := runDeployment(ctx, cfg, d.nodes, d.alone, batches, len(lines), bodies)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.name, err)
		}
		run.Deployment = d.name
		cfg.say("%s: %.0f triplets/s, blocks p50 %.2f ms", d.name, run.TripletsPerS, run.Blocks.P50)
		rep.Runs = append(rep.Runs, run)
	}
	if cfg.MoveTriplets > 0 {
		mv, err := RunMove(ctx, MoveConfig{Executable: cfg.Executable, Triplets: cfg.MoveTriplets, Progress: cfg.Progress})
		if err != nil {
			return nil, fmt.Errorf("org move: %w", err)
		}
		rep.Move = mv
		if !mv.Identical() {
			return rep, fmt.Errorf("org move: %d acknowledged triplets missing, nodes whose copy differs: %v", mv.Missing, mv.Differ)
		}
	}
	if cfg.UpgradeFrom != "" {
		up, err := RunUpgrade(ctx, UpgradeConfig{From: cfg.UpgradeFrom, To: cfg.Executable, Progress: cfg.Progress})
		if err != nil {
			return nil, fmt.Errorf("rolling upgrade: %w", err)
		}
		rep.Upgrade = up
		if !up.Identical() {
			return rep, fmt.Errorf("rolling upgrade: %d acknowledged triplets missing, nodes whose store differs: %v", up.Missing, up.Differ)
		}
	}
	return rep, nil
}

var errStop = errors.New("enough")

// benchNode is one `kgctx serve` process.
type benchNode struct {
	cmd    *exec.Cmd
	url    string
	out    *bytes.Buffer
	mu     sync.Mutex
	listen chan string // the address it listens on, once; closed at exit
	exited chan struct{}
}

// launchNode starts `exe args...` (a `kgctx serve`).
func launchNode(ctx context.Context, exe string, args []string) (*benchNode, error) {
	cmd := exec.CommandContext(ctx, exe, args...)
	n := &benchNode{cmd: cmd, out: &bytes.Buffer{}, listen: make(chan string, 1), exited: make(chan struct{})}
	cmd.Stderr = lockedBuffer{n}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		found := false
		for sc.Scan() {
			if m := listenLine.FindStringSubmatch(sc.Text()); m != nil && !found {
				n.listen <- m[1]
				found = true
			}
		}
		close(n.listen)
		cmd.Wait()
		close(n.exited)
	}()
	return n, nil
}

// waitListening waits for the node's address (n.url).
func (n *benchNode) waitListening(d time.Duration) error {
	select {
	case u, ok := <-n.listen:
		if !ok {
			return fmt.Errorf("exited before listening: %s", n.stderr())
		}
		n.mu.Lock()
		n.url = u
		n.mu.Unlock()
		return nil
	case <-time.After(d):
		return fmt.Errorf("did not listen within %s: %s", d, n.stderr())
	}
}

// base is the node's base URL.
func (n *benchNode) base() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.url
}

// stop ends the node with SIGTERM (a clean shutdown), killing it after
// 20 s.
func (n *benchNode) stop() {
	n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.exited:
	case <-time.After(20 * time.Second):
		n.cmd.Process.Kill()
		<-n.exited
	}
}

func (n *benchNode) stderr() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.out.String()
}

type lockedBuffer struct {
	n *benchNode
}

func (w lockedBuffer) Write(p []byte) (int, error) {
	w.n.mu.Lock()
	defer w.n.mu.Unlock()
	return w.n.out.Write(p)
}

var listenLine = regexp.MustCompile(`listening on (http://\S+)`)

func freeLoopbackPorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// clusterDir makes a temporary folder for a cluster's nodes (pattern as
// os.MkdirTemp's), with the cluster secret every node is given (a private
// file) and an operator token.
func clusterDir(pattern string) (root, admin, secret string, err error) {
	if root, err = os.MkdirTemp("", pattern); err != nil {
		return "", "", "", err
	}
	var tb [24]byte
	crand.Read(tb[:])
	var sb [32]byte
	crand.Read(sb[:])
	secret = filepath.Join(root, "cluster.secret")
	if err := os.WriteFile(secret, []byte(hex.EncodeToString(sb[:])), 0o600); err != nil {
		os.RemoveAll(root)
		return "", "", "", err
	}
	return root, hex.EncodeToString(tb[:]), secret, nil
}

// localCluster is the folder, operator token, secret and NATS route ports
// of a cluster of kgctx nodes started on loopback, each with an embedded
// NATS server (a rolling upgrade, an org move).
type localCluster struct {
	root, admin, secret string
	ports               []int
	routes              []string
}

// newLocalCluster makes a cluster folder (pattern as os.MkdirTemp's) and
// picks the route ports of nodes nodes; the caller removes lc.root.
func newLocalCluster(pattern string, nodes int) (*localCluster, error) {
	root, admin, secret, err := clusterDir(pattern)
	if err != nil {
		return nil, err
	}
	ports, err := freeLoopbackPorts(nodes)
	if err != nil {
		os.RemoveAll(root)
		return nil, err
	}
	lc := &localCluster{root: root, admin: admin, secret: secret, ports: ports}
	for _, p := range ports {
		lc.routes = append(lc.routes, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	return lc, nil
}

// args is node i's `kgctx serve` command line in cluster name with
// replicas copies of each shard, then extra.
func (lc *localCluster) args(name string, i, replicas int, extra ...string) []string {
	return append([]string{"serve", "--data", filepath.Join(lc.root, fmt.Sprintf("n%d", i+1)), "--addr", "127.0.0.1:0", "--admin-token", lc.admin,
		"--cluster", name, "--cluster-secret-file", lc.secret, "--node-id", fmt.Sprintf("n%d", i+1), "--nats-embed", "--nats-port", "-1",
		"--replicas", strconv.Itoa(replicas), "--nats-cluster-port", strconv.Itoa(lc.ports[i]), "--nats-routes", strings.Join(lc.routes, ",")}, extra...)
}

// posClient calls a cluster's nodes as one client that reads its own
// writes: every request carries the positions of the writes answered
// before it (api.SequenceHeader). Safe for concurrent use.
type posClient struct {
	cl  *http.Client
	mu  sync.Mutex
	pos engine.Positions
}

func newPosClient() *posClient { return &posClient{cl: &http.Client{Timeout: time.Minute}} }

// call sends method path to node n with token tok, an Idempotency-Key
// (key, when not "") and a body of type ctype, and reads the answer.
func (pc *posClient) call(ctx context.Context, n *benchNode, method, path, tok, key, ctype string, body []byte) (httpAnswer, error) {
	req, err := http.NewRequestWithContext(ctx, method, n.base()+path, bytes.NewReader(body))
	if err != nil {
		return httpAnswer{}, err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if key != "" {
		req.Header.Set(api.IdempotencyKeyHeader, key)
	}
	pc.mu.Lock()
	h := pc.pos.String()
	pc.mu.Unlock()
	if h != "" {
		req.Header.Set(api.SequenceHeader, h)
	}
	res, err := pc.cl.Do(req)
	if err != nil {
		return httpAnswer{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err == nil && res.StatusCode < 300 {
		pc.mu.Lock()
		err = pc.pos.Add(res.Header.Get(api.SequenceHeader))
		pc.mu.Unlock()
	}
	return httpAnswer{res.StatusCode, b}, err
}

func runDeployment(ctx context.Context, cfg ClusterConfig, nodes int, alone bool, batches [][]byte, triplets int, bodies [][]byte) (ClusterRun, error) {
	run := ClusterRun{Nodes: nodes, Triplets: triplets}
	root, admin, secret, err := clusterDir("kgctx-bench-cluster-*")
	if err != nil {
		return run, err
	}
	defer os.RemoveAll(root)
	ports, err := freeLoopbackPorts(2 * nodes)
	if err != nil {
		return run, err
	}
	var routes []string
	for i := range nodes {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", ports[nodes+i]))
	}
	var ns []*benchNode
	defer func() {
		for _, n := range ns {
			n.stop()
		}
	}()
	start := time.Now()
	for i := range nodes {
		args := []string{"serve", "--data", fmt.Sprintf("%s/n%d", root, i+1), "--addr", "127.0.0.1:0", "--admin-token", admin}
		if !alone {
			args = append(args, "--cluster", "bench", "--cluster-secret-file", secret, "--node-id", fmt.Sprintf("n%d", i+1), "--nats-embed", "--nats-port", "-1",
				"--replicas", strconv.Itoa(nodes))
			if nodes > 1 {
				args = append(args, "--nats-cluster-port", strconv.Itoa(ports[nodes+i]), "--nats-routes", strings.Join(routes, ","))
			}
		}
		n, err := launchNode(ctx, cfg.Executable, args)
		if err != nil {
			return run, err
		}
		ns = append(ns, n)
	}
	for i, n := range ns {
		if err := n.waitListening(3 * time.Minute); err != nil {
			return run, fmt.Errorf("node %d: %w", i+1, err)
		}
	}
	run.StartMs = float64(time.Since(start).Microseconds()) / 1000
	cl := &http.Client{Timeout: 2 * time.Minute}
	var pos engine.Positions // of every write so far: each request waits for them
	do := func(n *benchNode, path, tok, ctype string, body []byte, want int) ([]byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.url+path, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", ctype)
		if h := pos.String(); h != "" {
			req.Header.Set(api.SequenceHeader, h)
		}
		res, err := cl.Do(req)
		if err != nil {
			return nil, err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			return nil, err
		}
		if res.StatusCode != want {
			return nil, fmt.Errorf("POST %s on %s: %d %.300s", path, n.url, res.StatusCode, b)
		}
		if err := pos.Add(res.Header.Get(api.SequenceHeader)); err != nil {
			return nil, err
		}
		return b, nil
	}
	token := func(role string) (string, error) {
		b, _ := json.Marshal(map[string]any{"orgId": Tenant.Org, "agentId": "bench_" + role, "role": role})
		out, err := do(ns[0], "/v1/admin/tokens", admin, "application/json", b, http.StatusCreated)
		if err != nil {
			return "", err
		}
		var t struct{ Token string }
		return t.Token, json.Unmarshal(out, &t)
	}
	imp, err := token("importer")
	if err != nil {
		return run, err
	}
	agent, err := token("agent")
	if err != nil {
		return run, err
	}
	cfg.say("  importing %d triplets in %d batches through %d node(s)", triplets, len(batches), nodes)
	next := make(chan int)
	errs := make(chan error, cfg.Workers)
	t0 := time.Now()
	var wg sync.WaitGroup
	for w := range cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				n := ns[(i+w)%len(ns)]
				if _, err := do(n, "/v1/orgs/"+Tenant.Org+"/projects/"+Tenant.Project+"/triplets", imp, "application/x-ndjson", batches[i], http.StatusOK); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var ierr error
feed:
	for i := range batches {
		select {
		case next <- i:
		case ierr = <-errs:
			break feed
		}
	}
	close(next)
	wg.Wait()
	if ierr == nil {
		select {
		case ierr = <-errs:
		default:
		}
	}
	if ierr != nil {
		return run, ierr
	}
	elapsed := time.Since(t0)
	run.TripletsPerS = float64(triplets) / elapsed.Seconds()
	// Every node applies everything: a block asked of each with the last
	// positions waits until it has.
	t1 := time.Now()
	for _, n := range ns {
		if _, err := do(n, "/v1/context/graph", agent, "application/json", bodies[0], http.StatusOK); err != nil {
			return run, err
		}
	}
	run.CaughtUpMs = float64(time.Since(t1).Microseconds()) / 1000
	cfg.say("  %d blocks over HTTP, round robin", len(bodies))
	run.Blocks, err = series(len(bodies), func(i int, record bool) error {
		_, err := do(ns[i%len(ns)], "/v1/context/graph", agent, "application/json", bodies[i], http.StatusOK)
		return err
	})
	return run, err
}

// WriteText prints the report as a table.
func (r *ClusterReport) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%s; %d cores, %s, %s\n", r.Graph, r.Machine.Cores, r.Machine.CPU, r.Machine.GoVer)
	fmt.Fprintf(w, "%-30s %6s %14s %12s %26s %10s\n", "deployment", "nodes", "triplets/s", "caught up", "blocks p50/p95/p99 ms", "start")
	for _, run := range r.Runs {
		fmt.Fprintf(w, "%-30s %6d %14.0f %10.0fms %26s %9.1fs\n", run.Deployment, run.Nodes, run.TripletsPerS, run.CaughtUpMs,
			fmt.Sprintf("%.2f / %.2f / %.2f", run.Blocks.P50, run.Blocks.P95, run.Blocks.P99), run.StartMs/1000)
	}
	if m := r.Move; m != nil {
		fmt.Fprintf(w, "\norg move of %s (%d triplets) from %s to %s, 3 nodes (R2), %d writers of 10-triplet batches every %.0f ms: %.1f s, writes paused %.0f ms\n",
			m.Org, m.Triplets, m.From, m.To, m.Writers, m.PaceMs, m.MoveMs/1000, m.PausedMs)
		fmt.Fprintf(w, "  %d entries (%d KiB) copied; %d batches acknowledged during the move (the longest %.0f ms), %d answers retried\n",
			m.Entries, m.Bytes>>10, m.AckedDuring, m.MaxWriteMs, m.RetriedDuring)
		fmt.Fprintf(w, "  %d batches acknowledged in all (%d triplets), %d never acknowledged; %d acknowledged triplets missing; the target's nodes identical: %v\n",
			m.Acked, m.AckedTriplets, m.GaveUp, m.Missing, m.Identical())
	}
	if u := r.Upgrade; u != nil {
		fmt.Fprintf(w, "\nrolling upgrade of 3 nodes (R3) under writes, from %s to %s: %.1f s\n", u.From, u.To, u.TotalMs/1000)
		for _, st := range u.Steps {
			fmt.Fprintf(w, "  %s: stopped, restarted and serving every shard in %.1f s; %d batches acknowledged meanwhile\n", st.Node, st.Ms/1000, st.Acked)
		}
		fmt.Fprintf(w, "  %d batches acknowledged (%d triplets), %d answers retried with their key, %d never acknowledged; "+
			"%d acknowledged triplets missing; stores identical: %v\n", u.Acked, u.Triplets, u.Retried, u.GaveUp, u.Missing, u.Identical())
	}
	return nil
}

// WriteJSON writes r as indented JSON.
func (r *ClusterReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
