package tripletio

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kgctx/kgctx/engine/model"
	"github.com/kgctx/kgctx/internal/suggest"
)

// nextJSONL decodes the next non-blank line as one object.
func (r *Reader) nextJSONL(t *model.TripletInput) error {
	for {
		line, _, err := r.lines.next()
		if err != nil {
			return r.readFailed(err)
		}
		if isJSONSpace(line) {
			continue
		}
		r.line = r.lines.n
		if !utf8.Valid(line) {
			return r.fail(r.line, detail(ErrInvalidUTF8, "the line is not valid UTF-8"), false)
		}
		if r.fast.decode(line, t) {
			err = checkRequired(t)
		} else {
			*t = model.TripletInput{}
			err = r.decodeLine(line, t)
		}
		if err != nil {
			return r.fail(r.line, err, false)
		}
		return nil
	}
}

// decodeLine decodes exactly one JSON object from line into t.
//
// json.Unmarshal has no DisallowUnknownFields, and a json.Decoder per line
// costs about a kilobyte of allocation, so one Decoder is kept across lines
// and fed by lineFeeder, which hands it the current line and then io.EOF.
// A value cut short by the end of its line therefore fails instead of
// running into the next line. Any error may leave the decoder with sticky
// state or unread bytes, so it is dropped and the next line gets a new one.
func (r *Reader) decodeLine(line []byte, t *model.TripletInput) error {
	if r.jdec == nil {
		r.jdec = json.NewDecoder(&r.feed)
		r.jdec.DisallowUnknownFields()
		r.fedBase = 0
	} else {
		r.fedBase += int64(r.feed.off)
	}
	r.feed.line, r.feed.off = line, 0
	// Decoding into a pointer to t's pointer makes a JSON null set it to
	// nil, which is how a null line is told apart from an empty object.
	r.p = t
	err := r.jdec.Decode(&r.p)
	// The decoder has consumed everything fed before this line (white
	// space at most, else it would have failed) plus a prefix of it; the
	// rest of the line, buffered in the decoder or not, must be blank.
	if err == nil && !isJSONSpace(line[r.jdec.InputOffset()-r.fedBase:]) {
		err = detail(ErrSyntax, "invalid JSON: unexpected data after the object")
	}
	if err != nil {
		r.jdec = nil
		if _, ok := err.(*detailError); ok {
			return err
		}
		return jsonError(err)
	}
	if r.p == nil {
		return detail(ErrInvalidRecord, "expected a JSON object, got null")
	}
	return checkRequired(t)
}

// isJSONSpace reports whether b is JSON white space only. It is narrower
// than isSpaceBytes: a form feed left after an object would otherwise reach
// the decoder at the start of the next line and fail there.
func isJSONSpace(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// lineFeeder is the io.Reader under the JSONL decoder: one line, then EOF.
type lineFeeder struct {
	line []byte
	off  int
}

func (f *lineFeeder) Read(p []byte) (int, error) {
	if f.off >= len(f.line) {
		return 0, io.EOF
	}
	n := copy(p, f.line[f.off:])
	f.off += n
	return n, nil
}

// nextJSON decodes the next element of the top-level array.
func (r *Reader) nextJSON(t *model.TripletInput) error {
	r.lim.mark()
	if r.jsonState == 0 {
		r.jsonState = 1
		tok, err := r.dec.Token()
		if err == io.EOF {
			// An empty body holds no triplets; that is not an error.
			r.err = io.EOF
			return io.EOF
		}
		if err != nil {
			return r.fail(1, r.jsonFatal(err), true)
		}
		if d, ok := tok.(json.Delim); !ok || d != '[' {
			return r.fail(1, detail(ErrSyntax, "expected a JSON array, got "+tokenKind(tok)), true)
		}
	}
	if r.jsonState == 2 || !r.dec.More() {
		return r.endJSON()
	}

	r.line++
	start := r.dec.InputOffset()
	r.p = t // see decodeLine; a field, so that &r.p does not allocate
	err := r.dec.Decode(&r.p)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF // "[{...}," ends where an element should be
	}
	if err != nil {
		if r.lim.err != nil || isJSONSyntax(err) {
			// The decoder cannot resynchronise after broken syntax or a
			// failed read: stop here.
			return r.fail(r.line, r.jsonFatal(err), true)
		}
		// A type or unknown-field error: the element was read to its
		// end, so the next one can still be decoded.
		return r.fail(r.line, jsonError(err), false)
	}
	if size := r.dec.InputOffset() - start; size > int64(r.opts.MaxLineBytes) {
		return r.fail(r.line, detail(ErrLineTooLong, fmt.Sprintf("array element longer than %d bytes", r.opts.MaxLineBytes)), false)
	}
	if r.p == nil {
		return r.fail(r.line, detail(ErrInvalidRecord, "expected a JSON object, got null"), false)
	}
	if err := checkRequired(t); err != nil {
		return r.fail(r.line, err, false)
	}
	// encoding/json turns invalid UTF-8 into U+FFFD instead of failing. An
	// element is not kept as raw bytes here, so a replacement character in
	// a decoded string is taken as the sign of broken input.
	if hasReplacement(t) {
		return r.fail(r.line, detail(ErrInvalidUTF8, "a string is not valid UTF-8 (or holds U+FFFD)"), false)
	}
	return nil
}

