package tripletio

import "fmt"

// DefaultMaxLineBytes is the default ReaderOptions.MaxLineBytes: far above
// any sane triplet (names are at most 1 KiB, descriptions 16 KiB) yet small
// enough that a file without newlines cannot exhaust memory.
const DefaultMaxLineBytes = 4 << 20

// ReaderOptions tunes a Reader. The zero value, like a nil pointer, means
// every default.
type ReaderOptions struct {
	// MaxLineBytes bounds one record: a JSONL or TSV line, a CSV record
	// (all its physical lines), a JSON array element. Zero means
	// DefaultMaxLineBytes.
	MaxLineBytes int

	// bufSize overrides the read buffer size so that tests and fuzzing
	// reach the long-line paths with small inputs.
	bufSize int
}

// Validate reports whether o is usable: no field may be negative.
func (o *ReaderOptions) Validate() error {
	if o == nil {
		return nil
	}
	if o.MaxLineBytes < 0 {
		return fmt.Errorf("%w: MaxLineBytes %d is negative", ErrInvalidOptions, o.MaxLineBytes)
	}
	return nil
}

// withDefaults returns a copy of o with zero fields replaced by defaults.
func (o *ReaderOptions) withDefaults() ReaderOptions {
	var r ReaderOptions
	if o != nil {
		r = *o
	}
	if r.MaxLineBytes == 0 {
		r.MaxLineBytes = DefaultMaxLineBytes
	}
	if r.bufSize == 0 {
		r.bufSize = bufSize
	}
	return r
}
