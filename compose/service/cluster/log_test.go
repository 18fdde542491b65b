package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/delivery"
	"github.com/kgctx/kgctx/engine/sessionlog"
)

// snapshot lists a project's triplets with their node ids.
func snapshot(t *testing.T, st *engine.Store, ten engine.Tenant) []string {
	t.Helper()
	ts, err := st.QueryTriplets(ten, engine.TripletQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tr := range ts {
		out = append(out, tr.Source+"("+tr.SourceNodeID+") "+tr.Relationship+" "+tr.Target+"("+tr.TargetNodeID+")")
	}
	slices.Sort(out)
	return out
}

// TestReplicasApplyInOrder: three stores, each applying the shard's
// stream through its own NATS server, end with the same graph, node ids
// included; a store closed while writes go on resumes from the sequence it
// recorded and catches up.
// sessions is the session state of org_a's ses_0..2 as every replica
// must hold it: leases, queued injects (their store sequence aside) and
// injection logs.
func sessions(t *testing.T, app *service.App) string {
	t.Helper()
	var out []any
	for i := range 3 {
		ses := fmt.Sprintf("ses_%d", i)
		l, err := app.Delivery.LeaseOf("org_a", ses)
		if err != nil && !errors.Is(err, engine.ErrNotFound) {
			t.Fatal(err)
		}
		ins, err := app.Delivery.PendingInjects("org_a", ses)
		if err != nil {
			t.Fatal(err)
		}
		for j := range ins {
			ins[j].Seq = 0
		}
		logs, err := app.Logs.InjectionLogs("org_a", ses)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, l, ins, logs)
	}
	b, _ := json.Marshal(out)
	return string(b)
}

