package compose

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/index"
	"github.com/kgctx/kgctx/policy"
)

// Node search limits.
const (
	DefaultNodeSearch = 10
	MaxNodeSearch     = 100
)

// Node search matches.
const (
	MatchExact = "exact" // the name's identity (case and separators folded) or an alias
	MatchText  = "text"  // a text search hit
)

// NodeHit is a node found by name.
type NodeHit struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Type        string  `json:"type,omitempty"`
	Description string  `json:"description,omitempty"`
	Weight      float64 `json:"weight"`
	// Match says how it was found (exact or text); Score is 1 for an
	// exact match, else the text score scaled so that the best hit is 1.
	Match string  `json:"match" oas:"enum=exact|text"`
	Score float64 `json:"score"`
}

// SearchNodes finds project t's nodes by name for id: the node whose
// identity is query's first (the import's name folding: "auth_service"
// finds AuthService), then the text search's hits over names, aliases,
// types and descriptions (BM25, best first), at most limit
// (1..MaxNodeSearch, 0: DefaultNodeSearch). A node id may not read is left
// out.
func (c *Composer) SearchNodes(ctx context.Context, id policy.Identity, t engine.Tenant, query string, limit int) ([]NodeHit, error) {
	switch {
	case limit == 0:
		limit = DefaultNodeSearch
	case limit < 0 || limit > MaxNodeSearch:
		return nil, fmt.Errorf("%w: limit must be in 1..%d", ErrInvalidRequest, MaxNodeSearch)
	}
	query = strings.TrimSpace(query)
	if query == "" {
		return nil, fmt.Errorf("%w: q is required: the name to look for", ErrInvalidRequest)
	}
	if len(query) > index.MaxQueryBytes {
		return nil, fmt.Errorf("%w: q is %d bytes, the limit is %d", ErrInvalidRequest, len(query), index.MaxQueryBytes)
	}
	pr := c.PEP.NewRequest(id, policy.VerbRead)
	defer pr.Release()
	var found []NodeHit
	err := c.Store.View(func(v *engine.View) error {
		exact, ok := v.Lookup(t, query)
		if ok && v.Live(exact) && allowNode(pr, v, exact) {
			found = append(found, NodeHit{ID: v.NodeID(exact), Match: MatchExact, Score: 1})
		} else {
			ok = false
		}
		// Text only (no Allow: no vector ranking); the text index filters
		// by org and project. Extra hits make up for denied ones.
		hits, _, err := c.Index.Search(ctx, nil, index.Query{Text: query, Org: t.Org, Project: t.Project, Scores: true, K: 2*limit + 1})
		if err != nil {
			return err
		}
		for _, h := range hits {
			if len(found) == limit {
				break
			}
			if (ok && h.ID == exact) || !v.Live(h.ID) || v.NodeTenant(h.ID) != t || !allowNode(pr, v, h.ID) {
				continue
			}
			found = append(found, NodeHit{ID: v.NodeID(h.ID), Match: MatchText, Score: h.Score})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]NodeHit, 0, len(found))
	for _, h := range found {
		n, err := c.Store.Node(t, h.ID)
		if errors.Is(err, engine.ErrNotFound) {
			continue // deleted meanwhile
		} else if err != nil {
			return nil, err
		}
		h.Name, h.Type, h.Description, h.Weight = n.Name, n.Type, n.Description, n.Weight
		out = append(out, h)
	}
	return out, nil
}
