package client

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/kgctx/kgctx/engine/model"
	"github.com/kgctx/kgctx/engine/tripletio"
)

// FileOptions tune ImportFiles. Zero fields mean defaults.
type FileOptions struct {
	Format tripletio.Format
	// Batch is the number of triplets per request (default 20,000).
	Batch int
	// InFlight is the number of requests outstanding at once (default 2):
	// the server stores one while it indexes the previous.
	InFlight int
	// Validated and Written report progress as in tripletio.LoadOptions.
	Validated func(total int)
	Written   func(done int)
}

// ImportFiles validates every record of files locally (vector lengths are
// the server's to check), then posts them as NDJSON batches. A batch the
// server refuses stops the import with an error naming the file and line;
// the batches before it stay imported.
func (c *Client) ImportFiles(ctx context.Context, org, project string, files []tripletio.File, o FileOptions) (model.ImportResult, error) {
	var sum model.ImportResult
	if o.Batch <= 0 {
		o.Batch = 20_000
	}
	if o.InFlight <= 0 {
		o.InFlight = 2
	}
	total, err := tripletio.ValidateFiles(files, o.Format, -1, nil, nil)
	if err != nil {
		return sum, err
	}
	if o.Validated != nil {
		o.Validated(total)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	slots := make(chan struct{}, o.InFlight)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
			cancel()
		}
		mu.Unlock()
	}
	err = tripletio.EachBatch(files, o.Format, o.Batch, func(file tripletio.File, ts []model.TripletInput, lines []int) error {
		body, err := EncodeNDJSON(nil, ts)
		if err != nil {
			return err
		}
		lines = append([]int(nil), lines...)
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			res, err := c.ImportNDJSON(ctx, org, project, body)
			if err != nil {
				var ae *APIError
				if errors.As(err, &ae) && len(ae.Lines) > 0 && ae.Lines[0].Line >= 1 && ae.Lines[0].Line <= len(lines) {
					// The server numbers lines within the request.
					l := ae.Lines[0]
					err = fmt.Errorf("%s: line %d: %s (server answered %d)", fileName(file), lines[l.Line-1], l.Err, ae.Status)
				} else {
					err = fmt.Errorf("%s: %w", fileName(file), err)
				}
				fail(err)
				return
			}
			mu.Lock()
			tripletio.AddResult(&sum, res)
			if o.Written != nil {
				o.Written(sum.Accepted)
			}
			mu.Unlock()
		}()
		return nil
	})
	wg.Wait()
	if firstErr != nil {
		return sum, fmt.Errorf("%w (batches accepted before it stay imported)", firstErr)
	}
	return sum, err
}

func fileName(f tripletio.File) string {
	if f.Name != "" {
		return f.Name
	}
	return f.Path
}
