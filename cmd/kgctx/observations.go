package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/kgctx/kgctx/api/client"
	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/policy"
)

// The memory commands (observations, nodes search, projects) work offline
// on a data directory (--data, the server stopped) or through a running
// server (--server URL --token T), like token list: the same answers
// either way, offline as an agent of the org with every project (the
// default policy's widest grant), through a server as the token may see.

// memTarget is where a memory command acts, and on which project.
type memTarget struct {
	tokenTarget
	org, project *string
	json         *bool
}

func newMemTarget(fs *flag.FlagSet, needProject bool) *memTarget {
	m := &memTarget{}
	m.data = fs.String("data", defaultDataDir, "data directory (offline: the server must be stopped)")
	m.server = fs.String("server", "", "act through a running server at this URL instead")
	// The environment is read when the command runs, so that --help
	// never prints a secret as the default.
	m.token = fs.String("token", "", "bearer token for --server (default $KGCTX_TOKEN)")
	m.org = fs.String("org", "", "org id")
	m.project = new(string)
	if needProject {
		m.project = fs.String("project", "", "project id")
	}
	m.json = fs.Bool("json", false, "machine-readable output")
	return m
}

// tenant checks --org and --project.
func (m *memTarget) tenant(c *call) (engine.Tenant, error) {
	t := engine.Tenant{Org: *m.org, Project: *m.project}
	if err := engine.ValidateID(t.Org); err != nil {
		return t, c.usagef("--org %q: %v", t.Org, err)
	}
	if t.Project != "" {
		if err := engine.ValidateID(t.Project); err != nil {
			return t, c.usagef("--project %q: %v", t.Project, err)
		}
	}
	return t, nil
}

// cliIdentity is who the offline commands read as.
func cliIdentity(org string) policy.Identity {
	return policy.Identity{AgentID: "cli", OrgID: org, Role: policy.RoleAgent}
}

// run calls online with the --server client, or offline with the data
// directory's App (closed after).
func (m *memTarget) run(ctx context.Context, c *call, online func(*client.Client) error, offline func(*service.App) error) error {
	if *m.token == "" {
		*m.token = os.Getenv("KGCTX_TOKEN")
	}
	cl, err := m.client(c)
	if err != nil {
		return err
	}
	if cl != nil {
		return online(cl)
	}
	app, err := openData(ctx, *m.data, readOnly, c.stderr)
	if err != nil {
		return err
	}
	defer app.Close()
	return offline(app)
}

var memFlags = []string{"org", "project"}

func observationsCmd() *command {
	return &command{
		name:    "observations",
		summary: "list, search, update and delete a project's observations",
		about: "List, search, correct and delete a project's observations, offline (--data, the server stopped)\n" +
			"or through a running server (--server URL --token T).",
		subs: []*command{
			{name: "list", summary: "list observations newest first, with filters", flags: obsList, required: memFlags},
			{name: "search", summary: "search observations, ranked as a session block ranks them, with scores", args: "QUERY...", flags: obsSearch, required: memFlags},
			{name: "update", summary: "change an observation's content, metadata or weight", args: "ID", flags: obsUpdate, required: memFlags,
				about: "Change observation ID: --content replaces the text (searches then find the new words, not the old),\n" +
					"--weight sets the weight (else the learnt one is kept), and each metadata flag replaces its field\n" +
					"(--tags, --paths, --session-id, --work-type, --namespace); the fields not given are kept."},
			{name: "delete", summary: "delete an observation", args: "ID", flags: obsDelete, required: memFlags},
		},
	}
}

// obsFilters are list's and search's filters.
type obsFilters struct {
	tag, path, session, workType, since, until, cursor *string
	limit                                              *int
	all                                                *bool
}

func newObsFilters(fs *flag.FlagSet) *obsFilters {
	return &obsFilters{
		tag:      fs.String("tag", "", "only observations with this tag"),
		path:     fs.String("path", "", "only observations of this path or of a directory's paths (pkg/auth: pkg/auth/mw.go too)"),
		session:  fs.String("session-id", "", "only observations of this session"),
		workType: fs.String("work-type", "", "only observations of this work type"),
		since:    fs.String("since", "", "only observations created at or after this RFC 3339 time"),
		until:    fs.String("until", "", "only observations created before this RFC 3339 time"),
		limit:    fs.Int("limit", 0, fmt.Sprintf("page size, 1..%d (default %d)", engine.MaxObservationPage, engine.DefaultObservationPage)),
		cursor:   fs.String("cursor", "", "continue after the page that printed this cursor"),
		all:      fs.Bool("all", false, "follow the cursor to the last page"),
	}
}

