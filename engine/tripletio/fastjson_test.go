package tripletio

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/kgctx/kgctx/engine/model"
)

// slowDecode is the reference: encoding/json with unknown fields refused.
func slowDecode(line []byte) (model.TripletInput, error) {
	var t model.TripletInput
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	err := dec.Decode(&t)
	if err == nil && !isJSONSpace(line[dec.InputOffset():]) {
		err = errSyntaxAfter
	}
	return t, err
}

var errSyntaxAfter = detail(ErrSyntax, "data after the object")

// checkFastAgrees fails when the fast path accepts a line that
// encoding/json refuses or decodes differently.
func checkFastAgrees(t *testing.T, line []byte) (accepted bool) {
	t.Helper()
	if !utf8.Valid(line) {
		return false // the reader refuses such lines before decoding
	}
	var d fastDecoder
	var got model.TripletInput
	if !d.decode(line, &got) {
		return false
	}
	want, err := slowDecode(line)
	if err != nil {
		t.Fatalf("fast path accepted %q, encoding/json refuses it: %v", line, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fast path decoded %q as\n%+v\nencoding/json as\n%+v", line, got, want)
	}
	return true
}

func TestFastDecoderAgreesWithEncodingJSON(t *testing.T) {
	cases := []struct {
		line string
		fast bool // whether the fast path should take it
	}{
		{`{"source":"a","relationship":"r","target":"b"}`, true},
		{` { "source" : "a" , "relationship":"r", "target":"b" } `, true},
		{`{}`, true},
		{`{"source":"Zürich","relationship":"in","target":"日本"}`, true},
		{`{"source":"a \"q\" \\ \/ \n\t\r\b\f","relationship":"r","target":"\u00e9\u0000x"}`, true},
		{`{"source":"a","source":"b","relationship":"r","target":"c"}`, true},
		{`{"source":"a","source":null,"relationship":"r","target":"c"}`, true},
		{`{"source":"a","relationship":"r","target":"b","weight":0.25,"sourceWeight":1,"targetWeight":-0,"sourceType":"t","targetType":"u"}`, true},
		{`{"source":"a","relationship":"r","target":"b","weight":1e-3,"targetWeight":2.5E+2}`, true},
		{`{"source":"a","relationship":"r","target":"b","weight":null}`, true},
		{`{"source":"a","relationship":"r","target":"b","sourceVector":[0.1,-2,3e-2],"targetVector":[]}`, true},
		{`{"source":"a","relationship":"r","target":"b","sourceAliases":["x","y"],"targetAliases":[]}`, true},
		{`{"source":"a","relationship":"r","target":"b","sourceProjectId":"p2","targetProjectId":"p3","targetOrgId":"o"}`, true},
		{`{"source":"a","relationship":"r","target":"b","sourceDescription":"d","targetDescription":"e"}`, true},
		{`{"source":"a","relationship":"r","target":"b","sourceExact":true,"targetExact":false,"sourceSignature":"func F(a, b int)","targetSignature":null}`, true},
		{`{"source":"a","relationship":"r","target":"b","sourceLocation":{"file":"nats.go","line":120,"endLine":180},"targetLocation":null}`, true},
		{`{"source":"a","relationship":"r","target":"b","sourceLocation":{},"targetLocation":{"line":-3,"endLine":0,"file":null}}`, true},
		{`{"source":"a","relationship":"r","target":"b","sourceLocation":{"file":"a.go","line":1},"sourceLocation":{"line":2}}`, true},
		{`{"source":"a","relationship":"r","target":"b","sourceExact":null}`, true},
		// Left to encoding/json.
		{`{"source":"a","relationship":"r","target":"b","sourceExact":1}`, false},
		{`{"source":"a","relationship":"r","target":"b","sourceExact":"true"}`, false},
		{`{"source":"a","relationship":"r","target":"b","sourceLocation":{"line":1.5}}`, false},
		{`{"source":"a","relationship":"r","target":"b","sourceLocation":{"line":1e2}}`, false},
		{`{"source":"a","relationship":"r","target":"b","sourceLocation":{"line":01}}`, false},
		{`{"source":"a","relationship":"r","target":"b","sourceLocation":{"line":99999999999999999999}}`, false},
		{`{"source":"a","relationship":"r","target":"b","sourceLocation":{"File":"a.go"}}`, false},
		{`{"source":"a","relationship":"r","target":"b","sourceLocation":{"file":"a.go",}}`, false},
		{`{"source":"a","relationship":"r","target":"b","sourceLocation":[]}`, false},
		{`{"Source":"a","relationship":"r","target":"b"}`, false},
		{`{"source":"a","relationship":"r","target":"b","provenance":{"sessionId":"s"}}`, false},
		{`{"source":"a","relationship":"r","target":"b","extra":1}`, false},
		{`{"source":"\ud83d\ude00","relationship":"r","target":"b"}`, false},
		{`{"source":1,"relationship":"r","target":"b"}`, false},
		{`{"source":"a","relationship":"r","target":"b","weight":"1"}`, false},
		{`{"source":"a","relationship":"r","target":"b","weight":01}`, false},
		{`{"source":"a","relationship":"r","target":"b","weight":1.}`, false},
		{`{"source":"a","relationship":"r","target":"b","weight":1e400}`, false},
		{`{"source":"a","relationship":"r","target":"b","sourceVector":[1e39]}`, false},
		{`{"source":"a","relationship":"r","target":"b","sourceAliases":[null]}`, false},
		{`{"source":"a","relationship":"r","target":"b"} x`, false},
		{`{"source":"a","relationship":"r","target":"b",}`, false},
		{`{"source":"a"`, false},
		{`null`, false},
		{`[]`, false},
		{"{\"source\":\"a\tb\",\"relationship\":\"r\",\"target\":\"b\"}", false},
		{`{"source":"a\x","relationship":"r","target":"b"}`, false},
	}
	for _, c := range cases {
		if got := checkFastAgrees(t, []byte(c.line)); got != c.fast {
			t.Errorf("%s: fast path took it = %v, want %v", c.line, got, c.fast)
		}
	}
}

// TestFastDecoderErrorsUnchanged checks that lines the fast path gives up
// on still get encoding/json's error through the reader.
func TestFastDecoderErrorsUnchanged(t *testing.T) {
	for _, line := range []string{
		`{"source":1,"relationship":"r","target":"b"}`,
		`{"source":"a","relationship":"r","target":"b","extra":1}`,
		`{"source":"a","relationship":"r"}`,
		`{"source":"a","relationship":"r","target":"b","weight":1e400}`,
	} {
		r, err := NewReader(bytes.NewReader([]byte(line+"\n")), JSONL)
		if err != nil {
			t.Fatal(err)
		}
		var got model.TripletInput
		if err := r.Next(&got); err == nil {
			t.Errorf("%s: accepted", line)
		}
	}
}

func FuzzFastDecoder(f *testing.F) {
	for _, s := range []string{
		`{"source":"a","relationship":"r","target":"b","weight":0.5,"sourceVector":[1,2],"sourceAliases":["x"]}`,
		`{"source":"a\"\\\u00e9","relationship":"r","target":"b"}`,
		`{"weight":-1.5e-3,"targetWeight":null}`,
		`{"sourceExact":true,"targetLocation":{"file":"a.go","line":3,"endLine":9},"sourceSignature":"func F()"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		checkFastAgrees(t, line)
	})
}

func BenchmarkFastDecoder(b *testing.B) {
	line := []byte(`{"source":"Barack Obama","relationship":"/people/person/profession","target":"Politician","sourceDescription":"44th president of the United States","targetDescription":"a person engaged in politics"}`)
	var d fastDecoder
	b.ReportAllocs()
	for b.Loop() {
		var t model.TripletInput
		if !d.decode(line, &t) {
			b.Fatal("not decoded")
		}
	}
}
