package tripletio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/kgctx/kgctx/engine/model"
)

// The same three triplets in every format.
var (
	sampleTriplets = []model.TripletInput{
		{Source: "AuthService", Relationship: "depends_on", Target: "PostgresDB", Weight: ptr(0.7)},
		{Source: "Payments, EU", Relationship: "calls", Target: "AuthService"},
		{Source: "PostgresDB", Relationship: "runs on", Target: "db-host-1", Weight: ptr(1.0)},
	}
	sampleInputs = map[Format]string{
		JSON: `[
  {"source": "AuthService", "relationship": "depends_on", "target": "PostgresDB", "weight": 0.7},
  {"source": "Payments, EU", "relationship": "calls", "target": "AuthService"},
  {"source": "PostgresDB", "relationship": "runs on", "target": "db-host-1", "weight": 1}
]
`,
		JSONL: `{"source": "AuthService", "relationship": "depends_on", "target": "PostgresDB", "weight": 0.7}
{"source": "Payments, EU", "relationship": "calls", "target": "AuthService"}
{"source": "PostgresDB", "relationship": "runs on", "target": "db-host-1", "weight": 1}
`,
		TSV: "AuthService\tdepends_on\tPostgresDB\t0.7\nPayments, EU\tcalls\tAuthService\nPostgresDB\truns on\tdb-host-1\t1\n",
		CSV: "AuthService,depends_on,PostgresDB,0.7\n\"Payments, EU\",calls,AuthService\nPostgresDB,runs on,db-host-1,1\n",
	}
)

func TestReader_Formats(t *testing.T) {
	for f, in := range sampleInputs {
		variants := map[string]string{
			"plain": in,
			"crlf":  strings.ReplaceAll(in, "\n", "\r\n"),
			"bom":   "\xef\xbb\xbf" + in,
			"noeol": strings.TrimSuffix(in, "\n"),
		}
		for vname, v := range variants {
			for _, gz := range []bool{false, true} {
				for _, asked := range []Format{f, Auto} {
					name := fmt.Sprintf("%v/%s/gzip=%v/asked=%v", f, vname, gz, asked)
					t.Run(name, func(t *testing.T) {
						data := []byte(v)
						if gz {
							data = gzipBytes(t, data)
						}
						res := readAll(t, data, asked, nil)
						if res.format != f {
							t.Fatalf("Format() = %v, want %v", res.format, f)
						}
						if len(res.errs) > 0 {
							t.Fatalf("errors: %v", res.errs)
						}
						if !reflect.DeepEqual(res.triplets, sampleTriplets) {
							t.Fatalf("got %+v\nwant %+v", res.triplets, sampleTriplets)
						}
					})
				}
			}
		}
	}
}

// A slow or stuttering source must decode exactly like a fast one: the
// sniffer and the line splitter see data in arbitrary pieces.
func TestReader_OddReads(t *testing.T) {
	wrappers := map[string]func(io.Reader) io.Reader{
		"onebyte": iotest.OneByteReader,
		"half":    iotest.HalfReader,
		"dataerr": iotest.DataErrReader,
	}
	for f, in := range sampleInputs {
		for wname, wrap := range wrappers {
			for _, gz := range []bool{false, true} {
				t.Run(fmt.Sprintf("%v/%s/gzip=%v", f, wname, gz), func(t *testing.T) {
					data := []byte(in)
					if gz {
						data = gzipBytes(t, data)
					}
					r, err := NewReader(wrap(bytes.NewReader(data)), Auto)
					if err != nil {
						t.Fatal(err)
					}
					res := drain(t, r, 100)
					if res.format != f || len(res.errs) > 0 || !reflect.DeepEqual(res.triplets, sampleTriplets) {
						t.Fatalf("format %v errs %v triplets %+v", res.format, res.errs, res.triplets)
					}
				})
			}
		}
	}
}

