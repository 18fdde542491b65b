package relevance

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/internal/datasets"
)

func TestRunRefusesBadConfig(t *testing.T) {
	ctx := context.Background()
	if _, err := Run(ctx, Config{Sets: []string{"metaqa", "wikidata"}, Datasets: t.TempDir()}); !errors.Is(err, ErrUnknownSet) {
		t.Fatalf("unknown set: err %v", err)
	}
	if _, err := Run(ctx, Config{Questions: -1, Datasets: t.TempDir()}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("negative questions: err %v", err)
	}
	if _, err := Run(ctx, Config{Sets: []string{"codeloc"}, Datasets: t.TempDir()}); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing codeloc folder: err %v, want a not-exist error", err)
	}
}

// devSets returns the datasets folder, or skips when the family's folder
// is absent.
func devSets(t *testing.T, family string) string {
	t.Helper()
	dir, err := datasets.Find("")
	if err != nil {
		t.Skipf("datasets not available: %v", err)
	}
	sub := map[string]string{"metaqa": metaQADir, "fb15k": fb15kDir, "codeloc": codelocDir, "locomo": locomoDir}[family]
	if !datasets.IsDir(filepath.Join(dir, sub)) {
		t.Skipf("%s not available in %s", sub, dir)
	}
	return dir
}

// e2eQuestions is the sample of the end-to-end runs.
const e2eQuestions = 20

// checkReport asserts that the report is complete and sane: the sets
// expected, every system at each of its budgets, n as asked, metrics in
// [0,1], and the baselines' blocks within budget without repeated lines.
// It does not compare kgctx with anything.
func checkReport(t *testing.T, rep *Report, rows map[string][]string) {
	t.Helper()
	var names []string
	for _, s := range rep.Sets {
		names = append(names, s.Name)
	}
	var want []string
	for n := range rows {
		want = append(want, n)
	}
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("sets %v, want %v", names, want)
	}
	for _, s := range rep.Sets {
		var got []string
		for _, r := range s.Rows {
			got = append(got, r.System+"@"+strconv.Itoa(r.Budget))
			if r.N != e2eQuestions {
				t.Errorf("%s %s@%d: n %d, want %d", s.Name, r.System, r.Budget, r.N, e2eQuestions)
			}
			if len(r.Metrics) == 0 {
				t.Errorf("%s %s@%d: no metric", s.Name, r.System, r.Budget)
			}
			for m, v := range r.Metrics {
				if !slices.Contains(s.Metrics, m) || v < 0 || v > 1 {
					t.Errorf("%s %s@%d: %s = %v", s.Name, r.System, r.Budget, m, v)
				}
			}
			if r.MeanTokens <= 0 || r.MeanTokens > float64(r.Budget) || r.P50Ms > r.P99Ms || r.P50Ms <= 0 {
				t.Errorf("%s %s@%d: tokens %v p50 %v p99 %v", s.Name, r.System, r.Budget, r.MeanTokens, r.P50Ms, r.P99Ms)
			}
			if !strings.HasPrefix(r.System, "kgctx") && (r.OverBudget > 0 || r.Duplicates > 0 || r.Inconsistent > 0) {
				t.Errorf("%s %s@%d: baseline anomalies %+v", s.Name, r.System, r.Budget, r)
			}
		}
		if !slices.Equal(got, rows[s.Name]) {
			t.Errorf("%s rows %v, want %v", s.Name, got, rows[s.Name])
		}
	}
}

// graphRows are the rows of a graph set: kgctx's systems, then every
// baseline, at each budget.
func graphRows(kgctx ...string) []string {
	var out []string
	for _, b := range GraphBudgets {
		for _, s := range append(slices.Clone(kgctx), graphBaselines...) {
			out = append(out, s+"@"+strconv.Itoa(b))
		}
	}
	return out
}

func runFamily(t *testing.T, family string) *Report {
	t.Helper()
	dir := devSets(t, family)
	rep, err := Run(context.Background(), Config{Datasets: dir, Sets: []string{family}, Questions: e2eQuestions, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestRunMetaQA(t *testing.T) {
	if testing.Short() {
		t.Skip("imports 129k triplets: skipped in -short mode")
	}
	t.Parallel()
	rep := runFamily(t, "metaqa")
	checkReport(t, rep, map[string][]string{
		"metaqa-1hop": graphRows("kgctx graph"), "metaqa-2hop": graphRows("kgctx graph"),
		"metaqa-3hop": graphRows("kgctx graph", "kgctx graph depth 3"),
	})
}

func TestRunFB15k(t *testing.T) {
	if testing.Short() {
		t.Skip("imports 272k triplets: skipped in -short mode")
	}
	t.Parallel()
	rep := runFamily(t, "fb15k")
	// One-hop sets are asked at depth 1 too.
	one, two := graphRows("kgctx graph", "kgctx graph depth 1"), graphRows("kgctx graph")
	checkReport(t, rep, map[string][]string{"fb15k-1hop": one, "fb15k-1hop-para": one, "fb15k-2hop": two, "fb15k-2hop-para": two,
		"fb15k-fresh-1hop": one, "fb15k-fresh-1hop-para": one})
}

func TestRunCodeloc(t *testing.T) {
	t.Parallel()
	rep := runFamily(t, "codeloc")
	var rows []string
	for _, b := range []int{500, 750, 1500} {
		if b == 750 {
			rows = append(rows, "kgctx session@750")
		} else {
			rows = append(rows, "kgctx graph@"+strconv.Itoa(b))
		}
		for _, s := range graphBaselines {
			rows = append(rows, s+"@"+strconv.Itoa(b))
		}
	}
	checkReport(t, rep, map[string][]string{"codeloc": rows})
}

func TestRunLoCoMo(t *testing.T) {
	t.Parallel()
	rep := runFamily(t, "locomo")
	checkReport(t, rep, map[string][]string{"locomo": {"kgctx session@400", BaseBM25Obs + "@400", "kgctx session@750", BaseBM25Obs + "@750"}})
}

// TestRunIsDeterministic: the same seed gives the same questions, and
// kgctx and the baselines the same blocks and numbers (latencies aside),
// though each run imports the sets into fresh apps (HNSW built by
// parallel workers, bleve segments merged as they come). Run it with
// -cpu 1,2,4 to vary the parallelism too.
func TestRunIsDeterministic(t *testing.T) {
	t.Parallel()
	dir := devSets(t, "locomo")
	devSets(t, "codeloc")
	run := func() []Row {
		rep, err := Run(context.Background(), Config{Datasets: dir, Sets: []string{"codeloc", "locomo"}, Questions: 40, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		var rows []Row
		for _, s := range rep.Sets {
			for _, r := range s.Rows {
				r.P50Ms, r.P99Ms = 0, 0
				rows = append(rows, r)
			}
		}
		return rows
	}
	a, b := run(), run()
	if len(a) != len(b) {
		t.Fatalf("%d rows then %d", len(a), len(b))
	}
	for i := range a {
		if a[i].System != b[i].System || a[i].MeanTokens != b[i].MeanTokens || !maps.Equal(a[i].Metrics, b[i].Metrics) {
			t.Fatalf("row %d differs: %+v / %+v", i, a[i], b[i])
		}
	}
}
