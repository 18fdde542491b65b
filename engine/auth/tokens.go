package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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

// Where a token came from (Token.Origin).
const (
	// OriginBootstrap: the operator token serve registers from
	// $KGCTX_ADMIN_TOKEN, --admin-token(-file) or DIR/admin.token. There is
	// one: registering another replaces it (SetBootstrap).
	OriginBootstrap = "bootstrap"
	// OriginCLI: made offline by `kgctx token create`.
	OriginCLI = "cli"
	// OriginAPI: made by POST /v1/admin/tokens.
	OriginAPI = "api"
)

// MinSecretLen is the shortest bearer token accepted: 32 characters
// (NewTokenSecret makes 47).
const MinSecretLen = 32

// Token is what a bearer token maps to. Only its SHA-256 is stored.
type Token struct {
	OrgID      string    `json:"orgId"`
	AgentID    string    `json:"agentId"`
	Role       string    `json:"role"`
	ProjectIDs []string  `json:"projectIds"`
	CreatedAt  time.Time `json:"createdAt"`
	// Origin says how the token was made (OriginBootstrap, OriginCLI,
	// OriginAPI; "" for a token stored before origins were kept).
	Origin string `json:"origin,omitempty"`
	// ID is the token's public id (PublicID of its hash): filled in by
	// LookupToken and List, never stored.
	ID string `json:"-"`
}

