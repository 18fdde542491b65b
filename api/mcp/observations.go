package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgctx/kgctx/api/client"
	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/engine"
)

// SearchObservationsInput is search_observations' input.
type SearchObservationsInput struct {
	Query     string `json:"query,omitempty" jsonschema:"words to search with; empty lists newest first"`
	Tag       string `json:"tag,omitempty"`
	Path      string `json:"path,omitempty" jsonschema:"a file, or a directory: notes on it or under it"`
	SessionID string `json:"sessionId,omitempty"`
	WorkType  string `json:"workType,omitempty"`
	Since     string `json:"since,omitempty" jsonschema:"RFC 3339 time: notes created at or after it"`
	Until     string `json:"until,omitempty" jsonschema:"RFC 3339 time: notes created before it"`
	Limit     int    `json:"limit,omitempty" jsonschema:"page size, 1..1000 (default 50)"`
	Cursor    string `json:"cursor,omitempty" jsonschema:"the nextCursor of the page before (same filters and query)"`
	Project   string `json:"project,omitempty"`
	Org       string `json:"org,omitempty"`
}

func (t *tools) searchObservations(ctx context.Context, _ *sdk.CallToolRequest, in SearchObservationsInput) (*sdk.CallToolResult, client.ObservationPage, error) {
	var out client.ObservationPage
	org, project, err := t.scope(ctx, in.Org, in.Project, true)
	if err != nil {
		return nil, out, err
	}
	q := client.ObservationQuery{Tag: in.Tag, Path: in.Path, SessionID: in.SessionID, WorkType: in.WorkType, Q: in.Query, Limit: in.Limit, Cursor: in.Cursor}
	for _, f := range []struct {
		name, v string
		t       *time.Time
	}{{"since", in.Since, &q.Since}, {"until", in.Until, &q.Until}} {
		if f.v == "" {
			continue
		}
		if *f.t, err = time.Parse(time.RFC3339Nano, f.v); err != nil {
			return nil, out, fmt.Errorf("invalid_field: %s must be an RFC 3339 time such as 2026-01-02T15:04:05Z, not %q", f.name, f.v)
		}
	}
	if out, err = t.c.Observations(ctx, org, project, q); err != nil {
		return nil, out, toolError(err)
	}
	var b strings.Builder
	for _, o := range out.Observations {
		b.WriteString(compose.ObservationLine(o.ID, o.Content, o.Weight))
		if o.Score != nil {
			fmt.Fprintf(&b, " (score: %.2f)", *o.Score)
		}
		b.WriteByte('\n')
	}
	if b.Len() == 0 {
		b.WriteString("(no observation matches)\n")
	}
	if out.NextCursor != "" {
		fmt.Fprintf(&b, "more: call again with cursor %s\n", out.NextCursor)
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: b.String()}}}, out, nil
}

// MetadataInput is an observation's metadata in update_observation.
type MetadataInput struct {
	Paths     []string `json:"paths,omitempty" jsonschema:"files the note concerns"`
	Tags      []string `json:"tags,omitempty"`
	SessionID string   `json:"sessionId,omitempty"`
	Namespace string   `json:"namespace,omitempty"`
	WorkType  string   `json:"workType,omitempty"`
}

// UpdateObservationInput is update_observation's input.
type UpdateObservationInput struct {
	ID       string         `json:"id" jsonschema:"the observation's id (obs_...)"`
	Content  string         `json:"content,omitempty" jsonschema:"the new text (empty: kept)"`
	Metadata *MetadataInput `json:"metadata,omitempty" jsonschema:"new metadata, replacing all of it (absent: kept)"`
	Weight   *float64       `json:"weight,omitempty" jsonschema:"a new weight in [0,1] (absent: the learnt weight is kept)"`
	Project  string         `json:"project,omitempty"`
	Org      string         `json:"org,omitempty"`
}

func (t *tools) updateObservation(ctx context.Context, _ *sdk.CallToolRequest, in UpdateObservationInput) (*sdk.CallToolResult, engine.Observation, error) {
	var out engine.Observation
	org, project, err := t.scope(ctx, in.Org, in.Project, true)
	if err != nil {
		return nil, out, err
	}
	if in.ID == "" {
		return nil, out, errors.New("invalid_field: id is required")
	}
	var p client.ObservationPatch
	if in.Content != "" {
		p.Content = &in.Content
	}
	if m := in.Metadata; m != nil {
		p.Metadata = &engine.ObservationMeta{Paths: m.Paths, Tags: m.Tags, SessionID: m.SessionID, Namespace: m.Namespace, WorkType: m.WorkType}
	}
	p.Weight = in.Weight
	if out, err = t.c.UpdateObservation(ctx, org, project, in.ID, p); err != nil {
		return nil, out, toolError(err)
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "updated " + compose.ObservationLine(out.ID, out.Content, out.Weight)}}}, out, nil
}

// DeleteObservationInput is delete_observation's input.
type DeleteObservationInput struct {
	ID      string `json:"id" jsonschema:"the observation's id (obs_...)"`
	Project string `json:"project,omitempty"`
	Org     string `json:"org,omitempty"`
}

// Deleted is delete_observation's answer.
type Deleted struct {
	Deleted string `json:"deleted"`
}

func (t *tools) deleteObservation(ctx context.Context, _ *sdk.CallToolRequest, in DeleteObservationInput) (*sdk.CallToolResult, Deleted, error) {
	var out Deleted
	org, project, err := t.scope(ctx, in.Org, in.Project, true)
	if err != nil {
		return nil, out, err
	}
	if in.ID == "" {
		return nil, out, errors.New("invalid_field: id is required")
	}
	if err := t.c.DeleteObservation(ctx, org, project, in.ID); err != nil {
		return nil, out, toolError(err)
	}
	out.Deleted = in.ID
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "deleted " + in.ID}}}, out, nil
}
