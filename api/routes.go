package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/kgctx/kgctx/api/mcp"
	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/auth"
	"github.com/kgctx/kgctx/engine/sessionlog"
)

// routeTable lists every route once: the router, the auth wrapper and the
// OpenAPI document are all built from it, so they cannot disagree.
func (s *Server) routeTable() []route {
	const proj = "/v1/orgs/:org/projects/:project"
	return []route{
		{method: http.MethodGet, path: "/healthz", summary: "Liveness check (no token).", resp: healthResponse{}, status: 200,
			h: func(c echo.Context) error { return c.JSON(http.StatusOK, map[string]string{"status": "ok"}) }},
		{method: http.MethodGet, path: "/metrics", minRole: auth.RoleOperator, summary: "Prometheus metrics (text format).", resp: textBody{}, status: 200, h: s.handleMetrics},
		{method: http.MethodPost, path: "/mcp", minRole: auth.RoleAgent, summary: "Model Context Protocol (streamable HTTP, stateless, JSON answers): the tools of the README's \"MCP\" section, each calling its route with this token.",
			req: anyJSON{}, resp: anyJSON{}, status: 200, also: map[int]any{202: nil}, errs: []int{415}, h: echo.WrapHandler(mcp.Handler(s.e, mcp.Options{Version: s.cfg.Version}))},
		{method: http.MethodGet, path: "/v1/whoami", minRole: auth.RoleAgent, summary: "The caller's token: org, agent, role and projects (never the secret).",
			resp: whoamiResponse{}, status: 200, h: s.handleWhoami},
		{method: http.MethodGet, path: "/openapi.json", minRole: auth.RoleAgent, summary: "This OpenAPI document.", resp: anyJSON{}, status: 200, h: s.handleOpenAPI},

		{method: http.MethodPost, path: "/v1/admin/tokens", minRole: auth.RoleOperator, summary: "Create a bearer token for an org's agent, importer or org admin.",
			req: tokenRequest{}, resp: tokenResponse{}, status: 201, h: s.handleCreateToken},
		{method: http.MethodGet, path: "/v1/admin/tokens", minRole: auth.RoleOrgAdmin, summary: "List tokens by public id (operator: every org's, ?orgId= narrows; org_admin: its org's), never the secret or its hash.",
			resp: tokenList{}, status: 200, query: []param{{name: "orgId", typ: "string", doc: "Only this org's tokens."}}, h: s.handleListTokens},
		{method: http.MethodDelete, path: "/v1/admin/tokens/:tokenId", minRole: auth.RoleOrgAdmin, summary: "Revoke a token (on every node of a cluster): 401 from then on. An org admin revokes its org's tokens only.",
			status: 204, errs: []int{404, 409}, h: s.handleRevokeToken},
		{method: http.MethodGet, path: "/v1/admin/quotas", minRole: auth.RoleOperator, summary: "The quotas: request rates per token, imported triplets per minute per org, project sizes; defaults and per-org overrides.",
			resp: compose.QuotaConfig{}, status: 200, h: s.handleGetQuotas},
		{method: http.MethodPut, path: "/v1/admin/quotas", minRole: auth.RoleOperator, summary: "Replace the quotas (a zero field: the default; negative: unlimited).",
			req: compose.QuotaConfig{}, resp: compose.QuotaConfig{}, status: 200, errs: []int{422}, h: s.handlePutQuotas},
		{method: http.MethodGet, path: "/v1/admin/cluster", minRole: auth.RoleOperator, summary: "This node's view of its cluster: shards applied and served, live members, orgs' moves between shards (404 when kgctx runs alone).",
			resp: ClusterStatus{}, status: 200, errs: []int{404}, h: s.handleClusterStatus},
		{method: http.MethodGet, path: "/v1/admin/orgs/:org/shard", minRole: auth.RoleOperator, summary: "The shard an org is placed on in a cluster, and its latest move between shards with its progress (404 when kgctx runs alone).",
			resp: PlacementResponse{}, status: 200, errs: []int{404}, h: s.handleGetPlacement},
		{method: http.MethodPut, path: "/v1/admin/orgs/:org/shard", minRole: auth.RoleOperator, summary: "Place an org on a shard (an override of rendezvous hashing; \"\" removes it). An org with data moves: its history is copied to the new shard, its writes pause (503) for the last entries, then it flips; 200 once done, 202 while in progress (GET follows it). 409 while it moves elsewhere; the move's source as the shard gives the move up.",
			req: PlacementRequest{}, resp: PlacementResponse{}, status: 200, also: map[int]any{202: PlacementResponse{}}, errs: []int{404, 409, 422}, h: s.handlePutPlacement},
		{method: http.MethodGet, path: "/v1/admin/policies", minRole: auth.RoleOperator, summary: "The Cedar policy set in force (text/plain).", resp: textBody{}, status: 200, h: s.handleGetPolicies},
		{method: http.MethodPut, path: "/v1/admin/policies", minRole: auth.RoleOperator, summary: "Replace the Cedar policy set (text/plain); 422 and no change if invalid.",
			req: textBody{}, resp: textBody{}, status: 200, errs: []int{422}, h: s.handlePutPolicies},

		{method: http.MethodGet, path: "/v1/orgs/:org/projects", minRole: auth.RoleAgent, summary: "The org's projects that hold data or a stored configuration, sorted by id, with node, edge and observation counts (a token limited to some projects: those).",
			resp: projectList{}, status: 200, h: s.handleListProjects},
		{method: http.MethodPost, path: proj + "/triplets", minRole: auth.RoleImporter, importBody: true,
			summary: "Import triplets (JSON array, or NDJSON with Content-Type application/x-ndjson). All or nothing.",
			req:     tripletsBody{}, resp: engine.ImportResult{}, status: 200, errs: []int{422, 503}, h: s.handleImport},
		{method: http.MethodDelete, path: proj + "/triplets", minRole: auth.RoleImporter, summary: "Delete one triplet.",
			req: tripletKey{}, status: 204, errs: []int{404}, h: s.handleDeleteTriplet},
		{method: http.MethodGet, path: proj + "/graph/triplets", minRole: auth.RoleAgent, summary: "Query triplets by subject, predicate and/or object.",
			resp: tripletList{}, status: 200, query: tripletQuery, h: s.handleQuery},
		{method: http.MethodGet, path: proj + "/graph/stats", minRole: auth.RoleAgent, summary: "Node and triplet counts, per predicate.",
			resp: engine.Stats{}, status: 200, h: s.handleStats},
		{method: http.MethodDelete, path: proj + "/graph", minRole: auth.RoleImporter, summary: "Clear the project's graph (needs ?confirm=true).",
			status: 204, query: []param{{name: "confirm", typ: "boolean", required: true, doc: "Must be true: the whole graph of the project goes."}}, h: s.handleClear},
		{method: http.MethodGet, path: proj + "/nodes/:nodeId", minRole: auth.RoleAgent, summary: "One node.", resp: engine.Node{}, status: 200, errs: []int{404}, h: s.handleGetNode},
		{method: http.MethodDelete, path: proj + "/nodes/:nodeId", minRole: auth.RoleImporter, summary: "Delete a node, its edges and its index entries.",
			status: 204, errs: []int{404}, h: s.handleDeleteNode},
		{method: http.MethodGet, path: proj + "/nodes", minRole: auth.RoleAgent, summary: "Find nodes by name: the identity match (case and separators folded) first, then text search hits; each with id, name, type, description, weight.",
			resp: nodeSearchResponse{}, status: 200, query: nodeSearchQuery, errs: []int{503}, h: s.handleSearchNodes},

		{method: http.MethodGet, path: proj + "/predicates", minRole: auth.RoleAgent, summary: "The project's relationship vocabulary (open or strict).", resp: compose.PredicateConfig{}, status: 200, h: s.handleGetPredicates},
		{method: http.MethodPut, path: proj + "/predicates", minRole: auth.RoleOrgAdmin, summary: "Set the project's relationship vocabulary.", req: compose.PredicateConfig{}, resp: compose.PredicateConfig{}, status: 200, errs: []int{422}, h: s.handlePutPredicates},
		{method: http.MethodGet, path: proj + "/memory-config", minRole: auth.RoleOrgAdmin, summary: "The project's memory configuration.", resp: compose.MemoryConfig{}, status: 200, h: s.handleGetMemoryConfig},
		{method: http.MethodPut, path: proj + "/memory-config", minRole: auth.RoleOrgAdmin, summary: "Replace the project's memory configuration.", req: compose.MemoryConfig{}, resp: compose.MemoryConfig{}, status: 200, errs: []int{422}, h: s.handlePutMemoryConfig},
		{method: http.MethodGet, path: "/v1/admin/orgs/:org/plan", minRole: auth.RoleOperator, summary: "An org's plan (feature flags).", resp: compose.OrgPlan{}, status: 200, h: s.handleGetPlan},
		{method: http.MethodPut, path: "/v1/admin/orgs/:org/plan", minRole: auth.RoleOperator, summary: "Replace an org's plan.", req: compose.OrgPlan{}, resp: compose.OrgPlan{}, status: 200, errs: []int{422}, h: s.handlePutPlan},
		{method: http.MethodGet, path: "/v1/admin/recall-matrix", minRole: auth.RoleOperator, summary: "The operator recall matrix.", resp: compose.RecallMatrix{}, status: 200, h: getConfig(s.app.Settings.RecallMatrix)},
		{method: http.MethodPut, path: "/v1/admin/recall-matrix", minRole: auth.RoleOperator, summary: "Replace the recall matrix.", req: compose.RecallMatrix{}, resp: compose.RecallMatrix{}, status: 200, errs: []int{422}, h: putConfig(s, service.WriteRecallMatrix, s.app.Settings.RecallMatrix)},
		{method: http.MethodGet, path: "/v1/admin/budgets", minRole: auth.RoleOperator, summary: "Token budgets per work type (ContextBudgetConfig).", resp: compose.BudgetConfig{}, status: 200, h: getConfig(s.app.Settings.Budgets)},
		{method: http.MethodPut, path: "/v1/admin/budgets", minRole: auth.RoleOperator, summary: "Replace the token budgets.", req: compose.BudgetConfig{}, resp: compose.BudgetConfig{}, status: 200, errs: []int{422}, h: putConfig(s, service.WriteBudgets, s.app.Settings.Budgets)},
		{method: http.MethodPost, path: proj + "/observations", minRole: auth.RoleImporter, importBody: true, summary: "Store one observation or an array of them (all or nothing).",
			req: observationsBody{}, resp: idsResponse{}, status: 201, errs: []int{422, 503}, h: s.handleAddObservations},
		{method: http.MethodGet, path: proj + "/observations/:id", minRole: auth.RoleAgent, summary: "One observation.", resp: engine.Observation{}, status: 200, errs: []int{404}, h: s.handleGetObservation},
		{method: http.MethodDelete, path: proj + "/observations/:id", minRole: auth.RoleImporter, summary: "Delete an observation and its index entries.", status: 204, errs: []int{404}, h: s.handleDeleteObservation},
		{method: http.MethodGet, path: proj + "/observations", minRole: auth.RoleAgent, summary: "List observations newest first (filters, opaque cursor), or with q search them ranked as a session block ranks them, each with its score.",
			resp: compose.ObservationList{}, status: 200, query: observationListQuery, errs: []int{503}, h: s.handleListObservations},
		{method: http.MethodPatch, path: proj + "/observations/:id", minRole: auth.RoleImporter, summary: "Change an observation: content and metadata replaced when given (and re-indexed), the weight kept unless given. 404 for an id the caller may not read.",
			req: observationPatch{}, resp: engine.Observation{}, status: 200, errs: []int{404, 422, 503}, h: s.handlePatchObservation},
		{method: http.MethodPost, path: "/v1/context/session", minRole: auth.RoleAgent, summary: "The start-of-session block (buildSessionMemoryBlock + recordContextInjection); its graph part may end with a ## Code Map as the graph block's.",
			req: sessionRequestJSON{}, resp: compose.SessionBlock{}, status: 200, errs: []int{503}, h: s.handleSessionContext},
		{method: http.MethodPost, path: "/v1/injection-logs", minRole: auth.RoleAgent, summary: "Record a context injection (recordContextInjection). Every id it names must be an item the caller may read in the log's org and project, else 422 naming the first other one.",
			req: sessionlog.InjectionLog{}, resp: idResponse{}, status: 201, errs: []int{422}, h: s.handlePostInjectionLog},
		{method: http.MethodGet, path: "/v1/sessions/:sessionId/injection-logs", minRole: auth.RoleAgent, summary: "A session's injection logs, newest first.",
			resp: logsResponse{}, status: 200, query: sessionOrgParam, h: s.handleGetInjectionLogs},
		{method: http.MethodPost, path: "/v1/sessions/:sessionId/feedback", minRole: auth.RoleAgent, summary: "Apply a session's outcome to the weights of what it was shown.",
			req: feedbackRequest{}, resp: feedbackResponse{}, status: 200, query: sessionOrgParam, errs: []int{404}, h: s.handleFeedback},

		{method: http.MethodPost, path: "/v1/sessions/:sessionId/claim", minRole: auth.RoleAgent, summary: "Lease the session to a worker; compose, log and (runtimeInjectEnabled) enqueue its start-of-session block.",
			req: claimRequest{}, resp: claimResponse{}, status: 200, query: sessionOrgParam, errs: []int{409, 503}, h: s.handleClaim},
		{method: http.MethodPost, path: "/v1/sessions/:sessionId/refresh", minRole: auth.RoleAgent, summary: "The lock-refresh beat: extend the lease, get the pending inject.",
			req: workerRequest{}, resp: refreshResponse{}, status: 200, query: sessionOrgParam, errs: []int{404, 409}, h: s.handleRefresh},
		{method: http.MethodPost, path: "/v1/sessions/:sessionId/injects", minRole: auth.RoleAgent, summary: "Enqueue a block for the session (idempotent on its content).",
			req: enqueueRequest{}, resp: deliveryInjectJSON{}, status: 201, also: map[int]any{200: duplicateResponse{}}, query: sessionOrgParam, errs: []int{422}, h: s.handleEnqueue},
		{method: http.MethodPost, path: "/v1/sessions/:sessionId/injects/claim", minRole: auth.RoleAgent, summary: "The session's in-flight or next inject, for its lease holder (204 if none).",
			req: workerRequest{}, resp: deliveryInjectJSON{}, status: 200, also: map[int]any{204: nil}, query: sessionOrgParam, errs: []int{404, 409}, h: s.handleClaimInject},
		{method: http.MethodPost, path: "/v1/sessions/:sessionId/injects/:deliveryId/ack", minRole: auth.RoleAgent, summary: "Consume the in-flight inject (409 for any other).",
			status: 204, query: sessionOrgParam, errs: []int{404, 409}, h: s.handleAck},
		{method: http.MethodPost, path: "/v1/sessions/:sessionId/verb-events", minRole: auth.RoleAgent, summary: "A tool call: match memory within the latency budget and inject or queue it.",
			req: compose.VerbEvent{}, resp: compose.InjectionResult{}, status: 200, query: sessionOrgParam, errs: []int{503}, session: true, h: s.handleVerbEvent},
		{method: http.MethodPost, path: "/v1/sessions/:sessionId/tool-results", minRole: auth.RoleAgent, summary: "A tool's outcome: learn error -> tool/session/similar errors, fixes, and confidence on success.",
			req: toolResultRequest{}, resp: compose.LearnResult{}, status: 200, query: sessionOrgParam, errs: []int{503}, h: s.handleToolResult},
		{method: http.MethodPost, path: "/v1/sessions/:sessionId/pending/drain", minRole: auth.RoleAgent, summary: "Return and clear the blocks queued for the next turn.",
			resp: pendingResponse{}, status: 200, query: sessionOrgParam, session: true, h: s.handleDrain},
		{method: http.MethodDelete, path: "/v1/sessions/:sessionId", minRole: auth.RoleAgent, summary: "Forget the session's in-memory injector state.", status: 204, query: sessionOrgParam, session: true, h: s.handleForget},
		{method: http.MethodGet, path: "/v1/admin/in-session-config", minRole: auth.RoleOperator, summary: "The in-session injector's configuration.", resp: compose.InSessionConfig{}, status: 200, h: getConfig(s.app.Settings.InSessionConfig)},
		{method: http.MethodPut, path: "/v1/admin/in-session-config", minRole: auth.RoleOperator, summary: "Replace the in-session injector's configuration.", req: compose.InSessionConfig{}, resp: compose.InSessionConfig{}, status: 200, errs: []int{422}, h: putConfig(s, service.WriteInSessionConfig, s.app.Settings.InSessionConfig)},

		{method: http.MethodPost, path: "/v1/context/rag", minRole: auth.RoleAgent, summary: "Graph RAG: hybrid search over observations and nodes, then expansion over chosen predicates.",
			req: ragRequestJSON{}, resp: compose.RAGBlock{}, status: 200, errs: []int{503}, h: s.handleRAG},
		{method: http.MethodPost, path: "/v1/context/graph", minRole: auth.RoleAgent, summary: "The ## Knowledge Graph Triplets block of a query (buildGraphContextBlock), then, for a code graph, a ## Code Map: each file's path, then its ranked symbols as `<line>│ <signature>`, or the path alone for the file of a hit just past the seeds (codeMap: true or false asks for it or leaves it out; absent: when the best seeds carry locations).",
			req: graphContextRequest{}, resp: compose.GraphBlock{}, status: 200, errs: []int{503}, h: s.handleGraphContext},
	}
}

// sessionOrgParam: an operator token names the session's org (the body's
// orgId where there is a body).
var sessionOrgParam = []param{{name: "orgId", typ: "string", doc: "The session's org, for operator tokens (else the token's org)."}}

var tripletQuery = []param{
	{name: "subject", typ: "string", doc: "The source node's name (identity-folded) or id."},
	{name: "predicate", typ: "string", doc: "The relationship."},
	{name: "object", typ: "string", doc: "The target node's name (identity-folded) or id."},
	{name: "limit", typ: "integer", doc: "At most this many triplets (1 to the server's maximum)."},
}
