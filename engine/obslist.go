package engine

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
)

// Observation pages (ListObservations).
const (
	DefaultObservationPage = 50
	MaxObservationPage     = 1000
)

// ObservationFilter selects observations by their metadata and creation
// time; a zero field selects every value.
type ObservationFilter struct {
	// Tag: one of the observation's tags is Tag (exact, case kept).
	Tag string
	// Path: one of the observation's paths is Path or lies under it as a
	// directory: "pkg/auth" selects "pkg/auth" and "pkg/auth/mw.go", not
	// "pkg/authz/x.go". A trailing slash is ignored ("pkg/auth/" selects
	// the same).
	Path string
	// SessionID and WorkType: the metadata's, exactly.
	SessionID, WorkType string
	// Since and Until bound the creation time, Since <= createdAt < Until;
	// a zero time is no bound.
	Since, Until time.Time
}

// IsZero reports whether f selects every observation.
func (f ObservationFilter) IsZero() bool {
	return f.Tag == "" && f.Path == "" && f.SessionID == "" && f.WorkType == "" && f.Since.IsZero() && f.Until.IsZero()
}

// PathUnder reports whether path is dir or lies under it as a directory
// (ObservationFilter.Path).
func PathUnder(path, dir string) bool {
	if d := strings.TrimRight(dir, "/"); d != "" {
		dir = d
	}
	if path == dir {
		return true
	}
	if strings.HasSuffix(dir, "/") { // dir is "/" (or only slashes)
		return strings.HasPrefix(path, "/")
	}
	return len(path) > len(dir) && path[len(dir)] == '/' && strings.HasPrefix(path, dir)
}

func (f *ObservationFilter) match(r *obsRec) bool {
	switch {
	case f.SessionID != "" && r.session != f.SessionID,
		f.WorkType != "" && r.workType != f.WorkType,
		!f.Since.IsZero() && r.created < f.Since.UnixNano(),
		!f.Until.IsZero() && r.created >= f.Until.UnixNano(),
		f.Tag != "" && !slices.Contains(r.tags, f.Tag):
		return false
	}
	if f.Path != "" {
		return slices.ContainsFunc(r.paths, func(p string) bool { return PathUnder(p, f.Path) })
	}
	return true
}

// FilterObservations returns the live observations of project t that f
// selects: the scope's own bitmap when f is zero (read-only, nil when the
// project has none), else a new one.
func (v *View) FilterObservations(t Tenant, f ObservationFilter) *roaring.Bitmap {
	scope := v.ScopeObservations(t)
	if scope == nil || f.IsZero() {
		return scope
	}
	out := roaring.New()
	it := scope.Iterator()
	for it.HasNext() {
		d := it.Next()
		if f.match(&v.g.obs[d]) {
			out.Add(d)
		}
	}
	return out
}

// ObsPosition is a place in the newest-first order of a listing: creation
// time (Unix nanoseconds), then dense id, both descending, so that the
// observations of one batch list in reverse input order. Dense ids are
// never reused, so a position stays meaningful after deletes, and
// observations added later list before it, never after.
type ObsPosition struct {
	Created int64
	Dense   uint32
}

// before reports whether a comes before b in the listing order.
func (a ObsPosition) before(b ObsPosition) bool {
	if a.Created != b.Created {
		return a.Created > b.Created
	}
	return a.Dense > b.Dense
}

// ObservationQuery is one page of a project's observations, newest first.
type ObservationQuery struct {
	ObservationFilter
	// Limit is the page size, 1..MaxObservationPage (0: the default).
	Limit int
	// After, when set, resumes the listing after this position (the Next
	// of the page before).
	After *ObsPosition
	// Allow, when set, keeps only the observations it accepts (the
	// caller's policy check): it is called in listing order, for no more
	// observations than the page needs, with the store's read lock held.
	Allow func(v *View, d uint32) bool
}

// ObservationPage is a page of observations, content included.
type ObservationPage struct {
	Observations []Observation
	// Next is the position to resume after; nil on the last page.
	Next *ObsPosition
}

// ListObservations lists project t's observations that q selects, newest
// first (ObsPosition), one page of q.Limit. An observation deleted while
// the page is read is left out of it.
func (s *Store) ListObservations(t Tenant, q ObservationQuery) (ObservationPage, error) {
	var page ObservationPage
	if err := s.checkOpen(); err != nil {
		return page, err
	}
	limit := q.Limit
	switch {
	case limit == 0:
		limit = DefaultObservationPage
	case limit < 0 || limit > MaxObservationPage:
		return page, fmt.Errorf("%w: limit %d is outside 1..%d", ErrInvalidInput, limit, MaxObservationPage)
	}
	var dense []uint32
	err := s.View(func(v *View) error {
		scope := v.ScopeObservations(t)
		if scope == nil || t.Project == "" {
			return nil
		}
		var cands []ObsPosition
		it := scope.Iterator()
		for it.HasNext() {
			d := it.Next()
			r := &v.g.obs[d]
			p := ObsPosition{Created: r.created, Dense: d}
			if (q.After != nil && !q.After.before(p)) || !q.match(r) {
				continue
			}
			cands = append(cands, p)
		}
		slices.SortFunc(cands, func(a, b ObsPosition) int {
			if c := cmp.Compare(b.Created, a.Created); c != 0 {
				return c
			}
			return cmp.Compare(b.Dense, a.Dense)
		})
		var last ObsPosition
		for _, p := range cands {
			if q.Allow != nil && !q.Allow(v, p.Dense) {
				continue
			}
			if len(dense) == limit {
				page.Next = &last
				break
			}
			last = p
			dense = append(dense, p.Dense)
			page.Observations = append(page.Observations, v.Observation(p.Dense))
		}
		return nil
	})
	if err != nil || len(dense) == 0 {
		return page, err
	}
	contents, err := s.ObservationContents(dense)
	if err != nil {
		return page, err
	}
	kept := page.Observations[:0]
	for i, o := range page.Observations {
		if contents[i] != "" {
			o.Content = contents[i]
			kept = append(kept, o)
		}
	}
	page.Observations = kept
	return page, nil
}

// ObsCreated is observation d's creation time; ObsTags and ObsWorkType its
// metadata (read-only).
func (v *View) ObsCreated(d uint32) time.Time { return unixTime(v.g.obs[d].created) }
func (v *View) ObsTags(d uint32) []string     { return v.g.obs[d].tags }
func (v *View) ObsWorkType(d uint32) string   { return v.g.obs[d].workType }
