package bench

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestCodeScenario runs the code scenario on the indexer's test module:
// every block is a code block (a code map), in process and over HTTP.
func TestCodeScenario(t *testing.T) {
	src := filepath.Join("..", "compose", "codeindex", "testdata", "shapes")
	rep, err := Run(context.Background(), Config{Scenario: "code", Src: src, Queries: 20, Duration: 200e6})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Import == nil || rep.Import.Triplets == 0 || rep.Import.Nodes == 0 || !strings.Contains(rep.Graph, "lines in") {
		t.Fatalf("import %+v, graph %q", rep.Import, rep.Graph)
	}
	if rep.Blocks == nil || rep.Blocks.NonEmpty != 20 || rep.Blocks.MeanSymbols == 0 || rep.Blocks.MeanTokens > 750 {
		t.Fatalf("blocks %+v", rep.Blocks)
	}
	if rep.InProcess == nil || rep.HTTP == nil || rep.HTTP.N != 20 {
		t.Fatalf("latencies %+v %+v", rep.InProcess, rep.HTTP)
	}
}
