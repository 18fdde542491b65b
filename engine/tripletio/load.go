package tripletio

import (
	"context"
	"fmt"
	"io"

	"github.com/kgctx/kgctx/engine/model"
)

// File is one input of a load: a path for OpenFile and the name errors
// give it (the path when Name is "").
type File struct {
	Path, Name string
}

// Label is how messages name the file: Name, else Path.
func (f File) Label() string {
	if f.Name != "" {
		return f.Name
	}
	return f.Path
}

// EachBatch streams the records of files in batches of at most n, with
// their line numbers. The first bad record ends it with an error naming
// file and line. ts and lines are reused between calls to fn.
func EachBatch(files []File, f Format, n int, fn func(file File, ts []model.TripletInput, lines []int) error) error {
	for _, file := range files {
		if err := eachBatch(file, f, n, fn); err != nil {
			return err
		}
	}
	return nil
}

func eachBatch(file File, f Format, n int, fn func(file File, ts []model.TripletInput, lines []int) error) error {
	rc, err := OpenFile(file.Path)
	if err != nil {
		return fmt.Errorf("%s: %w", file.Label(), err)
	}
	defer rc.Close()
	r, err := NewReader(rc, f)
	if err != nil {
		return fmt.Errorf("%s: %w", file.Label(), err)
	}
	var ts []model.TripletInput
	var lines []int
	for {
		var errs []*LineError
		ts, lines, errs, err = ReadBatch(r, ts[:0], lines[:0], n)
		if len(errs) > 0 {
			return fmt.Errorf("%s: %w", file.Label(), errs[0])
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("%s: %w", file.Label(), err)
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
	return ValidateFilesContext(context.Background(), files, f, dim, rels, progress)
}

// ValidateFilesContext is ValidateFiles stopping with ctx's error, between
// batches of 10,000 records, once ctx is done.
func ValidateFilesContext(ctx context.Context, files []File, f Format, dim int, rels map[string]bool, progress func(n int)) (int, error) {
	total := 0
	err := EachBatch(files, f, 10_000, func(file File, ts []model.TripletInput, lines []int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i := range ts {
			if err := model.ValidateTriplet(&ts[i], model.Limits{}, dim); err != nil {
				return fmt.Errorf("%s: %w", file.Label(), &LineError{Line: lines[i], Err: err})
			}
			if rel := model.NormalizeRelationship(ts[i].Relationship); rels != nil && !rels[rel] {
				return fmt.Errorf("%s: %w", file.Label(), &LineError{Line: lines[i],
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

// LoadOptions tune a load of files into a store (engine/tripletload).
// Zero fields mean defaults.
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

// AddResult adds r's counts to sum.
func AddResult(sum *model.ImportResult, r model.ImportResult) {
	sum.Accepted += r.Accepted
	sum.NodesCreated += r.NodesCreated
	sum.NodesUpdated += r.NodesUpdated
	sum.EdgesCreated += r.EdgesCreated
	sum.EdgesMerged += r.EdgesMerged
}
