package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/kgctx/kgctx/api"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/tripletio"
)

type graphFlags struct {
	fs         *flag.FlagSet
	data       *string
	org        *string
	project    *string
	json       *bool
	positional []string
}

func newGraphFlags(name string, stderr io.Writer) *graphFlags {
	fs := newFlags("graph "+name, stderr)
	return &graphFlags{fs: fs,
		data:    fs.String("data", defaultDataDir, "data directory"),
		org:     fs.String("org", "", "org id"),
		project: fs.String("project", "", "project id"),
		json:    fs.Bool("json", false, "machine-readable output")}
}

func (g *graphFlags) tenant(required bool) (engine.Tenant, error) {
	t := engine.Tenant{Org: *g.org, Project: *g.project}
	if !required && t.Org == "" && t.Project == "" {
		return t, nil
	}
	if err := engine.ValidateID(t.Org); err != nil {
		return t, fmt.Errorf("--org: %w", err)
	}
	if err := engine.ValidateID(t.Project); err != nil {
		return t, fmt.Errorf("--project: %w", err)
	}
	return t, nil
}

// open parses args, checks --org/--project (required or not) and opens the
// data directory. The caller closes the App.
func (g *graphFlags) open(ctx context.Context, args []string, required bool, stderr io.Writer) (*api.App, engine.Tenant, error) {
	var err error
	if g.positional, err = parse(g.fs, args); err != nil {
		return nil, engine.Tenant{}, err
	}
	t, err := g.tenant(required)
	if err != nil {
		return nil, t, err
	}
	app, err := openData(ctx, *g.data, stderr)
	return app, t, err
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func cmdGraph(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("graph: name a subcommand: status, stats, query, clear, add, export or import")
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "status":
		return graphStatus(ctx, args, stdout, stderr)
	case "stats":
		return graphStats(ctx, args, stdout, stderr)
	case "query":
		return graphQuery(ctx, args, stdout, stderr)
	case "clear":
		return graphClear(ctx, args, stdout, stderr)
	case "add":
		return graphAdd(ctx, args, stdout, stderr)
	case "export":
		return graphExport(ctx, args, stdout, stderr)
	case "import":
		return graphImport(ctx, args, stdout, stderr)
	}
	return fmt.Errorf("graph: unknown subcommand %q (status, stats, query, clear, add, export, import)", sub)
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

func graphStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	g := newGraphFlags("status", stderr)
	check := g.fs.Bool("check", false, "also verify the store's invariants")
	app, t, err := g.open(ctx, args, false, stderr)
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
	if *check {
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

func graphStats(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	g := newGraphFlags("stats", stderr)
	app, t, err := g.open(ctx, args, true, stderr)
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

func graphQuery(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	g := newGraphFlags("query", stderr)
	subj := g.fs.String("subject", "", "subject name")
	pred := g.fs.String("predicate", "", "predicate")
	obj := g.fs.String("object", "", "object name")
	limit := g.fs.Int("limit", 100, "maximum triples")
	app, t, err := g.open(ctx, args, true, stderr)
	if err != nil {
		return err
	}
	defer app.Close()
	ts, err := app.Store.QueryTriplets(t, engine.TripletQuery{Subject: *subj, Predicate: *pred, Object: *obj, Limit: *limit})
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

func graphClear(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	g := newGraphFlags("clear", stderr)
	force := g.fs.Bool("force", false, "skip the confirmation")
	app, t, err := g.open(ctx, args, true, stderr)
	if err != nil {
		return err
	}
	defer app.Close()
	if !*force {
		if !isTerminal(os.Stdin) {
			return errors.New("graph clear: refusing without --force when standard input is not a terminal")
		}
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

func graphAdd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	g := newGraphFlags("add", stderr)
	subj := g.fs.String("subject", "", "subject name (required)")
	pred := g.fs.String("predicate", "", "predicate (required)")
	obj := g.fs.String("object", "", "object name (required)")
	weight := g.fs.Float64("weight", -1, "edge weight in [0,1] (default: keep, 0.5 for a new edge)")
	app, t, err := g.open(ctx, args, true, stderr)
	if err != nil {
		return err
	}
	defer app.Close()
	in := engine.TripletInput{Source: *subj, Relationship: *pred, Target: *obj}
	if *weight >= 0 {
		in.Weight = weight
	}
	preds, err := app.Settings.Predicates(t)
	if err != nil {
		return err
	}
	res, err := app.Store.Import(ctx, t, []engine.TripletInput{in}, engine.ImportOptions{AllowCrossOrg: true, Relationships: preds.Set()})
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
func graphExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	g := newGraphFlags("export", stderr)
	app, t, err := g.open(ctx, args, true, stderr)
	if err != nil {
		return err
	}
	defer app.Close()
	w := stdout
	pos := g.positional
	if len(pos) > 1 {
		return errors.New("graph export: at most one FILE")
	}
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
func graphImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	g := newGraphFlags("import", stderr)
	app, t, err := g.open(ctx, args, true, stderr)
	if err != nil {
		return err
	}
	if len(g.positional) == 0 {
		app.Close()
		return errors.New("graph import: name at least one FILE")
	}
	files := make([]tripletio.File, len(g.positional))
	for i, p := range g.positional {
		files[i] = tripletio.File{Path: p}
	}
	preds, err := app.Settings.Predicates(t)
	if err != nil {
		app.Close()
		return err
	}
	res, err := tripletio.Load(ctx, app.Store, t, files, tripletio.LoadOptions{AllowCrossOrg: true, Relationships: preds.Set()})
	if cerr := app.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if *g.json {
		return writeJSON(stdout, res)
	}
	fmt.Fprintf(stdout, "imported %d triples: %d nodes and %d edges created, %d merged\n", res.Accepted, res.NodesCreated, res.EdgesCreated, res.EdgesMerged)
	return nil
}