func TestReplicasApplyInOrder(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a 3-server NATS cluster")
	}
	srvs := natsCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	js := jsOf(t, srvs[0])
	for {
		actx, acancel := context.WithTimeout(ctx, 2*time.Second)
		err := EnsureShard(actx, js, "test", "s0", 3)
		acancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	ten := engine.Tenant{Org: "org_a", Project: "p"}
	type replica struct {
		app  *service.App
		dir  string
		ap   *Applier
		stop context.CancelFunc
		done chan error
	}
	start := func(r *replica, js jetstream.JetStream) {
		ap, err := NewApplier(r.app, js, testKeys(t, "test"), "s0", ApplierOptions{Places: everywhere})
		if err != nil {
			t.Fatal(err)
		}
		rctx, stop := context.WithCancel(ctx)
		r.ap, r.stop, r.done = ap, stop, make(chan error, 1)
		go func() { r.done <- ap.Run(rctx) }()
	}
	reps := make([]*replica, 3)
	for i := range reps {
		dir := t.TempDir()
		reps[i] = &replica{app: openApp(t, dir), dir: dir}
		start(reps[i], jsOf(t, srvs[i]))
	}
	publish := func(from, n int) uint64 {
		var mu sync.Mutex
		var last uint64
		var wg sync.WaitGroup
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := from + w; i < from+n; i += 4 {
					wr := service.Write{Kind: service.WriteImport, Org: ten.Org, Project: ten.Project, Triplets: []engine.TripletInput{
						{Source: fmt.Sprintf("svc_%d", i), Relationship: "calls", Target: fmt.Sprintf("svc_%d", i/3)}}}
					if i%5 == 0 {
						wr = service.Write{Kind: service.WriteObservations, Org: ten.Org, Project: ten.Project, Observations: []engine.ObservationInput{{Content: fmt.Sprintf("note %d", i)}}}
					}
					// Session writes race each other: the log decides who
					// holds each session and which inject is in flight.
					ses, worker := fmt.Sprintf("ses_%d", i%3), fmt.Sprintf("w%d", i%2)
					switch i % 7 {
					case 1:
						wr = service.Write{Kind: service.WriteLeaseClaim, Org: ten.Org, Seconds: 60,
							Lease: &delivery.Lease{SessionID: ses, WorkerID: worker, OrgID: ten.Org}}
					case 2:
						wr = service.Write{Kind: service.WriteEnqueue, Org: ten.Org, Inject: service.NewInjectEntry(delivery.Inject{SessionID: ses, OrgID: ten.Org, Text: fmt.Sprintf("inject %d", i)})}
					case 3:
						wr = service.Write{Kind: service.WriteInjectClaim, Org: ten.Org, Session: ses, Worker: worker}
					case 4:
						wr = service.Write{Kind: service.WriteInjectionLog, Org: ten.Org, Project: ten.Project, Log: &sessionlog.InjectionLog{
							SessionID: ses, OrgID: ten.Org, ProjectID: ten.Project, WorkType: "bug_fix", QueryText: fmt.Sprintf("q %d", i)}}
					}
					seq, _, err := Publish(ctx, js, testKeys(t, "test"), "s0", wr, PublishOptions{})
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					last = max(last, seq)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		return last
	}
	last := publish(0, 60)
	for i, r := range reps {
		if err := r.ap.WaitFor(ctx, last); err != nil {
			select {
			case rerr := <-r.done:
				t.Fatalf("replica %d: %v (its applier stopped: %v)", i, err, rerr)
			default:
			}
			t.Fatalf("replica %d: %v (applied %d of %d)", i, err, r.ap.Applied(), last)
		}
	}
	want := snapshot(t, reps[0].app.Store, ten)
	if len(want) == 0 {
		t.Fatal("nothing applied")
	}
	wantSes := sessions(t, reps[0].app)
	if !strings.Contains(wantSes, "dlv_") || !strings.Contains(wantSes, "log_") || !strings.Contains(wantSes, `"workerId"`) {
		t.Fatalf("no lease, in-flight inject or log applied: %s", wantSes)
	}
	for i, r := range reps[1:] {
		if got := sessions(t, r.app); got != wantSes {
			t.Fatalf("replica %d's sessions differ from replica 0's:\n%s\n%s", i+1, got, wantSes)
		}
	}
	for i, r := range reps[1:] {
		if got := snapshot(t, r.app.Store, ten); !slices.Equal(got, want) {
			t.Fatalf("replica %d differs from replica 0:\n%v\n%v", i+1, got, want)
		}
	}
	// Replica 2 stops; writes go on; it reopens its store and catches up.
	r := reps[2]
	r.stop()
	<-r.done
	stopped := r.ap.Applied()
	if err := closeApp(r.app); err != nil {
		t.Fatal(err)
	}
	last = publish(60, 40)
	r.app = openApp(t, r.dir)
	start(r, jsOf(t, srvs[2]))
	if got := r.ap.Applied(); got != stopped {
		t.Fatalf("reopened at sequence %d, had applied %d", got, stopped)
	}
	for i, r := range reps {
		if err := r.ap.WaitFor(ctx, last); err != nil {
			select {
			case rerr := <-r.done:
				t.Fatalf("replica %d: %v (its applier stopped: %v)", i, err, rerr)
			default:
			}
			t.Fatalf("replica %d: %v (applied %d)", i, err, r.ap.Applied())
		}
	}
	want = snapshot(t, reps[0].app.Store, ten)
	wantSes = sessions(t, reps[0].app)
	for i, r := range reps[1:] {
		if got := snapshot(t, r.app.Store, ten); !slices.Equal(got, want) {
			t.Fatalf("after the restart, replica %d differs:\n%v\n%v", i+1, got, want)
		}
		if got := sessions(t, r.app); got != wantSes {
			t.Fatalf("after the restart, replica %d's sessions differ:\n%s\n%s", i+1, got, wantSes)
		}
	}
	for _, r := range reps {
		r.stop()
		<-r.done
	}
}

// everywhere places every org on every shard.
func everywhere(context.Context, string, string) (bool, error) { return true, nil }

// openApp opens an App on dir, closed at the test's end unless closed
// before.
func openApp(t *testing.T, dir string) *service.App {
	t.Helper()
	app, err := service.Open(context.Background(), service.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeApp(app) })
	return app
}

var closed sync.Map

// closeApp closes app once.
func closeApp(app *service.App) error {
	if _, done := closed.LoadOrStore(app, true); done {
		return nil
	}
	return app.Close()
}