// Info is a token as an operator lists it: its public id and grant, never
// the secret or its hash.
type Info struct {
	ID         string     `json:"id"`
	OrgID      string     `json:"orgId"`
	AgentID    string     `json:"agentId"`
	Role       string     `json:"role"`
	ProjectIDs []string   `json:"projectIds"`
	Origin     string     `json:"origin,omitempty"`
	CreatedAt  time.Time  `json:"createdAt"`
	LastUsedAt *time.Time `json:"lastUsedAt"` // on this node; null if never used
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

// PublicID is the public id of the token whose hash is h: "tok_" and 20
// hex digits of a hash of h. It names the token in lists and revocations
// and reveals nothing of the secret; every node computes the same id.
func PublicID(h string) string {
	sum := sha256.Sum256([]byte("kgctx token id\x00" + h))
	return "tok_" + hex.EncodeToString(sum[:10])
}

// ValidPublicID reports whether id has the shape of a PublicID.
func ValidPublicID(id string) bool {
	rest, ok := strings.CutPrefix(id, "tok_")
	if !ok || len(rest) != 20 {
		return false
	}
	_, err := hex.DecodeString(rest)
	return err == nil
}

// entry is a token in memory: its grant and when it was last used here.
type entry struct {
	tok      Token
	lastUsed atomic.Int64 // unix ms; 0: never
	saved    atomic.Int64 // the lastUsed last written to Badger
}

// Store is the tokens of an engine.Store.
type Store struct {
	kv     *engine.KV
	mu     sync.Mutex // serialises writes (put, revoke, bootstrap)
	tokens sync.Map   // sha256 hex -> *entry (cache of the token key space)
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

// checkSecret refuses a bearer token too short to be a secret.
func checkSecret(secret string) error {
	if len(secret) < MinSecretLen {
		return fmt.Errorf("%w: a token must be at least %d characters (it has %d)", engine.ErrInvalidInput, MinSecretLen, len(secret))
	}
	return nil
}

// PutToken stores the hash of secret with its grant. The secret itself is
// never stored.
func (s *Store) PutToken(secret string, t Token) error {
	if err := checkSecret(secret); err != nil {
		return err
	}
	return s.PutTokenHash(TokenHash(secret), t)
}

// TokenHash is what PutTokenHash keeps of a secret: a replicated token
// write carries it, never the secret.
func TokenHash(secret string) string { return tokenHash(secret) }

// Validate checks a grant: its role, ids and projects.
func (t Token) Validate() error {
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
	switch t.Origin {
	case "", OriginBootstrap, OriginCLI, OriginAPI:
	default:
		return fmt.Errorf("%w: unknown token origin %q", engine.ErrInvalidInput, t.Origin)
	}
	return nil
}

// PutTokenHash stores a token by the hash of its secret (TokenHash).
func (s *Store) PutTokenHash(h string, t Token) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.putLocked(h, t)
}

func (s *Store) putLocked(h string, t Token) error {
	if len(h) != 64 {
		return fmt.Errorf("%w: a token hash is 64 hex digits", engine.ErrInvalidInput)
	}
	if err := t.Validate(); err != nil {
		return err
	}
	if t.ProjectIDs == nil {
		t.ProjectIDs = []string{}
	}
	if t.CreatedAt.IsZero() {
		t.CreatedAt = time.Now().UTC()
	}
	t.ID = ""
	v, err := json.Marshal(t)
	if err != nil {
		return err
	}
	if err := s.kv.Update(func(txn *badger.Txn) error {
		return txn.Set(append([]byte{engine.PrefixToken}, h...), v)
	}); err != nil {
		return fmt.Errorf("auth: store token: %w", err)
	}
	e := &entry{tok: t}
	if old, ok := s.tokens.Load(h); ok {
		e.lastUsed.Store(old.(*entry).lastUsed.Load())
		e.saved.Store(old.(*entry).saved.Load())
	}
	s.tokens.Store(h, e)
	return nil
}

// isBootstrap reports whether t is the serve-registered operator token:
// marked so, or (stored before origins were kept) the operator token
// serve always named agent "admin".
func isBootstrap(t Token) bool {
	return t.Origin == OriginBootstrap || (t.Origin == "" && t.Role == RoleOperator && t.AgentID == "admin")
}

// SetBootstrap makes secret the operator token serve registers, replacing
// (revoking) any earlier bootstrap token: a changed $KGCTX_ADMIN_TOKEN
// leaves the old one useless. It reports how many earlier ones it revoked.
func (s *Store) SetBootstrap(secret string) (revoked int, err error) {
	if err := checkSecret(secret); err != nil {
		return 0, err
	}
	h := TokenHash(secret)
	s.mu.Lock()
	defer s.mu.Unlock()
	var stale []string
	s.tokens.Range(func(k, v any) bool {
		if k.(string) != h && isBootstrap(v.(*entry).tok) {
			stale = append(stale, k.(string))
		}
		return true
	})
	if e, ok := s.tokens.Load(h); !ok || e.(*entry).tok.Origin != OriginBootstrap {
		if err := s.putLocked(h, Token{AgentID: "admin", Role: RoleOperator, Origin: OriginBootstrap}); err != nil {
			return 0, err
		}
	}
	for _, k := range stale {
		if err := s.deleteLocked(k); err != nil {
			return revoked, err
		}
		revoked++
	}
	return revoked, nil
}

// LookupToken returns the grant of a bearer token, or ErrUnauthorized, and
// notes its use. Safe for concurrent use; served from memory (the time of
// use is written through at most once a minute per token).
func (s *Store) LookupToken(secret string) (Token, error) {
	h := tokenHash(secret)
	v, ok := s.tokens.Load(h)
	if !ok {
		return Token{}, ErrUnauthorized
	}
	e := v.(*entry)
	now := time.Now().UnixMilli()
	e.lastUsed.Store(now)
	if saved := e.saved.Load(); now-saved >= time.Minute.Milliseconds() && e.saved.CompareAndSwap(saved, now) {
		// A failed write is tried again at the next use a minute on;
		// the time in memory is right meanwhile.
		if err := s.kv.Update(func(txn *badger.Txn) error {
			return txn.Set(append([]byte{engine.PrefixTokenUse}, h...), binary.BigEndian.AppendUint64(nil, uint64(now)))
		}); err != nil {
			e.saved.Store(saved)
		}
	}
	t := e.tok
	t.ProjectIDs = slices.Clone(t.ProjectIDs)
	t.ID = PublicID(h)
	return t, nil
}

// TokenCount is the number of stored tokens.
func (s *Store) TokenCount() int {
	n := 0
	s.tokens.Range(func(_, _ any) bool { n++; return true })
	return n
}

// List returns the tokens of org ("" for every org), ordered by org,
// agent and id.
func (s *Store) List(org string) []Info {
	var out []Info
	s.tokens.Range(func(k, v any) bool {
		e := v.(*entry)
		if org != "" && e.tok.OrgID != org {
			return true
		}
		in := Info{ID: PublicID(k.(string)), OrgID: e.tok.OrgID, AgentID: e.tok.AgentID, Role: e.tok.Role,
			ProjectIDs: slices.Clone(e.tok.ProjectIDs), Origin: e.tok.Origin, CreatedAt: e.tok.CreatedAt}
		if in.ProjectIDs == nil {
			in.ProjectIDs = []string{}
		}
		if ms := e.lastUsed.Load(); ms > 0 {
			t := time.UnixMilli(ms).UTC()
			in.LastUsedAt = &t
		}
		out = append(out, in)
		return true
	})
	slices.SortFunc(out, func(a, b Info) int {
		return cmpStrings(a.OrgID, b.OrgID, a.AgentID, b.AgentID, a.ID, b.ID)
	})
	return out
}

func cmpStrings(pairs ...string) int {
	for i := 0; i+1 < len(pairs); i += 2 {
		if c := strings.Compare(pairs[i], pairs[i+1]); c != 0 {
			return c
		}
	}
	return 0
}

// Get returns the token whose public id is id, or engine.ErrNotFound.
func (s *Store) Get(id string) (Info, error) {
	for _, in := range s.List("") {
		if in.ID == id {
			return in, nil
		}
	}
	return Info{}, fmt.Errorf("%w: token %s", engine.ErrNotFound, id)
}

// Revoke deletes the token whose public id is id (engine.ErrNotFound if
// there is none): it is refused from the next request on.
func (s *Store) Revoke(id string) error {
	if !ValidPublicID(id) {
		return fmt.Errorf("%w: %q is not a token id (tok_ and 20 hex digits)", engine.ErrInvalidInput, id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var h string
	s.tokens.Range(func(k, _ any) bool {
		if PublicID(k.(string)) == id {
			h = k.(string)
			return false
		}
		return true
	})
	if h == "" {
		return fmt.Errorf("%w: token %s", engine.ErrNotFound, id)
	}
	return s.deleteLocked(h)
}

func (s *Store) deleteLocked(h string) error {
	if err := s.kv.Update(func(txn *badger.Txn) error {
		if err := txn.Delete(append([]byte{engine.PrefixToken}, h...)); err != nil {
			return err
		}
		return txn.Delete(append([]byte{engine.PrefixTokenUse}, h...))
	}); err != nil {
		return fmt.Errorf("auth: revoke token: %w", err)
	}
	s.tokens.Delete(h)
	return nil
}

func (s *Store) load() error {
	err := s.kv.Iterate([]byte{engine.PrefixToken}, func(k, v []byte) error {
		var t Token
		if err := json.Unmarshal(v, &t); err != nil {
			return fmt.Errorf("%w: token record: %v", engine.ErrCorrupt, err)
		}
		s.tokens.Store(string(k[1:]), &entry{tok: t})
		return nil
	})
	if err != nil {
		return err
	}
	return s.kv.Iterate([]byte{engine.PrefixTokenUse}, func(k, v []byte) error {
		e, ok := s.tokens.Load(string(k[1:]))
		if !ok || len(v) != 8 {
			return nil // a token revoked since, or a record of another shape: not a use
		}
		ms := int64(binary.BigEndian.Uint64(v))
		e.(*entry).lastUsed.Store(ms)
		e.(*entry).saved.Store(ms)
		return nil
	})
}