func TestReader_AllFields(t *testing.T) {
	in := `{"source":"a","relationship":"r","target":"b","sourceType":"service","targetType":"db",` +
		`"sourceDescription":"sd","targetDescription":"td","weight":0.25,` +
		`"provenance":{"observationId":"obs_1","sessionId":"ses_1","timestamp":"2026-11-20T10:00:00Z"},` +
		`"sourceVector":[0.5,-1,3e-7],"targetVector":[1],"sourceProjectId":"p1","targetProjectId":"p2","targetOrgId":"org_9"}`
	want := model.TripletInput{
		Source: "a", Relationship: "r", Target: "b", SourceType: "service", TargetType: "db",
		SourceDescription: "sd", TargetDescription: "td", Weight: ptr(0.25),
		Provenance: &model.Provenance{ObservationID: "obs_1", SessionID: "ses_1",
			Timestamp: time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)},
		SourceVector: []float32{0.5, -1, 3e-7}, TargetVector: []float32{1},
		SourceProjectID: "p1", TargetProjectID: "p2", TargetOrgID: "org_9",
	}
	for _, c := range []struct {
		f  Format
		in string
	}{{JSONL, in + "\n"}, {JSON, "[" + in + "]"}} {
		res := readAll(t, []byte(c.in), c.f, nil)
		if len(res.errs) > 0 || len(res.triplets) != 1 {
			t.Fatalf("%v: %v %v", c.f, res.errs, res.triplets)
		}
		if got := res.triplets[0]; !reflect.DeepEqual(got, want) {
			t.Errorf("%v: got %+v\nwant %+v", c.f, got, want)
		}
	}
}

// Next resets its argument: fields of the previous record never leak into
// the next one.
func TestReader_ResetsTriplet(t *testing.T) {
	in := `{"source":"a","relationship":"r","target":"b","weight":0.5,"sourceType":"x"}` + "\n" +
		`{"source":"c","relationship":"r","target":"d"}` + "\n"
	r, _ := NewReader(strings.NewReader(in), JSONL)
	var tr model.TripletInput
	for range 2 {
		if err := r.Next(&tr); err != nil {
			t.Fatal(err)
		}
	}
	if want := (model.TripletInput{Source: "c", Relationship: "r", Target: "d"}); !reflect.DeepEqual(tr, want) {
		t.Fatalf("got %+v", tr)
	}
}

func TestReader_Headers(t *testing.T) {
	cases := []struct {
		name, in string
		f        Format
		want     int // triplets
		lines    []int
	}{
		{"tsv", "source\trelationship\ttarget\na\tr\tb\n", TSV, 1, []int{2}},
		{"tsv weight, mixed case", "Source\tRELATIONSHIP\ttarget\tweight\na\tr\tb\t0.5\n", TSV, 1, []int{2}},
		{"tsv after comment and blank", "# exported\n\nsource\trelationship\ttarget\na\tr\tb\n", TSV, 1, []int{4}},
		{"tsv header only", "source\trelationship\ttarget\n", TSV, 0, nil},
		{"tsv second header row is data", "a\tr\tb\nsource\trelationship\ttarget\n", TSV, 2, []int{1, 2}},
		{"csv", "source,relationship,target\na,r,b\n", CSV, 1, []int{2}},
		{"csv quoted header", "\"source\",\"Relationship\",\"TARGET\",\"weight\"\na,r,b,1\n", CSV, 1, []int{2}},
		{"csv crlf", "source,relationship,target\r\na,r,b\r\n", CSV, 1, []int{2}},
		{"auto tsv header", "source\trelationship\ttarget\na\tr\tb\n", Auto, 1, []int{2}},
		{"auto csv header", "source,relationship,target\na,r,b\n", Auto, 1, []int{2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := readAll(t, []byte(c.in), c.f, nil)
			if len(res.errs) > 0 || len(res.triplets) != c.want || !reflect.DeepEqual(res.lines, c.lines) {
				t.Fatalf("errs %v, triplets %+v, lines %v", res.errs, res.triplets, res.lines)
			}
		})
	}
}

