package tripletio

import (
	"errors"
	"io"

	"github.com/kgctx/kgctx/engine/model"
)

// ReadBatch reads up to max triplets (all when max <= 0) from r into dst,
// collecting per-record errors instead of stopping at the first one: at
// most model.MaxReportedErrors are kept, in line order (ToLineErrors turns
// them into the engine's report form). It returns io.EOF
// once the input is exhausted (with whatever it read before), or the
// Reader's fatal error (a *LineError after which it cannot resume, which is
// also the last entry of errs).
//
// lines[i] is the input line of dst[i], so that later validation can name
// the caller's line.
func ReadBatch(r *Reader, dst []model.TripletInput, lines []int, max int) ([]model.TripletInput, []int, []*LineError, error) {
	var errs []*LineError
	for max <= 0 || len(dst) < max {
		var t model.TripletInput
		err := r.Next(&t)
		if err == io.EOF {
			return dst, lines, errs, io.EOF
		}
		if err != nil {
			var le *LineError
			if !errors.As(err, &le) {
				return dst, lines, errs, err
			}
			if len(errs) < model.MaxReportedErrors {
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
func ToLineErrors(errs []*LineError) []model.LineError {
	out := make([]model.LineError, len(errs))
	for i, e := range errs {
		out[i] = model.LineError{Line: e.Line, Err: e.Err.Error()}
	}
	return out
}

// AnySyntax reports whether one of errs means the body could not be read
// as a whole: broken syntax (ErrSyntax: malformed JSON, a bad CSV quote),
// a corrupt gzip stream or a failed read. The API answers those 400; the
// rest are record-level validation errors, each naming its line, which it
// answers 422: ErrInvalidRecord (wrong field count, a JSON value that is
// not a triplet object, a bad N-Triples statement), ErrMissingField,
// ErrUnknownField, ErrInvalidUTF8, ErrInvalidWeight and ErrLineTooLong.
// An error of any other kind counts as unreadable, so that a new failure
// mode is never mistaken for a bad row.
func AnySyntax(errs []*LineError) bool {
	for _, e := range errs {
		if !isRecordError(e) {
			return true
		}
	}
	return false
}

// recordErrors are the sentinels of record-level problems (see AnySyntax).
var recordErrors = [...]error{ErrInvalidRecord, ErrMissingField, ErrUnknownField, ErrInvalidUTF8, ErrInvalidWeight, ErrLineTooLong}

func isRecordError(err error) bool {
	for _, k := range recordErrors {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}
