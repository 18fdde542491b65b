package index

import "errors"

var (
	// ErrEmbedderMismatch: the store was built with another embedder or
	// dimension than the one given to Open.
	ErrEmbedderMismatch = errors.New("index: embedder does not match the store")
	// ErrInvalidOptions: an Options field is out of range.
	ErrInvalidOptions = errors.New("index: invalid options")
	// ErrQueryTooLong: a query text exceeds MaxQueryBytes.
	ErrQueryTooLong = errors.New("index: query text too long")
)
