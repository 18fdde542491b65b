package workload

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/kgctx/kgctx/engine"
)

// Source is anything that streams triplets: *FB15k and *Synthetic both
// satisfy it. Each must call fn once per triplet and stop at fn's first
// error, returning it.
type Source interface {
	Each(fn func(*engine.TripletInput) error) error
}

// SliceSource adapts a materialised slice to Source.
type SliceSource []engine.TripletInput

// Each implements Source; fn gets a scratch copy of each element.
func (s SliceSource) Each(fn func(*engine.TripletInput) error) error {
	var t engine.TripletInput
	for i := range s {
		t = s[i]
		if err := fn(&t); err != nil {
			return err
		}
	}
	return nil
}

// EncodeNDJSON writes every triplet of src to w as NDJSON: one
// encoding/json object per line using engine.TripletInput's camelCase
// tags, which is the import wire format. Output is buffered; the buffer is
// flushed before returning.
func EncodeNDJSON(w io.Writer, src Source) error {
	bw := bufio.NewWriterSize(w, 256*1024)
	enc := json.NewEncoder(bw)
	// Names such as "Tom & Jerry" must reach the importer byte for byte;
	// HTML escaping would still decode to the same string but makes the
	// files harder to read and diff.
	enc.SetEscapeHTML(false)
	if err := src.Each(func(t *engine.TripletInput) error {
		if err := enc.Encode(t); err != nil {
			return fmt.Errorf("workload: encode ndjson: %w", err)
		}
		return nil
	}); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("workload: write ndjson: %w", err)
	}
	return nil
}

// WriteNDJSON writes ts to w as NDJSON (see EncodeNDJSON).
func WriteNDJSON(w io.Writer, ts []engine.TripletInput) error {
	return EncodeNDJSON(w, SliceSource(ts))
}

// NDJSONReader returns a stream of src encoded as NDJSON, produced by a
// goroutine through an io.Pipe so the whole document never sits in memory
// (this is how a multi-GB synthetic import file can be benchmarked without
// writing it to disk). Closing the reader early stops the producer: its
// next write fails and the goroutine exits. A generation error surfaces as
// the reader's error.
func NDJSONReader(src Source) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(EncodeNDJSON(pw, src))
	}()
	return pr
}

// FB15kReader loads FB15k-237 (see LoadFB15k for dir) and returns its
// training triplets as an NDJSON stream, for benchmarking the CLI importer
// on a real file-shaped input.
func FB15kReader(dir string) (io.ReadCloser, error) {
	f, err := LoadFB15k(dir)
	if err != nil {
		return nil, err
	}
	return NDJSONReader(f), nil
}
