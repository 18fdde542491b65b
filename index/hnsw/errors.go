package hnsw

import "errors"

// Sentinel errors. Every error returned by this package wraps exactly one of
// these with short context (fmt.Errorf("...: %w", Err...)), so callers branch
// with errors.Is and never parse messages.
var (
	// ErrInvalidOptions is returned by Options.Validate, New and Load when a
	// parameter is out of range (negative, missing Dim, unknown Metric...).
	ErrInvalidOptions = errors.New("hnsw: invalid options")

	// ErrDimensionMismatch is returned by Add, AddBatch and Load when a vector
	// does not have exactly Options.Dim components.
	ErrDimensionMismatch = errors.New("hnsw: dimension mismatch")

	// ErrInvalidVector is returned by Add, AddBatch and Load for a vector with
	// a NaN or infinite component, or an all-zero vector under Cosine (it has
	// no direction, so every cosine distance to it would be meaningless).
	ErrInvalidVector = errors.New("hnsw: invalid vector")

	// ErrBatchLength is returned by AddBatch when ids and vecs differ in
	// length. Nothing is inserted.
	ErrBatchLength = errors.New("hnsw: ids and vectors differ in length")

	// ErrVersion is returned by Load when the metadata was written by an
	// unknown (newer) encoding version.
	ErrVersion = errors.New("hnsw: unsupported encoding version")

	// ErrIncompatible is returned by Load when Options given to Load
	// contradict the persisted graph (Dim, M or Metric differ): the stored
	// neighbour lists only make sense with the parameters they were built
	// with.
	ErrIncompatible = errors.New("hnsw: persisted graph incompatible with options")

	// ErrCorrupt is returned by Load for undecodable metadata or node records,
	// duplicate records, or neighbour ids that have no record.
	ErrCorrupt = errors.New("hnsw: corrupt encoding")

	// ErrInvariant is returned by Check when the graph violates one of its
	// structural invariants. It always indicates a bug in this package (or
	// memory corruption), never a caller error.
	ErrInvariant = errors.New("hnsw: invariant violated")
)