func hasReplacement(t *model.TripletInput) bool {
	for _, s := range [...]string{t.Source, t.Relationship, t.Target, t.SourceType, t.TargetType,
		t.SourceDescription, t.TargetDescription, t.SourceProjectID, t.TargetProjectID, t.TargetOrgID} {
		if strings.ContainsRune(s, utf8.RuneError) {
			return true
		}
	}
	return t.Provenance != nil && (strings.ContainsRune(t.Provenance.ObservationID, utf8.RuneError) ||
		strings.ContainsRune(t.Provenance.SessionID, utf8.RuneError))
}

// endJSON consumes the closing bracket and insists that nothing but white
// space follows: "[...] garbage" or two arrays back to back are malformed
// bodies, not a complete import.
func (r *Reader) endJSON() error {
	if r.jsonState == 1 {
		tok, err := r.dec.Token()
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return r.fail(r.line+1, r.jsonFatal(err), true)
		}
		if d, ok := tok.(json.Delim); !ok || d != ']' {
			return r.fail(r.line+1, detail(ErrSyntax, "invalid JSON: expected ',' or ']' in array"), true)
		}
		r.jsonState = 2
	}
	switch _, err := r.dec.Token(); {
	case err == io.EOF:
		r.err = io.EOF
		return io.EOF
	case err != nil && (r.lim.err != nil || !isJSONSyntax(err)):
		return r.fail(r.line+1, r.jsonFatal(err), true)
	default:
		return r.fail(r.line+1, detail(ErrSyntax, "invalid JSON: unexpected data after the array"), true)
	}
}

// jsonFatal describes an error that stops the JSON array decoder: the rest
// of the body cannot be read, so it is never a record-level error.
func (r *Reader) jsonFatal(err error) error {
	switch {
	case r.lim.err == errElementTooLong:
		return detail(ErrLineTooLong, fmt.Sprintf("array element longer than %d bytes", r.opts.MaxLineBytes))
	case r.lim.err != nil:
		return fmt.Errorf("read: %w", r.lim.err)
	case isJSONSyntax(err):
		return jsonError(err)
	}
	return detail(ErrSyntax, "invalid JSON: "+strings.TrimPrefix(err.Error(), "json: "))
}

func isJSONSyntax(err error) bool {
	var se *json.SyntaxError
	return errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF)
}

// jsonError rewrites an encoding/json error as a message for the person
// who wrote the input, keeping the sentinel reachable. Broken JSON is
// ErrSyntax; well-formed JSON that does not fit a triplet (a value that is
// not an object, a field of the wrong type, a bad timestamp) is
// ErrInvalidRecord, a validation error of its line.
func jsonError(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	msg := err.Error()
	switch {
	case errors.As(err, &se):
		return detail(ErrSyntax, "invalid JSON: "+se.Error())
	case errors.Is(err, io.ErrUnexpectedEOF):
		return detail(ErrSyntax, "invalid JSON: unexpected end of input")
	case errors.As(err, &te):
		if te.Field == "" {
			return detail(ErrInvalidRecord, "expected a JSON object, got "+jsonValueKind(te.Value))
		}
		return detail(ErrInvalidRecord, fmt.Sprintf("field %q: expected %s, got %s", te.Field, goTypeKind(te.Type), jsonValueKind(te.Value)))
	case strings.HasPrefix(msg, "json: unknown field "):
		m := strings.TrimPrefix(msg, "json: ")
		if name, err := strconv.Unquote(strings.TrimPrefix(msg, "json: unknown field ")); err == nil {
			if s := suggest.Field(name, model.TripletInput{}); s != "" {
				m += fmt.Sprintf(" (did you mean %q?)", s)
			}
		}
		return detail(ErrUnknownField, m)
	}
	return detail(ErrInvalidRecord, "invalid value: "+strings.TrimPrefix(msg, "json: "))
}

// jsonValueKind names a JSON value as UnmarshalTypeError reports it
// ("number", "number 1e999", "string", "array", "object", "bool").
func jsonValueKind(v string) string {
	switch {
	case strings.HasPrefix(v, "number "):
		return "out-of-range " + v
	case v == "object" || v == "array":
		return "an " + v
	case v == "":
		return "a value"
	}
	return "a " + v
}

func goTypeKind(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct:
		if t.PkgPath() == "time" {
			return "an RFC 3339 time string"
		}
		return "an object"
	case reflect.Bool:
		return "a boolean"
	}
	return t.String()
}

func tokenKind(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			return "an object"
		}
		return fmt.Sprintf("%q", string(v))
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "a value"
}
