package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kgctx/kgctx/engine/model"
)

// Sentinel errors. Callers match them with errors.Is; the api package maps
// them to HTTP status codes in one table.
var (
	// ErrClosed is returned by every method called after Close.
	ErrClosed = errors.New("engine: store closed")
	// ErrNotFound: the node, triplet or record does not exist in the scope asked.
	ErrNotFound = errors.New("engine: not found")
	// ErrInvalidInput wraps every validation failure of a write; nothing
	// was written. It is model.ErrInvalidInput.
	ErrInvalidInput = model.ErrInvalidInput
	// ErrForbidden: the caller may not perform this write (e.g. a cross-org
	// edge from a non-operator).
	ErrForbidden = errors.New("engine: forbidden")
	// ErrDimensionMismatch: a vector's length differs from the store's
	// dimension. It is model.ErrDimensionMismatch.
	ErrDimensionMismatch = model.ErrDimensionMismatch
	// ErrCorrupt: a stored record could not be decoded.
	ErrCorrupt = errors.New("engine: corrupt record")
	// ErrInvariant: Check found the in-memory or stored state inconsistent.
	ErrInvariant = errors.New("engine: invariant violated")
	// ErrTooLarge: a batch exceeds the configured maximum.
	ErrTooLarge = errors.New("engine: batch too large")
	// ErrConflict: the write conflicts with the current state.
	ErrConflict = errors.New("engine: conflict")
	// ErrUnauthorized: the token is unknown.
	ErrUnauthorized = errors.New("engine: unknown token")
	// ErrLocked: Open found the directory locked by another process (Badger
	// allows one writer per directory; a running kgctx server holds it).
	ErrLocked = errors.New("engine: store is locked by another process")
	// ErrIndexBehind: an attached indexer failed to apply a committed
	// change set, retries included. The write is stored; searches miss it
	// until the indexer catches up (the queue retries at each later change
	// set) or the store is reopened (the change log is replayed). Sync,
	// Check and IndexFailure return it, as an *IndexError; a write does
	// not, since it is stored.
	ErrIndexBehind = errors.New("engine: search index behind the store")
)

// IndexError reports the indexer that failed to apply change set Seq, and
// why. It matches ErrIndexBehind and its cause with errors.Is.
type IndexError struct {
	Indexer string
	Seq     uint64 // the first change set the indexer has not applied
	Err     error  // the last failure
}

func (e *IndexError) Error() string {
	return fmt.Sprintf("%v: indexer %s failed to apply change set %d (the write is stored; searches miss it until the indexer catches up): %v",
		ErrIndexBehind, e.Indexer, e.Seq, e.Err)
}

func (e *IndexError) Unwrap() []error { return []error{ErrIndexBehind, e.Err} }

// LineError names one invalid input record (1-based line or element).
type LineError = model.LineError

// ValidationError lists the invalid records of a batch (at most
// MaxReportedErrors). It wraps ErrInvalidInput.
type ValidationError struct {
	Lines []LineError
	// More is true when further invalid lines exist beyond Lines.
	More bool
}

// MaxReportedErrors bounds the lines listed by a ValidationError.
const MaxReportedErrors = model.MaxReportedErrors

func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString("engine: invalid input: ")
	for i, l := range e.Lines {
		if i == 3 {
			fmt.Fprintf(&b, "; and %d more", len(e.Lines)-3)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "line %d: %s", l.Line, l.Err)
	}
	return b.String()
}

func (e *ValidationError) Unwrap() error { return ErrInvalidInput }

func (e *ValidationError) add(line int, err error) {
	if len(e.Lines) >= MaxReportedErrors {
		e.More = true
		return
	}
	e.Lines = append(e.Lines, LineError{Line: line, Err: err.Error()})
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }
