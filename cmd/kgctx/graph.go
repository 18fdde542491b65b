package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/kgctx/kgctx/compose/service"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/tripletio"
	"github.com/kgctx/kgctx/policy"
)

// graphFlags are the flags every graph subcommand shares.
type graphFlags struct {
	data    *string
	org     *string
	project *string
	json    *bool
}

func newGraphFlags(fs *flag.FlagSet) *graphFlags {
	return &graphFlags{
		data:    fs.String("data", defaultDataDir, "data directory (offline: the server must be stopped)"),
		org:     fs.String("org", "", "org id"),
		project: fs.String("project", "", "project id"),
		json:    fs.Bool("json", false, "machine-readable output")}
}

// tenant checks --org and --project (given, as the required ones are by
// the time a body runs, or both absent when optional).
func (g *graphFlags) tenant(c *call) (engine.Tenant, error) {
	t := engine.Tenant{Org: *g.org, Project: *g.project}
	if t.Org == "" && t.Project == "" {
		return t, nil
	}
	if t.Org == "" || t.Project == "" {
		return t, c.usagef("--org and --project go together")
	}
	if err := engine.ValidateID(t.Org); err != nil {
		return t, c.usagef("--org %q: %v", t.Org, err)
	}
	if err := engine.ValidateID(t.Project); err != nil {
		return t, c.usagef("--project %q: %v", t.Project, err)
	}
	return t, nil
}

// open checks the tenant and opens the data directory. The caller closes
// the App.
func (g *graphFlags) open(ctx context.Context, c *call, mode openMode) (*service.App, engine.Tenant, error) {
	t, err := g.tenant(c)
	if err != nil {
		return nil, t, err
	}
	app, err := openData(ctx, *g.data, mode, c.stderr)
	if err == nil && mode == readOnly && t.Project != "" {
		// A mistyped --project is an empty answer otherwise.
		for _, w := range app.Composer.ScopeWarnings(policy.Identity{OrgID: t.Org}, t, true) {
			fmt.Fprintln(c.stderr, "warning:", w)
		}
	}
	return app, t, err
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

var tenantFlags = []string{"org", "project"}

func graphCmd() *command {
	return &command{
		name:    "graph",
		summary: "inspect and edit a project's graph in a data directory (offline)",
		about: "Inspect and edit the graph in a data directory. These commands open the store\n" +
			"directly, so the server must be stopped. Commands that only read (status, stats,\n" +
			"query, export) refuse a directory that holds no store.",
		subs: []*command{
			{name: "status", summary: "totals of the data directory, and of one project with --org/--project", flags: graphStatus},
			{name: "stats", summary: "node, triple and predicate counts of a project", flags: graphStats, required: tenantFlags},
			{name: "query", summary: "list a project's triples by subject, predicate and object", flags: graphQuery, required: tenantFlags},
			{name: "clear", summary: "delete every node and triple of a project", flags: graphClear, required: tenantFlags},
			{name: "add", summary: "add (or merge) one triple", flags: graphAdd,
				required: []string{"org", "project", "subject", "predicate", "object"}},
			{name: "export", summary: "write a project's triples as NDJSON", args: "[FILE]", flags: graphExport, required: tenantFlags},
			{name: "import", summary: "import triplet files into a project (any import format)", args: "FILE...", flags: graphImport, required: tenantFlags},
		},
	}
}

type statusJSON struct {
	DataDir   string          `json:"dataDir"`
	Nodes     int             `json:"nodes"`
	Triplets  int             `json:"triplets"`
	Projects  int             `json:"projects"`
	Vectors   int             `json:"vectors"`
	Dimension int             `json:"dimension"`
	Project   *engine.Stats   `json:"project,omitempty"`
	Tenants   []engine.Tenant `json:"tenants"`
	Check     string          `json:"check,omitempty"`
}

func graphStatus(fs *flag.FlagSet) body {
	g := newGraphFlags(fs)
	check := fs.Bool("check", false, "also verify the store's invariants")
	return func(ctx context.Context, c *call) error {
		if len(c.args) > 0 {
			return c.usagef("unexpected argument %q", c.args[0])
		}
		return g.status(ctx, c, *check)
	}
}

func (g *graphFlags) status(ctx context.Context, c *call, check bool) error {
	stdout := c.stdout
	app, t, err := g.open(ctx, c, readOnly)
	if err != nil {
		return err
	}
	defer app.Close()
	st := statusJSON{DataDir: *g.data, Vectors: app.Index.Len(), Dimension: app.Store.Dim(), Tenants: app.Store.Tenants()}
	st.Projects = len(st.Tenants)
	_ = app.Store.View(func(v *engine.View) error {
		st.Nodes, st.Triplets = v.NodeCount(), v.EdgeCount()
		return nil
	})
	if t.Org != "" {
		ps, err := app.Store.Stats(t)
		if err != nil {
			return err
		}
		st.Project = &ps
	}
	if check {
		st.Check = "ok"
		if err := app.Store.Check(); err != nil {
			st.Check = err.Error()
		}
	}
	if *g.json {
		return writeJSON(stdout, st)
	}
	fmt.Fprintln(stdout, "Knowledge Graph Status")
	fmt.Fprintf(stdout, "  Data Directory: %s\n", st.DataDir)
	fmt.Fprintf(stdout, "  Nodes:          %d\n", st.Nodes)
	fmt.Fprintf(stdout, "  Triples:        %d\n", st.Triplets)
	fmt.Fprintf(stdout, "  Projects:       %d\n", st.Projects)
	fmt.Fprintf(stdout, "  Vectors:        %d (dimension %d)\n", st.Vectors, st.Dimension)
	if st.Project != nil {
		fmt.Fprintf(stdout, "  %s/%s:  %d nodes, %d triples\n", t.Org, t.Project, st.Project.Nodes, st.Project.Triplets)
	}
	if st.Check != "" {
		fmt.Fprintf(stdout, "  Check:          %s\n", st.Check)
		if st.Check != "ok" {
			return exitError{1}
		}
	}
	return nil
}

func graphStats(fs *flag.FlagSet) body {
	g := newGraphFlags(fs)
	return func(ctx context.Context, c *call) error {
		if len(c.args) > 0 {
			return c.usagef("unexpected argument %q", c.args[0])
		}
		return g.stats(ctx, c)
	}
}

func (g *graphFlags) stats(ctx context.Context, c *call) error {
	stdout := c.stdout
	app, t, err := g.open(ctx, c, readOnly)
	if err != nil {
		return err
	}
	defer app.Close()
	st, err := app.Store.Stats(t)
	if err != nil {
		return err
	}
	if *g.json {
		return writeJSON(stdout, st)
	}
	fmt.Fprintln(stdout, "Knowledge Graph Statistics")
	fmt.Fprintf(stdout, "  Total Nodes:   %d\n", st.Nodes)
	fmt.Fprintf(stdout, "  Total Triples: %d\n\n", st.Triplets)
	type row struct {
		name string
		n    int
	}
	var rows []row
	for name, n := range st.Predicates {
		if n > 0 {
			rows = append(rows, row{name, n})
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].n != rows[j].n {
			return rows[i].n > rows[j].n
		}
		return rows[i].name < rows[j].name
	})
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PREDICATE\tCOUNT")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\n", r.name, r.n)
	}
	return tw.Flush()
}

