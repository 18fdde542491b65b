package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestAtLeastOnceDelivery drives the durable inject queue with several
// concurrent workers that claim sessions on short leases, sometimes drop
// them without acking (lease loss), while a producer enqueues thousands of
// injects over many sessions, and the server is killed with SIGKILL and
// restarted in the middle. At the end every inject was delivered at least
// once, acked at most once (exactly once, counting acks whose answer the
// kill swallowed), never handed to a worker that did not hold the lease,
// and the queues are empty.
func TestAtLeastOnceDelivery(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	const (
		sessions   = 40
		perSession = 50 // 2,000 injects
		workers    = 8
	)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	data := t.TempDir()
	admin := "kgx_e2e_admin_token_0123456789abcd"
	s := startServe(t, data, "--admin-token", admin)
	tok := s.token("org_q", "agent")
	var (
		urlMu sync.RWMutex
		url   = s.url
	)
	base := func() string { urlMu.RLock(); defer urlMu.RUnlock(); return url }
	client := &http.Client{Timeout: 10 * time.Second}
	post := func(path string, body any) (int, []byte, error) {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", base()+path, strings.NewReader(string(b)))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		var raw json.RawMessage
		json.NewDecoder(resp.Body).Decode(&raw)
		return resp.StatusCode, raw, nil
	}
	text := func(s, i int) string { return fmt.Sprintf("inject %d of session %d", i, s) }

	var (
		mu         sync.Mutex
		delivered  = map[string]int{}    // text -> deliveries seen
		acked      = map[string]int{}    // text -> 204 acks
		lostAcks   = map[string]bool{}   // text -> an ack whose answer was lost
		holderOf   = map[string]string{} // session -> worker holding it (per our claims)
		violations []string
		enqueued   atomic.Int64
		stop       atomic.Bool
	)
	// Producer: enqueue every inject, retrying through the restart.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range perSession {
			for sn := range sessions {
				for {
					code, _, err := post(fmt.Sprintf("/v1/sessions/qs_%d/injects", sn), map[string]any{"orgId": "org_q", "text": text(sn, i)})
					if err == nil && (code == 201 || code == 200) {
						enqueued.Add(1)
						break
					}
					if err == nil && code != 503 {
						mu.Lock()
						violations = append(violations, fmt.Sprintf("enqueue answered %d", code))
						mu.Unlock()
						return
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
		}
	}()
	// Workers.
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			id := fmt.Sprintf("worker_%d", w)
			for !stop.Load() {
				sn := rng.IntN(sessions)
				path := fmt.Sprintf("/v1/sessions/qs_%d", sn)
				code, _, err := post(path+"/claim", map[string]any{"workerId": id, "leaseSeconds": 1, "projectId": "p"})
				if err != nil || code != 200 {
					time.Sleep(5 * time.Millisecond)
					continue
				}
				mu.Lock()
				holderOf[path] = id
				mu.Unlock()
				for beat := 0; beat < 30 && !stop.Load(); beat++ {
					code, raw, err := post(path+"/refresh", map[string]any{"workerId": id, "leaseSeconds": 1})
					if err != nil || code != 200 {
						break // lost the lease (taken over, or the server is down)
					}
					var rf struct {
						Inject *struct{ DeliveryID, Text string }
					}
					json.Unmarshal(raw, &rf)
					if rf.Inject == nil {
						break // drained for now
					}
					mu.Lock()
					delivered[rf.Inject.Text]++
					if holderOf[path] != id {
						violations = append(violations, fmt.Sprintf("%s got %q without holding %s", id, rf.Inject.Text, path))
					}
					mu.Unlock()
					if rng.IntN(20) == 0 {
						// Lose the lease: stop beating without acking.
						time.Sleep(1100 * time.Millisecond)
						break
					}
					code, _, err = post(path+"/injects/"+rf.Inject.DeliveryID+"/ack", nil)
					mu.Lock()
					switch {
					case err != nil:
						lostAcks[rf.Inject.Text] = true
					case code == 204:
						acked[rf.Inject.Text]++
					}
					mu.Unlock()
				}
			}
		}()
	}
	// A rogue worker that never claims must never receive an inject.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			code, raw, err := post(fmt.Sprintf("/v1/sessions/qs_%d/refresh", rand.IntN(sessions)), map[string]any{"workerId": "rogue"})
			if err == nil && code == 200 {
				mu.Lock()
				violations = append(violations, "rogue worker refreshed: "+string(raw))
				mu.Unlock()
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	// Kill the server mid-run, restart it on the same data.
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n > sessions*perSession/3 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.cmd.Wait()
	s2 := startServe(t, data, "--admin-token", admin)
	urlMu.Lock()
	url = s2.url
	urlMu.Unlock()
	// Run until every inject is acked or the deadline passes.
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		mu.Lock()
		done := len(acked)+len(lostAcksNotAcked(lostAcks, acked)) >= sessions*perSession && enqueued.Load() == sessions*perSession
		mu.Unlock()
		if done {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	if len(violations) > 0 {
		t.Fatalf("violations: %v", violations[:min(5, len(violations))])
	}
	// Nothing left on any queue.
	for sn := range sessions {
		path := fmt.Sprintf("/v1/sessions/qs_%d", sn)
		// The workers' 1 s leases lapse; a server that stopped answering
		// must fail the test, not hang it.
		for give := time.Now().Add(time.Minute); ; {
			code, raw, err := post(path+"/claim", map[string]any{"workerId": "final", "leaseSeconds": 30, "projectId": "p"})
			if code == 200 {
				break
			}
			if time.Now().After(give) {
				t.Fatalf("final claim of %s: %d %s %v", path, code, raw, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		code, raw, _ := post(path+"/injects/claim", map[string]any{"workerId": "final"})
		if code != 204 {
			t.Fatalf("session %d still has an inject: %d %s", sn, code, raw)
		}
	}
	lost := 0
	for sn := range sessions {
		for i := range perSession {
			x := text(sn, i)
			if delivered[x] == 0 {
				t.Fatalf("%q never delivered", x)
			}
			if acked[x] > 1 {
				t.Fatalf("%q acked %d times", x, acked[x])
			}
			if acked[x] == 0 {
				if !lostAcks[x] {
					t.Fatalf("%q delivered %d times but never acked", x, delivered[x])
				}
				lost++
			}
		}
	}
	redelivered := 0
	for _, n := range delivered {
		if n > 1 {
			redelivered++
		}
	}
	t.Logf("%d injects over %d sessions: all delivered, %d re-delivered after lease loss or restart, %d acks answered by the killed server", sessions*perSession, sessions, redelivered, lost)
}

// lostAcksNotAcked lists texts whose only ack lost its answer.
func lostAcksNotAcked(lost map[string]bool, acked map[string]int) []string {
	var out []string
	for x := range lost {
		if acked[x] == 0 {
			out = append(out, x)
		}
	}
	return out
}
