package relevance

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/kgctx/kgctx/engine"
)

// openData opens dir/name, or dir/name.gz decompressed when only that
// exists.
func openData(dir, name string) (io.ReadCloser, error) {
	p := filepath.Join(dir, name)
	f, err := os.Open(p)
	if err == nil {
		return f, nil
	}
	if !os.IsNotExist(err) {
		return nil, err
	}
	f, err = os.Open(p + ".gz")
	if err != nil {
		return nil, err
	}
	z, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s.gz: %w", p, err)
	}
	return struct {
		io.Reader
		io.Closer
	}{z, f}, nil
}

// eachLine calls fn with every non-empty line of dir/name (or name.gz) and
// its 1-based number; an error names the file and line.
func eachLine(dir, name string, fn func(n int, line string) error) error {
	r, err := openData(dir, name)
	if err != nil {
		return err
	}
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	n := 0
	for sc.Scan() {
		n++
		l := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(l) == "" {
			continue
		}
		if err := fn(n, l); err != nil {
			return fmt.Errorf("%s line %d: %w", name, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// metaQuestion is a MetaQA question: the text with the topic entity's
// brackets removed, the topic entity, and the answers.
type metaQuestion struct {
	Text, Topic string
	Answers     []string
}

// MetaQA file names.
const (
	metaQADir = "metaqa"
	metaQAKB  = "kb.txt"
)

// loadMetaQAKB reads the KB, `head|relation|tail` a line, in file order.
func loadMetaQAKB(dir string) ([]engine.TripletInput, error) {
	var kb []engine.TripletInput
	err := eachLine(filepath.Join(dir, metaQADir), metaQAKB, func(_ int, l string) error {
		parts := strings.Split(l, "|")
		if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
			return fmt.Errorf("%w: want head|relation|tail, got %q", ErrMalformed, l)
		}
		kb = append(kb, engine.TripletInput{Source: parts[0], Relationship: parts[1], Target: parts[2]})
		return nil
	})
	return kb, err
}

// parseMetaQuestion parses `question<TAB>answer|answer...`, the topic
// entity in [brackets].
func parseMetaQuestion(l string) (metaQuestion, error) {
	q, ans, ok := strings.Cut(l, "\t")
	if !ok || strings.TrimSpace(ans) == "" {
		return metaQuestion{}, fmt.Errorf("%w: want question<TAB>answers, got %q", ErrMalformed, l)
	}
	i, j := strings.IndexByte(q, '['), strings.IndexByte(q, ']')
	if i < 0 || j < i {
		return metaQuestion{}, fmt.Errorf("%w: no [topic entity] in %q", ErrMalformed, q)
	}
	out := metaQuestion{Text: strings.Join(strings.Fields(q[:i]+q[i+1:j]+q[j+1:]), " "), Topic: q[i+1 : j]}
	for _, a := range strings.Split(ans, "|") {
		if a = strings.TrimSpace(a); a != "" {
			out.Answers = append(out.Answers, a)
		}
	}
	return out, nil
}

// loadMetaQAQuestions reads the dev questions of hop (1..3).
func loadMetaQAQuestions(dir string, hop int) ([]metaQuestion, error) {
	var qs []metaQuestion
	err := eachLine(filepath.Join(dir, metaQADir), fmt.Sprintf("%d-hop-dev.txt", hop), func(_ int, l string) error {
		q, err := parseMetaQuestion(l)
		if err == nil {
			qs = append(qs, q)
		}
		return err
	})
	return qs, err
}

// LoCoMo, as the datasets README describes it.
type locomoConv struct {
	ID       string `json:"id"`
	SpeakerA string `json:"speakerA"`
	SpeakerB string `json:"speakerB"`
	Sessions []struct {
		N        int    `json:"n"`
		DateTime string `json:"dateTime"`
		Turns    []struct {
			ID      string `json:"id"`
			Speaker string `json:"speaker"`
			Text    string `json:"text"`
			Caption string `json:"caption"`
		} `json:"turns"`
	} `json:"sessions"`
	QA []struct {
		Question string   `json:"question"`
		Answer   any      `json:"answer"`
		Evidence []string `json:"evidence"`
		Category int      `json:"category"`
	} `json:"qa"`
}

const (
	locomoDir  = "locomo"
	locomoFile = "locomo-dev.json"
)

func loadLoCoMo(dir string) ([]locomoConv, error) {
	r, err := openData(filepath.Join(dir, locomoDir), locomoFile)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var convs []locomoConv
	if err := json.NewDecoder(r).Decode(&convs); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformed, locomoFile, err)
	}
	return convs, nil
}

// turnText is what a turn is stored as: the session's date, the speaker,
// the text, and the shared photo's caption when there is one.
func turnText(dateTime, speaker, text, caption string) string {
	s := "[" + dateTime + "] " + speaker + ": " + text
	if caption != "" {
		s += " (shares a photo: " + caption + ")"
	}
	return s
}

// evidenceIDs splits a QA item's evidence entries into turn ids (an entry
// may hold several, separated by ';', ',' or spaces).
func evidenceIDs(ev []string) []string {
	var out []string
	for _, e := range ev {
		out = append(out, strings.FieldsFunc(e, func(r rune) bool { return r == ';' || r == ',' || r == ' ' })...)
	}
	return out
}

// codeRepo is one repository of codeloc.
type codeRepo struct {
	Name string // the file's stem, the project id
	Repo string // from the header
	// Module is the repository's import path and Snapshot the commit the
	// graph was extracted at (the header).
	Module, Snapshot string
	// Version is the extraction version a codelangs set was built with
	// (langs.Version; the header's "v").
	Version int
	Nodes   []codeNode
	Edges   []codeEdge
	Queries []codeQuery
}

type codeNode struct {
	N string `json:"n"`
	T string `json:"t"`
	D string `json:"d"`
}

type codeEdge struct {
	Src, Dst int
	Rel      string
}

type codeQuery struct {
	Q  string `json:"q"`
	C  string `json:"c"`
	S  string `json:"s"`
	B  string `json:"b"`
	G  []int  `json:"g"`
	GF []int  `json:"gf"`
}

const codelocDir = "codeloc"

// loadCodeloc reads every *.jsonl.gz (or *.jsonl) of codeloc/, sorted by
// name.
func loadCodeloc(dir string) ([]*codeRepo, error) {
	d := filepath.Join(dir, codelocDir)
	ents, err := os.ReadDir(d)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if n := strings.TrimSuffix(e.Name(), ".gz"); strings.HasSuffix(n, ".jsonl") && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var out []*codeRepo
	for _, n := range names {
		r, err := loadCodeRepo(d, n)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no .jsonl files in %s", ErrMalformed, d)
	}
	return out, nil
}

func loadCodeRepo(dir, file string) (*codeRepo, error) {
	r := &codeRepo{Name: strings.TrimSuffix(file, ".jsonl")}
	err := eachLine(dir, file, func(_ int, l string) error {
		var rec struct {
			H *struct {
				Repo, Module, Snapshot string
				V                      int
			} `json:"h"`
			Node  *codeNode         `json:"node"`
			E     []json.RawMessage `json:"e"`
			Query *codeQuery        `json:"query"`
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			return fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		switch {
		case rec.H != nil:
			r.Repo, r.Module, r.Snapshot, r.Version = rec.H.Repo, rec.H.Module, rec.H.Snapshot, rec.H.V
		case rec.Node != nil:
			if rec.Node.N == "" {
				return fmt.Errorf("%w: node without a name", ErrMalformed)
			}
			r.Nodes = append(r.Nodes, *rec.Node)
		case rec.E != nil:
			var e codeEdge
			if len(rec.E) != 3 || json.Unmarshal(rec.E[0], &e.Src) != nil || json.Unmarshal(rec.E[1], &e.Rel) != nil ||
				json.Unmarshal(rec.E[2], &e.Dst) != nil {
				return fmt.Errorf("%w: want \"e\": [src, relationship, dst]", ErrMalformed)
			}
			if e.Src < 0 || e.Src >= len(r.Nodes) || e.Dst < 0 || e.Dst >= len(r.Nodes) {
				return fmt.Errorf("%w: edge %v names a node not read yet", ErrMalformed, e)
			}
			r.Edges = append(r.Edges, e)
		case rec.Query != nil:
			r.Queries = append(r.Queries, *rec.Query)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, q := range r.Queries {
		for _, i := range append(append([]int(nil), q.G...), q.GF...) {
			if i < 0 || i >= len(r.Nodes) {
				return nil, fmt.Errorf("%w: %s: query %s names node %d of %d", ErrMalformed, file, q.Q, i, len(r.Nodes))
			}
		}
	}
	return r, nil
}

// triplets are the repository's edges as import input, with the nodes'
// types and doc sentences.
func (r *codeRepo) triplets() []engine.TripletInput {
	out := make([]engine.TripletInput, len(r.Edges))
	for i, e := range r.Edges {
		s, d := r.Nodes[e.Src], r.Nodes[e.Dst]
		out[i] = engine.TripletInput{Source: s.N, Relationship: e.Rel, Target: d.N, SourceType: s.T, TargetType: d.T,
			SourceDescription: s.D, TargetDescription: d.D}
	}
	return out
}

// fileMembers maps a file node to the keys of the nodes it defines or
// contains (its edges "defines" and "contains").
func (r *codeRepo) fileMembers() map[int][]string {
	m := map[int][]string{}
	for _, e := range r.Edges {
		if r.Nodes[e.Src].T == "file" && (e.Rel == "defines" || e.Rel == "contains") {
			m[e.Src] = append(m[e.Src], engine.NormalizeName(r.Nodes[e.Dst].N))
		}
	}
	return m
}

// funcFiles maps each function or method node to the path of the file
// that defines it ("" when no file does).
func (r *codeRepo) funcFiles() map[int]string {
	m := map[int]string{}
	for _, e := range r.Edges {
		if r.Nodes[e.Src].T == "file" && e.Rel == "defines" {
			if _, ok := m[e.Dst]; !ok {
				m[e.Dst] = r.Nodes[e.Src].N
			}
		}
	}
	return m
}

// adjacency is a KB's undirected neighbourhood by entity name, for the
// answerable ceiling of the MetaQA sets.
type adjacency map[string][]string

func newAdjacency(kb []engine.TripletInput) adjacency {
	a := adjacency{}
	for _, t := range kb {
		s, d := strings.ToLower(t.Source), strings.ToLower(t.Target)
		a[s] = append(a[s], d)
		a[d] = append(a[d], s)
	}
	return a
}

// reaches says whether one of answers is within hops of topic (a walk of
// or fewer edges), names compared case-blind as the store's identity
// rule would merge them.
func (a adjacency) reaches(topic string, answers []string, hops int) bool {
	want := map[string]bool{}
	for _, s := range answers {
		want[strings.ToLower(s)] = true
	}
	topic = strings.ToLower(topic)
	seen := map[string]bool{topic: true}
	frontier := []string{topic}
	for h := 0; h < hops && len(frontier) > 0; h++ {
		var next []string
		for _, n := range frontier {
			for _, m := range a[n] {
				if want[m] {
					return true
				}
				if !seen[m] {
					seen[m] = true
					next = append(next, m)
				}
			}
		}
		frontier = next
	}
	return false
}
