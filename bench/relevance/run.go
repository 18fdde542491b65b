package relevance

import (
	"context"
	"fmt"
	"github.com/kgctx/kgctx/compose/service"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/internal/datasets"
	"github.com/kgctx/kgctx/policy"
)

// Families are the dev-set families Run runs by default, in run order.
var Families = []string{"metaqa", "fb15k", "codeloc", "locomo"}

// ExtraFamilies need more than the datasets folder: "codeindex" needs the
// codeloc repositories' sources (Config.CodeSrc), "codelangs" the CodeSets
// repositories' and "codego" the GoSets repositories' (codelangs.go). A run without Config.Sets runs codeindex
// after Families when Config.CodeSrc is set; otherwise each runs only when
// asked by name.
var ExtraFamilies = []string{"codeindex", "codelangs", "codego"}

// DefaultQuestions is the CLI's sample size per set and hop.
const DefaultQuestions = 500

// Budgets.
var (
	// GraphBudgets are the graph-block budgets every graph set is asked at.
	GraphBudgets = []int{500, 1500}
	// sessionWork maps the session budgets asked to their work types (the
	// default budgets of DESIGN.md).
	sessionWork = map[int]string{750: compose.WorkBugFix, 400: compose.WorkFeature}
)

// Config is one run.
type Config struct {
	// Datasets is the shared datasets folder ("" = internal/datasets.Find).
	Datasets string
	// Sets selects families (nil = all of Families).
	Sets []string
	// Questions is the sample per set and hop; 0 takes every question.
	Questions int
	// Seed drives sampling and question wording (0 means 1).
	Seed uint64
	// Progress, when set, receives a line per phase.
	Progress io.Writer
	// Misses, when set, receives every kgctx block that scores below 1 on
	// a recall or hit metric of its set (not precision): the question,
	// its figures, what was expected and the block (what "the misses look
	// like").
	Misses io.Writer
	Logger *slog.Logger
	// CodeSrc is the folder of the codeloc repositories' git repositories
	// (CodeSrc/cobra, CodeSrc/chi, ...), for the codeindex family.
	CodeSrc string
}

func (c *Config) say(format string, a ...any) {
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, format+"\n", a...)
	}
}

