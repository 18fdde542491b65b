package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/kgctx/kgctx/engine"
)

// Roles, from least to most privileged.
const (
	RoleAgent    = "agent"
	RoleImporter = "importer"
	RoleOrgAdmin = "org_admin"
	RoleOperator = "operator"
)

// ValidRole reports whether r is one of the four roles.
func ValidRole(r string) bool {
	return r == RoleAgent || r == RoleImporter || r == RoleOrgAdmin || r == RoleOperator
}

// Token is what a bearer token maps to. Only its SHA-256 is stored.
type Token struct {
	OrgID      string    `json:"orgId"`
	AgentID    string    `json:"agentId"`
	Role       string    `json:"role"`
	ProjectIDs []string  `json:"projectIds"`
	CreatedAt  time.Time `json:"createdAt"`
}

// NewTokenSecret returns a fresh random bearer token.
func NewTokenSecret() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("BUG: crypto/rand failed: " + err.Error())
	}
	return "kgx_" + base64.RawURLEncoding.EncodeToString(b[:])
}

func tokenHash(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// Store is the tokens of an engine.Store.
type Store struct {
	kv     *engine.KV
	tokens sync.Map // sha256 hex -> Token (cache of the token key space)
}

// New returns st's token store, loading the tokens the first time: the
// same one for every call over st.
func New(st *engine.Store) (*Store, error) {
	kv := st.KV()
	v, err := kv.Shared("auth", func() (any, error) {
		s := &Store{kv: kv}
		if err := s.load(); err != nil {
			return nil, err
		}
		return s, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*Store), nil
}

// PutToken stores the hash of secret with its grant. The secret itself is
// never stored.
func (s *Store) PutToken(secret string, t Token) error {
	if len(secret) < 16 {
		return fmt.Errorf("%w: a token must be at least 16 characters", engine.ErrInvalidInput)
	}
	return s.PutTokenHash(TokenHash(secret), t)
}

// TokenHash is what PutTokenHash keeps of a secret: a replicated token
// write carries it, never the secret.
func TokenHash(secret string) string { return tokenHash(secret) }

// PutTokenHash stores a token by the hash of its secret (TokenHash).
func (s *Store) PutTokenHash(h string, t Token) error {
	if len(h) != 64 {
		return fmt.Errorf("%w: a token hash is 64 hex digits", engine.ErrInvalidInput)
	}
	if !ValidRole(t.Role) {
		return fmt.Errorf("%w: unknown role %q", engine.ErrInvalidInput, t.Role)
	}
	if t.Role != RoleOperator || t.OrgID != "" {
		if err := engine.ValidateID(t.OrgID); err != nil {
			return fmt.Errorf("orgId: %w", err)
		}
	}
	if err := engine.ValidateID(t.AgentID); err != nil {
		return fmt.Errorf("agentId: %w", err)
	}
	for _, p := range t.ProjectIDs {
		if err := engine.ValidateID(p); err != nil {
			return fmt.Errorf("projectIds: %w", err)
		}
	}
	if t.ProjectIDs == nil {
		t.ProjectIDs = []string{}
	}
	if t.CreatedAt.IsZero() {
		t.CreatedAt = time.Now().UTC()
	}
	v, err := json.Marshal(t)
	if err != nil {
		return err
	}
	if err := s.kv.Update(func(txn *badger.Txn) error {
		return txn.Set(append([]byte{engine.PrefixToken}, h...), v)
	}); err != nil {
		return fmt.Errorf("auth: store token: %w", err)
	}
	s.tokens.Store(h, t)
	return nil
}

// LookupToken returns the grant of a bearer token, or ErrUnauthorized.
// Safe for concurrent use; served from memory.
func (s *Store) LookupToken(secret string) (Token, error) {
	if v, ok := s.tokens.Load(tokenHash(secret)); ok {
		t := v.(Token)
		t.ProjectIDs = slices.Clone(t.ProjectIDs)
		return t, nil
	}
	return Token{}, ErrUnauthorized
}

// TokenCount is the number of stored tokens.
func (s *Store) TokenCount() int {
	n := 0
	s.tokens.Range(func(_, _ any) bool { n++; return true })
	return n
}

func (s *Store) load() error {
	return s.kv.Iterate([]byte{engine.PrefixToken}, func(k, v []byte) error {
		var t Token
		if err := json.Unmarshal(v, &t); err != nil {
			return fmt.Errorf("%w: token record: %v", engine.ErrCorrupt, err)
		}
		s.tokens.Store(string(k[1:]), t)
		return nil
	})
}
