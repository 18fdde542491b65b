package api

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
)

var pathParam = regexp.MustCompile(`:([A-Za-z]+)`)

// openAPI builds the OpenAPI 3 document from the route table.
func (s *Server) openAPI() map[string]any {
	paths := map[string]any{}
	for _, r := range s.routes {
		p := pathParam.ReplaceAllString(r.path, "{$1}")
		item, _ := paths[p].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[p] = item
		}
		op := map[string]any{"summary": r.summary, "operationId": strings.ToLower(r.method) + strings.NewReplacer("/", "_", ":", "", ".", "_").Replace(r.path)}
		var params []any
		for _, m := range pathParam.FindAllStringSubmatch(r.path, -1) {
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
		}
		switch r.path {
		case "/v1/orgs/:org/projects/:project/graph/triplets":
			for _, q := range []string{"subject", "predicate", "object", "limit"} {
				params = append(params, map[string]any{"name": q, "in": "query", "schema": map[string]any{"type": "string"}})
			}
		case "/v1/orgs/:org/projects/:project/graph":
			params = append(params, map[string]any{"name": "confirm", "in": "query", "required": true, "schema": map[string]any{"type": "boolean"}})
		}
		if len(params) > 0 {
			op["parameters"] = params
		}
		if r.minRole != "" {
			op["security"] = []any{map[string]any{"bearer": []any{}}}
			op["description"] = "Needs the " + r.minRole + " role or above."
		} else {
			op["security"] = []any{}
		}
		if r.request != "" {
			content := map[string]any{}
			switch r.request {
			case "text":
				content["text/plain"] = map[string]any{"schema": map[string]any{"type": "string"}}
			case "TripletInputs":
				content["application/json"] = map[string]any{"schema": map[string]any{"type": "array", "items": ref("TripletInput")}}
				content["application/x-ndjson"] = map[string]any{"schema": ref("TripletInput")}
			default:
				content["application/json"] = map[string]any{"schema": ref(r.request)}
			}
			op["requestBody"] = map[string]any{"required": true, "content": content}
		}
		resp := map[string]any{"description": http.StatusText(r.status)}
		switch r.response {
		case "":
		case "text":
			resp["content"] = map[string]any{"text/plain": map[string]any{"schema": map[string]any{"type": "string"}}}
		case "object":
			resp["content"] = map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object"}}}
		default:
			resp["content"] = map[string]any{"application/json": map[string]any{"schema": ref(r.response)}}
		}
		responses := map[string]any{strconv.Itoa(r.status): resp, "default": map[string]any{"description": "Error",
			"content": map[string]any{"application/json": map[string]any{"schema": ref("Error")}}}}
		op["responses"] = responses
		item[strings.ToLower(r.method)] = op
	}
	return map[string]any{
		"openapi": "3.0.3",
		"info": map[string]any{"title": "kgctx", "version": "1",
			"description": "Knowledge graph context blocks for AI coding agents."},
		"paths": paths,
		"components": map[string]any{
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer"}},
			"schemas":         schemas,
		},
	}
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

