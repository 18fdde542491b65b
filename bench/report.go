package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Latency summarises one series of request latencies, in milliseconds.
type Latency struct {
	N    int     `json:"n"`
	P50  float64 `json:"p50Ms"`
	P95  float64 `json:"p95Ms"`
	P99  float64 `json:"p99Ms"`
	Max  float64 `json:"maxMs"`
	Mean float64 `json:"meanMs"`
}

func summarize(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	q := func(p float64) float64 {
		i := int(p*float64(len(s))+0.5) - 1
		return ms(s[min(max(i, 0), len(s)-1)])
	}
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return Latency{N: len(s), P50: q(0.50), P95: q(0.95), P99: q(0.99), Max: ms(s[len(s)-1]), Mean: ms(sum / time.Duration(len(s)))}
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// Machine describes where a report was measured.
type Machine struct {
	CPU    string `json:"cpu"`
	Cores  int    `json:"cores"`
	GoVer  string `json:"go"`
	OS     string `json:"os"`
	Memory string `json:"memory"`
}

func machine() Machine {
	m := Machine{Cores: runtime.NumCPU(), GoVer: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if kb := procStatusKB("/proc/meminfo", "MemTotal"); kb > 0 {
		m.Memory = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
	}
	return m
}

// peakRSSMB is the process's peak resident set (VmHWM), in MiB.
func peakRSSMB() float64 { return float64(procStatusKB("/proc/self/status", "VmHWM")) / 1024 }

// rssMB is the process's current resident set (VmRSS), in MiB.
func rssMB() float64 { return float64(procStatusKB("/proc/self/status", "VmRSS")) / 1024 }

// anonMB is the anonymous part of the resident set (RssAnon: the Go heap,
// stacks, off-heap allocations), in MiB. The rest of VmRSS is file pages
// mapped by Badger and bleve, which the kernel can drop under pressure.
func anonMB() float64 { return float64(procStatusKB("/proc/self/status", "RssAnon")) / 1024 }

func procStatusKB(path, key string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != key {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		return n
	}
	return 0
}

// Import reports a bulk import.
type Import struct {
	Triplets       int     `json:"triplets"`
	Nodes          int     `json:"nodes"`
	Seconds        float64 `json:"seconds"`
	TripletsPerSec float64 `json:"tripletsPerSec"`
}

// Reopen reports reopening a loaded store: the open itself, then the
// first block served, both from the start of the open, and the resident
// set at that moment.
type Reopen struct {
	OpenSeconds       float64 `json:"openSeconds"`
	FirstBlockSeconds float64 `json:"firstBlockSeconds"`
	RSSMB             float64 `json:"rssMB"`
	AnonMB            float64 `json:"anonMB"`
}

// Throughput reports blocks served by concurrent clients.
type Throughput struct {
	Workers      int     `json:"workers"`
	Blocks       int     `json:"blocks"`
	Seconds      float64 `json:"seconds"`
	BlocksPerSec float64 `json:"blocksPerSec"`
}

// HNSWPoint is recall and speed at one efSearch.
type HNSWPoint struct {
	Ef            int     `json:"efSearch"`
	Recall        float64 `json:"recallAt10"`
	MicrosPerQ    float64 `json:"usPerQuery"`
	QueriesPerSec float64 `json:"queriesPerSec"`
}

// HNSWRun is one data set's HNSW results.
type HNSWRun struct {
	Data          string      `json:"data"`
	Vectors       int         `json:"vectors"`
	Queries       int         `json:"queries"`
	Dim           int         `json:"dim"`
	BuildSeconds  float64     `json:"buildSeconds"`
	InsertsPerSec float64     `json:"insertsPerSec"`
	ExactMicros   float64     `json:"exactUsPerQuery"`
	Points        []HNSWPoint `json:"points"`
}

// Report is one scenario's results.
type Report struct {
	Scenario   string      `json:"scenario"`
	Machine    Machine     `json:"machine"`
	Graph      string      `json:"graph,omitempty"`
	Import     *Import     `json:"import,omitempty"`
	HTTPImport *Import     `json:"httpImport,omitempty"`
	InProcess  *Latency    `json:"inProcess,omitempty"`
	HTTP       *Latency    `json:"http,omitempty"`
	Throughput *Throughput `json:"httpThroughput,omitempty"`
	Blocks     *BlockStats `json:"blocks,omitempty"`
	HNSW       []HNSWRun   `json:"hnsw,omitempty"`
	Reopen     *Reopen     `json:"reopen,omitempty"`
	FairWrites *FairWrites `json:"fairWrites,omitempty"`
	RSSMB      float64     `json:"rssMB,omitempty"`
	AnonMB     float64     `json:"anonMB,omitempty"`
	PeakRSSMB  float64     `json:"peakRssMB"`
	Notes      []string    `json:"notes,omitempty"`
}

// BlockStats describe the blocks the queries produced.
type BlockStats struct {
	NonEmpty       int     `json:"nonEmpty"`
	MeanTriplets   float64 `json:"meanTriplets"`
	MeanTokens     float64 `json:"meanTokens"`
	MeanCandidates float64 `json:"meanCandidates"`
	// MeanSymbols is the code map's symbols per block (code scenario).
	MeanSymbols float64 `json:"meanSymbols,omitempty"`
}

// WriteJSON writes r as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes r for people.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "scenario %s on %s (%d cores, %s, %s)\n", r.Scenario, r.Machine.CPU, r.Machine.Cores, r.Machine.Memory, r.Machine.GoVer)
	if r.Graph != "" {
		fmt.Fprintf(w, "graph:            %s\n", r.Graph)
	}
	if i := r.Import; i != nil {
		fmt.Fprintf(w, "import:           %d triplets, %d nodes in %.2f s = %.0f triplets/s\n", i.Triplets, i.Nodes, i.Seconds, i.TripletsPerSec)
	}
	if i := r.HTTPImport; i != nil {
		fmt.Fprintf(w, "server import:    %d triplets, %d nodes in %.2f s = %.0f triplets/s (NDJSON over HTTP)\n", i.Triplets, i.Nodes, i.Seconds, i.TripletsPerSec)
	}
	lat := func(name string, l *Latency) {
		if l != nil {
			fmt.Fprintf(w, "%-17s p50 %.3f ms  p95 %.3f ms  p99 %.3f ms  max %.3f ms  (%d requests)\n", name+":", l.P50, l.P95, l.P99, l.Max, l.N)
		}
	}
	lat("in process", r.InProcess)
	lat("over HTTP", r.HTTP)
	if t := r.Throughput; t != nil {
		fmt.Fprintf(w, "HTTP throughput:  %.0f requests/s with %d workers (%d requests in %.2f s)\n", t.BlocksPerSec, t.Workers, t.Blocks, t.Seconds)
	}
	if b := r.Blocks; b != nil {
		fmt.Fprintf(w, "blocks:           %d non-empty, %.1f triplets, %.0f tokens, %.0f candidates on average\n", b.NonEmpty, b.MeanTriplets, b.MeanTokens, b.MeanCandidates)
		if b.MeanSymbols > 0 {
			fmt.Fprintf(w, "code map:         %.1f symbols on average\n", b.MeanSymbols)
		}
	}
	for _, h := range r.HNSW {
		fmt.Fprintf(w, "hnsw %s: %d vectors, %d queries, dim %d; build %.2f s (%.0f inserts/s); exact scan %.1f µs/query\n",
			h.Data, h.Vectors, h.Queries, h.Dim, h.BuildSeconds, h.InsertsPerSec, h.ExactMicros)
		for _, p := range h.Points {
			fmt.Fprintf(w, "  ef %-4d recall@10 %.4f  %7.1f µs/query  %8.0f queries/s\n", p.Ef, p.Recall, p.MicrosPerQ, p.QueriesPerSec)
		}
	}
	if f := r.FairWrites; f != nil {
		f.writeText(w)
	}
	if o := r.Reopen; o != nil {
		fmt.Fprintf(w, "reopen:           open %.2f s, first block at %.2f s, RSS then %.0f MiB (%.0f MiB anonymous)\n", o.OpenSeconds, o.FirstBlockSeconds, o.RSSMB, o.AnonMB)
	}
	if r.RSSMB > 0 {
		fmt.Fprintf(w, "RSS at the end:   %.0f MiB (%.0f MiB anonymous, the rest mapped store files)\n", r.RSSMB, r.AnonMB)
	}
	fmt.Fprintf(w, "peak RSS:         %.0f MiB\n", r.PeakRSSMB)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}
