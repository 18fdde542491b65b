package compose

import (
	"github.com/RoaringBitmap/roaring/v2"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/index/fuse"
)

// Followers. A note that matches a question is often the question's
// setting rather than its answer: in a conversation the answer is the
// reply recorded right after the matching turn ("What made you pick
// it?" then the reason), in a work session the outcome comes after the
// attempt. And a matching reply often restates the turn it answers ("Wow,
// the parade sounds awesome!"), which holds the fact. The best followTop
// hits therefore bring the observations recorded just after and just
// before them in the same session (same project, same non-empty session
// id, whatever other sessions recorded in between) with followShare of
// their score, unless they are hits already; the ranking then decides,
// like any other candidate. Notes without a session id are independent:
// one added after another is not its reply, and never rides along.
const (
	followTop   = 10
	followShare = 0.5
)

// addFollowers appends to hits (sorted best first) the session
// neighbours of its first followTop, within allow.
func addFollowers(v *engine.View, hits []fuse.Ranked, allow *roaring.Bitmap) []fuse.Ranked {
	n := min(len(hits), followTop)
	offer := func(h fuse.Ranked, d uint32, ok bool) {
		if !ok || !allow.Contains(d) {
			return
		}
		for _, o := range hits {
			if o.ID == d {
				return
			}
		}
		hits = append(hits, fuse.Ranked{ID: d, Score: followShare * h.Score})
	}
	for i := range n {
		h := hits[i]
		next, ok := v.ObsSessionNext(h.ID)
		offer(h, next, ok)
		prev, ok := v.ObsSessionPrev(h.ID)
		offer(h, prev, ok)
	}
	return hits
}
