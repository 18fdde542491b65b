package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kgctx/kgctx/api"
	"github.com/kgctx/kgctx/engine"
)

// UpgradeConfig configures a rolling upgrade under writes: a cluster of
// three nodes of From (JetStream R3), each stopped and started again as To
// in turn while writers import through every node; then the stores are
// compared.
type UpgradeConfig struct {
	// From and To are the kgctx binaries of the release upgraded from and
	// to.
	From, To string
	// Writers: concurrent clients, each importing small batches through
	// the nodes in turn (default 3).
	Writers int
	// Settle: writes before the first node is stopped and after the last
	// serves again (default 2 s).
	Settle time.Duration
	// DownAcks: batches the other two nodes must acknowledge while a node
	// is stopped, before it is started again as To (default 3), so that
	// every step shows the cluster taking writes with a node down however
	// fast the node restarts. Waited for at most DownWait (default 1 min).
	DownAcks int
	DownWait time.Duration
	Progress io.Writer
}

// UpgradeReport is what a rolling upgrade measured and found.
type UpgradeReport struct {
	Machine  Machine `json:"machine"`
	From     string  `json:"from"` // `kgctx version` of each binary
	To       string  `json:"to"`
	TotalMs  float64 `json:"totalMs"`
	Steps    []UpgradeStep
	Writes   int `json:"writes"`   // requests answered (each a batch)
	Acked    int `json:"acked"`    // answered 2xx, after retries with the same key
	Retried  int `json:"retried"`  // answers that were 503, 504 or no answer, retried
	GaveUp   int `json:"gaveUp"`   // batches never acknowledged (not counted as acked)
	Triplets int `json:"triplets"` // acknowledged triplets
	// Missing are acknowledged triplets some node lacks at the end;
	// Differ, the nodes whose store differs from the first's.
	Missing int      `json:"missing"`
	Differ  []string `json:"differ"`
}

// UpgradeStep is one node's upgrade: from its stop until it served every
// shard again, and the batches acknowledged (by the other nodes) meanwhile.
type UpgradeStep struct {
	Node  string  `json:"node"`
	Ms    float64 `json:"ms"`
	Acked int     `json:"acked"`
}

// Identical reports whether every node ended with the same store and
// every acknowledged write.
func (r *UpgradeReport) Identical() bool { return r.Missing == 0 && len(r.Differ) == 0 }

func (c *UpgradeConfig) say(format string, a ...any) {
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, format+"\n", a...)
	}
}

// Version is what `exe version` prints, on one line.
func Version(exe string) string {
	out, err := exec.Command(exe, "version").Output()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return strings.Join(strings.Fields(string(out)), " ")
}

