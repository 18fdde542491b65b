package relevance

import (
	"math"
	"strings"
	"testing"
	"time"
)

// block is a hand-made block whose content the tests know.
func block() *blockOut {
	return &blockOut{Lines: []line{
		{"Ada Lovelace", "born_in", "London"},
		{"London", "capital_of", "United Kingdom"},
		{"b.go", "defines", "pkg.F"},
	}, ObsIDs: []string{"obs_2", "obs_9"}, Tokens: 40}
}

func TestAnswerScores(t *testing.T) {
	for _, c := range []struct {
		answers     []string
		hit, recall float64
	}{
		{[]string{"london", "Paris"}, 1, 0.5}, // case differs: still London
		{[]string{"United-Kingdom"}, 1, 1},    // so does punctuation
		{[]string{"Paris", "Rome", "paris"}, 0, 0},
		{[]string{"London", "LONDON", "Paris"}, 1, 0.5}, // duplicates count once
	} {
		h, r := answerScores(&question{Answers: c.answers}, block())
		if h != c.hit || r != c.recall {
			t.Errorf("%v: hit %v recall %v, want %v %v", c.answers, h, r, c.hit, c.recall)
		}
	}
}

func TestTripletsHit(t *testing.T) {
	q := &question{Gold: []goldTriplet{gold("ADA-LOVELACE", "Born In", "london")}}
	if got := tripletsHit(q, block()); got != 1 {
		t.Fatalf("1-hop hit %v, want 1 (names and relationship normalised)", got)
	}
	q.Gold = append(q.Gold, gold("London", "capital_of", "United Kingdom"))
	if got := tripletsHit(q, block()); got != 1 {
		t.Fatalf("path hit %v, want 1", got)
	}
	q.Gold = append(q.Gold, gold("United Kingdom", "member_of", "European Union"))
	if got := tripletsHit(q, block()); got != 0 {
		t.Fatalf("path hit with a missing step %v, want 0", got)
	}
	if got := tripletsHit(&question{Gold: []goldTriplet{gold("London", "born_in", "Ada Lovelace")}}, block()); got != 0 {
		t.Fatalf("reversed triplet counted as a hit")
	}
}

func TestCodeScores(t *testing.T) {
	q := &question{Funcs: []string{"pkg.F", "pkg.G"}, Files: []goldFile{
		{Key: "a.go", Members: []string{"pkg.g"}},          // neither it nor pkg.G is in the block
		{Key: "c.go", Members: []string{"pkg.h", "pkg.f"}}, // reached through pkg.F
		{Key: "b.go"}, // its own node is in the block
	}}
	fn, file := codeScores(q, block())
	if fn != 0.5 || math.Abs(file-2.0/3) > 1e-12 {
		t.Fatalf("function recall %v file recall %v, want 0.5 and 2/3", fn, file)
	}
}

func TestEvidenceRecall(t *testing.T) {
	if got := evidenceRecall(&question{Evidence: []string{"obs_1", "obs_2", "obs_3"}}, block()); math.Abs(got-1.0/3) > 1e-12 {
		t.Fatalf("recall %v, want 1/3", got)
	}
	if got := evidenceRecall(&question{}, block()); !math.IsNaN(got) {
		t.Fatalf("recall without evidence %v, want NaN (not applicable)", got)
	}
}

func TestAccAndAnomalies(t *testing.T) {
	a := newAcc(2)
	a.add([]float64{1, math.NaN()}, block(), 50, 2*time.Millisecond)
	dup := block()
	dup.Lines = append(dup.Lines, dup.Lines[0])
	dup.Tokens = 60
	a.add([]float64{0, 0.5}, dup, 50, 4*time.Millisecond)
	a.add([]float64{0.5, 1}, &blockOut{}, 50, time.Millisecond)
	if a.n != 3 || a.sums[0] != 1.5 || a.counts[0] != 3 || a.sums[1] != 1.5 || a.counts[1] != 2 {
		t.Fatalf("sums %v counts %v", a.sums, a.counts)
	}
	if a.empty != 1 || a.over != 1 || a.dups != 1 || a.tokens != 100 {
		t.Fatalf("empty %d over %d dups %d tokens %v", a.empty, a.over, a.dups, a.tokens)
	}
}

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i))
	}
	if p := percentile(ds, 50); p != 50 {
		t.Fatalf("p50 %v", p)
	}
	if p := percentile(ds, 99); p != 99 {
		t.Fatalf("p99 %v", p)
	}
	if p := percentile([]time.Duration{7}, 99); p != 7 {
		t.Fatalf("p99 of one %v", p)
	}
}

