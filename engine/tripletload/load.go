package tripletload

import (
	"context"
	"fmt"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/tripletio"
)

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
func Load(ctx context.Context, st *engine.Store, t engine.Tenant, files []tripletio.File, o tripletio.LoadOptions) (engine.ImportResult, error) {
	var sum engine.ImportResult
	if o.Batch <= 0 {
		o.Batch = 50_000
	}
	total, err := tripletio.ValidateFilesContext(ctx, files, o.Format, st.Dim(), o.Relationships, nil)
	if err != nil {
		return sum, err
	}
	if o.Validated != nil {
		o.Validated(total)
	}
	err = tripletio.EachBatch(files, o.Format, o.Batch, func(file tripletio.File, ts []engine.TripletInput, lines []int) error {
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
			return fmt.Errorf("%s: %w", file.Label(), err)
		}
		tripletio.AddResult(&sum, res)
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
