package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgctx/kgctx/api/client"
	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/engine"
)

// Options are a server's defaults.
type Options struct {
	// Org and Project are used when a tool call names none. Org defaults
	// to the token's org; Project to the token's one project, if it lists
	// exactly one.
	Org, Project string
	// Version is reported to clients.
	Version string
}

// NewServer returns an MCP server whose tools call the kgctx API through
// c, with c's token: every call is authenticated, authorised and scoped
// exactly as the HTTP route it uses.
func NewServer(c *client.Client, o Options) *sdk.Server {
	if o.Version == "" {
		o.Version = "dev"
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "kgctx", Title: "kgctx knowledge graph memory", Version: o.Version}, &sdk.ServerOptions{
		Instructions: "kgctx keeps a knowledge graph (source, relationship, target) and notes from earlier sessions for your " +
			"organisation and project. At the start of a task call session_context (or graph_context with the task's words); " +
			"search_triplets finds exact facts; add_triplets and add_observations teach it; search_observations, " +
			"update_observation and delete_observation keep its notes right; record_tool_result and session_feedback tell it what helped.",
	})
	t := &tools{c: c, o: o}
	addTool(s, &sdk.Tool{Name: "graph_context", Description: "The knowledge-graph block for a query: the triplets most relevant to " +
		"the query's words within a token budget, as markdown lines '- source → relationship → target'. Use it with the task's " +
		"words (an error message, a function name, a question)."}, t.graphContext)
	addTool(s, &sdk.Tool{Name: "session_context", Description: "The start-of-session block for a work item: past observations " +
		"and graph triplets, with the budget of its work type (bug_fix, feature, refactor, ...). Call it once when a task starts."}, t.sessionContext)
	addTool(s, &sdk.Tool{Name: "rag_context", Description: "Graph RAG: the observations and nodes matching a query, then the " +
		"nodes reached from them over chosen relationships (e.g. resolved_by, caused_by)."}, t.ragContext)
	addTool(s, &sdk.Tool{Name: "search_triplets", Description: "Exact triplets by subject, predicate and/or object (names as " +
		"stored; at least one). Use it to check a fact the blocks mention."}, t.searchTriplets)
	addTool(s, &sdk.Tool{Name: "add_triplets", Description: "Store facts as triplets (source, relationship, target). Names that " +
		"differ only in case or separators are one node; importing a triplet again merges it. All or nothing."}, t.addTriplets)
	addTool(s, &sdk.Tool{Name: "add_observations", Description: "Store short notes learnt during the work (what failed, what " +
		"fixed it, a convention), optionally with the paths they concern. All or nothing."}, t.addObservations)
	addTool(s, &sdk.Tool{Name: "record_tool_result", Description: "Report a tool's outcome in a session: a failure with its error " +
		"text, or a success (with the fix that made it pass); kgctx learns errors, their causes and fixes."}, t.recordToolResult)
	addTool(s, &sdk.Tool{Name: "session_feedback", Description: "Say whether what the session was shown helped: helpful, " +
		"misleading or neutral. The weights of what it was shown move accordingly."}, t.sessionFeedback)
	addTool(s, &sdk.Tool{Name: "search_observations", Description: "Find stored notes: with a query, ranked as a session block " +
		"ranks them (relevance × (0.5 + weight)), each with its score; without, newest first. Filters: tag, path (a file, or a " +
		"directory and what lies under it), sessionId, workType, since/until (RFC 3339). Pass nextCursor back for the next page."}, t.searchObservations)
	addTool(s, &sdk.Tool{Name: "update_observation", Description: "Correct a stored note: new content (re-indexed: searches find " +
		"the new words, not the old), new metadata (replaces all of it), or a weight in [0,1]; what is not given is kept."}, t.updateObservation)
	addTool(s, &sdk.Tool{Name: "delete_observation", Description: "Delete a stored note that is wrong or obsolete (it leaves " +
		"every index and block)."}, t.deleteObservation)
	return s
}

// addTool adds a tool whose schemas are inferred from its Go types, then
// tightened (tighten): a required array is typed "array", not
// ["null", "array"] as the inference types every slice.
func addTool[In, Out any](s *sdk.Server, t *sdk.Tool, h sdk.ToolHandlerFor[In, Out]) {
	t.InputSchema = schemaFor[In]()
	if reflect.TypeFor[Out]() != reflect.TypeFor[any]() {
		t.OutputSchema = schemaFor[Out]()
	}
	sdk.AddTool(s, t, h)
}

