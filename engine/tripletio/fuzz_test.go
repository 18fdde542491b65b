package tripletio

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/engine/model"
)

// Seeds shared by the reader fuzz targets; each target adds its own.
var fuzzSeeds = []string{
	"",
	"\n\n",
	"\xef\xbb\xbf",
	sampleInputs[JSON], sampleInputs[JSONL], sampleInputs[TSV], sampleInputs[CSV],
}

// smallOpts makes the buffers tiny so that fuzz inputs of a few dozen bytes
// reach the long-line, window-full and element-limit paths.
var smallOpts = &ReaderOptions{MaxLineBytes: 64, bufSize: 16}

// fuzzRead checks the invariants every input must keep, in format f, with
// default and with tiny buffers, plain and gzipped, and returns the default
// run for the target's own oracle.
func fuzzRead(t *testing.T, data []byte, f Format) result {
	res := readAll(t, data, f, nil)
	checkInvariants(t, res)
	small := readAll(t, data, f, smallOpts)
	checkInvariants(t, small)
	// Buffer size must not change the outcome unless a record hit the
	// smaller limit.
	if !hasErr(small, ErrLineTooLong) && !sameResult(res, small) {
		t.Fatalf("tiny buffers changed the result:\n%+v\n%+v", summary(res), summary(small))
	}
	// Gzip is transparent (for one level: data that is itself gzip is
	// not unwrapped twice), and Auto agrees with the format it detects.
	if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		return res
	}
	gzr, err := NewReader(bytes.NewReader(gzipBytes(t, data)), f)
	if err != nil {
		t.Fatal(err)
	}
	// Bound the calls by the uncompressed size: one per byte at most.
	if gz := drain(t, gzr, len(data)+10); !sameResult(res, gz) {
		t.Fatalf("gzip changed the result:\n%+v\n%+v", summary(res), summary(gz))
	}
	if auto := readAll(t, data, Auto, nil); auto.format == f && !sameResult(res, auto) {
		t.Fatalf("Auto changed the result:\n%+v\n%+v", summary(res), summary(auto))
	}
	return res
}

func checkInvariants(t *testing.T, res result) {
	for i, tr := range res.triplets {
		for name, s := range map[string]string{"source": tr.Source, "relationship": tr.Relationship, "target": tr.Target} {
			if strings.TrimSpace(s) == "" {
				t.Fatalf("triplet %d (line %d): blank %s: %+v", i, res.lines[i], name, tr)
			}
		}
		if i > 0 && res.lines[i] <= res.lines[i-1] {
			t.Fatalf("lines not increasing: %v", res.lines)
		}
	}
	for _, e := range res.errs {
		if e.Line < 1 || e.Err == nil || e.Error() == "" {
			t.Fatalf("bad error %#v", e)
		}
	}
}

func hasErr(res result, target error) bool {
	for _, e := range res.errs {
		if errors.Is(e, target) {
			return true
		}
	}
	return false
}

func sameResult(a, b result) bool {
	return reflect.DeepEqual(summary(a), summary(b))
}

func summary(res result) any {
	errs := make([]string, len(res.errs))
	for i, e := range res.errs {
		errs[i] = e.Error()
	}
	return struct {
		T     []model.TripletInput
		Lines []int
		Errs  []string
	}{res.triplets, res.lines, errs}
}

