package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kgctx/kgctx/api"
)

// MoveConfig configures an org's move under writes: three nodes of
// Executable (JetStream R2, shards s0 to s3, so that of the two shards
// moved between one node holds both, one the source alone and one the
// target alone), an org with Triplets imported, moved to another shard
// while writers import into it.
type MoveConfig struct {
	Executable string
	// Triplets imported into the org before the move (default 20,000),
	// in batches of 1,000.
	Triplets int
	// Writers: concurrent clients importing batches of 10 triplets into
	// the org through the nodes in turn (default 3), each pausing Pace
	// between its batches (default 100 ms: a load of about 100 triplets a
	// second that three nodes on two cores apply as it comes).
	Writers int
	Pace    time.Duration
	// Settle: writes before the move and after it (default 2 s).
	Settle   time.Duration
	Progress io.Writer
}

// MoveReport is what a move under writes measured and found.
type MoveReport struct {
	Triplets int     `json:"triplets"` // imported before the move
	Writers  int     `json:"writers"`
	PaceMs   float64 `json:"paceMs"`
	Org      string  `json:"org"`
	From     string  `json:"from"`
	To       string  `json:"to"`
	// Entries and Bytes: the org's history copied (its writes, the bulk
	// import's batches among them).
	Entries int   `json:"entries"`
	Bytes   int64 `json:"bytes"`
	// MoveMs: from the PUT to the move done; PausedMs: the org's writes
	// refused meanwhile (the fence to the flip), as the move recorded it.
	MoveMs   float64 `json:"moveMs"`
	PausedMs float64 `json:"pausedMs"`
	// Batches acknowledged in all (and triplets), during the move, the
	// answers retried during it (503, 504, no answer), the longest time
	// a batch acknowledged during the move took (first attempt to
	// acknowledgement) and the batches never acknowledged.
	Acked         int     `json:"acked"`
	AckedTriplets int     `json:"ackedTriplets"`
	AckedDuring   int     `json:"ackedDuring"`
	RetriedDuring int     `json:"retriedDuring"`
	MaxWriteMs    float64 `json:"maxWriteMs"`
	GaveUp        int     `json:"gaveUp"`
	// Missing: acknowledged triplets a node of the target lacks at the
	// end; Differ: the target's nodes whose copy differs from the
	// first's.
	Missing int      `json:"missing"`
	Differ  []string `json:"differ"`
}

// moveHubs: the move's triplets point at Hub0 to Hub15 (each hub's
// triplets are read in one query of at most engine.MaxQueryLimit).
const moveHubs = 16

// Identical reports whether every node of the target ended with the
// same copy of the org and every acknowledged write.
func (r *MoveReport) Identical() bool { return r.Missing == 0 && len(r.Differ) == 0 }

func (c *MoveConfig) say(format string, a ...any) {
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, format+"\n", a...)
	}
}

