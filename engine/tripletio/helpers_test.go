package tripletio

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"testing"

	"github.com/kgctx/kgctx/engine/model"
)

// result is everything a Reader produced for one input.
type result struct {
	format   Format
	triplets []model.TripletInput
	lines    []int        // Line() after each triplet
	errs     []*LineError // in order
}

// readAll drains a Reader, continuing after recoverable errors. It fails the
// test if an error is not a *LineError or if the Reader does not terminate
// within a bound proportional to the input (a loop that makes no progress).
func readAll(tb testing.TB, data []byte, f Format, opts *ReaderOptions) result {
	tb.Helper()
	r, err := NewReaderWithOptions(bytes.NewReader(data), f, opts)
	if err != nil {
		tb.Fatalf("NewReader: %v", err)
	}
	return drain(tb, r, len(data)+10)
}

func drain(tb testing.TB, r *Reader, bound int) result {
	tb.Helper()
	res := result{format: r.Format()}
	for i := 0; ; i++ {
		if i > bound {
			tb.Fatalf("Reader did not terminate after %d calls", i)
		}
		var t model.TripletInput
		err := r.Next(&t)
		if err == io.EOF {
			if !r.Stopped() {
				tb.Fatalf("io.EOF but not Stopped")
			}
			return res
		}
		if err != nil {
			var le *LineError
			if !errors.As(err, &le) {
				tb.Fatalf("error %v (%T) is not a *LineError", err, err)
			}
			if le.Line != r.Line() {
				tb.Fatalf("LineError.Line %d != Line() %d", le.Line, r.Line())
			}
			res.errs = append(res.errs, le)
			if r.Stopped() {
				if again := r.Next(&t); again != err {
					tb.Fatalf("after a fatal error Next returned %v, want the same error", again)
				}
				return res
			}
			continue
		}
		res.triplets = append(res.triplets, t)
		res.lines = append(res.lines, r.Line())
	}
}

func gzipBytes(tb testing.TB, data []byte) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func ptr[T any](v T) *T { return &v }
