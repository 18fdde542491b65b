package compose

import (
	"slices"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/index/fuse"
)

// Followers. A note that matches a question is often the question's
// setting rather than its answer: in a conversation the answer is the
// reply recorded right after the matching turn ("What made you pick
// it?" then the reason), in a work session the outcome comes after the
// attempt. The best followTop hits therefore bring the observation
// recorded next in the same session (same project, same non-empty session
// id, whatever other sessions recorded in between) with followShare of
// their score, unless it is a hit already; the ranking then decides, like
// any other candidate. Notes without a session id are independent: one
// added after another is not its reply, and never rides along. (The turn
// before a hit, offered the same way, raised LoCoMo's evidence recall but
// lowered its temporal and open-domain questions' at every share tried;
// not kept.)
const (
	followTop   = 10
	followShare = 0.5
)

// addFollowers appends to hits (sorted best first) the followers of its
// first followTop, within allow.
func addFollowers(v *engine.View, hits []fuse.Ranked, allow *roaring.Bitmap) []fuse.Ranked {
	n := min(len(hits), followTop)
	for i := range n {
		h := hits[i]
		next, ok := v.ObsSessionNext(h.ID)
		if !ok || !allow.Contains(next) || slices.ContainsFunc(hits, func(o fuse.Ranked) bool { return o.ID == next }) {
			continue
		}
		hits = append(hits, fuse.Ranked{ID: next, Score: followShare * h.Score})
	}
	return hits
}
