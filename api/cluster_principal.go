package api

import (
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/kgctx/kgctx/engine/auth"
)

// PrincipalHeader carries, from the cluster node that authenticated a
// request to the node it proxies the request to, who the caller is: a
// Principal sealed with a MAC keyed by the cluster secret
// (Cluster.PrincipalMAC). The caller's bearer token never leaves the node
// it reached; the receiving node takes the principal instead, only if the
// MAC verifies, it has not expired, it is for this method and path, and
// it was not used before.
const PrincipalHeader = "X-Kgctx-Principal"

// PrincipalTTL is how long a forwarded principal is good for: a proxied
// request reaches the next node within moments (the nodes' clocks must
// agree within seconds).
const PrincipalTTL = 10 * time.Second

// Principal is a forwarded caller: the grant of the token the entry node
// authenticated, and what binds it to one request.
type Principal struct {
	OrgID      string   `json:"orgId,omitempty"`
	AgentID    string   `json:"agentId"`
	Role       string   `json:"role"`
	ProjectIDs []string `json:"projectIds,omitempty"`
	// Expires is in unix milliseconds.
	Expires int64 `json:"exp"`
	// Nonce is random: a principal serves one request.
	Nonce string `json:"nonce"`
	// Method and Target (the request URI: path and query) are the
	// request's.
	Method string `json:"method"`
	Target string `json:"target"`
	// To is the base URL of the node the principal is sent to, as the
	// members list advertises it: another node refuses it (a principal
	// seen on the way to one node is no good at another, whose nonces
	// are its own). Empty from a release before it, and then unchecked.
	To string `json:"to,omitempty"`
}

// NewPrincipal is the principal of tok for req, expiring PrincipalTTL
// from now.
func NewPrincipal(tok auth.Token, req *http.Request) Principal {
	var n [16]byte
	rand.Read(n[:])
	return Principal{OrgID: tok.OrgID, AgentID: tok.AgentID, Role: tok.Role, ProjectIDs: tok.ProjectIDs,
		Expires: time.Now().Add(PrincipalTTL).UnixMilli(), Nonce: base64.RawURLEncoding.EncodeToString(n[:]),
		Method: req.Method, Target: req.URL.RequestURI()}
}

// Seal encodes p with its MAC: PAYLOAD.MAC, both base64url.
func (p Principal) Seal(mac func([]byte) []byte) string {
	b, err := json.Marshal(p)
	if err != nil {
		panic("BUG: a principal does not encode: " + err.Error())
	}
	payload := base64.RawURLEncoding.EncodeToString(b)
	return payload + "." + base64.RawURLEncoding.EncodeToString(mac([]byte(payload)))
}

// advertiser is a Cluster that knows its node's advertised base URL (the
// one the members list gives the other nodes): a principal sent to
// another URL is refused. Optional: without it, or with "", the
// principal's To is not checked.
type advertiser interface {
	Advertised() string
}

// openPrincipal checks a sealed principal for req, at the node advertised
// at self ("": unknown), and returns it.
func openPrincipal(sealed string, mac func([]byte) []byte, req *http.Request, self string, now time.Time) (Principal, error) {
	var p Principal
	payload, sig, ok := strings.Cut(sealed, ".")
	m, err := base64.RawURLEncoding.DecodeString(sig)
	if !ok || err != nil || !hmac.Equal(m, mac([]byte(payload))) {
		return p, fmt.Errorf("the forwarded principal's MAC does not verify")
	}
	b, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil || json.Unmarshal(b, &p) != nil {
		return p, fmt.Errorf("the forwarded principal does not decode")
	}
	exp := time.UnixMilli(p.Expires)
	switch {
	case !now.Before(exp):
		return p, fmt.Errorf("the forwarded principal expired %s ago", now.Sub(exp).Round(time.Millisecond))
	case exp.Sub(now) > 3*PrincipalTTL:
		return p, fmt.Errorf("the forwarded principal expires too far ahead (do the nodes' clocks agree?)")
	case p.Method != req.Method || p.Target != req.URL.RequestURI():
		return p, fmt.Errorf("the forwarded principal is for another request")
	case p.To != "" && self != "" && strings.TrimSuffix(p.To, "/") != strings.TrimSuffix(self, "/"):
		return p, fmt.Errorf("the forwarded principal is for another node")
	case roleRank[p.Role] == 0:
		return p, fmt.Errorf("the forwarded principal has no role")
	}
	return p, nil
}

// nonces are the forwarded principals' nonces seen and not yet expired:
// a principal replayed within its life is refused.
type nonces struct {
	mu   sync.Mutex
	seen map[string]time.Time // nonce -> expiry
}

// use records nonce until exp; false if it was seen.
func (n *nonces) use(nonce string, exp, now time.Time) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.seen == nil {
		n.seen = map[string]time.Time{}
	}
	if _, ok := n.seen[nonce]; ok {
		return false
	}
	if len(n.seen) >= 1024 {
		for k, e := range n.seen {
			if !now.Before(e) {
				delete(n.seen, k)
			}
		}
	}
	n.seen[nonce] = exp
	return true
}

// forwarded authenticates a request another node proxied here by its
// principal.
func (s *Server) forwarded(req *http.Request, sealed string) (auth.Token, error) {
	now := time.Now()
	self := ""
	if a, ok := s.cfg.Cluster.(advertiser); ok {
		self = a.Advertised()
	}
	p, err := openPrincipal(sealed, s.cfg.Cluster.PrincipalMAC, req, self, now)
	if err == nil && !s.nonces.use(p.Nonce, time.UnixMilli(p.Expires), now) {
		err = fmt.Errorf("the forwarded principal was used before")
	}
	if err != nil {
		s.log.Warn("cluster: a forwarded principal refused", "method", req.Method, "path", req.URL.Path, "remote", req.RemoteAddr, "err", err)
		return auth.Token{}, apiErr(http.StatusUnauthorized, "unauthorized", "%v", err)
	}
	return auth.Token{OrgID: p.OrgID, AgentID: p.AgentID, Role: p.Role, ProjectIDs: p.ProjectIDs}, nil
}