func TestReader_BlankAndCommentLines(t *testing.T) {
	cases := []struct {
		f     Format
		in    string
		lines []int
	}{
		{TSV, "\n# comment\na\tr\tb\n   \n\t\t\n#x\tr\ty\nc\tr\td\n\n", []int{3, 7}},
		{CSV, "\na,r,b\n   \n\r\nc,r,d\n\n", []int{2, 5}},
		{JSONL, "\n" + `{"source":"a","relationship":"r","target":"b"}` + "\n  \t\n\r\n" + `{"source":"c","relationship":"r","target":"d"}` + "\n\n", []int{2, 5}},
	}
	for _, c := range cases {
		res := readAll(t, []byte(c.in), c.f, nil)
		if len(res.errs) > 0 || !reflect.DeepEqual(res.lines, c.lines) {
			t.Errorf("%v: errs %v lines %v, want lines %v", c.f, res.errs, res.lines, c.lines)
		}
	}
}

func TestReader_TSVDetails(t *testing.T) {
	res := readAll(t, []byte("a, b\tr\t c \t 0.25 \r\nx\ty\tz\t\n"), TSV, nil)
	want := []model.TripletInput{
		{Source: "a, b", Relationship: "r", Target: " c ", Weight: ptr(0.25)},
		{Source: "x", Relationship: "y", Target: "z"},
	}
	if len(res.errs) > 0 || !reflect.DeepEqual(res.triplets, want) {
		t.Fatalf("errs %v triplets %+v", res.errs, res.triplets)
	}
}

func TestReader_CSVQuoting(t *testing.T) {
	in := "\"a, b\",\"says \"\"hi\"\"\",c\n" + // embedded comma and quotes
		"\"multi\r\nline\",r,t,\"0.5\"\n" + // quoted CRLF becomes \n; record spans lines 2-3
		"x,y,z\n" +
		"\"\",r,t\n" + // empty source
		"bad\"quote,r,t\n" +
		"\"unclosed\"x,r,t\n" +
		"ok,r,t\n" +
		"\"open,r,t\n"
	res := readAll(t, []byte(in), CSV, nil)
	want := []model.TripletInput{
		{Source: "a, b", Relationship: `says "hi"`, Target: "c"},
		{Source: "multi\nline", Relationship: "r", Target: "t", Weight: ptr(0.5)},
		{Source: "x", Relationship: "y", Target: "z"},
		{Source: "ok", Relationship: "r", Target: "t"},
	}
	if !reflect.DeepEqual(res.triplets, want) {
		t.Fatalf("triplets %+v", res.triplets)
	}
	if !reflect.DeepEqual(res.lines, []int{1, 2, 4, 8}) {
		t.Fatalf("lines %v", res.lines)
	}
	wantErrs := []struct {
		line int
		is   error
		msg  string
	}{
		{5, ErrMissingField, `missing required field "source"`},
		{6, ErrSyntax, `bare "`},
		{7, ErrSyntax, `extraneous or missing "`},
		{9, ErrSyntax, "not terminated"},
	}
	if len(res.errs) != len(wantErrs) {
		t.Fatalf("errors %v", res.errs)
	}
	for i, w := range wantErrs {
		e := res.errs[i]
		if e.Line != w.line || !errors.Is(e, w.is) || !strings.Contains(e.Error(), w.msg) {
			t.Errorf("error %d = %v, want line %d %v containing %q", i, e, w.line, w.is, w.msg)
		}
	}
}

