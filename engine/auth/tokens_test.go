package auth

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/enginetest"
)

func mustNew(t *testing.T, st *engine.Store) *Store {
	t.Helper()
	s, err := New(st)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestTokens(t *testing.T) {
	st, dir := enginetest.OpenDir(t, nil)
	s := mustNew(t, st)
	sec := NewTokenSecret()
	if err := s.PutToken(sec, Token{OrgID: "org_a", AgentID: "agent_1", Role: RoleAgent, ProjectIDs: []string{"proj_1"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutToken(NewTokenSecret(), Token{OrgID: "org_a", AgentID: "x", Role: "root"}); !errors.Is(err, engine.ErrInvalidInput) {
		t.Fatalf("bad role: %v", err)
	}
	if again := mustNew(t, st); again != s || again.TokenCount() != 1 {
		t.Fatalf("a second New over one store: %p %p, %d tokens", again, s, again.TokenCount())
	}
	st = enginetest.Reopen(t, st, dir, nil)
	s = mustNew(t, st)
	tok, err := s.LookupToken(sec)
	if err != nil || tok.AgentID != "agent_1" || !slices.Equal(tok.ProjectIDs, []string{"proj_1"}) {
		t.Fatalf("lookup: %+v %v", tok, err)
	}
	if _, err := s.LookupToken(sec + "x"); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("unknown token: %v", err)
	}
	// Only the hash is stored.
	found := false
	_ = st.KV().Iterate([]byte{engine.PrefixToken}, func(k, v []byte) error {
		found = found || strings.Contains(string(k)+string(v), sec)
		return nil
	})
	if found {
		t.Fatal("token stored in clear")
	}
}