func schemaFor[T any]() *jsonschema.Schema {
	sc, err := jsonschema.For[T](nil)
	if err != nil {
		panic("BUG: no JSON schema for a tool's type: " + err.Error())
	}
	tighten(sc)
	return sc
}

// tighten types each required property that the inference made nullable
// by its other type alone, at every depth.
func tighten(sc *jsonschema.Schema) {
	if sc == nil {
		return
	}
	for _, name := range sc.Required {
		p := sc.Properties[name]
		if p == nil || len(p.Types) != 2 || !slices.Contains(p.Types, "null") {
			continue
		}
		for _, t := range p.Types {
			if t != "null" {
				p.Type, p.Types = t, nil
			}
		}
	}
	for _, p := range sc.Properties {
		tighten(p)
	}
	tighten(sc.Items)
	for _, d := range sc.Defs {
		tighten(d)
	}
}

type tools struct {
	c *client.Client
	o Options

	once sync.Once
	who  client.Whoami
	err  error
}

// scope fills org and project from the call, the defaults or the token.
func (t *tools) scope(ctx context.Context, org, project string, needProject bool) (string, string, error) {
	if org == "" {
		org = t.o.Org
	}
	if project == "" {
		project = t.o.Project
	}
	if org == "" || (project == "" && needProject) {
		t.once.Do(func() { t.who, t.err = t.c.Whoami(ctx) })
		if t.err != nil {
			return "", "", toolError(t.err)
		}
		if org == "" {
			org = t.who.OrgID
		}
		if project == "" && len(t.who.ProjectIDs) == 1 {
			project = t.who.ProjectIDs[0]
		}
	}
	if needProject && project == "" {
		return "", "", errors.New("invalid_field: project is required (the token is not limited to one project; set it in the call or with --project)")
	}
	return org, project, nil
}

// toolError turns an API error into the tool error an agent reads: the
// API's code, then its message.
func toolError(err error) error {
	var ae *client.APIError
	if errors.As(err, &ae) {
		return fmt.Errorf("%s (HTTP %d): %s", ae.Code, ae.Status, ae.Message)
	}
	return err
}

// block is a tool answer whose text is a markdown block.
// block is a tool result of a block's text, followed by the answer's
// warnings (a probable mistake in the call) as a second text.
func block(text string, answer map[string]any) *sdk.CallToolResult {
	if text == "" {
		text = "(empty: nothing matched within the budget)"
	}
	r := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}
	if ws, ok := answer["warnings"].([]any); ok && len(ws) > 0 {
		var lines []string
		for _, w := range ws {
			lines = append(lines, "warning: "+str(w))
		}
		r.Content = append(r.Content, &sdk.TextContent{Text: strings.Join(lines, "\n")})
	}
	return r
}

// GraphContextInput is graph_context's input.
type GraphContextInput struct {
	Query   string `json:"query" jsonschema:"the task's words: an error, a symbol, a question"`
	Project string `json:"project,omitempty" jsonschema:"project id (default: the configured or the token's one project)"`
	Org     string `json:"org,omitempty" jsonschema:"org id (default: the token's)"`
	Budget  int    `json:"budget,omitempty" jsonschema:"token budget of the block, 1..32000 (default 500)"`
	TopK    int    `json:"topK,omitempty" jsonschema:"seed nodes, 1..100 (default 10)"`
	Depth   int    `json:"depth,omitempty" jsonschema:"hops from the seeds, 0..4 (default 2)"`
}

func (t *tools) graphContext(ctx context.Context, _ *sdk.CallToolRequest, in GraphContextInput) (*sdk.CallToolResult, map[string]any, error) {
	org, project, err := t.scope(ctx, in.Org, in.Project, true)
	if err != nil {
		return nil, nil, err
	}
	body := map[string]any{"scope": map[string]string{"orgId": org, "projectId": project}, "queryText": in.Query}
	setInt(body, "budgetTokens", in.Budget)
	setInt(body, "topK", in.TopK)
	setInt(body, "neighborhoodDepth", in.Depth)
	var out map[string]any
	if err := t.c.PostJSON(ctx, "/v1/context/graph", body, &out); err != nil {
		return nil, nil, toolError(err)
	}
	return block(str(out["block"]), out), out, nil
}

