package tripletio

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestInvalidRecordsAreLineErrors: a row that was read whole but is not a
// triplet (wrong field count, an N-Triples statement without its final '.'
// or with a bad term, a JSON value that is not a triplet object) is a
// validation error of its line, not a syntax error of the body: AnySyntax
// is false for it (the API answers 422 naming the line, not 400), the
// error names the line, and the good rows around it are still read.
func TestInvalidRecordsAreLineErrors(t *testing.T) {
	cases := []struct {
		name string
		f    Format
		in   string
		line int
		msg  string
		good int // rows read besides the bad one
	}{
		{"tsv two fields", TSV, "a\tr\tb\nsource_only\tr\nc\tr\td\n", 2, "got 2", 2},
		{"tsv five fields", TSV, "a\tr\tb\nc\tr\td\t0.5\tx\n", 2, "got 5", 1},
		{"csv one field", CSV, "a,r,b\nlonely\nc,r,d\n", 2, "got 1", 2},
		{"pipe two parts", SPO, "a|r|b\n# note\nsubject|predicate\nc|r|d\n", 3, "got 2", 2},
		{"nt without final dot", NTriples, "<http://x/a> <http://x/r> <http://x/b> .\n<http://x/c> <http://x/r> <http://x/d>\n", 2, "must end with ' .'", 1},
		{"nt bad term", NTriples, "<http://x/a> <http://x/r> <http://x/b> .\n<http://x/c> <http://x/r> \"open .\n<http://x/e> <http://x/r> <http://x/f> .\n", 2, "term 3", 2},
		{"nt literal predicate", NTriples, "<http://x/a> <http://x/r> <http://x/b> .\n<http://x/c> _:p <http://x/d> .\n", 2, "predicate must be an IRI", 1},
		{"jsonl number", JSONL, `{"source":"a","relationship":"r","target":"b"}` + "\n42\n", 2, "expected a JSON object, got a number", 1},
		{"jsonl null", JSONL, `{"source":"a","relationship":"r","target":"b"}` + "\n\nnull\n", 3, "got null", 1},
		{"jsonl array", JSONL, `["a","r","b"]` + "\n" + `{"source":"a","relationship":"r","target":"b"}` + "\n", 1, "got an array", 1},
		{"jsonl weight string", JSONL, `{"source":"a","relationship":"r","target":"b","weight":"high"}` + "\n", 1, `field "weight"`, 0},
		{"jsonl bad timestamp", JSONL, `{"source":"a","relationship":"r","target":"b","provenance":{"timestamp":"yesterday"}}` + "\n", 1, "invalid value", 0},
		{"json number element", JSON, `[{"source":"a","relationship":"r","target":"b"}, 7]`, 2, "got a number", 1},
		{"json wrong field type", JSON, `[{"source":["a"],"relationship":"r","target":"b"}]`, 1, `field "source"`, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := readAll(t, []byte(c.in), c.f, nil)
			if len(res.errs) != 1 {
				t.Fatalf("errors %v", res.errs)
			}
			e := res.errs[0]
			if e.Line != c.line || !errors.Is(e, ErrInvalidRecord) || errors.Is(e, ErrSyntax) {
				t.Fatalf("error %q (line %d): want an ErrInvalidRecord on line %d", e, e.Line, c.line)
			}
			if !strings.HasPrefix(e.Error(), "line ") || !strings.Contains(e.Error(), c.msg) {
				t.Fatalf("error %q does not name its line or say %q", e, c.msg)
			}
			if AnySyntax(res.errs) {
				t.Fatalf("AnySyntax true for %q: the API would answer 400 instead of 422", e)
			}
			if len(res.triplets) != c.good {
				t.Fatalf("%d good rows read, want %d: %+v", len(res.triplets), c.good, res.triplets)
			}
		})
	}
}

// TestAnySyntaxOnlyForUnreadableBodies: the errors that make a body
// unreadable as a whole (broken JSON or CSV quoting, a corrupt gzip stream,
// a failed read) are what AnySyntax reports; they still name a line.
func TestAnySyntaxOnlyForUnreadableBodies(t *testing.T) {
	obj := `{"source":"a","relationship":"r","target":"b"}`
	gz := gzipBytes(t, []byte(strings.Repeat(obj+"\n", 50)))
	corrupt := append([]byte(nil), gz...)
	corrupt[len(corrupt)/2] ^= 0xff
	cases := []struct {
		name string
		f    Format
		in   []byte
	}{
		{"truncated json array", JSON, []byte("[" + obj + ",")},
		{"json array garbage", JSON, []byte("[" + obj + "] x")},
		{"json not an array", JSON, []byte(obj)},
		{"jsonl broken json", JSONL, []byte(`{"source":"a"` + "\n")},
		{"jsonl data after object", JSONL, []byte(obj + " x\n")},
		{"csv bare quote", CSV, []byte("a\"b,r,t\n")},
		{"csv unterminated quote", CSV, []byte("\"open,r,t\n")},
		{"gzip truncated header", Auto, gz[:5]},
		{"gzip corrupt body", JSONL, corrupt},
		{"gzip cut short", JSONL, gz[:len(gz)-12]},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := readAll(t, c.in, c.f, nil)
			if len(res.errs) == 0 {
				t.Fatalf("no error; triplets %d", len(res.triplets))
			}
			if !AnySyntax(res.errs) {
				t.Fatalf("AnySyntax false for %v", res.errs)
			}
			if res.errs[0].Line < 1 || !strings.HasPrefix(res.errs[0].Error(), "line ") {
				t.Fatalf("error %q names no line", res.errs[0])
			}
		})
	}
	// A read error of the source is not the sender's row either.
	r, err := NewReader(&failingReader{data: []byte(obj + "\n"), err: errors.New("connection reset")}, JSONL)
	if err != nil {
		t.Fatal(err)
	}
	_, _, errs, _ := ReadBatch(r, nil, nil, 0)
	if len(errs) != 1 || !AnySyntax(errs) {
		t.Fatalf("read error: %v", errs)
	}
	// And the record-level kinds are not.
	for _, in := range []string{
		`{"source":"a","relationship":"r"}`,                              // missing field
		`{"source":"a","relationship":"r","target":"b","x":1}`,           // unknown field
		"{\"source\":\"a\xff\",\"relationship\":\"r\",\"target\":\"b\"}", // invalid UTF-8
	} {
		res := readAll(t, []byte(in+"\n"), JSONL, nil)
		if len(res.errs) != 1 || AnySyntax(res.errs) {
			t.Errorf("%q: %v (AnySyntax %v)", in, res.errs, AnySyntax(res.errs))
		}
	}
	if res := readAll(t, []byte("a\tr\tb\t2\n"), TSV, nil); len(res.errs) != 1 || AnySyntax(res.errs) {
		t.Errorf("bad weight: %v", res.errs)
	}
	if res := readAll(t, bytes.Repeat([]byte("x"), 200), TSV, &ReaderOptions{MaxLineBytes: 100}); len(res.errs) != 1 || AnySyntax(res.errs) {
		t.Errorf("long line: %v", res.errs)
	}
}