// Run imports each selected family into its own in-memory app and scores
// kgctx's blocks and the baselines on every question of its sets.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	if cfg.Questions < 0 {
		return nil, fmt.Errorf("%w: questions %d is negative", ErrInvalidConfig, cfg.Questions)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	sel := map[string]bool{}
	for _, s := range cfg.Sets {
		if !slices.Contains(Families, s) && !slices.Contains(ExtraFamilies, s) {
			return nil, fmt.Errorf("%w: %q (want some of %v)", ErrUnknownSet, s, append(slices.Clone(Families), ExtraFamilies...))
		}
		sel[s] = true
	}
	if len(sel) == 0 {
		for _, f := range Families {
			sel[f] = true
		}
		if cfg.CodeSrc != "" {
			sel["codeindex"] = true
			cfg.say("code sources given (%s): the codeindex set runs too", cfg.CodeSrc)
		}
	}
	dir := cfg.Datasets
	if dir == "" {
		var err error
		if dir, err = datasets.Find(""); err != nil {
			return nil, err
		}
	}
	rep := &Report{Date: time.Now().UTC().Format("2006-01-02"), Machine: machine(), Questions: cfg.Questions, Seed: cfg.Seed}
	start := time.Now()
	runs := map[string]func(context.Context, *Config, string) ([]SetResult, error){
		"metaqa": runMetaQA, "fb15k": runFB15k, "codeloc": runCodeloc, "locomo": runLoCoMo, "codeindex": runCodeIndex, "codelangs": runCodeLangs, "codego": runCodeGo,
	}
	for _, f := range append(slices.Clone(Families), ExtraFamilies...) {
		if !sel[f] {
			continue
		}
		t := time.Now()
		sets, err := runs[f](ctx, &cfg, dir)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		cfg.say("%s done in %.1f s", f, time.Since(t).Seconds())
		rep.Sets = append(rep.Sets, sets...)
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

func machine() string {
	return fmt.Sprintf("%d cores, %s/%s, %s", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
}

// org is the org every set's projects live in (each family has its own
// in-memory app, so they never meet).
const org = "relevance"

// env is one family's app, its agent identity and the baselines' copies
// of its projects.
type env struct {
	app   *service.App
	id    policy.Identity
	bases map[engine.Tenant]*baselines
	names map[engine.Tenant]map[string]string // node id -> name
	seq   int                                 // session ids
	// explain asks kgctx for its score parts (for the misses file).
	explain bool
}

func openEnv(ctx context.Context, cfg *Config) (*env, error) {
	app, err := service.Open(ctx, service.Config{InMemory: true, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	return &env{app: app, id: policy.Identity{AgentID: "relevance-agent", OrgID: org, Role: policy.RoleAgent},
		bases: map[engine.Tenant]*baselines{}, names: map[engine.Tenant]map[string]string{}, explain: cfg.Misses != nil}, nil
}

func (e *env) close() { e.app.Close() }

// load imports ts into project p through the engine's import (batches of
// 50,000, indexes synced at the end), then builds the baselines' copy
// from the store's export, so both sides see the same graph.
func (e *env) load(ctx context.Context, p string, ts []engine.TripletInput) (engine.Tenant, error) {
	t := engine.Tenant{Org: org, Project: p}
	const batch = 50_000
	buf := make([]engine.TripletInput, 0, batch)
	for i := 0; i < len(ts); i += batch {
		buf = append(buf[:0], ts[i:min(i+batch, len(ts))]...) // Import trims in place
		if _, err := e.app.Store.Import(ctx, t, buf, engine.ImportOptions{NoWait: true}); err != nil {
			return t, fmt.Errorf("import %s: %w", p, err)
		}
	}
	if err := e.app.Store.Sync(ctx); err != nil {
		return t, err
	}
	var exp []engine.TripletInput
	if err := e.app.Store.ExportTriplets(t, func(in *engine.TripletInput) error {
		exp = append(exp, engine.TripletInput{Source: in.Source, Relationship: in.Relationship, Target: in.Target,
			SourceDescription: in.SourceDescription, TargetDescription: in.TargetDescription})
		return nil
	}); err != nil {
		return t, err
	}
	e.bases[t] = newBaselines(newGraph(exp))
	names := map[string]string{}
	err := e.app.Store.View(func(v *engine.View) error {
		if b := v.ScopeNodes(t); b != nil {
			it := b.Iterator()
			for it.HasNext() {
				n := it.Next()
				names[v.NodeID(n)] = v.NodeName(n)
			}
		}
		return nil
	})
	e.names[t] = names
	return t, err
}

// system is one row source: kgctx's graph or session block, or a
// baseline. run composes q's blocks at every budget of the system and
// times each.
type system struct {
	name, kind string // kind: "graph" or "session"
	budgets    []int
	run        func(ctx context.Context, q *question) ([]blockOut, []time.Duration, error)
}

func (e *env) kgctxGraph(depth int, budgets []int) system {
	name := "kgctx graph"
	if depth != compose.DefaultDepth {
		name = fmt.Sprintf("kgctx graph depth %d", depth)
	}
	return system{name: name, kind: "graph", budgets: budgets, run: func(ctx context.Context, q *question) ([]blockOut, []time.Duration, error) {
		outs, lats := make([]blockOut, len(budgets)), make([]time.Duration, len(budgets))
		for i, b := range budgets {
			t := time.Now()
			gb, err := e.app.Composer.GraphBlock(ctx, compose.GraphRequest{Identity: e.id, Scope: q.Scope, QueryText: q.Text,
				BudgetTokens: b, TopK: compose.DefaultTopK, Depth: depth, Explain: e.explain})
			lats[i] = time.Since(t)
			if err != nil {
				return nil, nil, err
			}
			o := blockOut{Text: gb.Block, Tokens: gb.ActualTokens, Map: parseMap(gb.Block)}
			for _, tr := range gb.Triplets {
				o.Lines = append(o.Lines, line{tr.SourceEntity, tr.Relationship, tr.TargetEntity})
				if x := tr.Explain; x != nil {
					o.Explain = append(o.Explain, fmt.Sprintf("%.3f seed %q %.2f (name %.2f fused %.2f verbatim %v) hop %d match %.2f hub %.2f code %.2f w %.2f lent %v path %v",
						x.Importance, x.Seed, x.SeedScore, x.SeedName, x.SeedFused, x.SeedVerbatim, x.Hop, x.QueryMatch, x.Hub, x.Code, x.Weight, x.Lent, x.Path))
				}
			}
			o.Inconsistent = gb.ActualTokens != compose.Tokens(gb.Block) || strings.Count(gb.Block, "\n- ") != len(gb.Triplets)
			outs[i] = o
		}
		return outs, lats, nil
	}}
}

// kgctxSession asks the session block at each budget through the work
// type that has it (sessionWorkType); the graph part's lines come from the
// block's edge keys.
func (e *env) kgctxSession(budgets []int) system {
	return system{name: "kgctx session", kind: "session", budgets: budgets, run: func(ctx context.Context, q *question) ([]blockOut, []time.Duration, error) {
		outs, lats := make([]blockOut, len(budgets)), make([]time.Duration, len(budgets))
		works := make([]string, len(budgets))
		for i, b := range budgets {
			var err error
			if works[i], err = e.sessionWorkType(b); err != nil {
				return nil, nil, err
			}
		}
		for i, b := range budgets {
			e.seq++
			t := time.Now()
			sb, err := e.app.Composer.SessionBlock(ctx, compose.SessionRequest{SessionID: fmt.Sprintf("rel-%d", e.seq),
				WorkType: works[i], Scope: q.Scope, Identity: e.id, QueryText: q.Text, Graph: true})
			lats[i] = time.Since(t)
			if err != nil {
				return nil, nil, err
			}
			if sb.BudgetTokens != b {
				return nil, nil, fmt.Errorf("%w: work type %s has budget %d, want %d", ErrInvalidConfig, works[i], sb.BudgetTokens, b)
			}
			o := blockOut{Text: sb.Block, Tokens: sb.ActualTokens, ObsIDs: sb.ObservationIDs, Map: parseMap(sb.Block)}
			names := e.names[q.Scope]
			for _, k := range sb.GraphEdgeKeys {
				o.Lines = append(o.Lines, line{names[k.SourceID], k.RelationshipName, names[k.TargetID]})
			}
			o.Inconsistent = sb.ActualTokens != compose.Tokens(sb.Block) ||
				strings.Count(sb.Block, "\n- ") != len(sb.GraphEdgeKeys)+len(sb.ObservationIDs)
			outs[i] = o
		}
		return outs, lats, nil
	}}
}

// sessionWorkType is the work type whose session budget is b: the default
// one that has it (bug_fix 750, feature 400), else "budget_<b>", made one
// by an org override of the env's budget settings.
func (e *env) sessionWorkType(b int) (string, error) {
	if w, ok := sessionWork[b]; ok {
		return w, nil
	}
	w := fmt.Sprintf("budget_%d", b)
	c, err := e.app.Composer.Settings.Budgets()
	if err != nil {
		return "", err
	}
	if c.OrgOverrides[org][w] == b {
		return w, nil
	}
	if c.OrgOverrides == nil {
		c.OrgOverrides = map[string]map[string]int{}
	}
	if c.OrgOverrides[org] == nil {
		c.OrgOverrides[org] = map[string]int{}
	}
	c.OrgOverrides[org][w] = b
	return w, e.app.Composer.Settings.SetBudgets(c)
}

// graphBaseline ranks once per question and renders each budget; a
// block's latency is the ranking's plus its own rendering.
func (e *env) graphBaseline(name string, budgets []int) system {
	return system{name: name, kind: "graph", budgets: budgets, run: func(_ context.Context, q *question) ([]blockOut, []time.Duration, error) {
		b := e.bases[q.Scope]
		t := time.Now()
		cands := b.rank(name, q.Text)
		rank := time.Since(t)
		outs, lats := make([]blockOut, len(budgets)), make([]time.Duration, len(budgets))
		buf := make([]scored, len(cands))
		for i, bud := range budgets {
			t := time.Now()
			copy(buf, cands) // renderGraph reorders
			outs[i] = renderGraph(b.g, buf, bud)
			lats[i] = rank + time.Since(t)
		}
		return outs, lats, nil
	}}
}

// set is one dev set: its questions, the metrics and how to score a block.
type set struct {
	name, family, data string
	metrics            []string
	score              func(q *question, b *blockOut) []float64
	qs                 []question
	notes              []string
}

// warmup is how many questions run once, unrecorded, before a set is
// measured (first-call allocations and caches), at most a tenth of the
// set.
const warmup = 10

// evaluate asks every system every question of s and returns the rows:
// for each budget (ascending), one per system, in systems' order.
func evaluate(ctx context.Context, cfg *Config, s *set, systems []system) (SetResult, error) {
	start := time.Now()
	accs := make([][]*acc, len(systems))
	for i, sys := range systems {
		accs[i] = make([]*acc, len(sys.budgets))
		for j := range sys.budgets {
			accs[i][j] = newAcc(len(s.metrics))
		}
	}
	for i := range min(warmup, len(s.qs)/10) {
		for _, sys := range systems {
			if _, _, err := sys.run(ctx, &s.qs[i]); err != nil {
				return SetResult{}, err
			}
		}
	}
	for qi := range s.qs {
		if err := ctx.Err(); err != nil {
			return SetResult{}, err
		}
		q := &s.qs[qi]
		for i, sys := range systems {
			outs, lats, err := sys.run(ctx, q)
			if err != nil {
				return SetResult{}, fmt.Errorf("%s, %s, question %s: %w", s.name, sys.name, q.ID, err)
			}
			for j, b := range sys.budgets {
				sc := s.score(q, &outs[j])
				accs[i][j].add(sc, &outs[j], b, lats[j])
				if cfg.Misses != nil && strings.HasPrefix(sys.name, "kgctx") && s.missed(sc) {
					writeMiss(cfg.Misses, s.name, sys.name, b, q, s.metrics, sc, &outs[j])
				}
			}
		}
		if (qi+1)%100 == 0 {
			cfg.say("  %s: %d/%d questions", s.name, qi+1, len(s.qs))
		}
	}
	res := SetResult{Name: s.name, Family: s.family, Data: s.data, Metrics: s.metrics, Notes: s.notes}
	var budgets []int
	for _, sys := range systems {
		for _, b := range sys.budgets {
			if !slices.Contains(budgets, b) {
				budgets = append(budgets, b)
			}
		}
	}
	slices.Sort(budgets)
	for _, b := range budgets {
		for i, sys := range systems {
			j := slices.Index(sys.budgets, b)
			if j < 0 {
				continue
			}
			a := accs[i][j]
			r := Row{System: sys.name, Block: sys.kind, Budget: b, N: a.n, Metrics: map[string]float64{},
				MeanTokens: a.tokens / float64(max(a.n, 1)), P50Ms: msOf(percentile(a.lat, 50)), P99Ms: msOf(percentile(a.lat, 99)),
				Empty: a.empty, OverBudget: a.over, Duplicates: a.dups, Inconsistent: a.inconsistent}
			for k, m := range s.metrics {
				if a.counts[k] > 0 {
					r.Metrics[m] = a.sums[k] / float64(a.counts[k])
				}
			}
			res.Rows = append(res.Rows, r)
		}
	}
	res.Seconds = time.Since(start).Seconds()
	cfg.say("  %s: %d questions in %.1f s", s.name, len(s.qs), res.Seconds)
	return res, nil
}

// pick returns the indices of a seeded sample of n of count items (all
// when n is 0 or at least count), in ascending order.
func pick(count, n int, seed, stream uint64) []int {
	if n == 0 || n >= count {
		out := make([]int, count)
		for i := range out {
			out[i] = i
		}
		return out
	}
	out := rand.New(rand.NewPCG(seed, stream)).Perm(count)[:n]
	slices.Sort(out)
	return out
}

func graphSystems(e *env, budgets []int, depths ...int) []system {
	var out []system
	for _, d := range depths {
		out = append(out, e.kgctxGraph(d, budgets))
	}
	for _, b := range graphBaselines {
		out = append(out, e.graphBaseline(b, budgets))
	}
	return out
}

func nanIf(ok bool, v float64) float64 {
	if ok {
		return v
	}
	return math.NaN()
}

func runMetaQA(ctx context.Context, cfg *Config, dir string) ([]SetResult, error) {
	cfg.say("metaqa: loading")
	kb, err := loadMetaQAKB(dir)
	if err != nil {
		return nil, err
	}
	e, err := openEnv(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer e.close()
	t0 := time.Now()
	t, err := e.load(ctx, "metaqa", kb)
	if err != nil {
		return nil, err
	}
	cfg.say("metaqa: %d triplets imported and copied in %.1f s", len(kb), time.Since(t0).Seconds())
	adj := newAdjacency(kb)
	var out []SetResult
	for hop := 1; hop <= 3; hop++ {
		all, err := loadMetaQAQuestions(dir, hop)
		if err != nil {
			return nil, err
		}
		idx := pick(len(all), cfg.Questions, cfg.Seed, uint64(100+hop))
		s := &set{name: fmt.Sprintf("metaqa-%dhop", hop), family: "metaqa", metrics: []string{"answer hit", "answer recall", "precision"},
			data: fmt.Sprintf("MetaQA KB (%d triplets), %d of %d %d-hop dev questions", len(kb), len(idx), len(all), hop),
			score: func(q *question, b *blockOut) []float64 {
				h, r := answerScores(q, b)
				return []float64{h, r, answerPrecision(q, b)}
			}}
		reach := 0
		for _, i := range idx {
			s.qs = append(s.qs, question{ID: fmt.Sprintf("%d-hop/%d", hop, i+1), Text: all[i].Text, Scope: t, Answers: all[i].Answers})
			if adj.reaches(all[i].Topic, all[i].Answers, hop) {
				reach++
			}
		}
		s.notes = append(s.notes, fmt.Sprintf("answerable (an answer within %d hops of the topic entity in the KB): %d of %d, %.3f: the ceiling of answer hit for a block that holds only paths from the topic",
			hop, reach, len(idx), float64(reach)/float64(max(len(idx), 1))))
		depths := []int{compose.DefaultDepth}
		if hop == 3 {
			depths = append(depths, 3)
		}
		r, err := evaluate(ctx, cfg, s, graphSystems(e, GraphBudgets, depths...))
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func runFB15k(ctx context.Context, cfg *Config, dir string) ([]SetResult, error) {
	cfg.say("fb15k: loading")
	f, err := loadFB15kFacts(dir)
	if err != nil {
		return nil, err
	}
	e, err := openEnv(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer e.close()
	t0 := time.Now()
	t, err := e.load(ctx, "fb15k", f.Triplets)
	if err != nil {
		return nil, err
	}
	cfg.say("fb15k: %d triplets imported and copied in %.1f s", len(f.Triplets), time.Since(t0).Seconds())
	gens := []struct {
		name string
		hop  int
		qs   []fbQuestion
	}{{"fb15k-1hop", 1, f.oneHop(cfg.Questions, cfg.Seed)}, {"fb15k-2hop", 2, f.twoHop(cfg.Questions, cfg.Seed)},
		{"fb15k-fresh-1hop", 1, f.freshOneHop(cfg.Questions, cfg.Seed+1)}}
	var out []SetResult
	for _, g := range gens {
		gold := "triplet hit"
		if g.hop == 2 {
			gold = "path hit"
		}
		for _, para := range []bool{false, true} {
			s := &set{name: g.name, family: "fb15k", metrics: []string{gold, "answer hit", "precision"},
				data: fmt.Sprintf("FB15k-237 train (%d triplets), %d generated %d-hop questions", len(f.Triplets), len(g.qs), g.hop),
				score: func(q *question, b *blockOut) []float64 {
					h, _ := answerScores(q, b)
					return []float64{tripletsHit(q, b), h, triplePrecision(q, b)}
				}}
			if para {
				s.name += "-para"
				s.data += ", paraphrased"
			}
			for i, fq := range g.qs {
				text := fq.Text
				if para {
					text = fq.Para
				}
				s.qs = append(s.qs, question{ID: fmt.Sprintf("%s/%d", s.name, i+1), Text: text, Scope: t, Answers: []string{fq.Answer}, Gold: fq.Gold})
			}
			if len(g.qs) > 0 {
				s.notes = append(s.notes, fmt.Sprintf("e.g. %q", s.qs[0].Text))
			}
			// One-hop questions are asked at depth 1 too: a second hop
			// must not cost them their answer.
			depths := []int{compose.DefaultDepth}
			if g.hop == 1 {
				depths = append(depths, 1)
			}
			r, err := evaluate(ctx, cfg, s, graphSystems(e, GraphBudgets, depths...))
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// codeSessionBudget is the bug_fix session budget codeloc is also asked
// at: the session block's graph part is what a coding agent starts with.
const codeSessionBudget = 750

func runCodeloc(ctx context.Context, cfg *Config, dir string) ([]SetResult, error) {
	cfg.say("codeloc: loading")
	repos, err := loadCodeloc(dir)
	if err != nil {
		return nil, err
	}
	e, err := openEnv(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer e.close()
	var all []question
	var desc []string
	triplets := 0
	for _, r := range repos {
		t, err := e.load(ctx, r.Name, r.triplets())
		if err != nil {
			return nil, err
		}
		triplets += len(r.Edges)
		desc = append(desc, fmt.Sprintf("%s %d", r.Name, len(r.Queries)))
		members := r.fileMembers()
		for _, cq := range r.Queries {
			q := question{ID: cq.Q, Text: strings.TrimSpace(cq.S + " " + cq.B), Scope: t}
			for _, g := range cq.G {
				q.Funcs = append(q.Funcs, r.Nodes[g].N)
			}
			for _, g := range cq.GF {
				q.Files = append(q.Files, goldFile{Key: engine.NormalizeName(r.Nodes[g].N), Members: members[g]})
			}
			all = append(all, q)
		}
	}
	idx := pick(len(all), cfg.Questions, cfg.Seed, 300)
	s := &set{name: "codeloc", family: "codeloc", metrics: []string{"function recall", "file recall", "precision"},
		data: fmt.Sprintf("codeloc: %d repositories (%d triplets), %d of %d commits (%s)", len(repos), triplets, len(idx), len(all), strings.Join(desc, ", ")),
		score: func(q *question, b *blockOut) []float64 {
			fn, file := codeScores(q, b)
			return []float64{fn, file, codePrecision(q, b)}
		}}
	for _, i := range idx {
		s.qs = append(s.qs, all[i])
	}
	systems := []system{e.kgctxGraph(compose.DefaultDepth, GraphBudgets), e.kgctxSession([]int{codeSessionBudget})}
	withSession := append(slices.Clone(GraphBudgets), codeSessionBudget)
	slices.Sort(withSession)
	for _, b := range graphBaselines {
		systems = append(systems, e.graphBaseline(b, withSession))
	}
	r, err := evaluate(ctx, cfg, s, systems)
	if err != nil {
		return nil, err
	}
	return []SetResult{r}, nil
}

// LoCoMo categories, in the order of the metrics after evidence recall.
var locomoCategories = []string{"c1 multi-hop", "c2 temporal", "c3 open-domain", "c4 single-hop", "c5 adversarial"}

func runLoCoMo(ctx context.Context, cfg *Config, dir string) ([]SetResult, error) {
	cfg.say("locomo: loading")
	convs, err := loadLoCoMo(dir)
	if err != nil {
		return nil, err
	}
	e, err := openEnv(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer e.close()
	var all []question
	byScope := map[engine.Tenant]*obsIndex{}
	turns, noEvidence, unknown := 0, 0, 0
	for _, c := range convs {
		t := engine.Tenant{Org: org, Project: c.ID}
		if err := engine.ValidateID(c.ID); err != nil {
			return nil, fmt.Errorf("%w: conversation id: %v", ErrMalformed, err)
		}
		var in []engine.ObservationInput
		var turnIDs, contents []string
		for _, s := range c.Sessions {
			for _, tu := range s.Turns {
				text := turnText(s.DateTime, tu.Speaker, tu.Text, tu.Caption)
				// A conversation's turns share their session, as an
				// agent platform records them.
				in = append(in, engine.ObservationInput{Content: text, Metadata: engine.ObservationMeta{SessionID: fmt.Sprintf("%s-s%d", c.ID, s.N)}})
				turnIDs = append(turnIDs, tu.ID)
				contents = append(contents, text)
			}
		}
		ids, err := e.app.Store.AddObservations(ctx, t, in, engine.ImportOptions{})
		if err != nil {
			return nil, fmt.Errorf("observations of %s: %w", c.ID, err)
		}
		turns += len(ids)
		obsOf := map[string]string{}
		textOf := map[string]string{}
		for i, id := range ids {
			obsOf[turnIDs[i]] = id
			textOf[id] = contents[i]
		}
		ix := newObsIndex(ids, contents)
		byScope[t] = ix
		for i, qa := range c.QA {
			q := question{ID: fmt.Sprintf("%s/%d", c.ID, i+1), Text: qa.Question, Scope: t, Category: qa.Category}
			for _, tid := range evidenceIDs(qa.Evidence) {
				if id, ok := obsOf[tid]; ok {
					q.Evidence = append(q.Evidence, id)
					q.EvidenceText = append(q.EvidenceText, textOf[id])
				} else {
					unknown++
				}
			}
			if len(q.Evidence) == 0 {
				noEvidence++
				continue
			}
			all = append(all, q)
		}
	}
	if err := e.app.Store.Sync(ctx); err != nil {
		return nil, err
	}
	idx := pick(len(all), cfg.Questions, cfg.Seed, 400)
	metrics := append([]string{"evidence recall"}, locomoCategories...)
	metrics = append(metrics, "precision")
	s := &set{name: "locomo", family: "locomo", metrics: metrics,
		data: fmt.Sprintf("LoCoMo: %d conversations (%d turns as observations), %d of %d QA items with evidence", len(convs), turns, len(idx), len(all)),
		score: func(q *question, b *blockOut) []float64 {
			r := evidenceRecall(q, b)
			out := []float64{r}
			for c := range locomoCategories {
				out = append(out, nanIf(q.Category == c+1, r))
			}
			return append(out, evidencePrecision(q, b))
		}}
	if noEvidence > 0 || unknown > 0 {
		s.notes = append(s.notes, fmt.Sprintf("%d QA items without evidence skipped; %d evidence ids name no turn and were dropped", noEvidence, unknown))
	}
	for _, i := range idx {
		s.qs = append(s.qs, all[i])
	}
	budgets := []int{400, 750}
	bm25 := system{name: BaseBM25Obs, kind: "session", budgets: budgets, run: func(_ context.Context, q *question) ([]blockOut, []time.Duration, error) {
		ix := byScope[q.Scope]
		t := time.Now()
		ranked := ix.rank(q.Text)
		rank := time.Since(t)
		outs, lats := make([]blockOut, len(budgets)), make([]time.Duration, len(budgets))
		for i, b := range budgets {
			t := time.Now()
			outs[i] = ix.render(ranked, b)
			lats[i] = rank + time.Since(t)
		}
		return outs, lats, nil
	}}
	r, err := evaluate(ctx, cfg, s, []system{e.kgctxSession(budgets), bm25})
	if err != nil {
		return nil, err
	}
	return []SetResult{r}, nil
}

// missed reports whether a block's scores fall short of what its question
// needed: a recall or hit metric (not precision) below 1.
func (s *set) missed(sc []float64) bool {
	for i, x := range sc {
		if i < len(s.metrics) && s.metrics[i] != "precision" && x < 1 {
			return true
		}
	}
	return false
}

// writeMiss writes one block that missed what its question needed.
func writeMiss(w io.Writer, set, system string, budget int, q *question, metrics []string, sc []float64, b *blockOut) {
	fmt.Fprintf(w, "=== %s | %s | %d | %s |", set, system, budget, q.ID)
	for i, x := range sc {
		if i < len(metrics) && metrics[i] != "precision" {
			fmt.Fprintf(w, " %s %.3f", metrics[i], x)
		}
	}
	fmt.Fprintf(w, "\nQ: %s\n", q.Text)
	if len(q.Answers) > 0 {
		fmt.Fprintf(w, "answers: %s\n", strings.Join(q.Answers[:min(len(q.Answers), 10)], " | "))
	}
	for _, g := range q.Gold {
		fmt.Fprintf(w, "gold: %v\n", g)
	}
	if len(q.Funcs) > 0 {
		fmt.Fprintf(w, "functions: %s\n", strings.Join(q.Funcs, " | "))
	}
	if len(q.Files) > 0 {
		files := make([]string, len(q.Files))
		for i, f := range q.Files {
			files[i] = f.Key
		}
		fmt.Fprintf(w, "files: %s\n", strings.Join(files, " | "))
	}
	if len(q.Evidence) > 0 {
		fmt.Fprintf(w, "evidence: %s\n", strings.Join(q.Evidence, " | "))
		for i, t := range q.EvidenceText {
			fmt.Fprintf(w, "  %s: %s\n", q.Evidence[i], t)
		}
	}
	fmt.Fprintf(w, "%s\n", b.Text)
	for i, x := range b.Explain {
		if i < len(b.Lines) {
			fmt.Fprintf(w, "  %s → %s → %s: %s\n", b.Lines[i].Src, b.Lines[i].Rel, b.Lines[i].Dst, x)
		}
	}
	fmt.Fprintln(w)
}
