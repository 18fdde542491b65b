package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/auth"
	"github.com/kgctx/kgctx/policy"
)

// Write kinds: every change the API makes to the graph, the observations,
// the configuration, the tokens and the policies is one Write, applied by
// App.Apply. A single node applies it at once; a cluster (api/cluster)
// publishes it to a replicated log that every replica applies in order.
const (
	WriteImport            = "import"
	WriteObservations      = "observations"
	WriteDeleteTriplet     = "delete_triplet"
	WriteDeleteNode        = "delete_node"
	WriteDeleteObservation = "delete_observation"
	WriteClear             = "clear"
	WritePredicates        = "predicates"
	WriteMemoryConfig      = "memory_config"
	WritePlan              = "plan"
	WriteRecallMatrix      = "recall_matrix"
	WriteBudgets           = "budgets"
	WriteInSessionConfig   = "in_session_config"
	WritePolicies          = "policies"
	WriteToken             = "token"
)

// Write is one change, complete: everything its application reads is in
// it or in the state every replica has at the same point of the log.
type Write struct {
	Kind string `json:"kind"`
	// Org and Project scope the write; global writes (Global) name none.
	Org     string `json:"org,omitempty"`
	Project string `json:"project,omitempty"`
	// Import: the triplets, their input lines and whether the writer may
	// name other orgs (operators).
	Triplets      []engine.TripletInput `json:"triplets,omitempty"`
	Lines         []int                 `json:"lines,omitempty"`
	AllowCrossOrg bool                  `json:"allowCrossOrg,omitempty"`
	// Observations to add.
	Observations []engine.ObservationInput `json:"observations,omitempty"`
	// DeleteTriplet: the triplet's key.
	Source       string `json:"source,omitempty"`
	Relationship string `json:"relationship,omitempty"`
	Target       string `json:"target,omitempty"`
	// DeleteNode, DeleteObservation: the id.
	ID string `json:"id,omitempty"`
	// Doc is a configuration document (JSON) or, for policies, the Cedar
	// text as a JSON string.
	Doc json.RawMessage `json:"doc,omitempty"`
	// Token: the hash of the new token's secret (the secret itself never
	// leaves the node that made it) and its grant.
	TokenHash string      `json:"tokenHash,omitempty"`
	Token     *auth.Token `json:"token,omitempty"`
}

// Global reports whether w changes what every org sees (tokens, policies,
// operator settings) rather than one org's data.
func (w Write) Global() bool {
	switch w.Kind {
	case WriteToken, WritePolicies, WriteRecallMatrix, WriteBudgets, WriteInSessionConfig:
		return true
	}
	return false
}

// WriteResult is what a write did.
type WriteResult struct {
	Import engine.ImportResult // WriteImport
	IDs    []string            // WriteObservations: the new ids, in order
	// Seq is the log sequence of a replicated write (0 on a single node);
	// Shard names its log.
	Seq   uint64
	Shard string
}

// Writer carries writes to the store (App.Writer): nil applies them at
// once (App.Apply); a cluster publishes them to its log and answers when
// this node has applied them.
type Writer interface {
	Write(ctx context.Context, w Write) (WriteResult, error)
}

// Write makes a change through the App's Writer.
func (a *App) Write(ctx context.Context, w Write) (WriteResult, error) {
	if a.Writer != nil {
		return a.Writer.Write(ctx, w)
	}
	return a.Apply(ctx, w, ApplyOptions{})
}

// ApplyOptions make an application deterministic: a replica applies a
// logged write with the time and the id seed the log gave it.
type ApplyOptions struct {
	Now time.Time        // zero: time.Now()
	IDs *engine.IDSource // nil: random ids
	// NoWait returns once the write is durable, before the indexes have
	// it (bulk replay).
	NoWait bool
}

// Apply makes the change w describes.
func (a *App) Apply(ctx context.Context, w Write, o ApplyOptions) (WriteResult, error) {
	t := engine.Tenant{Org: w.Org, Project: w.Project}
	iopt := engine.ImportOptions{Now: o.Now, IDs: o.IDs, NoWait: o.NoWait}
	var res WriteResult
	var err error
	switch w.Kind {
	case WriteImport:
		iopt.AllowCrossOrg, iopt.Lines = w.AllowCrossOrg, w.Lines
		res.Import, err = a.Import(ctx, t, w.Triplets, iopt)
	case WriteObservations:
		res.IDs, err = a.Store.AddObservations(ctx, t, w.Observations, iopt)
	case WriteDeleteTriplet:
		err = a.Store.DeleteTriplet(ctx, t, w.Source, w.Relationship, w.Target)
	case WriteDeleteNode:
		err = a.Store.DeleteNode(ctx, t, w.ID)
	case WriteDeleteObservation:
		err = a.Store.DeleteObservation(ctx, t, w.ID)
	case WriteClear:
		_, _, err = a.Store.ClearProject(ctx, t)
	case WritePredicates:
		err = applyDoc(w.Doc, func(v compose.PredicateConfig) error { return a.Settings.SetPredicates(t, v) })
	case WriteMemoryConfig:
		err = applyDoc(w.Doc, func(v compose.MemoryConfig) error { return a.Settings.SetMemoryConfig(t, v) })
	case WritePlan:
		err = applyDoc(w.Doc, func(v compose.OrgPlan) error { return a.Settings.SetPlan(w.Org, v) })
	case WriteRecallMatrix:
		err = applyDoc(w.Doc, a.Settings.SetRecallMatrix)
	case WriteBudgets:
		err = applyDoc(w.Doc, a.Settings.SetBudgets)
	case WriteInSessionConfig:
		err = applyDoc(w.Doc, a.Settings.SetInSessionConfig)
	case WritePolicies:
		err = applyDoc(w.Doc, a.SetPolicies)
	case WriteToken:
		if w.Token == nil {
			return res, fmt.Errorf("%w: a token write without its grant", engine.ErrInvalidInput)
		}
		tok := *w.Token
		if tok.CreatedAt.IsZero() {
			tok.CreatedAt = o.Now
		}
		err = a.Tokens.PutTokenHash(w.TokenHash, tok)
	default:
		err = fmt.Errorf("%w: unknown write kind %q", engine.ErrInvalidInput, w.Kind)
	}
	return res, err
}

func applyDoc[T any](doc json.RawMessage, set func(T) error) error {
	var v T
	if err := json.Unmarshal(doc, &v); err != nil {
		return fmt.Errorf("%w: %v", engine.ErrInvalidInput, err)
	}
	return set(v)
}

// Refused reports whether err is Apply refusing the write itself (invalid,
// not found, forbidden, in conflict): every replica refuses it alike, as
// it depends only on the write and the state before it. Any other error
// (the store or the embedder failing) is this replica's, and the write is
// to be applied again.
func Refused(err error) bool {
	var ve *engine.ValidationError
	if errors.As(err, &ve) {
		return true
	}
	for _, e := range []error{engine.ErrInvalidInput, engine.ErrNotFound, engine.ErrForbidden, engine.ErrTooLarge,
		engine.ErrConflict, engine.ErrDimensionMismatch, compose.ErrInvalidRequest, policy.ErrInvalidPolicy} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// Errors of a clustered write path (api/cluster).
var (
	// ErrUnavailable: the log or the nodes a request needs are out of
	// reach; nothing was changed, or the change is not yet visible here.
	ErrUnavailable = errors.New("cluster unavailable")
	// ErrBadSequence: a request named a log position that is not
	// SHARD:SEQ.
	ErrBadSequence = errors.New("bad log position")
)