// WorkItem is the work a session is about.
type WorkItem struct {
	Identifier  string `json:"identifier,omitempty" jsonschema:"the tracker's key, e.g. ENG-42"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

// SessionContextInput is session_context's input.
type SessionContextInput struct {
	SessionID string   `json:"sessionId" jsonschema:"the agent session's id (letters, digits, _ and -)"`
	WorkType  string   `json:"workType,omitempty" jsonschema:"bug_fix, feature, refactor, investigation, chore... (decides the budget)"`
	WorkItem  WorkItem `json:"workItem,omitempty" jsonschema:"what the session works on"`
	Query     string   `json:"query,omitempty" jsonschema:"words to search with (default: the work item's)"`
	Project   string   `json:"project,omitempty"`
	Org       string   `json:"org,omitempty"`
}

func (t *tools) sessionContext(ctx context.Context, _ *sdk.CallToolRequest, in SessionContextInput) (*sdk.CallToolResult, map[string]any, error) {
	org, project, err := t.scope(ctx, in.Org, in.Project, true)
	if err != nil {
		return nil, nil, err
	}
	body := map[string]any{"orgId": org, "projectId": project, "sessionId": in.SessionID, "workType": in.WorkType,
		"queryText": in.Query, "workItem": in.WorkItem}
	var out map[string]any
	if err := t.c.PostJSON(ctx, "/v1/context/session", body, &out); err != nil {
		return nil, nil, toolError(err)
	}
	return block(str(out["block"]), out), out, nil
}

// RAGContextInput is rag_context's input.
type RAGContextInput struct {
	Query      string   `json:"query"`
	Predicates []string `json:"predicates,omitempty" jsonschema:"relationships to expand over (default: resolved_by, caused_by and the like)"`
	TopK       int      `json:"topK,omitempty" jsonschema:"first-phase hits, 1..100 (default 5)"`
	Project    string   `json:"project,omitempty"`
	Org        string   `json:"org,omitempty"`
}

func (t *tools) ragContext(ctx context.Context, _ *sdk.CallToolRequest, in RAGContextInput) (*sdk.CallToolResult, map[string]any, error) {
	org, project, err := t.scope(ctx, in.Org, in.Project, true)
	if err != nil {
		return nil, nil, err
	}
	body := map[string]any{"scope": map[string]string{"orgId": org, "projectId": project}, "queryText": in.Query}
	if len(in.Predicates) > 0 {
		body["predicates"] = in.Predicates
	}
	setInt(body, "topK", in.TopK)
	var out map[string]any
	if err := t.c.PostJSON(ctx, "/v1/context/rag", body, &out); err != nil {
		return nil, nil, toolError(err)
	}
	return block(str(out["block"]), out), out, nil
}

// SearchTripletsInput is search_triplets' input.
type SearchTripletsInput struct {
	Subject   string `json:"subject,omitempty"`
	Predicate string `json:"predicate,omitempty"`
	Object    string `json:"object,omitempty"`
	Limit     int    `json:"limit,omitempty" jsonschema:"at most this many (default 100)"`
	Project   string `json:"project,omitempty"`
	Org       string `json:"org,omitempty"`
}

// Triplets is search_triplets' answer.
type Triplets struct {
	Triplets []engine.Triplet `json:"triplets"`
}

func (t *tools) searchTriplets(ctx context.Context, _ *sdk.CallToolRequest, in SearchTripletsInput) (*sdk.CallToolResult, Triplets, error) {
	var out Triplets
	org, project, err := t.scope(ctx, in.Org, in.Project, true)
	if err != nil {
		return nil, out, err
	}
	q := url.Values{}
	for k, v := range map[string]string{"subject": in.Subject, "predicate": in.Predicate, "object": in.Object} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if in.Limit > 0 {
		q.Set("limit", strconv.Itoa(in.Limit))
	}
	if err := t.c.GetJSON(ctx, client.ProjectPath(org, project)+"/graph/triplets?"+q.Encode(), &out); err != nil {
		return nil, out, toolError(err)
	}
	text := ""
	for _, tr := range out.Triplets {
		text += compose.TripletLine(tr.Source, tr.Relationship, tr.Target) + "\n"
	}
	if text == "" {
		text = "(no triplet matches)"
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, out, nil
}

// AddTripletsInput is add_triplets' input.
type AddTripletsInput struct {
	Triplets []engine.TripletInput `json:"triplets"`
	Project  string                `json:"project,omitempty"`
	Org      string                `json:"org,omitempty"`
}

func (t *tools) addTriplets(ctx context.Context, _ *sdk.CallToolRequest, in AddTripletsInput) (*sdk.CallToolResult, engine.ImportResult, error) {
	org, project, err := t.scope(ctx, in.Org, in.Project, true)
	if err != nil {
		return nil, engine.ImportResult{}, err
	}
	if len(in.Triplets) == 0 {
		return nil, engine.ImportResult{}, errors.New("invalid_field: triplets is empty")
	}
	res, err := t.c.ImportTriplets(ctx, org, project, in.Triplets)
	if err != nil {
		return nil, res, toolError(err)
	}
	return nil, res, nil
}

// ObservationInput is one note of add_observations.
type ObservationInput struct {
	Content   string   `json:"content"`
	SessionID string   `json:"sessionId,omitempty"`
	Paths     []string `json:"paths,omitempty" jsonschema:"files the note concerns"`
	Tags      []string `json:"tags,omitempty"`
}

// AddObservationsInput is add_observations' input.
type AddObservationsInput struct {
	Observations []ObservationInput `json:"observations"`
	Project      string             `json:"project,omitempty"`
	Org          string             `json:"org,omitempty"`
}

// IDs is add_observations' answer.
type IDs struct {
	IDs []string `json:"ids"`
}

func (t *tools) addObservations(ctx context.Context, _ *sdk.CallToolRequest, in AddObservationsInput) (*sdk.CallToolResult, IDs, error) {
	var out IDs
	org, project, err := t.scope(ctx, in.Org, in.Project, true)
	if err != nil {
		return nil, out, err
	}
	if len(in.Observations) == 0 {
		return nil, out, errors.New("invalid_field: observations is empty")
	}
	body := make([]map[string]any, len(in.Observations))
	for i, o := range in.Observations {
		body[i] = map[string]any{"content": o.Content, "metadata": map[string]any{"sessionId": o.SessionID, "paths": o.Paths, "tags": o.Tags}}
	}
	if err := t.c.PostJSON(ctx, client.ProjectPath(org, project)+"/observations", body, &out); err != nil {
		return nil, out, toolError(err)
	}
	return nil, out, nil
}

// ToolResultInput is record_tool_result's input.
type ToolResultInput struct {
	SessionID string `json:"sessionId"`
	Tool      string `json:"tool" jsonschema:"the tool that ran, e.g. go_test"`
	Success   bool   `json:"success"`
	Error     string `json:"error,omitempty" jsonschema:"the error text of a failure"`
	Fix       string `json:"fix,omitempty" jsonschema:"what made a success pass"`
	Project   string `json:"project,omitempty"`
	Org       string `json:"org,omitempty"`
}

func (t *tools) recordToolResult(ctx context.Context, _ *sdk.CallToolRequest, in ToolResultInput) (*sdk.CallToolResult, map[string]any, error) {
	org, project, err := t.scope(ctx, in.Org, in.Project, true)
	if err != nil {
		return nil, nil, err
	}
	body := map[string]any{"orgId": org, "projectId": project, "tool": in.Tool, "success": in.Success, "error": in.Error, "fix": in.Fix}
	var out map[string]any
	if err := t.c.PostJSON(ctx, "/v1/sessions/"+url.PathEscape(in.SessionID)+"/tool-results", body, &out); err != nil {
		return nil, nil, toolError(err)
	}
	return nil, out, nil
}

// FeedbackInput is session_feedback's input.
type FeedbackInput struct {
	SessionID string `json:"sessionId"`
	Outcome   string `json:"outcome" jsonschema:"helpful, misleading or neutral"`
	Org       string `json:"org,omitempty"`
}

func (t *tools) sessionFeedback(ctx context.Context, _ *sdk.CallToolRequest, in FeedbackInput) (*sdk.CallToolResult, map[string]any, error) {
	org, _, err := t.scope(ctx, in.Org, "", false)
	if err != nil {
		return nil, nil, err
	}
	var out map[string]any
	if err := t.c.PostJSON(ctx, "/v1/sessions/"+url.PathEscape(in.SessionID)+"/feedback", map[string]any{"orgId": org, "outcome": in.Outcome}, &out); err != nil {
		return nil, nil, toolError(err)
	}
	return nil, out, nil
}

func setInt(m map[string]any, k string, v int) {
	if v != 0 {
		m[k] = v
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