// RunUpgrade runs a rolling upgrade from cfg.From to cfg.To.
func RunUpgrade(ctx context.Context, cfg UpgradeConfig) (*UpgradeReport, error) {
	if cfg.From == "" || cfg.To == "" {
		return nil, errors.New("bench upgrade: both binaries are required")
	}
	if cfg.Writers <= 0 {
		cfg.Writers = 3
	}
	if cfg.DownAcks <= 0 {
		cfg.DownAcks = 3
	}
	if cfg.DownWait <= 0 {
		cfg.DownWait = time.Minute
	}
	if cfg.Settle <= 0 {
		cfg.Settle = 2 * time.Second
	}
	rep := &UpgradeReport{Machine: machine(), From: Version(cfg.From), To: Version(cfg.To), Differ: []string{}}
	const nodes = 3
	lc, err := newLocalCluster("kgctx-bench-upgrade-*", nodes)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(lc.root)
	admin := lc.admin
	args := func(i int) []string { return lc.args("upgrade", i, nodes) }
	ns := make([]*benchNode, nodes)
	var nsMu sync.Mutex // ns[i] changes when node i is upgraded
	node := func(i int) *benchNode {
		nsMu.Lock()
		defer nsMu.Unlock()
		return ns[i]
	}
	defer func() {
		for i := range ns {
			if n := node(i); n != nil {
				n.stop()
			}
		}
	}()
	start := time.Now()
	for i := range ns {
		if ns[i], err = launchNode(ctx, cfg.From, args(i)); err != nil {
			return nil, err
		}
	}
	for i := range ns {
		if err := ns[i].waitListening(3 * time.Minute); err != nil {
			return nil, fmt.Errorf("node %d: %w", i+1, err)
		}
	}
	pc := newPosClient()
	call := func(n *benchNode, method, path, tok, key, ctype string, body []byte) (httpAnswer, error) {
		return pc.call(ctx, n, method, path, tok, key, ctype, body)
	}
	status := func(n *benchNode) (api.ClusterStatus, error) {
		var st api.ClusterStatus
		a, err := call(n, "GET", "/v1/admin/cluster", admin, "", "", nil)
		if err != nil || a.code != 200 {
			return st, fmt.Errorf("status: %d %s %v", a.code, a.body, err)
		}
		return st, json.Unmarshal(a.body, &st)
	}
	serving := func(i int, want int, d time.Duration) error {
		var last string
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			st, err := status(node(i))
			if err == nil && len(st.Serving) >= want && len(st.Stalled) == 0 {
				return nil
			}
			last = fmt.Sprintf("%+v %v", st, err)
		}
		return fmt.Errorf("node %d did not serve %d shards within %s: %s", i+1, want, d, last)
	}
	if err := serving(0, 1, 2*time.Minute); err != nil {
		return nil, err
	}
	st, err := status(ns[0])
	if err != nil {
		return nil, err
	}
	shards := len(st.Serving)
	for i := range ns {
		if err := serving(i, shards, 2*time.Minute); err != nil {
			return nil, err
		}
	}
	const org, project = "org_upgrade", "p"
	b, _ := json.Marshal(map[string]any{"orgId": org, "agentId": "upgrade_importer", "role": "importer"})
	a, err := call(ns[0], "POST", "/v1/admin/tokens", admin, "", "application/json", b)
	if err != nil || a.code != http.StatusCreated {
		return nil, fmt.Errorf("token: %d %s %v", a.code, a.body, err)
	}
	var tok struct{ Token string }
	if err := json.Unmarshal(a.body, &tok); err != nil {
		return nil, err
	}
	cfg.say("rolling upgrade: 3 nodes of %s serve %d shards after %s", rep.From, shards, time.Since(start).Round(time.Millisecond))

	// Writers: batches of 10 triplets (every fifth request an observation
	// instead), each sent with its Idempotency-Key through the nodes in
	// turn and retried with the same key (through the next node) until
	// acknowledged: a batch is applied once however often it is sent.
	var (
		mu                      sync.Mutex
		acked, obsContents      []string
		writes, ackedN, retried atomic.Int64
		gaveUp                  atomic.Int64
	)
	stopWriters := runWriters(cfg.Writers, 0, func(w, i int) error {
		key := fmt.Sprintf("w%d-b%d", w, i)
		var path, ctype string
		var body []byte
		var names []string
		if i%5 == 4 {
			content := fmt.Sprintf("Writer %d noted batch %d during the rolling upgrade.", w, i)
			path, ctype = "/v1/orgs/"+org+"/projects/"+project+"/observations", "application/json"
			body, _ = json.Marshal(map[string]any{"content": content})
			names = []string{"obs:" + content}
		} else {
			var lines []string
			for j := range 10 {
				name := fmt.Sprintf("W%dB%dN%d", w, i, j)
				names = append(names, name)
				lines = append(lines, fmt.Sprintf(`{"source": %q, "relationship": "calls", "target": "Hub%d"}`, name, j%4))
			}
			path, ctype = "/v1/orgs/"+org+"/projects/"+project+"/triplets", "application/x-ndjson"
			body = []byte(strings.Join(lines, "\n"))
		}
		ok, err := keyedWrite(40, key, func(try int) (httpAnswer, error) {
			writes.Add(1)
			return call(node((w+i+try)%nodes), "POST", path, tok.Token, key, ctype, body)
		}, func() { retried.Add(1) })
		if err != nil {
			return err
		}
		if !ok {
			gaveUp.Add(1)
			return nil
		}
		ackedN.Add(1)
		mu.Lock()
		for _, n := range names {
			if c, isObs := strings.CutPrefix(n, "obs:"); isObs {
				obsContents = append(obsContents, c)
			} else {
				acked = append(acked, n)
			}
		}
		mu.Unlock()
		return nil
	})
	t0 := time.Now()
	time.Sleep(cfg.Settle)
	for i := range ns {
		before := ackedN.Load()
		s0 := time.Now()
		node(i).stop()
		for wait := time.Now().Add(cfg.DownWait); ackedN.Load()-before < int64(cfg.DownAcks) && time.Now().Before(wait) && ctx.Err() == nil; {
			time.Sleep(20 * time.Millisecond)
		}
		n, err := launchNode(ctx, cfg.To, args(i))
		if err != nil {
			stopWriters()
			return nil, err
		}
		nsMu.Lock()
		ns[i] = n
		nsMu.Unlock()
		if err := n.waitListening(3 * time.Minute); err != nil {
			stopWriters()
			return nil, fmt.Errorf("node %d upgraded: %w", i+1, err)
		}
		if err := serving(i, shards, 3*time.Minute); err != nil {
			stopWriters()
			return nil, fmt.Errorf("%w\n%s", err, n.stderr())
		}
		step := UpgradeStep{Node: fmt.Sprintf("n%d", i+1), Ms: float64(time.Since(s0).Microseconds()) / 1000, Acked: int(ackedN.Load() - before)}
		rep.Steps = append(rep.Steps, step)
		cfg.say("  %s upgraded in %.1f s, %d batches acknowledged meanwhile", step.Node, step.Ms/1000, step.Acked)
	}
	time.Sleep(cfg.Settle)
	if err := stopWriters(); err != nil {
		return nil, err
	}
	rep.TotalMs = float64(time.Since(t0).Microseconds()) / 1000
	rep.Writes, rep.Acked, rep.Retried, rep.GaveUp = int(writes.Load()), int(ackedN.Load()), int(retried.Load()), int(gaveUp.Load())
	rep.Triplets = len(acked)

	// Every node, once it applied every acknowledged write (the reads
	// carry their positions), holds the same store.
	ag, _ := json.Marshal(map[string]any{"orgId": org, "agentId": "upgrade_agent", "role": "agent"})
	a, err = call(ns[0], "POST", "/v1/admin/tokens", admin, "", "application/json", ag)
	if err != nil || a.code != http.StatusCreated {
		return nil, fmt.Errorf("token: %d %s %v", a.code, a.body, err)
	}
	if err := json.Unmarshal(a.body, &tok); err != nil {
		return nil, err
	}
	var first string
	for i := range ns {
		snap, have, err := storeSnapshot(func(path string) (httpAnswer, error) {
			return call(node(i), "GET", path, tok.Token, "", "", nil)
		}, org, project)
		if err != nil {
			return nil, fmt.Errorf("node %d: %w", i+1, err)
		}
		for _, n := range acked {
			if !have[n] {
				rep.Missing++
			}
		}
		for _, c := range obsContents {
			if !have["obs:"+c] {
				rep.Missing++
			}
		}
		if i == 0 {
			first = snap
		} else if snap != first {
			rep.Differ = append(rep.Differ, fmt.Sprintf("n%d", i+1))
		}
	}
	cfg.say("rolling upgrade to %s: %.1f s, %d batches acknowledged (%d retried, %d never), %d acknowledged triplets missing, nodes differing %v",
		rep.To, rep.TotalMs/1000, rep.Acked, rep.Retried, rep.GaveUp, rep.Missing, rep.Differ)
	return rep, nil
}