func obj(required []string, props map[string]any) map[string]any {
	o := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

var (
	str   = map[string]any{"type": "string"}
	num   = map[string]any{"type": "number"}
	integ = map[string]any{"type": "integer"}
	strs  = map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
	nums  = map[string]any{"type": "array", "items": map[string]any{"type": "number"}}
)

var provenance = obj(nil, map[string]any{"observationId": str, "sessionId": str, "timestamp": map[string]any{"type": "string", "format": "date-time"}})

var edgeKey = obj(nil, map[string]any{"sourceId": str, "targetId": str, "relationshipName": str})

var injectionLog = obj([]string{"sessionId"}, map[string]any{"id": str, "sessionId": str, "workType": str, "budgetTokens": integ, "actualTokens": integ,
	"observationIds": strs, "sessionSummaryIds": strs, "graphNodeIds": strs, "graphEdgeKeys": map[string]any{"type": "array", "items": edgeKey},
	"queryText": str, "orgId": str, "projectId": str, "timestamp": map[string]any{"type": "string", "format": "date-time"}})

var obsMeta = obj(nil, map[string]any{"paths": strs, "sessionId": str, "namespace": str, "tags": strs, "workType": str})

var injectSchema = obj(nil, map[string]any{"deliveryId": str, "orgId": str, "sessionId": str, "agentId": str, "text": str, "contentHash": str,
	"observationIds": strs, "state": str, "enqueuedAt": str, "deliveredAt": str, "attempts": integ})

var schemas = map[string]any{
	"ToolResult": obj([]string{"tool", "success", "projectId"}, map[string]any{"orgId": str, "projectId": str, "agentId": str, "tool": str,
		"success": map[string]any{"type": "boolean"}, "error": str, "fix": str}),
	"LearnResult": obj(nil, map[string]any{"triplets": map[string]any{"type": "array", "items": obj(nil, map[string]any{"source": str, "relationship": str, "target": str})},
		"propagated": integ}),
	"RAGRequest": obj([]string{"queryText"}, map[string]any{
		"identity": obj(nil, map[string]any{"agentId": str, "orgId": str, "projectId": str, "sessionId": str}),
		"scope":    obj(nil, map[string]any{"orgId": str, "projectId": str}), "queryText": str, "budgetTokens": integ, "topK": integ,
		"maxTraversalDepth": map[string]any{"type": "integer", "default": 2}, "maxExpansionResults": map[string]any{"type": "integer", "default": 10}, "predicates": strs}),
	"RAGResponse": obj(nil, map[string]any{"block": str,
		"semantic":     map[string]any{"type": "array", "items": obj(nil, map[string]any{"kind": str, "id": str, "content": str, "score": num})},
		"expanded":     map[string]any{"type": "array", "items": obj(nil, map[string]any{"node": str, "predicate": str, "origin": str, "score": num})},
		"actualTokens": integ}),
	"PredicateConfig": obj(nil, map[string]any{"mode": map[string]any{"type": "string", "enum": []string{"open", "strict"}}, "allowed": strs}),
	"ClaimRequest": obj([]string{"workerId", "projectId"}, map[string]any{"workerId": str, "leaseSeconds": integ, "orgId": str, "projectId": str, "agentId": str,
		"workType": str, "queryText": str, "workItem": obj(nil, map[string]any{"identifier": str, "issueId": str, "title": str, "description": str}),
		"capability": obj(nil, map[string]any{"supportsMessageInjection": map[string]any{"type": "boolean"}})}),
	"Lease":         obj(nil, map[string]any{"workerId": str, "expiresAt": str, "logId": str, "enqueued": map[string]any{"type": "boolean"}, "inject": injectSchema}),
	"WorkerRequest": obj([]string{"workerId"}, map[string]any{"workerId": str, "leaseSeconds": integ}),
	"Refresh":       obj(nil, map[string]any{"expiresAt": str, "inject": injectSchema}),
	"InjectRequest": obj([]string{"text"}, map[string]any{"orgId": str, "agentId": str, "text": str, "observationIds": strs}),
	"Inject":        injectSchema,
	"VerbEvent": obj([]string{"phase", "tool"}, map[string]any{"phase": map[string]any{"type": "string", "enum": []string{"pre-verb", "post-verb"}},
		"sessionId": str, "orgId": str, "projectId": str, "agentId": str, "tool": str, "paths": strs, "query": str, "emittedAt": integ,
		"memoryScope": map[string]any{"type": "string", "enum": []string{"project", "org", "session"}}, "memoryNamespace": str}),
	"InjectionResult": obj(nil, map[string]any{"outcome": map[string]any{"type": "string", "enum": []string{"injected", "queued", "no-match", "skipped", "budget-exceeded", "disabled"}},
		"block": str, "observationIds": strs, "triplets": map[string]any{"type": "array", "items": map[string]any{"type": "object"}}, "elapsedMs": num,
		"pushed": map[string]any{"type": "boolean"}, "note": str}),
	"Pending": obj(nil, map[string]any{"pending": map[string]any{"type": "array", "items": obj(nil, map[string]any{"block": str, "observationIds": strs, "queuedAt": str})}}),
	"InSessionConfig": obj(nil, map[string]any{"enabled": map[string]any{"type": "boolean"}, "disabledForAgents": strs, "latencyBudgetMs": integ,
		"minRelevanceScore": num, "budgetTokens": integ, "workType": str, "maxSuggestionsPerEvent": integ, "skipTools": strs}),
	"MemoryConfig": obj(nil, map[string]any{"memoryEnabled": map[string]any{"type": "boolean"}, "graphEnabled": map[string]any{"type": "boolean"},
		"runtimeInjectEnabled": map[string]any{"type": "boolean"}, "techStack": strs}),
	"OrgPlan":           obj(nil, map[string]any{"features": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "boolean"}}}),
	"RecallMatrix":      obj(nil, map[string]any{"defaults": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "boolean"}}, "orgOverrides": map[string]any{"type": "object"}}),
	"BudgetConfig":      obj(nil, map[string]any{"defaults": map[string]any{"type": "object", "additionalProperties": integ}, "orgOverrides": map[string]any{"type": "object"}}),
	"ObservationInputs": map[string]any{"oneOf": []any{ref("ObservationInput"), map[string]any{"type": "array", "items": ref("ObservationInput")}}},
	"ObservationInput":  obj([]string{"content"}, map[string]any{"content": str, "metadata": obsMeta, "weight": num}),
	"Observation":       obj(nil, map[string]any{"id": str, "orgId": str, "projectId": str, "content": str, "metadata": obsMeta, "weight": num, "createdAt": str}),
	"IDs":               obj(nil, map[string]any{"ids": strs}),
	"ID":                obj(nil, map[string]any{"id": str}),
	"SessionContextRequest": obj([]string{"sessionId", "projectId"}, map[string]any{"sessionId": str, "workType": str, "orgId": str, "projectId": str, "agentId": str,
		"queryText": str, "workItem": obj(nil, map[string]any{"identifier": str, "issueId": str, "title": str, "description": str}),
		"graph": obj(nil, map[string]any{"enabled": map[string]any{"type": "boolean"}}), "crossProjectTransfer": obj(nil, map[string]any{"enabled": map[string]any{"type": "boolean"}})}),
	"SessionContextResponse": obj(nil, map[string]any{"block": str, "observationIds": strs, "sessionSummaryIds": strs, "graphNodeIds": strs,
		"graphEdgeKeys": map[string]any{"type": "array", "items": edgeKey}, "budgetTokens": integ, "actualTokens": integ, "queryText": str, "logId": str}),
	"InjectionLog":   injectionLog,
	"InjectionLogs":  obj(nil, map[string]any{"logs": map[string]any{"type": "array", "items": injectionLog}}),
	"Feedback":       obj([]string{"outcome"}, map[string]any{"outcome": map[string]any{"type": "string", "enum": []string{"helpful", "misleading", "neutral"}}}),
	"FeedbackResult": obj(nil, map[string]any{"updated": obj(nil, map[string]any{"observations": integ, "nodes": integ, "edges": integ, "logs": integ})}),
	"Health":         obj([]string{"status"}, map[string]any{"status": str}),
	"Whoami":         obj(nil, map[string]any{"orgId": str, "agentId": str, "role": str, "projectIds": strs}),
	"Error": obj([]string{"error"}, map[string]any{"error": obj([]string{"code", "message"}, map[string]any{
		"code": str, "message": str,
		"lines": map[string]any{"type": "array", "items": obj(nil, map[string]any{"line": integ, "error": str})}})}),
	"TokenRequest":  obj([]string{"orgId", "agentId", "role"}, map[string]any{"orgId": str, "agentId": str, "role": map[string]any{"type": "string", "enum": []string{"agent", "importer", "org_admin"}}, "projectIds": strs}),
	"TokenResponse": obj(nil, map[string]any{"token": str, "orgId": str, "agentId": str, "role": str, "projectIds": strs}),
	"TripletInput": obj([]string{"source", "relationship", "target"}, map[string]any{
		"source": str, "relationship": str, "target": str, "sourceType": str, "targetType": str,
		"sourceDescription": str, "targetDescription": str, "weight": num, "provenance": provenance,
		"sourceVector": nums, "targetVector": nums, "sourceProjectId": str, "targetProjectId": str, "targetOrgId": str}),
	"TripletKey":   obj([]string{"source", "relationship", "target"}, map[string]any{"source": str, "relationship": str, "target": str}),
	"ImportResult": obj(nil, map[string]any{"accepted": integ, "nodesCreated": integ, "nodesUpdated": integ, "edgesCreated": integ, "edgesMerged": integ}),
	"TripletList": obj(nil, map[string]any{"triplets": map[string]any{"type": "array", "items": obj(nil, map[string]any{
		"source": str, "relationship": str, "target": str, "sourceNodeId": str, "targetNodeId": str, "weight": num})}}),
	"Stats": obj(nil, map[string]any{"nodes": integ, "triplets": integ, "predicates": map[string]any{"type": "object", "additionalProperties": integ}}),
	"Node": obj(nil, map[string]any{"id": str, "orgId": str, "projectId": str, "name": str, "aliases": strs, "type": str,
		"description": str, "weight": num, "createdAt": str, "updatedAt": str}),
	"GraphContextRequest": obj([]string{"scope"}, map[string]any{
		"identity":          obj(nil, map[string]any{"agentId": str, "orgId": str, "projectId": str, "sessionId": str}),
		"scope":             obj([]string{"orgId"}, map[string]any{"orgId": str, "projectId": str}),
		"queryText":         str,
		"budgetTokens":      map[string]any{"type": "integer", "minimum": 1, "maximum": 32000, "default": 500},
		"topK":              map[string]any{"type": "integer", "minimum": 1, "maximum": 100, "default": 10},
		"neighborhoodDepth": map[string]any{"type": "integer", "minimum": 0, "maximum": 4, "default": 2}}),
	"GraphContextResponse": obj(nil, map[string]any{
		"block": str,
		"triplets": map[string]any{"type": "array", "items": obj(nil, map[string]any{
			"sourceEntity": str, "relationship": str, "targetEntity": str, "relevanceScore": num,
			"sourceNodeId": str, "targetNodeId": str, "provenance": provenance})},
		"actualTokens": integ,
		"timings":      obj(nil, map[string]any{"seedMs": num, "expandMs": num, "policyMs": num, "renderMs": num}),
		"seeds":        integ, "candidates": integ, "denied": integ}),
}

func (s *Server) handleOpenAPI(c echo.Context) error {
	return c.JSON(http.StatusOK, s.openAPI())
}
