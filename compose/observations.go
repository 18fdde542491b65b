package compose

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/index"
	"github.com/kgctx/kgctx/index/fuse"
	"github.com/kgctx/kgctx/policy"
)

// Listing and searching a project's observations (Mem0's get_all and
// search). Both answer through the scope and the Cedar check like every
// read: an observation the identity may not read is left out, and a page
// is filled from the next readable ones.

// MaxObservationSearch is how deep a search ranks: its pages are cut from
// the best MaxObservationSearch observations. Every page of one search
// reads the same ranking, so pages neither repeat nor skip an observation
// while the store is unchanged.
const MaxObservationSearch = 1000

// ObservationListRequest is one page of a listing or of a search.
type ObservationListRequest struct {
	Filter engine.ObservationFilter
	// Query, when not empty, searches: the observations are ranked as a
	// session block ranks them (fused text and vector relevance, best = 1,
	// times 0.5 + weight: FeedbackScore), best first, each with its score.
	// Otherwise they list newest first.
	Query string
	// Limit is the page size, 1..engine.MaxObservationPage (0: the
	// default, engine.DefaultObservationPage).
	Limit int
	// Cursor resumes after the page that returned it (its NextCursor), for
	// the same filters and query.
	Cursor string
}

// ListedObservation is an observation of a listing; a search's carry
// their score.
type ListedObservation struct {
	engine.Observation
	// Score is the search's ranking score, relevance × (0.5 + weight);
	// Relevance the fused search score (best = 1). Absent from a listing.
	Score     *float64 `json:"score,omitempty"`
	Relevance *float64 `json:"relevance,omitempty"`
}

// ObservationList is one page.
type ObservationList struct {
	Observations []ListedObservation `json:"observations"`
	// NextCursor fetches the next page (absent on the last).
	NextCursor string `json:"nextCursor,omitempty"`
}

// Observations lists or searches project t's observations as id may read
// them (ObservationListRequest). A malformed cursor, or one of another
// listing, is an ErrInvalidRequest.
func (c *Composer) Observations(ctx context.Context, id policy.Identity, t engine.Tenant, req ObservationListRequest) (*ObservationList, error) {
	limit := req.Limit
	switch {
	case limit == 0:
		limit = engine.DefaultObservationPage
	case limit < 0 || limit > engine.MaxObservationPage:
		return nil, fmt.Errorf("%w: limit must be in 1..%d", ErrInvalidRequest, engine.MaxObservationPage)
	}
	if len(req.Query) > index.MaxQueryBytes {
		return nil, fmt.Errorf("%w: q is %d bytes, the limit is %d", ErrInvalidRequest, len(req.Query), index.MaxQueryBytes)
	}
	search := strings.TrimSpace(req.Query) != ""
	cur, err := decodeObsCursor(req.Cursor, listingPrint(req.Filter, req.Query), search)
	if err != nil {
		return nil, err
	}
	pr := c.PEP.NewRequest(id, policy.VerbRead)
	defer pr.Release()
	out := &ObservationList{Observations: []ListedObservation{}}
	if !search {
		q := engine.ObservationQuery{ObservationFilter: req.Filter, Limit: limit, After: cur.after,
			Allow: func(v *engine.View, d uint32) bool { return allowObs(pr, v, d) }}
		page, err := c.Store.ListObservations(t, q)
		if err != nil {
			return nil, err
		}
		for _, o := range page.Observations {
			out.Observations = append(out.Observations, ListedObservation{Observation: o})
		}
		if page.Next != nil {
			out.NextCursor = encodeObsCursor(cur.print, obsCursor{after: page.Next})
		}
		return out, nil
	}
	ranked, more, err := c.searchObservations(ctx, pr, t, req.Filter, req.Query, cur.offset+limit)
	if err != nil {
		return nil, err
	}
	if cur.offset < len(ranked) {
		ranked = ranked[cur.offset:]
	} else {
		ranked = nil
	}
	dense := make([]uint32, len(ranked))
	for i, x := range ranked {
		dense[i] = x.Dense
	}
	var obs []engine.Observation
	if err := c.Store.View(func(v *engine.View) error {
		for _, x := range ranked {
			obs = append(obs, v.Observation(x.Dense))
		}
		return nil
	}); err != nil {
		return nil, err
	}
	contents, err := c.Store.ObservationContents(dense)
	if err != nil {
		return nil, err
	}
	for i, x := range ranked {
		if contents[i] == "" {
			continue // deleted meanwhile
		}
		o := ListedObservation{Observation: obs[i], Score: &x.Score, Relevance: &x.Relevance}
		o.Content = contents[i]
		out.Observations = append(out.Observations, o)
	}
	if more {
		out.NextCursor = encodeObsCursor(cur.print, obsCursor{offset: cur.offset + limit})
	}
	return out, nil
}

