package api

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/engine"
)

func TestMessageIsForPeople(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("%w: observationIds: %q is not readable", engine.ErrInvalidInput, "x"), `observationIds: "x" is not readable`},
		{fmt.Errorf("%w: node %q", engine.ErrNotFound, "n1"), `node "n1" not found`},
		{fmt.Errorf("%w: budgetTokens must be 1..32000", compose.ErrInvalidRequest), "budgetTokens must be 1..32000"},
		{fmt.Errorf("%w: lease held by worker_2", engine.ErrConflict), "lease held by worker_2"},
		{fmt.Errorf("tripletio: open %s: %w", "x.tsv", errors.New("no such file or directory")), "open x.tsv: no such file or directory"},
		{fmt.Errorf("orgId: %w", fmt.Errorf("%w: empty id", engine.ErrInvalidInput)), "orgId: empty id"},
		{errors.New("the import has 3 lines"), "the import has 3 lines"},
	} {
		if got := Message(c.err); got != c.want {
			t.Errorf("Message(%q) = %q, want %q", c.err, got, c.want)
		}
	}
}