func graphQuery(fs *flag.FlagSet) body {
	g := newGraphFlags(fs)
	var q engine.TripletQuery
	fs.StringVar(&q.Subject, "subject", "", "subject name")
	fs.StringVar(&q.Predicate, "predicate", "", "predicate")
	fs.StringVar(&q.Object, "object", "", "object name")
	fs.IntVar(&q.Limit, "limit", 100, "maximum triples")
	return func(ctx context.Context, c *call) error {
		if len(c.args) > 0 {
			return c.usagef("unexpected argument %q", c.args[0])
		}
		return g.query(ctx, c, q)
	}
}

func (g *graphFlags) query(ctx context.Context, c *call, q engine.TripletQuery) error {
	stdout := c.stdout
	app, t, err := g.open(ctx, c, readOnly)
	if err != nil {
		return err
	}
	defer app.Close()
	ts, err := app.Store.QueryTriplets(t, q)
	if err != nil {
		return err
	}
	if *g.json {
		if ts == nil {
			ts = []engine.Triplet{}
		}
		return writeJSON(stdout, map[string]any{"triplets": ts})
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SUBJECT\tPREDICATE\tOBJECT\tWEIGHT")
	for _, x := range ts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f\n", x.Source, x.Relationship, x.Target, x.Weight)
	}
	return tw.Flush()
}

func graphClear(fs *flag.FlagSet) body {
	g := newGraphFlags(fs)
	force := fs.Bool("force", false, "skip the confirmation")
	return func(ctx context.Context, c *call) error {
		if len(c.args) > 0 {
			return c.usagef("unexpected argument %q", c.args[0])
		}
		return g.clear(ctx, c, *force)
	}
}

