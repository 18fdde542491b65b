package relevance

import (
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kgctx/kgctx/engine"
)

func TestParseMetaQuestion(t *testing.T) {
	q, err := parseMetaQuestion("what movies did [Temuera Morrison] act in\tOnce Were Warriors|Tracker| River Queen ")
	if err != nil {
		t.Fatal(err)
	}
	if q.Text != "what movies did Temuera Morrison act in" || q.Topic != "Temuera Morrison" ||
		!slices.Equal(q.Answers, []string{"Once Were Warriors", "Tracker", "River Queen"}) {
		t.Fatalf("%+v", q)
	}
	for _, bad := range []string{"no tab [x]", "no brackets\tA", "[x] no answers\t "} {
		if _, err := parseMetaQuestion(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: err %v, want ErrMalformed", bad, err)
		}
	}
}

func writeGz(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	z := gzip.NewWriter(f)
	z.Write([]byte(content))
	z.Close()
	f.Close()
}

func TestLoadMetaQAKB(t *testing.T) {
	dir := t.TempDir()
	writeGz(t, filepath.Join(dir, "metaqa", "kb.txt.gz"), "Kismet|directed_by|William Dieterle\n\nKismet|written_by|Edward Knoblock\n")
	kb, err := loadMetaQAKB(dir)
	if err != nil || len(kb) != 2 || kb[1].Target != "Edward Knoblock" {
		t.Fatalf("kb %+v, err %v", kb, err)
	}
	writeGz(t, filepath.Join(dir, "metaqa", "kb.txt.gz"), "Kismet|directed_by|William Dieterle\nKismet|oops\n")
	if _, err := loadMetaQAKB(dir); !errors.Is(err, ErrMalformed) {
		t.Fatalf("err %v, want ErrMalformed naming line 2", err)
	}
}

func TestLoadCodeRepo(t *testing.T) {
	dir := t.TempDir()
	good := `{"h":{"repo":"x/y"}}
{"node":{"n":"p","t":"package"}}
{"node":{"n":"a.go","t":"file"}}
{"node":{"n":"p.F","t":"function","d":"F does it."}}
{"e":[0,"contains",1]}
{"e":[1,"defines",2]}
{"query":{"q":"y-01","c":"abc","s":"fix F","b":"body","g":[2],"gf":[1]}}
`
	writeGz(t, filepath.Join(dir, "codeloc", "y.jsonl.gz"), good)
	repos, err := loadCodeloc(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := repos[0]
	if r.Name != "y" || r.Repo != "x/y" || len(r.Nodes) != 3 || len(r.Edges) != 2 || len(r.Queries) != 1 {
		t.Fatalf("%+v", r)
	}
	ts := r.triplets()
	if ts[1].Source != "a.go" || ts[1].Relationship != "defines" || ts[1].TargetType != "function" || ts[1].TargetDescription != "F does it." {
		t.Fatalf("triplet %+v", ts[1])
	}
	if m := r.fileMembers(); !slices.Equal(m[1], []string{"p.f"}) || len(m[0]) != 0 {
		t.Fatalf("members %v: want a.go -> p.F only (a package is not a file)", m)
	}
	writeGz(t, filepath.Join(dir, "codeloc", "y.jsonl.gz"), `{"node":{"n":"p","t":"package"}}`+"\n"+`{"e":[0,"contains",5]}`+"\n")
	if _, err := loadCodeloc(dir); !errors.Is(err, ErrMalformed) {
		t.Fatalf("edge to an unknown node: err %v, want ErrMalformed", err)
	}
}

func TestLoCoMoFormat(t *testing.T) {
	dir := t.TempDir()
	writeGz(t, filepath.Join(dir, "locomo", "locomo-dev.json.gz"), `[{"id":"conv-1","speakerA":"A","speakerB":"B",
		"sessions":[{"n":1,"dateTime":"1 May","turns":[{"id":"D1:1","speaker":"A","text":"hi","caption":"a dog"}]}],
		"qa":[{"question":"q?","answer":2022,"evidence":["D1:1; D1:2"],"category":2}]}]`)
	cs, err := loadLoCoMo(dir)
	if err != nil || len(cs) != 1 || len(cs[0].Sessions[0].Turns) != 1 {
		t.Fatalf("%+v %v", cs, err)
	}
	tu := cs[0].Sessions[0].Turns[0]
	if got := turnText(cs[0].Sessions[0].DateTime, tu.Speaker, tu.Text, tu.Caption); got != "[1 May] A: hi (shares a photo: a dog)" {
		t.Fatalf("turn text %q", got)
	}
	if got := evidenceIDs(cs[0].QA[0].Evidence); !slices.Equal(got, []string{"D1:1", "D1:2"}) {
		t.Fatalf("evidence %v", got)
	}
}

func TestAdjacencyReaches(t *testing.T) {
	a := newAdjacency([]engine.TripletInput{
		{Source: "M", Relationship: "in_language", Target: "German"},
		{Source: "M", Relationship: "directed_by", Target: "Fritz Lang"},
		{Source: "Metropolis", Relationship: "directed_by", Target: "Fritz Lang"},
	})
	for _, c := range []struct {
		topic, answer string
		hops          int
		want          bool
	}{
		{"M", "German", 1, true}, {"m", "german", 1, true}, {"M", "Metropolis", 1, false},
		{"M", "Metropolis", 2, true}, {"German", "Metropolis", 2, false}, {"German", "Metropolis", 3, true},
		{"Nobody", "German", 3, false},
	} {
		if got := a.reaches(c.topic, []string{c.answer}, c.hops); got != c.want {
			t.Errorf("reaches(%q, %q, %d) = %v, want %v", c.topic, c.answer, c.hops, got, c.want)
		}
	}
}