func TestReader_Weights(t *testing.T) {
	for _, f := range []Format{TSV, CSV} {
		sep := map[Format]string{TSV: "\t", CSV: ","}[f]
		row := func(w string) string { return "a" + sep + "r" + sep + "b" + sep + w + "\n" }
		for _, c := range []struct {
			cell string
			want *float64
			ok   bool
		}{
			{"0", ptr(0.0), true}, {"1", ptr(1.0), true}, {"0.5", ptr(0.5), true}, {" 0.125 ", ptr(0.125), true},
			{"1e-3", ptr(0.001), true}, {"", nil, true},
			{"x", nil, false}, {"1.5", nil, false}, {"-0.1", nil, false}, {"NaN", nil, false}, {"Inf", nil, false},
			{"0,5", nil, false},
		} {
			res := readAll(t, []byte(row(c.cell)), f, nil)
			if !c.ok {
				if len(res.errs) != 1 || len(res.triplets) != 0 {
					t.Errorf("%v %q: want one error, got %v %v", f, c.cell, res.errs, res.triplets)
				} else if c.cell != "0,5" && !errors.Is(res.errs[0], ErrInvalidWeight) {
					t.Errorf("%v %q: error %v, want ErrInvalidWeight", f, c.cell, res.errs[0])
				}
				continue
			}
			if len(res.errs) != 0 || len(res.triplets) != 1 || !reflect.DeepEqual(res.triplets[0].Weight, c.want) {
				t.Errorf("%v %q: errs %v triplets %+v", f, c.cell, res.errs, res.triplets)
			}
		}
	}
}

// generate returns n records in format f; record missing (1-based, 0 for
// none) lacks its target.
func generate(f Format, n, missing int) string {
	var b strings.Builder
	if f == JSON {
		b.WriteString("[\n")
	}
	for i := 1; i <= n; i++ {
		src, tgt := fmt.Sprintf("node_%d", i), fmt.Sprintf("node_%d", i*7%n)
		if i == missing {
			tgt = "  "
		}
		switch f {
		case JSON, JSONL:
			fmt.Fprintf(&b, `{"source":%q,"relationship":"links_to","target":%q,"weight":0.5}`, src, tgt)
			if f == JSON && i < n {
				b.WriteByte(',')
			}
		case TSV:
			fmt.Fprintf(&b, "%s\tlinks_to\t%s\t0.5", src, tgt)
		case CSV:
			fmt.Fprintf(&b, "%s,links_to,%s,0.5", src, tgt)
		}
		b.WriteByte('\n')
	}
	if f == JSON {
		b.WriteString("]\n")
	}
	return b.String()
}

func TestReader_MissingFieldLine57(t *testing.T) {
	for _, f := range []Format{JSON, JSONL, TSV, CSV} {
		t.Run(f.String(), func(t *testing.T) {
			res := readAll(t, []byte(generate(f, 100, 57)), Auto, nil)
			if res.format != f {
				t.Fatalf("sniffed %v", res.format)
			}
			if len(res.errs) != 1 || len(res.triplets) != 99 {
				t.Fatalf("%d triplets, errors %v", len(res.triplets), res.errs)
			}
			e := res.errs[0]
			if e.Line != 57 || !errors.Is(e, ErrMissingField) || e.Error() != `line 57: missing required field "target"` {
				t.Fatalf("error %q (line %d)", e.Error(), e.Line)
			}
		})
	}
	// The first missing field is named, in column order.
	for field, in := range map[string]string{
		"source":       `{"relationship":"r","target":"b"}`,
		"relationship": `{"source":"a","relationship":"","target":""}`,
		"target":       `{"source":"a","relationship":"r"}`,
	} {
		res := readAll(t, []byte(in), JSONL, nil)
		if len(res.errs) != 1 || !strings.Contains(res.errs[0].Error(), fmt.Sprintf("%q", field)) {
			t.Errorf("%s: %v", field, res.errs)
		}
	}
}

