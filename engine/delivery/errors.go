package delivery

import (
	"fmt"

	"github.com/kgctx/kgctx/engine"
)

// Delivery errors. Each wraps engine.ErrConflict; match them with
// errors.Is. Invalid input wraps engine.ErrInvalidInput, a lease never
// claimed is engine.ErrNotFound.
var (
	// ErrLeaseHeld: another worker holds a live lease on the session.
	ErrLeaseHeld = fmt.Errorf("%w: the session is leased by another worker", engine.ErrConflict)
	// ErrNotHolder: the worker does not hold the session's live lease.
	ErrNotHolder = fmt.Errorf("%w: the worker does not hold the session's lease", engine.ErrConflict)
	// ErrNotInFlight: the delivery id is not the session's in-flight inject.
	ErrNotInFlight = fmt.Errorf("%w: not the in-flight inject of the session", engine.ErrConflict)
)