func (f *obsFilters) query(c *call, q string) (client.ObservationQuery, error) {
	out := client.ObservationQuery{Tag: *f.tag, Path: *f.path, SessionID: *f.session, WorkType: *f.workType, Q: q, Limit: *f.limit, Cursor: *f.cursor}
	if *f.limit < 0 || *f.limit > engine.MaxObservationPage {
		return out, c.usagef("--limit %d: want 1..%d", *f.limit, engine.MaxObservationPage)
	}
	for _, t := range []struct {
		name string
		v    string
		dst  *time.Time
	}{{"since", *f.since, &out.Since}, {"until", *f.until, &out.Until}} {
		if t.v == "" {
			continue
		}
		var err error
		if *t.dst, err = time.Parse(time.RFC3339Nano, t.v); err != nil {
			return out, c.usagef("--%s %q: want an RFC 3339 time such as 2026-01-02T15:04:05Z", t.name, t.v)
		}
	}
	return out, nil
}

func obsList(fs *flag.FlagSet) body {
	m := newMemTarget(fs, true)
	f := newObsFilters(fs)
	return func(ctx context.Context, c *call) error {
		if len(c.args) > 0 {
			return c.usagef("unexpected argument %q (to search, use observations search)", c.args[0])
		}
		return m.observations(ctx, c, f, "")
	}
}

func obsSearch(fs *flag.FlagSet) body {
	m := newMemTarget(fs, true)
	f := newObsFilters(fs)
	return func(ctx context.Context, c *call) error {
		q := strings.TrimSpace(strings.Join(c.args, " "))
		if q == "" {
			return c.usagef("give the words to search with")
		}
		return m.observations(ctx, c, f, q)
	}
}