func TestReader_MalformedJSON(t *testing.T) {
	obj := `{"source":"a","relationship":"r","target":"b"}`
	cases := []struct {
		name  string
		f     Format
		in    string
		n     int // triplets before the error
		fatal bool
		line  int
		is    error
		msg   string
	}{
		{"truncated array", JSON, "[" + obj + "," + obj, 2, true, 3, ErrSyntax, "unexpected end"},
		{"truncated element", JSON, "[" + obj + "," + obj[:20], 1, true, 2, ErrSyntax, "unexpected end"},
		{"truncated after comma", JSON, "[" + obj + ",", 1, true, 2, ErrSyntax, "unexpected end"},
		{"unclosed array", JSON, "[" + obj, 1, true, 2, ErrSyntax, "unexpected end"},
		{"trailing garbage", JSON, "[" + obj + "] xyz", 1, true, 2, ErrSyntax, "after the array"},
		{"two arrays", JSON, "[" + obj + "][" + obj + "]", 1, true, 2, ErrSyntax, "after the array"},
		{"missing comma", JSON, "[" + obj + obj + "]", 1, true, 2, ErrSyntax, "invalid JSON"},
		{"not an array", JSON, obj, 0, true, 1, ErrSyntax, "expected a JSON array, got an object"},
		{"bad syntax in element", JSON, `[{"source":}]`, 0, true, 1, ErrSyntax, "invalid character"},
		{"null element", JSON, "[null," + obj + "]", 1, false, 1, ErrInvalidRecord, "got null"},
		{"number element", JSON, "[1," + obj + "]", 1, false, 1, ErrInvalidRecord, "got a number"},
		{"wrong field type", JSON, `[{"source":1,"relationship":"r","target":"b"},` + obj + "]", 1, false, 1, ErrInvalidRecord, `field "source": expected a string, got a number`},
		{"jsonl truncated line", JSONL, `{"source":"a"` + "\n" + obj + "\n", 1, false, 1, ErrSyntax, "unexpected end"},
		{"jsonl trailing garbage", JSONL, obj + " x\n" + obj + "\n", 1, false, 1, ErrSyntax, "after the object"},
		{"jsonl two objects on a line", JSONL, obj + obj + "\n" + obj + "\n", 1, false, 1, ErrSyntax, "after the object"},
		{"jsonl form feed after object", JSONL, obj + "\f\n" + obj + "\n", 1, false, 1, ErrSyntax, "after the object"},
		{"jsonl null", JSONL, "null\n" + obj + "\n", 1, false, 1, ErrInvalidRecord, "got null"},
		{"jsonl array line", JSONL, "[" + obj + "]\n" + obj + "\n", 1, false, 1, ErrInvalidRecord, "got an array"},
		{"jsonl bad timestamp", JSONL, `{"source":"a","relationship":"r","target":"b","provenance":{"timestamp":"yesterday"}}` + "\n" + obj, 1, false, 1, ErrInvalidRecord, "invalid value"},
		{"jsonl weight string", JSONL, `{"source":"a","relationship":"r","target":"b","weight":"0.5"}` + "\n" + obj, 1, false, 1, ErrInvalidRecord, `field "weight": expected a number, got a string`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := readAll(t, []byte(c.in), c.f, nil)
			if len(res.errs) != 1 {
				t.Fatalf("errors %v, triplets %v", res.errs, res.triplets)
			}
			e := res.errs[0]
			if len(res.triplets) != c.n || e.Line != c.line || !errors.Is(e, c.is) || !strings.Contains(e.Error(), c.msg) {
				t.Fatalf("%d triplets, error %q line %d; want %d, line %d, %q", len(res.triplets), e, e.Line, c.n, c.line, c.msg)
			}
			r, _ := NewReader(strings.NewReader(c.in), c.f)
			var tr model.TripletInput
			for r.Next(&tr) == nil {
			}
			if r.Stopped() != c.fatal {
				t.Fatalf("Stopped() = %v after the error, want %v", r.Stopped(), c.fatal)
			}
		})
	}
}