// inputLines splits data as the line-based readers number it.
func inputLines(data []byte) []string {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

func FuzzReader_JSONL(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	for _, s := range []string{
		`{"source":"a","relationship":"r","target":"b"}`,
		`{"source":"a","relationship":"r","target":"b"} x`,
		`{"source":"a","relationship":"r","target":"b"}{"source":"a","relationship":"r","target":"b"}`,
		"null\n{}\n[]\n1\n\"s\"\n",
		`{"source":" ","relationship":"r","target":"b"}`,
		`{"source":"a","relationship":"r","target":"b","wieght":1}`,
		`{"source":"a","relationship":"r","target":"b","weight":"1"}`,
		`{"source":"a","relationship":"r","target":"b","provenance":{"timestamp":"2026-01-02T03:04:05Z"}}`,
		`{"source":"a","relationship":"r","target":"b","sourceVector":[1,2,1e40]}`,
		`{"source":"` + strings.Repeat("long", 40) + `","relationship":"r","target":"b"}   ` + "\r\n" + `{"source":"a","relationship":"r","target":"b"}`,
		"{\"source\":\"a\",\n\"relationship\":\"r\",\"target\":\"b\"}",
		`{"source":"a","relationship":"r","target":"b"}` + "\f\n\v\n" + `{"source":"a","relationship":"r","target":"b"}`,
		`{"SOURCE":"a","Relationship":"r","target":"b\u0000"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res := fuzzRead(t, data, JSONL)
		// Oracle: each triplet is what encoding/json makes of its line.
		lines := inputLines(data)
		for i, tr := range res.triplets {
			var want model.TripletInput
			if err := json.Unmarshal([]byte(lines[res.lines[i]-1]), &want); err != nil || !reflect.DeepEqual(tr, want) {
				t.Fatalf("line %d: got %+v, encoding/json %+v (%v)", res.lines[i], tr, want, err)
			}
		}
	})
}

func FuzzReader_JSON(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	obj := `{"source":"a","relationship":"r","target":"b"}`
	for _, s := range []string{
		"[]", "[", "]", "[,]", "[" + obj + "]", "[" + obj + "," + obj + "]", "[" + obj + "," + obj,
		"[" + obj + "] x", "[" + obj + "][]", "[" + obj + obj + "]", "[null,1,\"x\",[]," + obj + "]",
		"{}", obj, "[" + `{"source":"a","relationship":"r","target":"b","extra":1}` + "," + obj + "]",
		"[" + `{"source":"` + strings.Repeat("x", 100) + `","relationship":"r","target":"b"}` + "," + obj + "]",
		" \n [ \n" + obj + " \n ] \n ",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res := fuzzRead(t, data, JSON)
		// Oracle: an input the Reader accepts whole is an array that
		// encoding/json decodes to the same triplets.
		if len(res.errs) > 0 || len(bytes.TrimSpace(data)) == 0 || bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
			return
		}
		var want []model.TripletInput
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("Reader accepted what encoding/json rejects: %v", err)
		}
		if len(want) == 0 {
			want = nil
		}
		if !reflect.DeepEqual(res.triplets, want) {
			t.Fatalf("got %+v\nencoding/json %+v", res.triplets, want)
		}
	})
}

func FuzzReader_TSV(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	for _, s := range []string{
		"a\tr\tb", "a\tr\tb\t0.5\r\n", "a\tr\tb\t\n", "a\tr", "a\tr\tb\t1\tx", "#c\n\n \t \na\tr\tb",
		"source\trelationship\ttarget\tweight\na\tr\tb\t2", " \tr\tb", "a\t\"r\"\tb,c", "a\tr\tb\tNaN",
		strings.Repeat("x", 70) + "\tr\tb\na\tr\tb", "a\r\tr\r\tb\r\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res := fuzzRead(t, data, TSV)
		// Oracle: each triplet's columns are its line's tab-separated
		// cells.
		lines := inputLines(data)
		for i, tr := range res.triplets {
			cells := strings.Split(lines[res.lines[i]-1], "\t")
			if cells[0] != tr.Source || cells[1] != tr.Relationship || cells[2] != tr.Target {
				t.Fatalf("line %d %q gave %+v", res.lines[i], lines[res.lines[i]-1], tr)
			}
		}
	})
}

func FuzzReader_CSV(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	for _, s := range []string{
		"a,r,b", "\"a,b\",r,\"c\"\"d\"", "\"multi\nline\",r,b\nx,y,z", "\"multi\r\nline\",r,b\r\n",
		"a\"b,r,t", "\"a\"b,r,t", "\"open,r,t\nx,y,z", "\"\",r,t", " , ,", "a,r,b,0.5,x", "a,r\n\n",
		"source,relationship,target\na,r,b", "\"\n\n\",r,b", "a,r,b\r", "a,r,b\r\r\n", " \"a\",r,b",
		"\"" + strings.Repeat("x\n", 40) + "\",r,b\nc,r,d", strings.Repeat("y", 80) + ",r,b\nc,r,d",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res := fuzzRead(t, data, CSV)
		// Oracle: encoding/csv, mapped through the same row rules.
		if len(data) > DefaultMaxLineBytes {
			return
		}
		want := csvOracle(data)
		if !reflect.DeepEqual(res.triplets, want.triplets) || !reflect.DeepEqual(res.lines, want.lines) || !reflect.DeepEqual(errLines(res), errLines(want)) {
			t.Fatalf("differs from encoding/csv:\ngot  %+v\nwant %+v", summary(res), summary(want))
		}
	})
}

func errLines(res result) []int {
	var lines []int
	for _, e := range res.errs {
		lines = append(lines, e.Line)
	}
	return lines
}

// csvOracle decodes data with encoding/csv and applies the Reader's row
// rules (blank records, header, column count, weight, required fields).
func csvOracle(data []byte) result {
	var res result
	cr := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))))
	cr.FieldsPerRecord = -1
	sawData := false
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return res
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			res.errs = append(res.errs, &LineError{Line: pe.StartLine, Err: err})
			continue
		}
		line, _ := cr.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if !sawData {
			sawData = true
			if len(rec) >= 3 && strings.EqualFold(strings.TrimSpace(rec[0]), "source") &&
				strings.EqualFold(strings.TrimSpace(rec[1]), "relationship") && strings.EqualFold(strings.TrimSpace(rec[2]), "target") {
				continue
			}
		}
		if len(rec) < 3 || len(rec) > 4 {
			res.errs = append(res.errs, &LineError{Line: line})
			continue
		}
		tr := model.TripletInput{Source: rec[0], Relationship: rec[1], Target: rec[2]}
		if len(rec) == 4 {
			if tr.Weight, err = parseWeight(rec[3]); err != nil {
				res.errs = append(res.errs, &LineError{Line: line})
				continue
			}
		}
		if checkRequired(&tr) != nil {
			res.errs = append(res.errs, &LineError{Line: line})
			continue
		}
		res.triplets = append(res.triplets, tr)
		res.lines = append(res.lines, line)
	}
}
