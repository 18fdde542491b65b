package client

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/kgctx/kgctx/engine/model"
)

// Project is one project of an org as GET /v1/orgs/{org}/projects lists
// it.
type Project struct {
	ProjectID    string `json:"projectId"`
	Nodes        int    `json:"nodes"`
	Edges        int    `json:"edges"`
	Observations int    `json:"observations"`
}

// Projects lists org's projects with data or a stored configuration,
// sorted by id (a token limited to some projects: those).
func (c *Client) Projects(ctx context.Context, org string) ([]Project, error) {
	var out struct {
		Projects []Project `json:"projects"`
	}
	err := c.GetJSON(ctx, "/v1/orgs/"+url.PathEscape(org)+"/projects", &out)
	return out.Projects, err
}

// ObservationQuery selects a page of a project's observations (GET
// .../observations); a zero field is not sent.
type ObservationQuery struct {
	Tag, Path, SessionID, WorkType string
	Since, Until                   time.Time
	// Q searches: ranked as a session block ranks, each with its score.
	Q      string
	Limit  int
	Cursor string // the NextCursor of the page before
}

// Values encodes q as the route's query parameters.
func (q ObservationQuery) Values() url.Values {
	v := url.Values{}
	for k, s := range map[string]string{"tag": q.Tag, "path": q.Path, "sessionId": q.SessionID, "workType": q.WorkType, "q": q.Q, "cursor": q.Cursor} {
		if s != "" {
			v.Set(k, s)
		}
	}
	for k, t := range map[string]time.Time{"since": q.Since, "until": q.Until} {
		if !t.IsZero() {
			v.Set(k, t.Format(time.RFC3339Nano))
		}
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	return v
}

// ListedObservation is an observation of a page; a search's carry their
// score (relevance × (0.5 + weight)) and relevance.
type ListedObservation struct {
	model.Observation
	Score     *float64 `json:"score,omitempty"`
	Relevance *float64 `json:"relevance,omitempty"`
}

// ObservationPage is one page; NextCursor is "" on the last.
type ObservationPage struct {
	Observations []ListedObservation `json:"observations"`
	NextCursor   string              `json:"nextCursor,omitempty"`
}

// Observations reads one page of a project's observations.
func (c *Client) Observations(ctx context.Context, org, project string, q ObservationQuery) (ObservationPage, error) {
	var p ObservationPage
	path := projectPath(org, project) + "/observations"
	if v := q.Values(); len(v) > 0 {
		path += "?" + v.Encode()
	}
	err := c.GetJSON(ctx, path, &p)
	return p, err
}

// ObservationPatch changes an observation: a nil field is kept; metadata
// given replaces the whole metadata.
type ObservationPatch struct {
	Content  *string                `json:"content,omitempty"`
	Metadata *model.ObservationMeta `json:"metadata,omitempty"`
	Weight   *float64               `json:"weight,omitempty"`
}

// UpdateObservation patches observation id and returns it as it is now.
func (c *Client) UpdateObservation(ctx context.Context, org, project, id string, p ObservationPatch) (model.Observation, error) {
	var o model.Observation
	body, err := json.Marshal(p)
	if err != nil {
		return o, err
	}
	err = c.do(ctx, http.MethodPatch, projectPath(org, project)+"/observations/"+url.PathEscape(id), "application/json", bytes.NewReader(body), &o)
	return o, err
}

// DeleteObservation deletes observation id (and its index entries).
func (c *Client) DeleteObservation(ctx context.Context, org, project, id string) error {
	return c.do(ctx, http.MethodDelete, projectPath(org, project)+"/observations/"+url.PathEscape(id), "", nil, nil)
}

// NodeHit is a node found by name.
type NodeHit struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Type        string  `json:"type,omitempty"`
	Description string  `json:"description,omitempty"`
	Weight      float64 `json:"weight"`
	Match       string  `json:"match"` // exact or text
	Score       float64 `json:"score"`
}

// SearchNodes finds a project's nodes by name: the identity match first,
// then text hits; limit 0 is the server's default.
func (c *Client) SearchNodes(ctx context.Context, org, project, q string, limit int) ([]NodeHit, error) {
	v := url.Values{"q": {q}}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	var out struct {
		Nodes []NodeHit `json:"nodes"`
	}
	err := c.GetJSON(ctx, projectPath(org, project)+"/nodes?"+v.Encode(), &out)
	return out.Nodes, err
}
