package workload

import (
	"errors"

	ds "github.com/kgctx/kgctx/internal/datasets"
)

// ErrDatasetsNotFound is returned by FindDatasets (and the loaders, when
// they are given no directory) when neither KGCTX_DATASETS nor a
// shared/datasets folder above the starting directory exists. Tests use it
// to skip rather than fail on machines without the data.
var ErrDatasetsNotFound = ds.ErrNotFound

// ErrMalformed reports a dataset line that does not have the documented
// shape (wrong column count, non-numeric vector component). The wrapping
// error names the file and line.
var ErrMalformed = errors.New("workload: malformed dataset line")

// ErrInvalidOptions reports generator options that cannot produce a graph
// (too few nodes, negative edge count, bad vector parameters).
var ErrInvalidOptions = errors.New("workload: invalid options")

// ErrTooManyEdges reports a synthetic graph whose edge count exceeds what
// distinct triplets over the requested node count can provide.
var ErrTooManyEdges = errors.New("workload: too many edges for node count")
