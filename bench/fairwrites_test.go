package bench

import (
	"context"
	"testing"

	"github.com/kgctx/kgctx/bench/workload"
)

// TestFairWritesSmall runs the fairwrites scenario on a small import: the
// reference runs, in process and over HTTP, every small write answered.
func TestFairWritesSmall(t *testing.T) {
	if _, err := workload.FindDatasets(""); err != nil {
		t.Skip(err)
	}
	rep, err := Run(context.Background(), Config{Scenario: "fairwrites", Triplets: 3000, Writes: 3})
	if err != nil {
		t.Fatal(err)
	}
	f := rep.FairWrites
	if f == nil || f.ImportAlone == nil || f.ImportAlone.Triplets != 3000 || f.Idle.N != 3 {
		t.Fatalf("report %+v", f)
	}
	for _, r := range []*FairRun{f.InProcess, f.HTTP} {
		if r == nil || r.Import.Triplets != 3000 || r.Small.N != 3 {
			t.Fatalf("run %+v", r)
		}
	}
}