func TestReader_UnknownField(t *testing.T) {
	bad := `{"source":"a","relationship":"r","target":"b","wieght":0.5}`
	good := `{"source":"c","relationship":"r","target":"d"}`
	for f, in := range map[Format]string{
		JSONL: bad + "\n" + good + "\n",
		JSON:  "[" + bad + "," + good + "]",
	} {
		res := readAll(t, []byte(in), f, nil)
		if len(res.errs) != 1 || len(res.triplets) != 1 {
			t.Fatalf("%v: errs %v triplets %v", f, res.errs, res.triplets)
		}
		e := res.errs[0]
		if !errors.Is(e, ErrUnknownField) || e.Error() != `line 1: unknown field "wieght" (did you mean "weight"?)` {
			t.Errorf("%v: %q", f, e)
		}
	}
	// Nested objects are strict too.
	res := readAll(t, []byte(`{"source":"a","relationship":"r","target":"b","provenance":{"who":"x"}}`), JSONL, nil)
	if len(res.errs) != 1 || !errors.Is(res.errs[0], ErrUnknownField) || !strings.Contains(res.errs[0].Error(), `"who"`) {
		t.Errorf("nested: %v", res.errs)
	}
}

func TestReader_LineTooLong(t *testing.T) {
	opts := &ReaderOptions{MaxLineBytes: 100}
	long := strings.Repeat("x", 200)
	obj := func(s string) string { return fmt.Sprintf(`{"source":%q,"relationship":"r","target":"b"}`, s) }
	cases := []struct {
		name  string
		f     Format
		in    string
		n     int
		line  int
		fatal bool
	}{
		{"jsonl", JSONL, obj("a") + "\n" + obj(long) + "\n" + obj("c") + "\n", 2, 2, false},
		{"tsv", TSV, "a\tr\tb\n" + long + "\tr\tb\nc\tr\td\n", 2, 2, false},
		{"tsv last line", TSV, "a\tr\tb\n" + long, 1, 2, false},
		{"csv", CSV, "a,r,b\n" + long + ",r,b\nc,r,d\n", 2, 2, false},
		{"csv multi-line record", CSV, "a,r,b\n\"" + strings.Repeat("x\n", 60) + "\",r,b\nc,r,d\n", 1, 2, true},
		{"json element", JSON, "[" + obj("a") + "," + obj(long) + "," + obj("c") + "]", 2, 2, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := readAll(t, []byte(c.in), c.f, opts)
			if len(res.errs) != 1 || len(res.triplets) != c.n {
				t.Fatalf("errs %v triplets %d", res.errs, len(res.triplets))
			}
			if e := res.errs[0]; e.Line != c.line || !errors.Is(e, ErrLineTooLong) {
				t.Fatalf("error %v, want line %d ErrLineTooLong", e, c.line)
			}
		})
	}
}

// A line longer than the buffer but within the limit is assembled intact;
// one over the default limit is an error, not an allocation of its size.
func TestReader_LongLines(t *testing.T) {
	big := strings.Repeat("y", 1<<20)
	in := "a\tr\t" + big + "\n" + "b\tr\t" + strings.Repeat("z", DefaultMaxLineBytes+1) + "\nc\tr\td"
	res := readAll(t, []byte(in), TSV, nil)
	if len(res.triplets) != 2 || res.triplets[0].Target != big || res.triplets[1].Source != "c" {
		t.Fatalf("%d triplets", len(res.triplets))
	}
	if len(res.errs) != 1 || res.errs[0].Line != 2 || !errors.Is(res.errs[0], ErrLineTooLong) {
		t.Fatalf("errs %v", res.errs)
	}
}

