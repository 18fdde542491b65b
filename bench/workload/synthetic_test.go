package workload

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/engine"
)

type synthStats struct {
	edges      int
	hash       [32]byte
	nodes      int
	selfLoops  int
	invalid    int // rejected or altered by engine.ValidateTriplet
	duplicates int
	degrees    []int // sorted ascending
	byRel      map[string]int
}

// collect streams s and checks/measures it. It keeps a set of triplets,
// so use it only on test-sized graphs.
func collect(t *testing.T, s *Synthetic) synthStats {
	t.Helper()
	h := sha256.New()
	seen := make(map[[3]string]struct{}, s.Opts.Edges)
	deg := make(map[string]int, s.Opts.Nodes)
	st := synthStats{byRel: map[string]int{}}
	var lenBuf [8]byte
	err := s.Each(func(tr *engine.TripletInput) error {
		st.edges++
		if c := *tr; engine.ValidateTriplet(&c, engine.Limits{}, 0) != nil || c.Source != tr.Source || c.Target != tr.Target || c.Relationship != tr.Relationship {
			st.invalid++
		}
		for _, f := range []string{tr.Source, tr.Relationship, tr.Target, tr.SourceType, tr.TargetType, tr.SourceDescription, tr.TargetDescription} {
			binary.LittleEndian.PutUint64(lenBuf[:], uint64(len(f)))
			h.Write(lenBuf[:])
			h.Write([]byte(f))
		}
		src, dst := engine.NormalizeName(tr.Source), engine.NormalizeName(tr.Target)
		if src == dst {
			st.selfLoops++
		}
		key := [3]string{src, engine.NormalizeRelationship(tr.Relationship), dst}
		if _, dup := seen[key]; dup {
			st.duplicates++
		}
		seen[key] = struct{}{}
		deg[src]++
		deg[dst]++
		st.byRel[tr.Relationship]++
		return nil
	})
	if err != nil {
		t.Fatalf("Each: %v", err)
	}
	copy(st.hash[:], h.Sum(nil))
	st.nodes = len(deg)
	for _, d := range deg {
		st.degrees = append(st.degrees, d)
	}
	slices.Sort(st.degrees)
	return st
}

func TestSynthetic10k(t *testing.T) {
	s := NewSynthetic(SyntheticOptions{Nodes: 10_000, Edges: 50_000, Seed: 1})
	st := collect(t, s)
	if st.edges != 50_000 {
		t.Errorf("edges = %d, want 50000", st.edges)
	}
	if st.duplicates != 0 || st.selfLoops != 0 || st.invalid != 0 {
		t.Errorf("duplicates=%d selfLoops=%d invalid=%d, want 0", st.duplicates, st.selfLoops, st.invalid)
	}
	if st.nodes < 9_900 {
		t.Errorf("distinct nodes used = %d, want close to 10000", st.nodes)
	}
	d := st.degrees
	median, p90, p99, maxd := d[len(d)/2], d[len(d)*9/10], d[len(d)*99/100], d[len(d)-1]
	t.Logf("nodes used %d; degree median %d p90 %d p99 %d max %d; by relationship %v", st.nodes, median, p90, p99, maxd, st.byRel)
	if maxd < 50*median {
		t.Errorf("max degree %d not far above median %d: no power law", maxd, median)
	}
	if maxd < 1000 {
		t.Errorf("max degree %d: want hubs with thousands of edges", maxd)
	}
	for _, rel := range []string{"contains", "depends_on", "calls", "implements", "caused_by"} {
		if st.byRel[rel] == 0 {
			t.Errorf("no %s edges", rel)
		}
	}

	again := collect(t, NewSynthetic(SyntheticOptions{Nodes: 10_000, Edges: 50_000, Seed: 1}))
	if again.hash != st.hash {
		t.Error("same seed gave a different stream")
	}
	other := collect(t, NewSynthetic(SyntheticOptions{Nodes: 10_000, Edges: 50_000, Seed: 2}))
	if other.hash == st.hash {
		t.Error("seed 2 gave the same stream as seed 1")
	}
	if other.edges != 50_000 || other.duplicates != 0 || other.selfLoops != 0 {
		t.Errorf("seed 2: edges=%d duplicates=%d selfLoops=%d", other.edges, other.duplicates, other.selfLoops)
	}
}

func TestSyntheticExactCounts(t *testing.T) {
	// Shapes that stress the budget logic: fewer edges than the tree,
	// barely more, dense small graphs.
	cases := []SyntheticOptions{
		{Nodes: 20, Edges: 0},
		{Nodes: 20, Edges: 10},
		{Nodes: 20, Edges: 17},
		{Nodes: 20, Edges: 60},
		{Nodes: 200, Edges: 150},
		{Nodes: 1000, Edges: 995},
		{Nodes: 1000, Edges: 975}, // only 10 of 30 errors get their caused_by
		{Nodes: 1000, Edges: 20_000},
		{Nodes: 100, Edges: 4_000},
		{Nodes: 5000, Edges: 5000},
	}
	for _, o := range cases {
		t.Run(fmt.Sprintf("%dn_%de", o.Nodes, o.Edges), func(t *testing.T) {
			st := collect(t, NewSynthetic(o))
			if st.edges != o.Edges || st.duplicates != 0 || st.selfLoops != 0 {
				t.Errorf("edges=%d (want %d) duplicates=%d selfLoops=%d", st.edges, o.Edges, st.duplicates, st.selfLoops)
			}
			if o.Edges >= o.Nodes && st.nodes != o.Nodes {
				t.Errorf("nodes used = %d, want %d", st.nodes, o.Nodes)
			}
		})
	}
}

