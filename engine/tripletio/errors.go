package tripletio

import (
	"errors"
	"strconv"
)

// Sentinel errors. Match them with errors.Is: the errors actually returned
// wrap them with the field or the value at fault.
//
// Errors inside a *LineError print without the "tripletio: " prefix ("line
// 57: missing required field \"target\"") because they end up in per-line
// reports shown to the person who wrote the file, where the package name is
// noise; errors.Is still reaches the sentinel.
var (
	// ErrUnknownFormat is returned by ParseFormat and NewReader for a format
	// name or value this package does not know.
	ErrUnknownFormat = errors.New("tripletio: unknown format")

	// ErrInvalidOptions is returned for a ReaderOptions value with
	// a negative field.
	ErrInvalidOptions = errors.New("tripletio: invalid options")

	// ErrSyntax marks input that cannot be parsed in its format at all:
	// broken JSON (in an array or on a JSONL line), data after the end of a
	// JSON array or after a JSONL line's object, a JSON body that is not an
	// array, a bad CSV quote. Together with read errors (a corrupt gzip
	// stream, a failed read) these are what AnySyntax reports.
	ErrSyntax = errors.New("tripletio: syntax error")

	// ErrInvalidRecord marks a record that was read whole but is not a
	// triplet: a TSV, CSV or pipe row with the wrong number of fields, an
	// N-Triples statement with a bad term, a non-IRI predicate or no final
	// " .", a JSON value that is not an object (a number, null, an array),
	// a field of the wrong JSON type or an unparsable value (a timestamp).
	// Like ErrMissingField it is a validation error of one line.
	ErrInvalidRecord = errors.New("tripletio: invalid record")

	// ErrMissingField marks a record whose source, relationship or target is
	// absent, empty or only whitespace.
	ErrMissingField = errors.New("tripletio: missing required field")

	// ErrUnknownField marks a JSON object with a key that TripletInput does
	// not have; rejecting it catches misspelt optional fields ("wieght")
	// that would otherwise be silently dropped.
	ErrUnknownField = errors.New("tripletio: unknown field")

	// ErrInvalidUTF8 marks a JSON record whose text is not valid UTF-8
	// (encoding/json would silently replace the bad bytes).
	ErrInvalidUTF8 = errors.New("tripletio: invalid UTF-8")

	// ErrLineTooLong marks a line, CSV record or JSON array element longer
	// than ReaderOptions.MaxLineBytes.
	ErrLineTooLong = errors.New("tripletio: line too long")

	// ErrInvalidWeight is returned by the TSV and CSV readers for a weight
	// column that is not a finite number in [0,1].
	ErrInvalidWeight = errors.New("tripletio: invalid weight")
)

// LineError is a problem with one record of the input. Line is 1-based: the
// line on which the record starts for JSONL, TSV and CSV (blank and comment
// lines count), the element index for a JSON array.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string {
	return "line " + strconv.Itoa(e.Line) + ": " + e.Err.Error()
}

func (e *LineError) Unwrap() error { return e.Err }

// detailError is an error that prints only its message but matches its
// sentinel with errors.Is; see the note on the sentinels for why.
type detailError struct {
	kind error
	msg  string
}

func (e *detailError) Error() string { return e.msg }
func (e *detailError) Unwrap() error { return e.kind }

func detail(kind error, msg string) error { return &detailError{kind: kind, msg: msg} }