func (g *graphFlags) clear(ctx context.Context, c *call, force bool) error {
	stdout, stderr := c.stdout, c.stderr
	if !force && !isTerminal(os.Stdin) {
		return c.usagef("refusing without --force when standard input is not a terminal")
	}
	app, t, err := g.open(ctx, c, create)
	if err != nil {
		return err
	}
	defer app.Close()
	if !force {
		fmt.Fprintf(stderr, "This permanently deletes every node and triple of %s/%s. Type the project id to confirm: ", t.Org, t.Project)
		line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
		if strings.TrimSpace(line) != t.Project {
			return errors.New("graph clear: not confirmed")
		}
	}
	nodes, edges, err := app.Store.ClearProject(ctx, t)
	if err != nil {
		return err
	}
	if *g.json {
		return writeJSON(stdout, map[string]int{"nodesDeleted": nodes, "triplesDeleted": edges})
	}
	fmt.Fprintf(stdout, "cleared %s/%s: %d nodes and %d triples deleted\n", t.Org, t.Project, nodes, edges)
	return nil
}

func graphAdd(fs *flag.FlagSet) body {
	g := newGraphFlags(fs)
	var in engine.TripletInput
	fs.StringVar(&in.Source, "subject", "", "subject name")
	fs.StringVar(&in.Relationship, "predicate", "", "predicate")
	fs.StringVar(&in.Target, "object", "", "object name")
	weight := fs.Float64("weight", -1, "edge weight in [0,1] (default: keep, 0.5 for a new edge)")
	return func(ctx context.Context, c *call) error {
		if len(c.args) > 0 {
			return c.usagef("unexpected argument %q", c.args[0])
		}
		if *weight >= 0 {
			in.Weight = weight
		}
		return g.add(ctx, c, in)
	}
}

func (g *graphFlags) add(ctx context.Context, c *call, in engine.TripletInput) error {
	stdout := c.stdout
	app, t, err := g.open(ctx, c, create)
	if err != nil {
		return err
	}
	defer app.Close()
	res, err := app.Import(ctx, t, []engine.TripletInput{in}, engine.ImportOptions{AllowCrossOrg: true})
	if err != nil {
		return err
	}
	if *g.json {
		return writeJSON(stdout, res)
	}
	if res.EdgesCreated == 1 {
		fmt.Fprintf(stdout, "added %s -> %s -> %s\n", in.Source, engine.NormalizeRelationship(in.Relationship), in.Target)
	} else {
		fmt.Fprintf(stdout, "merged into the existing %s -> %s -> %s\n", in.Source, engine.NormalizeRelationship(in.Relationship), in.Target)
	}
	return nil
}

// graphExport writes the project's triplets as NDJSON (to FILE, or standard
// output), in the form graph import and kgctx import read back.
func graphExport(fs *flag.FlagSet) body {
	g := newGraphFlags(fs)
	return func(ctx context.Context, c *call) error {
		if len(c.args) > 1 {
			return c.usagef("at most one FILE")
		}
		return g.export(ctx, c)
	}
}

func (g *graphFlags) export(ctx context.Context, c *call) error {
	stdout, pos := c.stdout, c.args
	app, t, err := g.open(ctx, c, readOnly)
	if err != nil {
		return err
	}
	defer app.Close()
	w := stdout
	var f *os.File
	if len(pos) == 1 && pos[0] != "-" {
		if f, err = os.Create(pos[0]); err != nil {
			return err
		}
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := tripletio.NewEncoder(bw)
	n := 0
	err = app.Store.ExportTriplets(t, func(in *engine.TripletInput) error {
		n++
		return enc.Encode(in)
	})
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return err
	}
	if f != nil {
		if *g.json {
			return writeJSON(stdout, map[string]any{"exported": n, "file": pos[0]})
		}
		fmt.Fprintf(stdout, "exported %d triples to %s\n", n, pos[0])
	}
	return nil
}

// graphImport reads FILEs (any import format, NDJSON exports included) into
// the project, like kgctx import with the graph command's flags.
func graphImport(fs *flag.FlagSet) body {
	g := newGraphFlags(fs)
	return func(ctx context.Context, c *call) error {
		if len(c.args) == 0 {
			return c.usagef("name at least one FILE")
		}
		return g.importFiles(ctx, c)
	}
}

func (g *graphFlags) importFiles(ctx context.Context, c *call) error {
	stdout := c.stdout
	t, err := g.tenant(c)
	if err != nil {
		return err
	}
	files := make([]tripletio.File, len(c.args))
	for i, p := range c.args {
		files[i] = tripletio.File{Path: p}
	}
	var total int
	res, err := importLocal(ctx, *g.data, t, files, tripletio.LoadOptions{AllowCrossOrg: true,
		Validated: func(n int) { total = n }}, c.stderr)
	if err != nil {
		return importFailed(ctx, c, err, res, total, false)
	}
	if *g.json {
		return writeJSON(stdout, res)
	}
	fmt.Fprintf(stdout, "imported %d triples: %d nodes and %d edges created, %d merged\n", res.Accepted, res.NodesCreated, res.EdgesCreated, res.EdgesMerged)
	return nil
}