// httpAnswer is an HTTP answer's status and body.
// runWriters starts n writers: writer w calls write(w, i) for i = 0, 1,
// ..., each after pace (0: at once), until the returned stop is called or
// write returns an error. stop waits for them and returns the first error.
func runWriters(n int, pace time.Duration, write func(w, i int) error) (stop func() error) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	done := make(chan struct{})
	for w := range n {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				case <-time.After(pace):
				}
				if err := write(w, i); err != nil {
					mu.Lock()
					first = cmp.Or(first, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	return func() error {
		close(done)
		wg.Wait()
		return first
	}
}

// keyedWrite sends one write with its Idempotency-Key (send(try) calls a
// node, the next one at each try) until a node acknowledges it: an answer
// under 300. A transport error or a 502, 503 or 504 (a node down, a shard
// moving, no quorum) is retried after 100 ms, at most tries times (retried
// is told each); any other answer is an error. The key makes a write that
// was applied before its answer was lost apply once.
func keyedWrite(tries int, key string, send func(try int) (httpAnswer, error), retried func()) (bool, error) {
	for try := range tries {
		a, err := send(try)
		switch {
		case err == nil && a.code < 300:
			return true, nil
		case err != nil || a.code == 502 || a.code == 503 || a.code == 504:
			retried()
			time.Sleep(100 * time.Millisecond)
		default:
			return false, fmt.Errorf("write %s: %d %s", key, a.code, a.body)
		}
	}
	return false, nil
}

type httpAnswer struct {
	code int
	body []byte
}

// storeSnapshot reads org's project through get (a GET of a path, from
// one node's store) and returns it as one canonical text (every triplet
// with its node ids and weight, every observation with its id, content,
// weight and time) and the names it holds (triplet sources; "obs:" and an
// observation's content). The upgrade's triplets all point at
// Hub0..Hub3 (storeSnapshotHubs: Hub0 to Hub(hubs-1)).
func storeSnapshot(get func(path string) (httpAnswer, error), org, project string) (string, map[string]bool, error) {
	return storeSnapshotHubs(get, org, project, 4)
}

func storeSnapshotHubs(get func(path string) (httpAnswer, error), org, project string, hubs int) (string, map[string]bool, error) {
	base := "/v1/orgs/" + org + "/projects/" + project
	have := map[string]bool{}
	var lines []string
	for h := range hubs {
		a, err := get(fmt.Sprintf("%s/graph/triplets?object=Hub%d&limit=%d", base, h, engine.MaxQueryLimit))
		if err != nil || a.code != 200 {
			return "", nil, fmt.Errorf("triplets: %d %.300s %v", a.code, a.body, err)
		}
		var out struct{ Triplets []engine.Triplet }
		if err := json.Unmarshal(a.body, &out); err != nil {
			return "", nil, err
		}
		if len(out.Triplets) == engine.MaxQueryLimit {
			return "", nil, fmt.Errorf("more than %d triplets point at Hub%d: the snapshot would be partial", engine.MaxQueryLimit, h)
		}
		for _, t := range out.Triplets {
			have[t.Source] = true
			lines = append(lines, fmt.Sprintf("t %s|%s|%s|%s|%s|%g", t.Source, t.Relationship, t.Target, t.SourceNodeID, t.TargetNodeID, t.Weight))
		}
	}
	cursor := ""
	for {
		path := base + "/observations?limit=1000"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		a, err := get(path)
		if err != nil || a.code != 200 {
			return "", nil, fmt.Errorf("observations: %d %.300s %v", a.code, a.body, err)
		}
		var out struct {
			Observations []engine.Observation
			NextCursor   string
		}
		if err := json.Unmarshal(a.body, &out); err != nil {
			return "", nil, err
		}
		for _, o := range out.Observations {
			have["obs:"+o.Content] = true
			lines = append(lines, fmt.Sprintf("o %s|%s|%g|%s", o.ID, o.Content, o.Weight, o.CreatedAt.UTC().Format(time.RFC3339Nano)))
		}
		if cursor = out.NextCursor; cursor == "" {
			break
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n"), have, nil
}