func TestSyntheticInvalid(t *testing.T) {
	for _, o := range []SyntheticOptions{{Nodes: 5, Edges: 10}, {Nodes: 100, Edges: -1}} {
		if err := NewSynthetic(o).Each(func(*engine.TripletInput) error { return nil }); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%+v: err = %v, want ErrInvalidOptions", o, err)
		}
	}
	err := NewSynthetic(SyntheticOptions{Nodes: 20, Edges: 1000}).Each(func(*engine.TripletInput) error { return nil })
	if !errors.Is(err, ErrTooManyEdges) {
		t.Errorf("20 nodes / 1000 edges: err = %v, want ErrTooManyEdges", err)
	}
	stop := errors.New("stop")
	n := 0
	err = NewSynthetic(SyntheticOptions{Nodes: 100, Edges: 500}).Each(func(*engine.TripletInput) error {
		n++
		if n == 7 {
			return stop
		}
		return nil
	})
	if err != stop || n != 7 {
		t.Errorf("callback error: err=%v after %d calls, want stop after 7", err, n)
	}
}

// TestSyntheticNames checks that every node name is distinct after kgctx
// normalisation. Short mode checks a 10k graph; the full run checks the
// 1M-node layout, which exercises every vocabulary near its capacity.
func TestSyntheticNames(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 10_000
	}
	s := NewSynthetic(SyntheticOptions{Nodes: n, Edges: n})
	seen := make(map[string]int, n)
	for id := range n {
		name, kind, desc, err := s.Node(id)
		if err != nil {
			t.Fatal(err)
		}
		if name == "" || desc == "" {
			t.Fatalf("node %d (%s): empty name or description", id, kind)
		}
		k := engine.NormalizeName(name)
		if prev, dup := seen[k]; dup {
			p, _, _, _ := s.Node(prev)
			t.Fatalf("nodes %d %q and %d %q share normalised name %q", prev, p, id, name, k)
		}
		seen[k] = id
	}
	l, _ := s.Layout()
	t.Logf("%d distinct names; layout %+v", len(seen), l)
	for _, id := range []int{0, l.Services, l.Services + l.Packages, l.Services + l.Packages + l.Files,
		l.Services + l.Packages + l.Files + l.Interfaces, n - l.Functions, n - 1} {
		name, kind, desc, _ := s.Node(id)
		t.Logf("%-9s %-45s %s", kind, name, desc)
	}
}

// TestVocabularyPrefixFree checks the rule that makes concatenated names
// decodable (see vocab.go).
func TestVocabularyPrefixFree(t *testing.T) {
	check := func(name string, words []string) {
		for i, a := range words {
			for j, b := range words {
				if i != j && a != "" && b != "" && strings.HasPrefix(strings.ToLower(b), strings.ToLower(a)) {
					t.Errorf("%s: %q is a prefix of %q", name, a, b)
				}
			}
		}
	}
	var verbNames []string
	for _, v := range verbs {
		verbNames = append(verbNames, v.name)
	}
	var ops, roles []string
	for _, w := range errorOps {
		ops = append(ops, w.name)
	}
	for _, w := range ifaceRoles {
		roles = append(roles, w.name)
	}
	check("domains", domains)
	check("service qualifiers+tiers", append(slices.Clone(serviceQualifiers), serviceTiers...))
	check("verbs", verbNames)
	check("nouns", nouns)
	check("objects", objects)
	check("interface prefixes+nouns", append(slices.Clone(ifacePrefixes), nouns...))
	check("roles", roles)
	check("error ops", ops)
}

func TestSyntheticQueries(t *testing.T) {
	s := NewSynthetic(SyntheticOptions{Nodes: 10_000, Edges: 50_000})
	qs := s.Queries(1000)
	if len(qs) != 1000 {
		t.Fatalf("got %d queries", len(qs))
	}
	if !slices.Equal(qs, s.Queries(1000)) {
		t.Error("queries not deterministic")
	}
	// Every query must mention a real node name or its words; count the
	// ones that contain an exact node name.
	names := make(map[string]bool)
	for id := range 10_000 {
		n, _, _, _ := s.Node(id)
		names[n] = true
	}
	exact := 0
	for _, q := range qs {
		for _, w := range strings.Fields(strings.TrimSuffix(q, ":")) {
			if names[strings.TrimSuffix(w, ":")] {
				exact++
				break
			}
		}
	}
	t.Logf("%d/%d queries name a node exactly; samples: %q", exact, len(qs), qs[:8])
	if exact < len(qs)/2 {
		t.Errorf("only %d/%d queries name a node", exact, len(qs))
	}
}

// TestSyntheticMemory streams 200k edges and samples the live heap: it
// must stay far below what materialising the triplets would take (~45 MB).
func TestSyntheticMemory(t *testing.T) {
	s := NewSynthetic(SyntheticOptions{Nodes: 40_000, Edges: 200_000})
	if _, err := s.Layout(); err != nil { // plan outside the measurement
		t.Fatal(err)
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak uint64
	n := 0
	err := s.Each(func(*engine.TripletInput) error {
		n++
		if n%20_000 == 0 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > base {
				peak = max(peak, ms.HeapAlloc-base)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("peak live heap during Each: %d KiB over %d edges", peak/1024, n)
	if peak > 4<<20 {
		t.Errorf("live heap grew by %d bytes while streaming", peak)
	}
}
