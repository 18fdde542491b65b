package tripletio

import (
	"errors"
	"io"

	"github.com/kgctx/kgctx/engine"
)

// ReadBatch reads up to max triplets (all when max <= 0) from r into dst,
// collecting per-record errors instead of stopping at the first one: at
// most engine.MaxReportedErrors are kept, in line order (ToLineErrors turns
// them into the engine's report form). It returns io.EOF
// once the input is exhausted (with whatever it read before), or the
// Reader's fatal error (a *LineError after which it cannot resume, which is
// also the last entry of errs).
//
// lines[i] is the input line of dst[i], so that later validation can name
// the caller's line.
func ReadBatch(r *Reader, dst []engine.TripletInput, lines []int, max int) ([]engine.TripletInput, []int, []*LineError, error) {
	var errs []*LineError
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
				errs = append(errs, le)
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

// ToLineErrors converts reader errors to the engine's report form.
func ToLineErrors(errs []*LineError) []engine.LineError {
	out := make([]engine.LineError, len(errs))
	for i, e := range errs {
		out[i] = engine.LineError{Line: e.Line, Err: e.Err.Error()}
	}
	return out
}

// AnySyntax reports whether one of errs is a syntax error of the input
// (malformed JSON and the like) rather than a well-formed record with a
// missing or unknown field.
func AnySyntax(errs []*LineError) bool {
	for _, e := range errs {
		if errors.Is(e, ErrSyntax) {
			return true
		}
	}
	return false
}