func TestCodeBlockScores(t *testing.T) {
	text := "## Knowledge Graph Triplets\n- nats.Conn.doReconnect → calls → nats.Conn.close\n- pool.go → defines → nats.Pool\n" +
		"- nats.Pool → uses_type → nats.Conn\n\n" + codeMapHeader + "\nnats.go:\n  120│ func (nc *Conn) processOpErr(err error)\n" +
		"  300│ func (nc *Conn) Close()\nsub/x.go:\n  9│ func helper() // calls processOpErr\n"
	b := &blockOut{Text: text, Lines: []line{{"nats.Conn.doReconnect", "calls", "nats.Conn.close"}, {"pool.go", "defines", "nats.Pool"},
		{"nats.Pool", "uses_type", "nats.Conn"}}, Map: parseMap(text)}
	if len(b.Map) != 5 || b.Map[0] != (mapLine{File: "nats.go"}) || b.Map[2] != (mapLine{File: "nats.go", Sig: "func (nc *Conn) Close()"}) {
		t.Fatalf("map %+v", b.Map)
	}
	q := &question{
		// doReconnect: a line's endpoint. processOpErr: its bare name in
		// its file's section (not in sub/x.go's, where it is only
		// mentioned). Conn.Flush: absent.
		Funcs:     []string{"nats.Conn.doReconnect", "nats.Conn.processOpErr", "nats.Conn.Flush"},
		FuncFiles: []string{"nats.go", "nats.go", "nats.go"},
		Files:     []goldFile{{Key: "nats.go"}, {Key: "pool.go"}, {Key: "js.go"}},
	}
	fn, file, prec := codeBlockScores(q, b)
	if math.Abs(fn-2.0/3) > 1e-12 || math.Abs(file-2.0/3) > 1e-12 {
		t.Fatalf("function recall %v, file recall %v, want 2/3 and 2/3", fn, file)
	}
	// Lines naming gold: the doReconnect line, pool.go's defines line, the
	// nats.go file line and processOpErr's line: 4 of 8.
	if prec != 0.5 {
		t.Fatalf("precision %v, want 4/8", prec)
	}
	// A qualified name counts in any section; a bare name in another
	// file's section does not.
	q = &question{Funcs: []string{"x.helper", "nats.Conn.Close"}, FuncFiles: []string{"other.go", ""}}
	if fn, _, _ := codeBlockScores(q, b); fn != 0 {
		t.Fatalf("function recall %v, want 0: bare names outside their file's section", fn)
	}
	b.Map = parseMap(strings.Replace(text, "func helper()", "func Conn.Close()", 1))
	if fn, _, _ := codeBlockScores(q, b); fn != 0.5 {
		t.Fatalf("function recall %v, want 0.5 (Conn.Close qualified)", fn)
	}
	// "#2" marks the second of two names that fold alike, in gold and in
	// older graphs: it is not part of the name.
	q = &question{Funcs: []string{"cobra.Command.execute#2", "cobra.Command.ExecuteC"}, FuncFiles: []string{"command.go", "command.go"}}
	b = &blockOut{Lines: []line{{"cobra.Command.ExecuteC#2", "calls", "x"}},
		Map: parseMap(codeMapHeader + "\ncommand.go:\n  9│ func (c *Command) execute(a []string) (err error) {")}
	if fn, _, _ := codeBlockScores(q, b); fn != 1 {
		t.Fatalf("function recall %v, want 1", fn)
	}
	if _, _, p := codeBlockScores(q, &blockOut{}); !math.IsNaN(p) {
		t.Fatalf("precision of an empty block %v, want NaN", p)
	}
}
