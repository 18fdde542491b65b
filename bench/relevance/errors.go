package relevance

import "errors"

var (
	// ErrUnknownSet: a set name that is not one of Families.
	ErrUnknownSet = errors.New("relevance: unknown set")
	// ErrMalformed: a dataset file does not have its documented format.
	ErrMalformed = errors.New("relevance: malformed dataset")
	// ErrInvalidConfig: a Config field is out of range, or the app does
	// not have the budgets the harness asks for.
	ErrInvalidConfig = errors.New("relevance: invalid config")
)
