package relevance

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// Report is one run's results.
type Report struct {
	Date    string `json:"date"`
	Machine string `json:"machine"`
	// Questions is the sample per set and hop asked (0: all).
	Questions int         `json:"questions"`
	Seed      uint64      `json:"seed"`
	Seconds   float64     `json:"seconds"`
	Sets      []SetResult `json:"sets"`
}

// SetResult is one dev set's rows.
type SetResult struct {
	Name    string   `json:"name"`
	Family  string   `json:"family"`
	Data    string   `json:"data"`
	Metrics []string `json:"metrics"`
	// Rows: for each budget (ascending), kgctx's systems then the
	// baselines.
	Rows    []Row    `json:"rows"`
	Notes   []string `json:"notes,omitempty"`
	Seconds float64  `json:"seconds"`
}

// Row is one system at one budget on one set.
type Row struct {
	System string `json:"system"`
	// Block is "graph" or "session".
	Block  string `json:"block"`
	Budget int    `json:"budget"`
	N      int    `json:"n"`
	// Metrics holds the set's metrics (means over the questions a metric
	// applies to; absent when it applies to none).
	Metrics    map[string]float64 `json:"metrics"`
	MeanTokens float64            `json:"meanTokens"`
	P50Ms      float64            `json:"p50Ms"`
	P99Ms      float64            `json:"p99Ms"`
	// Block anomalies: empty blocks, blocks over the budget, blocks that
	// repeat a line, and kgctx blocks whose text disagrees with their own
	// triplets, ids or token count.
	Empty        int `json:"empty"`
	OverBudget   int `json:"overBudget"`
	Duplicates   int `json:"duplicates"`
	Inconsistent int `json:"inconsistent"`
}

func (r *Row) metric(name string) string {
	v, ok := r.Metrics[name]
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.3f", v)
}

// anomalies is a short text of the row's anomalies ("" when none).
func (r *Row) anomalies() string {
	var parts []string
	for _, a := range []struct {
		n    int
		what string
	}{{r.Empty, "empty"}, {r.OverBudget, "over budget"}, {r.Duplicates, "repeated lines"}, {r.Inconsistent, "inconsistent"}} {
		if a.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", a.n, a.what))
		}
	}
	return strings.Join(parts, ", ")
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes a table per set.
func (r *Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "relevance: %s, %s, questions per set %s, seed %d, %.0f s\n", r.Date, r.Machine, questionsText(r.Questions), r.Seed, r.Seconds)
	for _, s := range r.Sets {
		fmt.Fprintf(w, "\n%s: %s\n", s.Name, s.Data)
		for _, n := range s.Notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "budget\tsystem\t%s\ttokens\tp50 ms\tp99 ms\tn\tanomalies\t\n", strings.Join(s.Metrics, "\t"))
		for i := range s.Rows {
			row := &s.Rows[i]
			var ms []string
			for _, m := range s.Metrics {
				ms = append(ms, row.metric(m))
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%.0f\t%.2f\t%.2f\t%d\t%s\t\n", row.Budget, row.System, strings.Join(ms, "\t"),
				row.MeanTokens, row.P50Ms, row.P99Ms, row.N, row.anomalies())
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

func questionsText(n int) string {
	if n == 0 {
		return "all"
	}
	return fmt.Sprint(n)
}

// summaryColumns are the summary table's systems: kgctx's block (graph,
// or session where a set has no graph block at that budget) and the
// baselines.
var summaryColumns = []struct {
	head    string
	systems []string
}{
	{"kgctx", []string{"kgctx graph", "kgctx session"}},
	{"bm25", []string{BaseBM25Triplets, BaseBM25Obs}},
	{BaseTopicRel1, []string{BaseTopicRel1}},
	{BaseTopicRel2, []string{BaseTopicRel2}},
	{BasePPR, []string{BasePPR}},
	{BaseGraphRAG, []string{BaseGraphRAG}},
	{BaseRepoMap, []string{BaseRepoMap}},
}

// writeSummary writes one row per set and budget: each system's value of
// the set's first metric.
func (r *Report) writeSummary(w io.Writer) error {
	fmt.Fprint(w, "| set | metric | budget |")
	for _, c := range summaryColumns {
		fmt.Fprintf(w, " %s |", c.head)
	}
	fmt.Fprintf(w, "\n|---|---|---:|%s\n", strings.Repeat("---:|", len(summaryColumns)))
	for _, s := range r.Sets {
		var budgets []int
		for _, row := range s.Rows {
			if !slices.Contains(budgets, row.Budget) {
				budgets = append(budgets, row.Budget)
			}
		}
		for _, b := range budgets {
			fmt.Fprintf(w, "| %s | %s | %d |", s.Name, s.Metrics[0], b)
			for _, c := range summaryColumns {
				v := "-"
				for i := range s.Rows {
					if row := &s.Rows[i]; row.Budget == b && slices.Contains(c.systems, row.System) {
						v = row.metric(s.Metrics[0])
						break
					}
				}
				fmt.Fprintf(w, " %s |", v)
			}
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
	}
	return nil
}

// WriteMarkdown writes a summary table (each set's first metric, per
// budget and system), then one table per family (the sets of a family share
// their metrics' columns), for bench/README.md. The best value of each
// metric among a set's rows at one budget is in bold.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var fams []string
	by := map[string][]*SetResult{}
	for i := range r.Sets {
		s := &r.Sets[i]
		if _, ok := by[s.Family]; !ok {
			fams = append(fams, s.Family)
		}
		by[s.Family] = append(by[s.Family], s)
	}
	if err := r.writeSummary(w); err != nil {
		return err
	}
	for _, f := range fams {
		sets := by[f]
		cols := len(sets[0].Metrics)
		heads := make([]string, cols)
		for i := range heads {
			var names []string
			for _, s := range sets {
				if i < len(s.Metrics) && !slices.Contains(names, s.Metrics[i]) {
					names = append(names, s.Metrics[i])
				}
			}
			heads[i] = strings.Join(names, " / ")
		}
		fmt.Fprintln(w)
		for _, s := range sets {
			fmt.Fprintf(w, "- `%s`: %s", s.Name, s.Data)
			for _, n := range s.Notes {
				fmt.Fprintf(w, "; %s", n)
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "\n| set | budget | system | %s | tokens | p50 ms | p99 ms | n |\n", strings.Join(heads, " | "))
		fmt.Fprintf(w, "|---|---:|---|%s---:|---:|---:|---:|\n", strings.Repeat("---:|", cols))
		for _, s := range sets {
			best := map[[2]int]float64{} // (budget, metric) -> best value
			for _, row := range s.Rows {
				for i, m := range s.Metrics {
					if v, ok := row.Metrics[m]; ok && v > best[[2]int{row.Budget, i}] {
						best[[2]int{row.Budget, i}] = v
					}
				}
			}
			for _, row := range s.Rows {
				var ms []string
				for i := range cols {
					v := "-"
					if i < len(s.Metrics) {
						v = row.metric(s.Metrics[i])
						if x, ok := row.Metrics[s.Metrics[i]]; ok && x > 0 && x == best[[2]int{row.Budget, i}] {
							v = "**" + v + "**"
						}
					}
					ms = append(ms, v)
				}
				sys := row.System
				if a := row.anomalies(); a != "" {
					sys += " (" + a + ")"
				}
				if _, err := fmt.Fprintf(w, "| %s | %d | %s | %s | %.0f | %.2f | %.2f | %d |\n", s.Name, row.Budget, sys,
					strings.Join(ms, " | "), row.MeanTokens, row.P50Ms, row.P99Ms, row.N); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
