package text

import "errors"

// Sentinel errors. Errors returned by this package wrap one of these (test
// with errors.Is) or, for failures inside bleve or the file system, the
// underlying error with a "text: " prefix.
var (
	// ErrClosed is returned by every method called after Close.
	ErrClosed = errors.New("text: index closed")

	// ErrInvalidOptions is returned by Options.Validate and Open when an
	// option is out of range.
	ErrInvalidOptions = errors.New("text: invalid options")

	// ErrInvalidTenant is returned when a Doc or a Filter has an empty Org,
	// or an Org/Project containing NUL (NUL separates org and project in
	// the indexed scope key, so allowing it would let two tenants collide).
	ErrInvalidTenant = errors.New("text: invalid tenant")

	// ErrSchemaMismatch is returned by Open when the index at Options.Path
	// was written by an incompatible version of this package (different
	// analyzers or fields). The index must be rebuilt.
	ErrSchemaMismatch = errors.New("text: index schema mismatch")

	// ErrCorruptID is returned by Search when bleve returns a document id
	// that this package did not write (not a 4-byte id).
	ErrCorruptID = errors.New("text: corrupt document id")

	// ErrMetaNotFound is returned by GetMeta when the key was never set.
	ErrMetaNotFound = errors.New("text: meta key not found")

	// ErrInvalidMetaKey is returned for an empty meta key.
	ErrInvalidMetaKey = errors.New("text: invalid meta key")
)
