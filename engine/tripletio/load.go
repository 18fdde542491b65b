package tripletio

import (
	"context"
	"fmt"
	"io"

	"github.com/kgctx/kgctx/engine"
)

// File is one input of a load: a path for OpenFile and the name errors
// give it (the path when Name is "").
type File struct {
	Path, Name string
}

func (f File) name() string {
	if f.Name != "" {
		return f.Name
	}
	return f.Path
}

// EachBatch streams the records of files in batches of at most n, with
// their line numbers. The first bad record ends it with an error naming
// file and line. ts and lines are reused between calls to fn.
func EachBatch(files []File, f Format, n int, fn func(file File, ts []engine.TripletInput, lines []int) error) error {
	for _, file := range files {
		if err := eachBatch(file, f, n, fn); err != nil {
			return err
		}
	}
	return nil
}

func eachBatch(file File, f Format, n int, fn func(file File, ts []engine.TripletInput, lines []int) error) error {
	rc, err := OpenFile(file.Path)
	if err != nil {
		return fmt.Errorf("%s: %w", file.name(), err)
	}
	defer rc.Close()
	r, err := NewReader(rc, f)
	if err != nil {
		return fmt.Errorf("%s: %w", file.name(), err)
	}
	var ts []engine.TripletInput
	var lines []int
	for {
		var errs []*LineError
		ts, lines, errs, err = ReadBatch(r, ts[:0], lines[:0], n)
		if len(errs) > 0 {
			return fmt.Errorf("%s: %w", file.name(), errs[0])
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("%s: %w", file.name(), err)
		}
		if len(ts) > 0 {
			if ferr := fn(file, ts, lines); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// ValidateFiles parses and validates every record of files against the
// store's vector dimension dim (negative: vector lengths unchecked); the
// first bad record is the error, "FILE: line N: problem", wrapping a
// *LineError whether the record could not be parsed or is not valid. It returns the
// number of records. progress, if set, is called with the running count.
func ValidateFiles(files []File, f Format, dim int, rels map[string]bool, progress func(n int)) (int, error) {
	return validateFiles(context.Background(), files, f, dim, rels, progress)
}

// validateFiles is ValidateFiles stopping with ctx's error, between batches
// of 10,000 records, once ctx is done.
func validateFiles(ctx context.Context, files []File, f Format, dim int, rels map[string]bool, progress func(n int)) (int, error) {
	total := 0
	err := EachBatch(files, f, 10_000, func(file File, ts []engine.TripletInput, lines []int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i := range ts {
			if err := engine.ValidateTriplet(&ts[i], engine.Limits{}, dim); err != nil {
				return fmt.Errorf("%s: %w", file.name(), &LineError{Line: lines[i], Err: err})
			}
			if rel := engine.NormalizeRelationship(ts[i].Relationship); rels != nil && !rels[rel] {
				return fmt.Errorf("%s: %w", file.name(), &LineError{Line: lines[i],
					Err: fmt.Errorf("relationship %q is not in the project's vocabulary (strict mode)", rel)})
			}
		}
		total += len(ts)
		if progress != nil {
			progress(total)
		}
		return nil
	})
	return total, err
}

// LoadOptions tune Load. Zero fields mean defaults.
type LoadOptions struct {
	Format Format
	// Batch is the number of triplets per engine batch (default 50,000).
	Batch int
	// AllowCrossOrg permits targetOrgId (the data directory's owner is
	// trusted like an operator).
	AllowCrossOrg bool
	// Relationships is the project's strict vocabulary (nil: open).
	Relationships map[string]bool
	// Validated, once the first pass is over, receives the record count;
	// Written receives the running count of written triplets.
	Validated func(total int)
	Written   func(done int)
}

// Load imports files into store st under tenant t, all or nothing as far as
// the input goes: a first pass parses and validates every record and
// writes nothing if one is bad; a second pass writes in batches, letting
// the indexes of one batch be built while the next is stored. When Load
// returns without error, everything is durable and indexed.
//
// Once ctx is done Load starts no further batch and returns ctx's error
// (errors.Is(err, context.Canceled) after an interruption). Each batch is
// written all or nothing, so the result then counts exactly the triplets
// of the batches committed before; loading the same files again merges
// them (nothing is duplicated) and writes the rest.
func Load(ctx context.Context, st *engine.Store, t engine.Tenant, files []File, o LoadOptions) (engine.ImportResult, error) {
	var sum engine.ImportResult
	if o.Batch <= 0 {
		o.Batch = 50_000
	}
	total, err := validateFiles(ctx, files, o.Format, st.Dim(), o.Relationships, nil)
	if err != nil {
		return sum, err
	}
	if o.Validated != nil {
		o.Validated(total)
	}
	err = EachBatch(files, o.Format, o.Batch, func(file File, ts []engine.TripletInput, lines []int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		res, err := st.Import(ctx, t, ts, engine.ImportOptions{AllowCrossOrg: o.AllowCrossOrg, Lines: lines, NoWait: true, Relationships: o.Relationships})
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				// Cancelled inside Import (while embedding, say): the
				// batch was not committed; report the interruption, not
				// the step it happened to stop in.
				return cerr
			}
			return fmt.Errorf("%s: %w", file.name(), err)
		}
		AddResult(&sum, res)
		if o.Written != nil {
			o.Written(sum.Accepted)
		}
		return nil
	})
	if err != nil {
		return sum, err
	}
	if err := st.Sync(ctx); err != nil {
		// Every batch is committed; only the indexes' catching up was
		// not waited for (Store.Close lets them finish).
		return sum, err
	}
	return sum, nil
}

// AddResult adds r's counts to sum.
func AddResult(sum *engine.ImportResult, r engine.ImportResult) {
	sum.Accepted += r.Accepted
	sum.NodesCreated += r.NodesCreated
	sum.NodesUpdated += r.NodesUpdated
	sum.EdgesCreated += r.EdgesCreated
	sum.EdgesMerged += r.EdgesMerged
}
