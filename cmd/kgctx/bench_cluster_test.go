package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/bench/workload"
	"github.com/kgctx/kgctx/internal/datasets"
	"github.com/kgctx/kgctx/internal/testlock"
)

// TestBenchCluster runs `kgctx bench cluster` small: the three deployments
// start, import and answer blocks, an org moves under writes, and the
// table names each.
func TestBenchCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts five kgctx processes; skipped with -short")
	}
	dir, err := datasets.Find("")
	if err != nil || !datasets.IsDir(filepath.Join(dir, workload.FB15kDir)) {
		t.Skip("FB15k-237 not available")
	}
	testlock.Cluster(t)
	out, errOut, err := kgctx(t, nil, "bench", "cluster", "--triplets", "3000", "--queries", "40", "--move-triplets", "1000", "--datasets", dir)
	if err != nil {
		t.Fatalf("bench cluster: %v\n%s\n%s", err, out, errOut)
	}
	for _, want := range []string{"kgctx serve (no cluster)", "cluster of 1 (JetStream R1)", "cluster of 3 (JetStream R3)", "first 3000 triplets",
		"org move of org_move", "(1000 triplets)", "0 acknowledged triplets missing; the target's nodes identical: true"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
}