// searchObservations ranks the observations of t that f selects against
// query, as observationCandidates ranks them for a session block (one
// project, no peers): fused relevance, then FeedbackScore. The followers
// a block adds (the note after a hit, for its context) are not hits of a
// search and are left out. It returns the first n that pr lets its
// identity read, in ranking order, and whether more follow.
func (c *Composer) searchObservations(ctx context.Context, pr *policy.Request, t engine.Tenant, f engine.ObservationFilter, query string, n int) ([]ObsCandidate, bool, error) {
	var out []ObsCandidate
	more := false
	err := c.Store.View(func(v *engine.View) error {
		allow := v.FilterObservations(t, f)
		if allow == nil || allow.IsEmpty() {
			return nil
		}
		var hits []fuse.Ranked
		var err error
		hits, _, err = c.Index.SearchObservations(ctx, hits, index.Query{Text: query, Org: t.Org, Project: t.Project, Scores: true,
			Allow: allow, K: MaxObservationSearch})
		if err != nil {
			return err
		}
		cands := make([]ObsCandidate, 0, len(hits))
		for _, h := range hits {
			if !v.ObsLive(h.ID) {
				continue
			}
			w := v.ObsWeight(h.ID)
			cands = append(cands, ObsCandidate{Dense: h.ID, Relevance: h.Score, Weight: w, Score: FeedbackScore(h.Score, w)})
		}
		SortCandidates(cands)
		// The policy check runs in ranking order, as far as the page
		// needs (and one more, to know whether a next page exists).
		for _, x := range cands {
			if !allowObs(pr, v, x.Dense) {
				continue
			}
			if len(out) == n {
				more = true
				break
			}
			out = append(out, x)
		}
		return nil
	})
	return out, more, err
}

// obsCursor is a decoded cursor: a listing's position, or a search's
// offset, and the print of the listing it belongs to.
type obsCursor struct {
	print  uint32
	after  *engine.ObsPosition
	offset int
}

const (
	obsCursorVersion = 1
	cursorListing    = 'l'
	cursorSearch     = 's'
)

// listingPrint fingerprints a listing's filters and query, so that a
// cursor is refused by another listing (whose pages it would skip or
// repeat).
func listingPrint(f engine.ObservationFilter, query string) uint32 {
	h := fnv.New32a()
	for _, s := range []string{f.Tag, f.Path, f.SessionID, f.WorkType, timeKey(f.Since), timeKey(f.Until), strings.TrimSpace(query)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return h.Sum32()
}

func timeKey(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return fmt.Sprint(t.UnixNano())
}

// encodeObsCursor makes the opaque cursor: URL-safe base64 of a version,
// the kind, the listing's print, then the position or offset.
func encodeObsCursor(print uint32, c obsCursor) string {
	b := []byte{obsCursorVersion, cursorSearch}
	if c.after != nil {
		b[1] = cursorListing
	}
	b = binary.BigEndian.AppendUint32(b, print)
	if c.after != nil {
		b = binary.AppendVarint(b, c.after.Created)
		b = binary.AppendUvarint(b, uint64(c.after.Dense))
	} else {
		b = binary.AppendUvarint(b, uint64(c.offset))
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeObsCursor reads s ("" is the first page) for a listing of print
// (a search when search).
func decodeObsCursor(s string, print uint32, search bool) (obsCursor, error) {
	c := obsCursor{print: print}
	if s == "" {
		return c, nil
	}
	bad := func(why string) (obsCursor, error) {
		return c, fmt.Errorf("%w: cursor: %s (send back the nextCursor of the page before, with the same filters and q)", ErrInvalidRequest, why)
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 7 || b[0] != obsCursorVersion || (b[1] != cursorListing && b[1] != cursorSearch) {
		return bad("not a cursor this server made")
	}
	if binary.BigEndian.Uint32(b[2:6]) != print {
		return bad("it belongs to a listing with other filters or another q")
	}
	if (b[1] == cursorSearch) != search {
		return bad("it belongs to a listing with other filters or another q")
	}
	rest := b[6:]
	if b[1] == cursorListing {
		created, n := binary.Varint(rest)
		if n <= 0 {
			return bad("not a cursor this server made")
		}
		dense, m := binary.Uvarint(rest[n:])
		if m <= 0 || n+m != len(rest) || dense > 1<<32-1 {
			return bad("not a cursor this server made")
		}
		c.after = &engine.ObsPosition{Created: created, Dense: uint32(dense)}
		return c, nil
	}
	off, n := binary.Uvarint(rest)
	if n <= 0 || n != len(rest) || off > MaxObservationSearch+engine.MaxObservationPage {
		return bad("not a cursor this server made")
	}
	c.offset = int(off)
	return c, nil
}