// RunMove runs an org's move under writes.
func RunMove(ctx context.Context, cfg MoveConfig) (*MoveReport, error) {
	if cfg.Executable == "" {
		return nil, errors.New("bench move: the kgctx binary is required")
	}
	if cfg.Triplets <= 0 {
		cfg.Triplets = 20_000
	}
	if cfg.Writers <= 0 {
		cfg.Writers = 3
	}
	if cfg.Settle <= 0 {
		cfg.Settle = 2 * time.Second
	}
	if cfg.Pace <= 0 {
		cfg.Pace = 100 * time.Millisecond
	}
	rep := &MoveReport{Triplets: cfg.Triplets, Writers: cfg.Writers, PaceMs: float64(cfg.Pace.Milliseconds()), Differ: []string{}}
	const nodes = 3
	lc, err := newLocalCluster("kgctx-bench-move-*", nodes)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(lc.root)
	admin := lc.admin
	ns := make([]*benchNode, nodes)
	defer func() {
		for _, n := range ns {
			if n != nil {
				n.stop()
			}
		}
	}()
	for i := range ns {
		if ns[i], err = launchNode(ctx, cfg.Executable, lc.args("move", i, 2, "--shards", "s0,s1,s2,s3")); err != nil {
			return nil, err
		}
	}
	for i, n := range ns {
		if err := n.waitListening(3 * time.Minute); err != nil {
			return nil, fmt.Errorf("node %d: %w", i+1, err)
		}
	}
	pc := newPosClient()
	call := func(n *benchNode, method, path, tok, key, ctype string, body []byte) (httpAnswer, error) {
		return pc.call(ctx, n, method, path, tok, key, ctype, body)
	}
	// Every node serves the shards it holds, and no other: each shard
	// on two nodes.
	shards := []string{"s0", "s1", "s2", "s3"}
	serving := make([][]string, nodes)
	for end := time.Now().Add(3 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		ok := true
		for i, n := range ns {
			a, err := call(n, "GET", "/v1/admin/cluster", admin, "", "", nil)
			var st api.ClusterStatus
			if err != nil || a.code != 200 || json.Unmarshal(a.body, &st) != nil || len(st.Members) != nodes {
				ok = false
				continue
			}
			serving[i] = st.Serving
		}
		for _, s := range shards {
			c := 0
			for _, sv := range serving {
				if slices.Contains(sv, s) {
					c++
				}
			}
			ok = ok && c == 2
		}
		if ok {
			break
		}
		if time.Now().After(end) {
			return nil, fmt.Errorf("the nodes did not settle, each shard on two of them: %v", serving)
		}
	}
	holders := func(shard string) []int {
		var out []int
		for i, s := range serving {
			if slices.Contains(s, shard) {
				out = append(out, i)
			}
		}
		return out
	}
	for _, a := range shards {
		for _, b := range shards {
			if rep.From == "" && a != b && len(holders(a)) == 2 && len(holders(b)) == 2 && !slices.Equal(holders(a), holders(b)) {
				rep.From, rep.To = a, b
			}
		}
	}
	if rep.From == "" {
		return nil, fmt.Errorf("no two shards held by different nodes: %v", serving)
	}
	for i := 0; rep.Org == ""; i++ {
		org := fmt.Sprintf("org_move%d", i)
		a, err := call(ns[0], "GET", "/v1/admin/orgs/"+org+"/shard", admin, "", "", nil)
		var p api.PlacementResponse
		if err != nil || a.code != 200 || json.Unmarshal(a.body, &p) != nil {
			return nil, fmt.Errorf("placement of %s: %d %s %v", org, a.code, a.body, err)
		}
		if p.Shard == rep.From {
			rep.Org = org
		}
	}
	org, project := rep.Org, "p"
	token := func(role string) (string, error) {
		b, _ := json.Marshal(map[string]any{"orgId": org, "agentId": "move_" + role, "role": role})
		a, err := call(ns[0], "POST", "/v1/admin/tokens", admin, "", "application/json", b)
		if err != nil || a.code != http.StatusCreated {
			return "", fmt.Errorf("token: %d %s %v", a.code, a.body, err)
		}
		var t struct{ Token string }
		return t.Token, json.Unmarshal(a.body, &t)
	}
	imp, err := token("importer")
	if err != nil {
		return nil, err
	}
	agent, err := token("agent")
	if err != nil {
		return nil, err
	}
	cfg.say("org move: %s on %s (nodes %v), to %s (nodes %v); importing %d triplets", org, rep.From, holders(rep.From), rep.To, holders(rep.To), cfg.Triplets)
	triplets := "/v1/orgs/" + org + "/projects/" + project + "/triplets"
	for i := 0; i < cfg.Triplets; i += 1000 {
		var lines []string
		for j := i; j < min(i+1000, cfg.Triplets); j++ {
			lines = append(lines, fmt.Sprintf(`{"source": "Bulk%d", "relationship": "calls", "target": "Hub%d"}`, j, j%moveHubs))
		}
		a, err := call(ns[(i/1000)%nodes], "POST", triplets, imp, fmt.Sprintf("bulk-%d", i), "application/x-ndjson", []byte(strings.Join(lines, "\n")))
		if err != nil || a.code != 200 {
			return nil, fmt.Errorf("bulk import: %d %.300s %v", a.code, a.body, err)
		}
	}

	// Writers: batches of 10 triplets, each with its Idempotency-Key,
	// retried with it through the next node until acknowledged.
	var (
		mu                      sync.Mutex
		acked                   []string
		ackedN                  atomic.Int64
		moveFrom, moveTo        atomic.Int64 // unix nanoseconds of the PUT and the move's end (0: not yet)
		during, retried, gaveUp atomic.Int64
		maxWrite                atomic.Int64 // nanoseconds
	)
	inMove := func(t time.Time) bool {
		f, e := moveFrom.Load(), moveTo.Load()
		return f > 0 && t.UnixNano() >= f && (e == 0 || t.UnixNano() <= e)
	}
	stopWriters := runWriters(cfg.Writers, cfg.Pace, func(w, i int) error {
		var names, lines []string
		for j := range 10 {
			name := fmt.Sprintf("W%dB%dN%d", w, i, j)
			names = append(names, name)
			lines = append(lines, fmt.Sprintf(`{"source": %q, "relationship": "calls", "target": "Hub%d"}`, name, (i+j)%moveHubs))
		}
		began := time.Now()
		key, body := fmt.Sprintf("w%d-b%d", w, i), []byte(strings.Join(lines, "\n"))
		ok, err := keyedWrite(100, key, func(try int) (httpAnswer, error) {
			return call(ns[(w+i+try)%nodes], "POST", triplets, imp, key, "application/x-ndjson", body)
		}, func() {
			if inMove(time.Now()) {
				retried.Add(1)
			}
		})
		if err != nil {
			return err
		}
		if !ok {
			gaveUp.Add(1)
			return nil
		}
		now := time.Now()
		ackedN.Add(1)
		if inMove(now) || inMove(began) {
			during.Add(1)
			if d := now.Sub(began).Nanoseconds(); d > maxWrite.Load() {
				maxWrite.Store(d)
			}
		}
		mu.Lock()
		acked = append(acked, names...)
		mu.Unlock()
		return nil
	})
	time.Sleep(cfg.Settle)
	cfg.say("org move: moving %s from %s to %s under %d writers", org, rep.From, rep.To, cfg.Writers)
	t0 := time.Now()
	moveFrom.Store(t0.UnixNano())
	body, _ := json.Marshal(map[string]string{"shard": rep.To})
	a, err := call(ns[0], "PUT", "/v1/admin/orgs/"+org+"/shard", admin, "", "application/json", body)
	if err != nil || (a.code != 200 && a.code != 202) {
		stopWriters()
		return nil, fmt.Errorf("move: %d %s %v", a.code, a.body, err)
	}
	var p api.PlacementResponse
	for {
		if err := json.Unmarshal(a.body, &p); err != nil || p.Move == nil {
			stopWriters()
			return nil, fmt.Errorf("move: %d %s %v", a.code, a.body, err)
		}
		if p.Move.Ended() {
			break
		}
		time.Sleep(100 * time.Millisecond)
		if a, err = call(ns[0], "GET", "/v1/admin/orgs/"+org+"/shard", admin, "", "", nil); err != nil || a.code != 200 {
			stopWriters()
			return nil, fmt.Errorf("move's progress: %d %s %v", a.code, a.body, err)
		}
	}
	moveTo.Store(time.Now().UnixNano())
	rep.MoveMs = float64(time.Since(t0).Microseconds()) / 1000
	if p.Move.Phase != "done" {
		stopWriters()
		return nil, fmt.Errorf("the move ended %s: %s", p.Move.Phase, p.Move.Error)
	}
	rep.Entries, rep.Bytes, rep.PausedMs = p.Move.Copied, p.Move.Bytes, float64(p.Move.PausedMs)
	cfg.say("org move: done in %.1f s, %d entries copied, writes paused %d ms", rep.MoveMs/1000, rep.Entries, p.Move.PausedMs)
	time.Sleep(cfg.Settle)
	if err := stopWriters(); err != nil {
		return nil, err
	}
	rep.Acked, rep.AckedDuring, rep.RetriedDuring, rep.GaveUp = int(ackedN.Load()), int(during.Load()), int(retried.Load()), int(gaveUp.Load())
	rep.MaxWriteMs = float64(maxWrite.Load()/1000) / 1000
	rep.AckedTriplets = len(acked)

	// Every node of the target, once it applied every acknowledged write,
	// holds the same copy, with every acknowledged triplet.
	var first string
	for k, i := range holders(rep.To) {
		snap, have, err := storeSnapshotHubs(func(path string) (httpAnswer, error) {
			return call(ns[i], "GET", path, agent, "", "", nil)
		}, org, project, moveHubs)
		if err != nil {
			return nil, fmt.Errorf("node %d: %w", i+1, err)
		}
		for j := range cfg.Triplets {
			if !have[fmt.Sprintf("Bulk%d", j)] {
				rep.Missing++
			}
		}
		for _, n := range acked {
			if !have[n] {
				rep.Missing++
			}
		}
		if k == 0 {
			first = snap
		} else if snap != first {
			rep.Differ = append(rep.Differ, fmt.Sprintf("n%d", i+1))
		}
	}
	cfg.say("org move: %d batches acknowledged (%d during the move, %d answers retried), %d acknowledged triplets missing, nodes differing %v",
		rep.Acked, rep.AckedDuring, rep.RetriedDuring, rep.Missing, rep.Differ)
	return rep, nil
}
