package api

import (
	"github.com/kgctx/kgctx/engine/auth"

	"time"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/sessionlog"
)

// The bodies of the routes that have no type of their own below api; the
// OpenAPI document is generated from them (oas.go), so a handler answers
// with one of these, never with a map.

type healthResponse struct {
	Status string `json:"status" oas:"required"`
}

type whoamiResponse struct {
	// ID is the token's public id (GET /v1/admin/tokens lists it,
	// DELETE /v1/admin/tokens/{tokenId} revokes it).
	ID         string   `json:"id,omitempty"`
	OrgID      string   `json:"orgId" oas:"required"`
	AgentID    string   `json:"agentId" oas:"required"`
	Role       string   `json:"role" oas:"required,enum=agent|importer|org_admin|operator"`
	ProjectIDs []string `json:"projectIds" oas:"required"`
}

type idsResponse struct {
	IDs []string `json:"ids" oas:"required"`
}

type idResponse struct {
	ID string `json:"id" oas:"required"`
}

type tripletList struct {
	Triplets []engine.Triplet `json:"triplets" oas:"required"`
}

// tripletKey names one triplet to delete.
type tripletKey struct {
	Source       string `json:"source" oas:"required"`
	Relationship string `json:"relationship" oas:"required"`
	Target       string `json:"target" oas:"required"`
}

type logsResponse struct {
	Logs []sessionlog.InjectionLog `json:"logs" oas:"required"`
}

type feedbackRequest struct {
	Outcome string `json:"outcome" oas:"required,enum=helpful|misleading|neutral"`
	// OrgID names the session's org (operators only).
	OrgID string `json:"orgId"`
}

type feedbackResponse struct {
	Updated sessionlog.FeedbackResult `json:"updated" oas:"required"`
}

type claimResponse struct {
	WorkerID  string      `json:"workerId" oas:"required"`
	ExpiresAt time.Time   `json:"expiresAt" oas:"required"`
	LogID     string      `json:"logId"`
	Enqueued  bool        `json:"enqueued" oas:"required"`
	Inject    *injectJSON `json:"inject"`
	// Duplicate is set when the claim enqueued, or would have enqueued, a
	// block already queued.
	Duplicate *bool `json:"duplicate,omitempty"`
}

type refreshResponse struct {
	ExpiresAt time.Time   `json:"expiresAt" oas:"required"`
	Inject    *injectJSON `json:"inject"`
}

type enqueueRequest struct {
	OrgID          string   `json:"orgId"`
	AgentID        string   `json:"agentId"`
	Text           string   `json:"text" oas:"required"`
	ObservationIDs []string `json:"observationIds"`
}

type duplicateResponse struct {
	Duplicate bool `json:"duplicate" oas:"required"`
}

type pendingResponse struct {
	Pending []compose.PendingInjection `json:"pending" oas:"required"`
}

type toolResultRequest struct {
	OrgID     string `json:"orgId"`
	ProjectID string `json:"projectId" oas:"required"`
	AgentID   string `json:"agentId"`
	Tool      string `json:"tool" oas:"required"`
	Success   *bool  `json:"success" oas:"required"`
	Error     string `json:"error"`
	Fix       string `json:"fix"`
}

// Bodies that are not one JSON type.
type (
	// textBody is a text/plain body.
	textBody struct{}
	// anyJSON is a JSON object the document does not describe further
	// (the MCP messages, this document).
	anyJSON struct{}
	// tripletsBody is an import body in any of the triplet formats.
	tripletsBody struct{}
	// observationsBody is one observation or an array of them.
	observationsBody struct{}
)

// tokenList lists tokens by public id (GET /v1/admin/tokens).
type tokenList struct {
	Tokens []auth.Info `json:"tokens" oas:"required"`
}
