package tripletio

import (
	"errors"
	"io"

	"github.com/kgctx/kgctx/engine"
)

// ReadBatch reads up to max triplets (all when max <= 0) from r into dst,
// collecting per-record errors instead of stopping at the first one: at
// most engine.MaxReportedErrors are kept, in line order. It returns io.EOF
// once the input is exhausted (with whatever it read before), or the
// Reader's fatal error (a *LineError after which it cannot resume, which is
// also the last entry of errs).
//
// lines[i] is the input line of dst[i], so that later validation can name
// the caller's line.
func ReadBatch(r *Reader, dst []engine.TripletInput, lines []int, max int) ([]engine.TripletInput, []int, []engine.LineError, error) {
	var errs []engine.LineError
	for max <= 0 || len(dst) < max {
		var t engine.TripletInput
		err := r.Next(&t)
		if err == io.EOF {
			return dst, lines, errs, io.EOF
		}
		if err != nil {
			var le *LineError
			if !errors.As(err, &le) {
				return dst, lines, errs, err
			}
			if len(errs) < engine.MaxReportedErrors {
				errs = append(errs, engine.LineError{Line: le.Line, Err: le.Err.Error()})
			}
			if r.Stopped() {
				return dst, lines, errs, err
			}
			continue
		}
		dst = append(dst, t)
		lines = append(lines, r.Line())
	}
	return dst, lines, errs, nil
}

// IsSyntax reports whether err (from Next or ReadBatch) is a syntax error
// of the input (malformed JSON and the like) rather than a well-formed
// record missing a field.
func IsSyntax(err error) bool { return errors.Is(err, ErrSyntax) }
