package model

import "errors"

// Sentinel errors, matched with errors.Is. engine re-exports them under the
// same names (engine.ErrInvalidInput is ErrInvalidInput), so a caller may
// match either; their text keeps the engine prefix the API has always
// answered with.
var (
	// ErrInvalidInput wraps every validation failure of a write; nothing was written.
	ErrInvalidInput = errors.New("engine: invalid input")
	// ErrDimensionMismatch: a vector's length differs from the store's dimension.
	ErrDimensionMismatch = errors.New("engine: vector dimension mismatch")
)

// LineError names one invalid input record (1-based line or element).
type LineError struct {
	Line int    `json:"line"`
	Err  string `json:"error"`
}

// MaxReportedErrors bounds the invalid lines a batch's error lists.
const MaxReportedErrors = 100