// observations prints the pages of a listing (q "") or a search.
func (m *memTarget) observations(ctx context.Context, c *call, f *obsFilters, q string) error {
	t, err := m.tenant(c)
	if err != nil {
		return err
	}
	query, err := f.query(c, q)
	if err != nil {
		return err
	}
	var pages []client.ObservationPage
	fetch := func(get func(client.ObservationQuery) (client.ObservationPage, error)) error {
		for {
			p, err := get(query)
			if err != nil {
				return err
			}
			pages = append(pages, p)
			if !*f.all || p.NextCursor == "" {
				return nil
			}
			query.Cursor = p.NextCursor
		}
	}
	err = m.run(ctx, c, func(cl *client.Client) error {
		return fetch(func(q client.ObservationQuery) (client.ObservationPage, error) {
			return cl.Observations(ctx, t.Org, t.Project, q)
		})
	}, func(app *service.App) error {
		return fetch(func(q client.ObservationQuery) (client.ObservationPage, error) {
			l, err := app.Composer.Observations(ctx, cliIdentity(t.Org), t, compose.ObservationListRequest{Query: q.Q, Limit: q.Limit, Cursor: q.Cursor,
				Filter: engine.ObservationFilter{Tag: q.Tag, Path: q.Path, SessionID: q.SessionID, WorkType: q.WorkType, Since: q.Since, Until: q.Until}})
			if err != nil {
				return client.ObservationPage{}, err
			}
			p := client.ObservationPage{Observations: []client.ListedObservation{}, NextCursor: l.NextCursor}
			for _, o := range l.Observations {
				p.Observations = append(p.Observations, client.ListedObservation{Observation: o.Observation, Score: o.Score, Relevance: o.Relevance})
			}
			return p, nil
		})
	})
	if err != nil {
		return err
	}
	all := client.ObservationPage{Observations: []client.ListedObservation{}, NextCursor: pages[len(pages)-1].NextCursor}
	for _, p := range pages {
		all.Observations = append(all.Observations, p.Observations...)
	}
	if *m.json {
		return writeJSON(c.stdout, all)
	}
	if len(all.Observations) == 0 {
		fmt.Fprintln(c.stderr, "(no observations)")
		return nil
	}
	w := tabwriter.NewWriter(c.stdout, 2, 4, 2, ' ', 0)
	if q != "" {
		fmt.Fprint(w, "SCORE\t")
	}
	fmt.Fprintln(w, "ID\tCREATED\tWEIGHT\tTAGS\tCONTENT")
	for _, o := range all.Observations {
		if o.Score != nil {
			fmt.Fprintf(w, "%.2f\t", *o.Score)
		}
		tags := strings.Join(o.Metadata.Tags, ",")
		if tags == "" {
			tags = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%.2f\t%s\t%s\n", o.ID, o.CreatedAt.UTC().Format(time.RFC3339), o.Weight, tags, excerpt(o.Content, 60))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if all.NextCursor != "" {
		fmt.Fprintf(c.stderr, "more: --cursor %s (or --all)\n", all.NextCursor)
	}
	return nil
}

// excerpt folds s's whitespace and cuts it to n runes.
func excerpt(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func obsUpdate(fs *flag.FlagSet) body {
	m := newMemTarget(fs, true)
	content := fs.String("content", "", "the new content")
	weight := fs.Float64("weight", 0, "a new weight in [0,1] (default: the learnt weight is kept)")
	var tags, paths stringsFlag
	fs.Var(&tags, "tags", "new tags, comma-separated or repeated (\"\" clears them)")
	fs.Var(&paths, "paths", "new paths, comma-separated or repeated (\"\" clears them)")
	session := fs.String("session-id", "", "new session id")
	workType := fs.String("work-type", "", "new work type")
	namespace := fs.String("namespace", "", "new namespace")
	return func(ctx context.Context, c *call) error {
		if len(c.args) != 1 {
			return c.usagef("want one observation id (obs_...; observations list shows them)")
		}
		id := c.args[0]
		t, err := m.tenant(c)
		if err != nil {
			return err
		}
		given := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
		var p client.ObservationPatch
		if given["content"] {
			p.Content = content
		}
		if given["weight"] {
			p.Weight = weight
		}
		metaFlags := []string{"tags", "paths", "session-id", "work-type", "namespace"}
		changesMeta := false
		for _, f := range metaFlags {
			changesMeta = changesMeta || given[f]
		}
		if p.Content == nil && p.Weight == nil && !changesMeta {
			return c.usagef("nothing to change: give --content, --weight or a metadata flag (%s)", "--"+strings.Join(metaFlags, ", --"))
		}
		// The metadata flags change their fields; the others are kept (the
		// route replaces the whole metadata, so it is read first).
		merge := func(cur engine.ObservationMeta) *engine.ObservationMeta {
			if !changesMeta {
				return nil
			}
			if given["tags"] {
				cur.Tags = tags
			}
			if given["paths"] {
				cur.Paths = paths
			}
			if given["session-id"] {
				cur.SessionID = *session
			}
			if given["work-type"] {
				cur.WorkType = *workType
			}
			if given["namespace"] {
				cur.Namespace = *namespace
			}
			return &cur
		}
		var o engine.Observation
		err = m.run(ctx, c, func(cl *client.Client) error {
			if changesMeta {
				var cur engine.Observation
				if err := cl.GetJSON(ctx, client.ProjectPath(t.Org, t.Project)+"/observations/"+id, &cur); err != nil {
					return err
				}
				p.Metadata = merge(cur.Metadata)
			}
			var err error
			o, err = cl.UpdateObservation(ctx, t.Org, t.Project, id, p)
			return err
		}, func(app *service.App) error {
			cur, err := app.Store.Observation(t, id)
			if err != nil {
				return fmt.Errorf("observation %s: %w", id, err)
			}
			patch := engine.ObservationPatch{Content: p.Content, Weight: p.Weight, Metadata: merge(cur.Metadata)}
			if err := patch.Validate(app.Store.Dim()); err != nil {
				return &cmdError{cmd: c.path, msg: err.Error()}
			}
			if _, err := app.Write(ctx, service.Write{Kind: service.WriteUpdateObservation, Org: t.Org, Project: t.Project, ID: id, ObservationPatch: &patch}); err != nil {
				return err
			}
			o, err = app.Store.Observation(t, id)
			return err
		})
		if err != nil {
			return err
		}
		if *m.json {
			return writeJSON(c.stdout, o)
		}
		fmt.Fprintln(c.stdout, "updated", compose.ObservationLine(o.ID, o.Content, o.Weight))
		return nil
	}
}

func obsDelete(fs *flag.FlagSet) body {
	m := newMemTarget(fs, true)
	return func(ctx context.Context, c *call) error {
		if len(c.args) != 1 {
			return c.usagef("want one observation id (obs_...; observations list shows them)")
		}
		id := c.args[0]
		t, err := m.tenant(c)
		if err != nil {
			return err
		}
		err = m.run(ctx, c, func(cl *client.Client) error {
			return cl.DeleteObservation(ctx, t.Org, t.Project, id)
		}, func(app *service.App) error {
			_, err := app.Write(ctx, service.Write{Kind: service.WriteDeleteObservation, Org: t.Org, Project: t.Project, ID: id})
			return err
		})
		if err != nil {
			return err
		}
		fmt.Fprintln(c.stdout, "deleted", id)
		return nil
	}
}

func nodesCmd() *command {
	return &command{
		name:    "nodes",
		summary: "find a project's nodes by name",
		about:   "Find nodes, offline (--data, the server stopped) or through a running server (--server URL --token T).",
		subs: []*command{{name: "search", summary: "find nodes by name: the identity match first, then text hits", args: "NAME...",
			flags: nodesSearch, required: memFlags}},
	}
}

func nodesSearch(fs *flag.FlagSet) body {
	m := newMemTarget(fs, true)
	limit := fs.Int("limit", 0, fmt.Sprintf("at most this many nodes, 1..%d (default %d)", compose.MaxNodeSearch, compose.DefaultNodeSearch))
	return func(ctx context.Context, c *call) error {
		q := strings.TrimSpace(strings.Join(c.args, " "))
		if q == "" {
			return c.usagef("give the name to look for")
		}
		if *limit < 0 || *limit > compose.MaxNodeSearch {
			return c.usagef("--limit %d: want 1..%d", *limit, compose.MaxNodeSearch)
		}
		t, err := m.tenant(c)
		if err != nil {
			return err
		}
		var hits []client.NodeHit
		err = m.run(ctx, c, func(cl *client.Client) error {
			hits, err = cl.SearchNodes(ctx, t.Org, t.Project, q, *limit)
			return err
		}, func(app *service.App) error {
			hs, err := app.Composer.SearchNodes(ctx, cliIdentity(t.Org), t, q, *limit)
			for _, h := range hs {
				hits = append(hits, client.NodeHit{ID: h.ID, Name: h.Name, Type: h.Type, Description: h.Description, Weight: h.Weight, Match: h.Match, Score: h.Score})
			}
			return err
		})
		if err != nil {
			return err
		}
		if hits == nil {
			hits = []client.NodeHit{}
		}
		if *m.json {
			return writeJSON(c.stdout, map[string]any{"nodes": hits})
		}
		if len(hits) == 0 {
			fmt.Fprintln(c.stderr, "(no nodes)")
			return nil
		}
		w := tabwriter.NewWriter(c.stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(w, "MATCH\tSCORE\tNAME\tTYPE\tWEIGHT\tID\tDESCRIPTION")
		for _, h := range hits {
			typ := h.Type
			if typ == "" {
				typ = "-"
			}
			fmt.Fprintf(w, "%s\t%.2f\t%s\t%s\t%.2f\t%s\t%s\n", h.Match, h.Score, excerpt(h.Name, 60), typ, h.Weight, h.ID, excerpt(h.Description, 60))
		}
		return w.Flush()
	}
}

func projectsCmd() *command {
	return &command{
		name:     "projects",
		summary:  "list an org's projects with their sizes",
		about:    "List an org's projects that hold data or a stored configuration, with node, edge and observation counts,\noffline (--data, the server stopped) or through a running server (--server URL --token T).",
		required: []string{"org"},
		flags:    projectsList,
	}
}

func projectsList(fs *flag.FlagSet) body {
	m := newMemTarget(fs, false)
	return func(ctx context.Context, c *call) error {
		if len(c.args) > 0 {
			return c.usagef("unexpected argument %q", c.args[0])
		}
		t, err := m.tenant(c)
		if err != nil {
			return err
		}
		var list []client.Project
		err = m.run(ctx, c, func(cl *client.Client) error {
			list, err = cl.Projects(ctx, t.Org)
			return err
		}, func(app *service.App) error {
			ps, err := app.Composer.Projects(t.Org, nil)
			for _, p := range ps {
				list = append(list, client.Project{ProjectID: p.ProjectID, Nodes: p.Nodes, Edges: p.Edges, Observations: p.Observations})
			}
			return err
		})
		if err != nil {
			return err
		}
		if list == nil {
			list = []client.Project{}
		}
		if *m.json {
			return writeJSON(c.stdout, map[string]any{"projects": list})
		}
		w := tabwriter.NewWriter(c.stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(w, "PROJECT\tNODES\tEDGES\tOBSERVATIONS")
		for _, p := range list {
			fmt.Fprintf(w, "%s\t%d\t%d\t%d\n", p.ProjectID, p.Nodes, p.Edges, p.Observations)
		}
		return w.Flush()
	}
}