// An endless JSON array element (a string that never closes) must stop at
// the limit instead of buffering the whole input.
func TestReader_JSONElementHardLimit(t *testing.T) {
	src := io.MultiReader(strings.NewReader(`[{"source":"`), endless('a'))
	cr := &countingReader{r: src}
	r, err := NewReaderWithOptions(cr, JSON, &ReaderOptions{MaxLineBytes: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	var tr model.TripletInput
	err = r.Next(&tr)
	if !errors.Is(err, ErrLineTooLong) || !r.Stopped() {
		t.Fatalf("err %v", err)
	}
	if cr.n > 1<<20 {
		t.Fatalf("read %d bytes for a 64 KiB limit", cr.n)
	}
}

type endless byte

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(e)
	}
	return len(p), nil
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func TestReader_Sniff(t *testing.T) {
	cases := []struct {
		in   string
		want Format
	}{
		{"", JSONL},
		{"  \n\t ", JSONL},
		{"  \n [", JSON},
		{"[]", JSON},
		{"\r\n{}", JSONL},
		{"a\tb\tc", TSV},
		{"a,b\tc", TSV}, // a tab wins over commas
		{"a,b,c", CSV},
		{"\"a b\" c", CSV},
		{"# comment, with commas\na\tb\tc\n", TSV},
		{"\n\n   \na,b,c\n", CSV},
		{"just-one-column\n", TSV},
		{"#only comments\n", TSV},
	}
	for _, c := range cases {
		r, err := NewReader(strings.NewReader(c.in), Auto)
		if err != nil {
			t.Fatal(err)
		}
		if r.Format() != c.want {
			t.Errorf("%q: sniffed %v, want %v", c.in, r.Format(), c.want)
		}
		// Sniffing consumed nothing: an empty or comment-only input
		// yields no record and no error.
		if strings.TrimSpace(c.in) == "" || c.in == "#only comments\n" || c.in == "[]" {
			if err := r.Next(&model.TripletInput{}); err != io.EOF {
				t.Errorf("%q: Next = %v, want io.EOF", c.in, err)
			}
		}
	}
	// A first line longer than the sniff window: decided by what fits.
	r, _ := NewReader(strings.NewReader(strings.Repeat("x", 100<<10)+"\tr\tb\n"), Auto)
	if r.Format() != TSV {
		t.Errorf("long first line: %v", r.Format())
	}
}

// The sniffer must not wait for a full buffer: a producer that sends one
// line and then stalls (an interactive pipe) gets its format decided.
func TestReader_SniffDoesNotBlock(t *testing.T) {
	pr, pw := io.Pipe()
	go pw.Write([]byte("a\tr\tb\n")) // never closed: more would block
	done := make(chan Format)
	go func() {
		r, err := NewReader(pr, Auto)
		if err != nil {
			t.Error(err)
		}
		done <- r.Format()
	}()
	select {
	case f := <-done:
		if f != TSV {
			t.Fatalf("format %v", f)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("sniffing blocked waiting for more input")
	}
	pw.Close()
}

func TestReader_EmptyInput(t *testing.T) {
	for _, f := range []Format{Auto, JSON, JSONL, TSV, CSV} {
		for _, in := range [][]byte{nil, gzipBytes(t, nil), []byte("\n\n")} {
			res := readAll(t, in, f, nil)
			if len(res.errs)+len(res.triplets) != 0 {
				t.Errorf("%v %q: %v %v", f, in, res.errs, res.triplets)
			}
		}
	}
}

func TestReader_FieldCount(t *testing.T) {
	for f, in := range map[Format]string{
		TSV: "a\tb\nsource\trelationship\nx\ty\tz\tw\tv\n",
		CSV: "a,b\nsource,relationship\nx,y,z,0.5,v\n",
	} {
		res := readAll(t, []byte(in), f, nil)
		if len(res.errs) != 3 {
			t.Fatalf("%v: %v", f, res.errs)
		}
		for i, e := range res.errs {
			if e.Line != i+1 || !errors.Is(e, ErrInvalidRecord) || !strings.Contains(e.Error(), "expected 3 or 4") {
				t.Errorf("%v: %v", f, e)
			}
		}
	}
}

type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

// A read error mid-stream is reported once as a *LineError that wraps it,
// after the records that arrived intact, and stops the Reader.
func TestReader_ReadError(t *testing.T) {
	boom := errors.New("connection reset")
	for f, in := range sampleInputs {
		// Cut the input at the start of the third record's line.
		cut := strings.LastIndexByte(in[:strings.Index(in, "runs on")], '\n')
		r, err := NewReader(&failingReader{data: []byte(in[:cut+1]), err: boom}, f)
		if err != nil {
			t.Fatal(err)
		}
		res := drain(t, r, 100)
		if len(res.triplets) != 2 || len(res.errs) != 1 || !errors.Is(res.errs[0], boom) || !r.Stopped() {
			t.Errorf("%v: %d triplets, errors %v", f, len(res.triplets), res.errs)
		}
	}
	// Corrupt gzip: truncated stream.
	gz := gzipBytes(t, []byte(sampleInputs[TSV]))
	res := readAll(t, gz[:len(gz)-6], Auto, nil)
	if len(res.errs) != 1 || !errors.Is(res.errs[0], io.ErrUnexpectedEOF) {
		t.Errorf("truncated gzip: %v", res.errs)
	}
	// A broken gzip header or a failing source is reported by the first
	// Next, on line 1, like any other input error.
	for name, src := range map[string]io.Reader{
		"gzip header":  bytes.NewReader([]byte{0x1f, 0x8b, 0, 0}),
		"gzip magic":   bytes.NewReader([]byte{0x1f, 0x8b}),
		"failing read": &failingReader{err: boom},
	} {
		r, err := NewReader(src, Auto)
		if err != nil {
			t.Fatalf("%s: NewReader: %v", name, err)
		}
		res := drain(t, r, 10)
		if len(res.errs) != 1 || res.errs[0].Line != 1 || !r.Stopped() {
			t.Errorf("%s: %v", name, res.errs)
		}
	}
}

func TestNewReader_BadArguments(t *testing.T) {
	if _, err := NewReader(strings.NewReader(""), Format(42)); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("bad format: %v", err)
	}
	if _, err := NewReaderWithOptions(strings.NewReader(""), TSV, &ReaderOptions{MaxLineBytes: -1}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("bad options: %v", err)
	}
}

func TestParseFormat(t *testing.T) {
	for s, want := range map[string]Format{
		"": Auto, "auto": Auto, "json": JSON, "JSONL": JSONL, "ndjson": JSONL, " tsv ": TSV, "csv": CSV,
	} {
		got, err := ParseFormat(s)
		if err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseFormat("xml"); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("xml: %v", err)
	}
	for _, f := range []Format{Auto, JSON, JSONL, TSV, CSV} {
		if got, _ := ParseFormat(f.String()); got != f {
			t.Errorf("round trip %v", f)
		}
	}
	for p, want := range map[string]Format{
		"a.json": JSON, "a.jsonl.gz": JSONL, "x/y.NDJSON": JSONL, "train.txt.gz": TSV, "a.tsv": TSV,
		"a.csv": CSV, "-": Auto, "a.gz": Auto, "noext": Auto,
	} {
		if got := FormatFromPath(p); got != want {
			t.Errorf("FormatFromPath(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestInvalidUTF8InJSON(t *testing.T) {
	for _, f := range []Format{JSONL, JSON} {
		in := "{\"source\": \"a\xffb\", \"relationship\": \"r\", \"target\": \"t\"}\n{\"source\": \"ok\", \"relationship\": \"r\", \"target\": \"t\"}\n"
		if f == JSON {
			in = "[{\"source\": \"a\xffb\", \"relationship\": \"r\", \"target\": \"t\"}, {\"source\": \"ok\", \"relationship\": \"r\", \"target\": \"t\"}]"
		}
		r, err := NewReader(strings.NewReader(in), f)
		if err != nil {
			t.Fatal(err)
		}
		ts, _, errs, _ := ReadBatch(r, nil, nil, 0)
		if len(errs) != 1 || errs[0].Line != 1 || !errors.Is(errs[0], ErrInvalidUTF8) || len(ts) != 1 || ts[0].Source != "ok" {
			t.Fatalf("%v: %v %+v", f, errs, ts)
		}
	}
}
