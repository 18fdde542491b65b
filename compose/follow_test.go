package compose

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/index/fuse"
)

// The reply recorded after a matching question joins the candidates, even
// when another session recorded in between; a note of another session or
// project, or outside the allowed set, does not.
func TestAddFollowers(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	add := func(ten engine.Tenant, session string, contents ...string) []uint32 {
		var in []engine.ObservationInput
		for _, c := range contents {
			in = append(in, engine.ObservationInput{Content: c, Metadata: engine.ObservationMeta{SessionID: session}})
		}
		ids, err := e.st.AddObservations(ctx, ten, in, engine.ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var dense []uint32
		_ = e.st.View(func(v *engine.View) error {
			for _, id := range ids {
				d, _ := v.ObsByID(id)
				dense = append(dense, d)
			}
			return nil
		})
		return dense
	}
	a := add(tenA, "s1", "Why the agency?", "Because of its inclusivity.", "Last note of s1")
	b := add(tenA, "s2", "First note of s2")
	c := add(tenA2, "s2", "Other project")
	d := add(tenA, "", "An independent note", "Another independent note")
	_ = e.st.View(func(v *engine.View) error {
		allow := v.ScopeObservations(tenA)
		got := addFollowers(v, []fuse.Ranked{{ID: a[0], Score: 0.8}, {ID: a[2], Score: 0.6}}, allow)
		want := []fuse.Ranked{{ID: a[0], Score: 0.8}, {ID: a[2], Score: 0.6}, {ID: a[1], Score: 0.4}}
		if !slices.Equal(got, want) {
			t.Errorf("followers %v, want %v (a[2]'s next is another session's)", got, want)
		}
		if got := addFollowers(v, []fuse.Ranked{{ID: a[0], Score: 0.8}, {ID: a[1], Score: 0.7}}, allow); len(got) != 3 || got[2].ID != a[2] {
			t.Errorf("a hit already listed came again, or the next was missed: %v", got)
		}
		if got := addFollowers(v, []fuse.Ranked{{ID: b[0], Score: 1}}, allow); len(got) != 1 {
			t.Errorf("b[0]'s next is another project's: %v (%v)", got, c)
		}
		if got := addFollowers(v, []fuse.Ranked{{ID: d[0], Score: 1}}, allow); len(got) != 1 {
			t.Errorf("a note without a session brought the next one: %v", got)
		}
		small := allow.Clone()
		small.Remove(a[1])
		if got := addFollowers(v, []fuse.Ranked{{ID: a[0], Score: 1}}, small); len(got) != 1 {
			t.Errorf("a follower outside allow was added: %v", got)
		}
		return nil
	})
	// Two sessions recorded at once: each turn's neighbours are its own
	// session's.
	q := add(tenA, "s3", "Where did you move from?")
	other := add(tenA, "s4", "Another agent's note")
	r := add(tenA, "s3", "From Sweden, four years ago.")
	_ = e.st.View(func(v *engine.View) error {
		allow := v.ScopeObservations(tenA)
		if got := addFollowers(v, []fuse.Ranked{{ID: q[0], Score: 1}}, allow); len(got) != 2 || got[1].ID != r[0] {
			t.Errorf("the reply after another session's note was missed: %v (other %v)", got, other)
		}
		if got := addFollowers(v, []fuse.Ranked{{ID: r[0], Score: 1}}, allow); len(got) != 1 {
			t.Errorf("the session's last turn brought another: %v", got)
		}
		return nil
	})
}

// In the session block, the answer that shares no word with the question
// follows the turn that asked it.
func TestSessionBlockHoldsTheReply(t *testing.T) {
	e := newSessionEnv(t)
	notes := []string{
		"Mel: Wow, that adoption agency looks great! What made you pick it?",
		"Caro: They support LGBTQ+ folks, which really spoke to me.",
	}
	for i := range 60 { // more notes on the question's words than the block holds
		notes = append(notes, fmt.Sprintf("Caro: note %d on the agency paperwork, references and the home visit; "+
			"I read every guide and filled in the forms for each step of the process again.", i))
	}
	ids := e.observeIn(t, tenA, "conv_1", notes...)
	b, err := e.c.SessionBlock(context.Background(), sreq(WorkBugFix, "Why did Caro pick the adoption agency?"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.Block, ids[0]) || !strings.Contains(b.Block, ids[1]) {
		t.Fatalf("the question %s or its reply %s is not in the block:\n%s", ids[0], ids[1], b.Block)
	}
}

// Notes added one after the other without a session are independent: the
// next one does not ride along (a note on the connection pool is not the
// answer to a question on token expiry).
func TestIndependentNotesDoNotFollow(t *testing.T) {
	e := newSessionEnv(t)
	ids := e.observe(t, tenA, "AuthMiddleware returns 401 when the token has expired; refresh first.",
		"PostgresDB connection pool is capped at 20 in staging.")
	b, err := e.c.SessionBlock(context.Background(), sreq(WorkBugFix, "ENG-51 auth middleware token expired refresh"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.Block, ids[0]) || strings.Contains(b.Block, ids[1]) {
		t.Fatalf("want the token note and not the pool note:\n%s", b.Block)
	}
}
