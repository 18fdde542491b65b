package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/kgctx/kgctx/engine"
)

// routeTable lists every route once: the router, the auth wrapper and the
// OpenAPI document are all built from it, so they cannot disagree.
func (s *Server) routeTable() []route {
	const proj = "/v1/orgs/:org/projects/:project"
	return []route{
		{method: http.MethodGet, path: "/healthz", summary: "Liveness check (no token).", response: "Health", status: 200,
			h: func(c echo.Context) error { return c.JSON(http.StatusOK, map[string]string{"status": "ok"}) }},
		{method: http.MethodGet, path: "/metrics", minRole: engine.RoleOperator, summary: "Prometheus metrics (text format).", response: "text", status: 200, h: s.handleMetrics},
		{method: http.MethodGet, path: "/openapi.json", minRole: engine.RoleAgent, summary: "This OpenAPI document.", response: "object", status: 200, h: s.handleOpenAPI},

		{method: http.MethodPost, path: "/v1/admin/tokens", minRole: engine.RoleOperator, summary: "Create a bearer token for an org's agent, importer or org admin.",
			request: "TokenRequest", response: "TokenResponse", status: 201, h: s.handleCreateToken},
		{method: http.MethodGet, path: "/v1/admin/policies", minRole: engine.RoleOperator, summary: "The Cedar policy set in force (text/plain).", response: "text", status: 200, h: s.handleGetPolicies},
		{method: http.MethodPut, path: "/v1/admin/policies", minRole: engine.RoleOperator, summary: "Replace the Cedar policy set (text/plain); 422 and no change if invalid.",
			request: "text", response: "text", status: 200, h: s.handlePutPolicies},

		{method: http.MethodPost, path: proj + "/triplets", minRole: engine.RoleImporter, importBody: true,
			summary: "Import triplets (JSON array, or NDJSON with Content-Type application/x-ndjson). All or nothing.",
			request: "TripletInputs", response: "ImportResult", status: 200, h: s.handleImport},
		{method: http.MethodDelete, path: proj + "/triplets", minRole: engine.RoleImporter, summary: "Delete one triplet.",
			request: "TripletKey", status: 204, h: s.handleDeleteTriplet},
		{method: http.MethodGet, path: proj + "/graph/triplets", minRole: engine.RoleAgent, summary: "Query triplets by subject, predicate and/or object.",
			response: "TripletList", status: 200, h: s.handleQuery},
		{method: http.MethodGet, path: proj + "/graph/stats", minRole: engine.RoleAgent, summary: "Node and triplet counts, per predicate.",
			response: "Stats", status: 200, h: s.handleStats},
		{method: http.MethodDelete, path: proj + "/graph", minRole: engine.RoleImporter, summary: "Clear the project's graph (needs ?confirm=true).",
			status: 204, h: s.handleClear},
		{method: http.MethodGet, path: proj + "/nodes/:nodeId", minRole: engine.RoleAgent, summary: "One node.", response: "Node", status: 200, h: s.handleGetNode},
		{method: http.MethodDelete, path: proj + "/nodes/:nodeId", minRole: engine.RoleImporter, summary: "Delete a node, its edges and its index entries.",
			status: 204, h: s.handleDeleteNode},

		{method: http.MethodPost, path: "/v1/context/graph", minRole: engine.RoleAgent, summary: "The ## Knowledge Graph Triplets block of a query (buildGraphContextBlock).",
			request: "GraphContextRequest", response: "GraphContextResponse", status: 200, h: s.handleGraphContext},
	}
}
