package workload

import (
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/kgctx/kgctx/engine"
)

// SyntheticOptions sizes a synthetic code-architecture graph.
type SyntheticOptions struct {
	// Nodes is the number of nodes (at least 20). Every node takes part in
	// at least one edge when Edges >= Nodes.
	Nodes int
	// Edges is the exact number of distinct triplets Each streams.
	Edges int
	// Seed selects the edges (names depend only on the node index);
	// 0 means 1.
	Seed int64
}

// Synthetic generates a code-architecture graph: services contain
// packages, packages contain files, files contain functions and
// interfaces; services and packages depend on each other, functions call
// each other and implement interfaces, errors are caused by functions.
//
// Node ids are laid out by kind (services first, functions last) with
// fixed proportions: 0.5% services, 5% packages, 20% files, 3% interfaces,
// 3% errors, the rest functions. Every package, file, interface and
// function has exactly one incoming "contains" edge and every error at
// least one "caused_by" edge, so all Nodes nodes are used once Edges >=
// Nodes. The remaining budget is split between depends_on (service 3%,
// package 12%), implements (service 1%, function 7%), extra caused_by (5%)
// and calls (the rest).
//
// Degrees follow power laws on both sides: each source's out-degree is
// λ·w rounded, with w Pareto(α=2) capped at 64, and targets are drawn
// from a Zipf-like law (P(rank k) ∝ (k+v)^-1.25, v growing with √pool)
// over a per-class permutation of the target kind. λ is solved per class
// so the class emits exactly its budget. Measured (seed 1): 10k nodes /
// 50k edges gives median degree 5, p99 81, max 1,752; 1M / 5M gives
// median 5, p99 55, p99.9 520, max 22,612.
//
// Distinctness needs no global set: contains edges form a tree, different
// classes differ in relationship or source kind, and within a class each
// source draws its targets without replacement (a set of at most its own
// out-degree). Names are distinct under engine.NormalizeName (see
// vocab.go), so triplets stay distinct after kgctx's normalisation too.
type Synthetic struct {
	Opts SyntheticOptions

	once sync.Once
	p    *plan
	err  error
}

// NewSynthetic returns a generator for o. Invalid options are reported by
// Each (and Layout); the edge plan is computed on first use.
func NewSynthetic(o SyntheticOptions) *Synthetic {
	if o.Seed == 0 {
		o.Seed = 1
	}
	return &Synthetic{Opts: o}
}

// Layout is the number of nodes of each kind; ids are assigned in this
// order, so node id Services+3 is the fourth package.
type Layout struct {
	Services, Packages, Files, Interfaces, Errors, Functions int
}

// Layout reports how Nodes is split between kinds.
func (s *Synthetic) Layout() (Layout, error) {
	p, err := s.plan()
	if err != nil {
		return Layout{}, err
	}
	c := p.count
	return Layout{
		Services: c[KindService], Packages: c[KindPackage], Files: c[KindFile],
		Interfaces: c[KindInterface], Errors: c[KindError], Functions: c[KindFunction],
	}, nil
}

// Node returns the name, type and description of node id (0 <= id <
// Nodes). Names depend only on id and Nodes, not on the seed.
func (s *Synthetic) Node(id int) (name string, nodeType Kind, description string, err error) {
	p, err := s.plan()
	if err != nil {
		return "", 0, "", err
	}
	if id < 0 || id >= p.n {
		return "", 0, "", fmt.Errorf("%w: node id %d out of range [0,%d)", ErrInvalidOptions, id, p.n)
	}
	k, local := p.kindOf(id)
	name, desc := p.info(k, local)
	return name, k, desc, nil
}

// Tuning constants of the degree model; see the Synthetic doc.
const (
	outWeightMax = 64.0
	minNodes     = 20
)

// edgeClass is one (relationship, source kind, target kind) family.
type edgeClass struct {
	rel      string
	src, dst Kind
	frac     float64 // share of the budget left after contains and minimums
	minDeg   int
	salt     uint64
	zipfV    float64 // minimum offset v of the target law (k+v)^-1.25

	need   int
	effMin int // minDeg reserved for later sources; 0 when need < minDeg·sources
	cap    int // per-source maximum: distinct targets available
	lambda float64

	// Target law: rank -> pool index by (rank*permMul+permAdd) mod pool.
	pool             int
	zA, zAB          float64
	permMul, permAdd uint64
}

type plan struct {
	n            int
	seed         uint64
	start        [numKinds + 1]int
	count        [numKinds]int
	containsNeed int
	classes      []edgeClass
	bySrc        [numKinds][]int
}

func (s *Synthetic) plan() (*plan, error) {
	s.once.Do(func() { s.p, s.err = newPlan(s.Opts) })
	return s.p, s.err
}

func newPlan(o SyntheticOptions) (*plan, error) {
	if o.Nodes < minNodes {
		return nil, fmt.Errorf("%w: Nodes=%d, need at least %d", ErrInvalidOptions, o.Nodes, minNodes)
	}
	if o.Nodes > math.MaxInt32 {
		return nil, fmt.Errorf("%w: Nodes=%d exceeds %d", ErrInvalidOptions, o.Nodes, math.MaxInt32)
	}
	if o.Edges < 0 {
		return nil, fmt.Errorf("%w: Edges=%d", ErrInvalidOptions, o.Edges)
	}
	seed := o.Seed
	if seed == 0 {
		seed = 1
	}
	p := &plan{n: o.Nodes, seed: uint64(seed)}
	n := o.Nodes
	c := &p.count
	c[KindService] = max(2, n*5/1000)
	c[KindPackage] = max(c[KindService], n*5/100)
	c[KindFile] = max(c[KindPackage], n*20/100)
	c[KindInterface] = max(1, n*3/100)
	c[KindError] = max(1, n*3/100)
	c[KindFunction] = n - c[KindService] - c[KindPackage] - c[KindFile] - c[KindInterface] - c[KindError]
	if c[KindFunction] < 2 {
		return nil, fmt.Errorf("%w: Nodes=%d leaves no room for functions", ErrInvalidOptions, n)
	}
	for k := Kind(0); k < numKinds; k++ {
		p.start[k+1] = p.start[k] + c[k]
	}

	p.classes = []edgeClass{
		{rel: "depends_on", src: KindService, dst: KindService, frac: 0.03, zipfV: 3},
		{rel: "implements", src: KindService, dst: KindInterface, frac: 0.01, zipfV: 3},
		{rel: "depends_on", src: KindPackage, dst: KindPackage, frac: 0.12, zipfV: 3},
		{rel: "caused_by", src: KindError, dst: KindFunction, frac: 0.05, minDeg: 1, zipfV: 3},
		{rel: "implements", src: KindFunction, dst: KindInterface, frac: 0.07, zipfV: 3},
		{rel: "calls", src: KindFunction, dst: KindFunction, frac: 0, zipfV: 2}, // remainder
	}
	for i := range p.classes {
		cl := &p.classes[i]
		cl.salt = mix64(p.seed, uint64(i)+0x5eed)
		cl.pool = c[cl.dst]
		cl.cap = cl.pool
		if cl.src == cl.dst {
			cl.cap-- // no self-loops
		}
		// The offset grows with √pool: with a fixed offset the top target's
		// share of a class is nearly scale-free, so a 1M-node graph would
		// get a 200k-edge hub. This keeps hubs in the thousands at 10k
		// nodes and the tens of thousands at 1M.
		cl.zipfV = max(cl.zipfV, math.Sqrt(float64(cl.pool))/25)
		a := 1 / math.Sqrt(math.Sqrt(cl.zipfV))
		b := 1 / math.Sqrt(math.Sqrt(float64(cl.pool)+cl.zipfV))
		cl.zA, cl.zAB = a, a-b
		cl.permMul = coprimeNear(uint64(cl.pool), mix64(cl.salt, 1))
		cl.permAdd = mix64(cl.salt, 2) % uint64(cl.pool)
		p.bySrc[cl.src] = append(p.bySrc[cl.src], i)
	}
	if err := p.allocate(o.Edges); err != nil {
		return nil, err
	}
	for i := range p.classes {
		p.solveLambda(&p.classes[i])
	}
	return p, nil
}

// allocate splits the edge budget: contains first (it is what makes every
// node appear), then each class's minimum, then the shares; a class whose
// share exceeds its capacity passes the excess to the next class with room.
func (p *plan) allocate(edges int) error {
	contains := p.n - p.count[KindService] - p.count[KindError]
	p.containsNeed = min(edges, contains)
	rest := edges - p.containsNeed
	for i := range p.classes {
		cl := &p.classes[i]
		m := min(rest, cl.minDeg*p.count[cl.src])
		cl.need = m
		rest -= m
	}
	extra := rest
	calls := -1
	for i := range p.classes {
		cl := &p.classes[i]
		if cl.frac == 0 {
			calls = i
			continue
		}
		share := int(float64(extra) * cl.frac)
		cl.need += share
		rest -= share
	}
	p.classes[calls].need += rest
	overflow := 0
	for i := range p.classes {
		cl := &p.classes[i]
		if capTotal := cl.cap * p.count[cl.src]; cl.need > capTotal {
			overflow += cl.need - capTotal
			cl.need = capTotal
		}
	}
	for i := len(p.classes) - 1; i >= 0 && overflow > 0; i-- {
		cl := &p.classes[i]
		room := cl.cap*p.count[cl.src] - cl.need
		take := min(room, overflow)
		cl.need += take
		overflow -= take
	}
	if overflow > 0 {
		return fmt.Errorf("%w: Edges=%d over Nodes=%d exceeds capacity by %d", ErrTooManyEdges, edges, p.n, overflow)
	}
	for i := range p.classes {
		cl := &p.classes[i]
		if cl.need >= cl.minDeg*p.count[cl.src] {
			cl.effMin = cl.minDeg
		}
	}
	return nil
}

// degree is source j's planned out-degree in cl for a given λ. The
// arithmetic avoids expressions the compiler may fuse into FMA
// instructions (explicit float64 conversions), so plans are identical on
// every architecture.
func (cl *edgeClass) degree(seed uint64, j int, lambda float64) int {
	h := mix64(cl.salt, uint64(j))
	u1, u2 := unit(h), unit(mix64(h, seed))
	w := 1 / math.Sqrt(1-u1)
	if w > outWeightMax {
		w = outWeightMax
	}
	x := math.Floor(float64(lambda*w) + u2)
	d := cl.cap
	if x < float64(cl.cap) {
		d = int(x)
	}
	// minDeg, not effMin: when the budget cannot give every source its
	// minimum, Each's allowance hands it to the first sources instead.
	return max(d, cl.minDeg)
}

func (p *plan) total(cl *edgeClass, lambda float64) int {
	t := 0
	for j := range p.count[cl.src] {
		t += cl.degree(p.seed, j, lambda)
	}
	return t
}

// solveLambda finds a λ whose total out-degree reaches the class budget
// and overshoots it by at most 1/50,000 (Each trims the overshoot from the
// last sources: a distortion of a few dozen edges in millions). The total
// is nearly linear in λ, so steps alternate between interpolating towards
// the middle of the target window and bisecting (which bounds the worst
// case); a 1M-node plan then takes about a dozen passes per class.
func (p *plan) solveLambda(cl *edgeClass) {
	if cl.need <= cl.minDeg*p.count[cl.src] {
		// λ = 0 gives every source minDeg, already enough.
		cl.lambda = 0
		return
	}
	slack := cl.need / 50_000
	lo, hi := 0.0, 1.0
	tlo, thi := p.total(cl, lo), p.total(cl, hi)
	for thi < cl.need {
		lo, tlo = hi, thi
		hi *= 2
		thi = p.total(cl, hi)
	}
	for step := 0; thi-cl.need > slack; step++ {
		mid := lo + (hi-lo)/2
		if step%2 == 0 {
			target := float64(cl.need + slack/2)
			f := (target - float64(tlo)) / float64(thi-tlo)
			if im := lo + float64((hi-lo)*f); im > lo && im < hi {
				mid = im
			}
		}
		if mid <= lo || mid >= hi {
			break // float precision exhausted; hi is still valid
		}
		if tm := p.total(cl, mid); tm >= cl.need {
			hi, thi = mid, tm
		} else {
			lo, tlo = mid, tm
		}
	}
	cl.lambda = hi
}

func (p *plan) kindOf(id int) (Kind, int) {
	for k := Kind(0); k < numKinds; k++ {
		if id < p.start[k+1] {
			return k, id - p.start[k]
		}
	}
	panic("workload: node id out of range")
}

// parent returns the container of a node, following the modulo layout
// service <- package <- file <- {function, interface}.
func (p *plan) parent(k Kind, local int) (Kind, int, bool) {
	switch k {
	case KindPackage:
		return KindService, local % p.count[KindService], true
	case KindFile:
		return KindPackage, local % p.count[KindPackage], true
	case KindInterface, KindFunction:
		return KindFile, local % p.count[KindFile], true
	}
	return 0, 0, false
}

// serviceOfNode walks a package, file or function up to its service.
func (p *plan) serviceOfNode(k Kind, local int) int {
	for k != KindService {
		pk, pl, ok := p.parent(k, local)
		if !ok {
			return 0
		}
		k, local = pk, pl
	}
	return local
}

func (p *plan) packagePath(pk int) (path string, svc serviceParts, comp word) {
	s := pk % p.count[KindService]
	svc = serviceOf(s)
	cp, comp := componentPath(pk / p.count[KindService])
	return "pkg/" + svc.slug() + "/" + cp, svc, comp
}

// info builds a node's name and description from its kind and index.
func (p *plan) info(k Kind, local int) (name, desc string) {
	switch k {
	case KindService:
		sp := serviceOf(local)
		return sp.name(), sp.description(local)
	case KindPackage:
		path, svc, comp := p.packagePath(local)
		return path, "Package " + comp.name + " of " + svc.name() + ": " + comp.phrase + "."
	case KindFile:
		pk := local % p.count[KindPackage]
		path, svc, _ := p.packagePath(pk)
		fname, fw := fileWord(local / p.count[KindPackage])
		return path + "/" + fname, fw.phrase + " for the " + svc.words() + " service (" + path + ")."
	case KindInterface:
		ip := ifaceOf(local)
		return ip.name(), ip.description()
	case KindError:
		ep := errorOf(local)
		return ep.name(), ep.message()
	case KindFunction:
		fp := funcOf(local)
		svc := serviceOf(p.serviceOfNode(KindFunction, local))
		return fp.name(), fp.verb.third + " " + nounWords[fp.ni] + " " + objectWords[fp.oi] +
			" for the " + svc.words() + " service."
	}
	return "", ""
}

// nodeCache is a direct-mapped cache of node names and descriptions. Zipf
// targets repeat constantly, so a few thousand slots remove most of the
// string building (about 600 KiB) without making memory depend on the
// graph size.
const nodeCacheBits = 14

type nodeCache struct {
	ids  [1 << nodeCacheBits]int32
	name [1 << nodeCacheBits]string
	desc [1 << nodeCacheBits]string
}

func newNodeCache() *nodeCache {
	c := &nodeCache{}
	for i := range c.ids {
		c.ids[i] = -1
	}
	return c
}

func (c *nodeCache) get(p *plan, k Kind, local int) (string, string) {
	id := int32(p.start[k] + local)
	slot := uint32(id) * 2654435761 >> (32 - nodeCacheBits)
	if c.ids[slot] == id {
		return c.name[slot], c.desc[slot]
	}
	n, d := p.info(k, local)
	c.ids[slot], c.name[slot], c.desc[slot] = id, n, d
	return n, d
}

// Each streams exactly Opts.Edges distinct triplets, deterministically for
// the seed, calling fn for each. The *engine.TripletInput is reused for
// every call: fn must copy what it keeps and not retain the pointer. The
// first error from fn stops the stream and is returned unwrapped.
//
// Memory is O(1) in the graph size apart from a per-source target set
// (bounded by the largest out-degree) and a fixed-size name cache.
func (s *Synthetic) Each(fn func(*engine.TripletInput) error) error {
	p, err := s.plan()
	if err != nil {
		return err
	}
	cache := newNodeCache()
	var (
		t        engine.TripletInput
		contains int
		emitted  = make([]int, len(p.classes))
		targets  []int
		sampler  targetSampler
	)
	for k := Kind(0); k < numKinds; k++ {
		typ := k.String()
		for local := range p.count[k] {
			name, desc := cache.get(p, k, local)
			if pk, pl, ok := p.parent(k, local); ok && contains < p.containsNeed {
				pname, pdesc := cache.get(p, pk, pl)
				t = engine.TripletInput{
					Source: pname, Relationship: "contains", Target: name,
					SourceType: pk.String(), TargetType: typ,
					SourceDescription: pdesc, TargetDescription: desc,
				}
				contains++
				if err := fn(&t); err != nil {
					return err
				}
			}
			for _, ci := range p.bySrc[k] {
				cl := &p.classes[ci]
				remAfter := p.count[k] - local - 1
				allowed := cl.need - emitted[ci] - cl.effMin*remAfter
				d := min(cl.degree(p.seed, local, cl.lambda), allowed)
				if d <= 0 {
					continue
				}
				self := -1
				if cl.src == cl.dst {
					self = local
				}
				targets = sampler.pick(p, cl, local, self, d, targets[:0])
				dtyp := cl.dst.String()
				for _, tl := range targets {
					tname, tdesc := cache.get(p, cl.dst, tl)
					t = engine.TripletInput{
						Source: name, Relationship: cl.rel, Target: tname,
						SourceType: typ, TargetType: dtyp,
						SourceDescription: desc, TargetDescription: tdesc,
					}
					if err := fn(&t); err != nil {
						return err
					}
				}
				emitted[ci] += len(targets)
			}
		}
	}
	return nil
}

// targetSampler draws distinct targets for one source.
type targetSampler struct {
	set map[int]struct{}
}

// pick appends d distinct pool indexes (never self) drawn from cl's
// power law. Duplicates are rejected; after a bounded number of attempts
// (dense requests on small pools) it fills up by walking ranks in order,
// which always succeeds because d <= cl.cap.
func (ts *targetSampler) pick(p *plan, cl *edgeClass, src, self, d int, out []int) []int {
	useSet := d > 32
	if useSet {
		ts.set = make(map[int]struct{}, d)
	}
	has := func(x int) bool {
		if x == self {
			return true
		}
		if useSet {
			_, ok := ts.set[x]
			return ok
		}
		for _, y := range out {
			if y == x {
				return true
			}
		}
		return false
	}
	add := func(x int) {
		out = append(out, x)
		if useSet {
			ts.set[x] = struct{}{}
		}
	}
	r := mix64(cl.salt^0xa5a5a5a5a5a5a5a5, uint64(src))
	for attempts := 8*d + 32; len(out) < d && attempts > 0; attempts-- {
		r = splitmix(r)
		x := p.target(cl, unit(r))
		if !has(x) {
			add(x)
		}
	}
	for rank := 0; len(out) < d && rank < cl.pool; rank++ {
		x := p.permute(cl, rank)
		if !has(x) {
			add(x)
		}
	}
	return out
}

// target maps a uniform u to a pool index: inverse CDF of the continuous
// density ∝ x^-1.25 on [v, pool+v), whose exponent makes the inverse
// t^-4, computable with multiplications only (bit-identical everywhere),
// floored to a rank and permuted so hubs are spread over the id range.
func (p *plan) target(cl *edgeClass, u float64) int {
	t := cl.zA - float64(u*cl.zAB)
	t2 := float64(t * t)
	x := 1/float64(t2*t2) - cl.zipfV
	rank := 0
	if x > 0 {
		rank = min(int(x), cl.pool-1)
	}
	return p.permute(cl, rank)
}

func (p *plan) permute(cl *edgeClass, rank int) int {
	return int((uint64(rank)*cl.permMul + cl.permAdd) % uint64(cl.pool))
}

// coprimeNear returns a multiplier in [1, n) coprime with n, derived from h.
func coprimeNear(n, h uint64) uint64 {
	if n <= 2 {
		return 1
	}
	m := h%(n-1) + 1
	for gcd(m, n) != 1 {
		m = m%(n-1) + 1
	}
	return m
}

// splitmix is SplitMix64's step: a fast, well-mixed, seedable stream.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	z := x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func mix64(a, b uint64) uint64 { return splitmix(a ^ splitmix(b)) }

// unit maps 53 random bits to [0,1) exactly.
func unit(h uint64) float64 { return float64(h>>11) * (1.0 / (1 << 53)) }

// queryKinds weights the node kinds queries are about: agents mostly ask
// about functions, errors and files.
var queryKinds = []struct {
	k Kind
	w int
}{
	{KindFunction, 40}, {KindError, 15}, {KindFile, 15}, {KindPackage, 10},
	{KindService, 10}, {KindInterface, 10},
}

// Queries returns n query texts of the kind a coding agent sends ("fix
// timeout in ParseInvoiceLine in the payments gateway service"), each about
// a node of the graph (uniform within a kind, kinds weighted as in
// queryKinds), so text search finds real seeds. Deterministic for the
// seed; nil when the options are invalid.
func (s *Synthetic) Queries(n int) []string {
	p, err := s.plan()
	if err != nil || n <= 0 {
		return nil
	}
	totalW := 0
	for _, qk := range queryKinds {
		totalW += qk.w
	}
	out := make([]string, 0, n)
	r := mix64(p.seed, 0x9e77)
	next := func(m int) int {
		r = splitmix(r)
		return int(r % uint64(m))
	}
	for len(out) < n {
		x := next(totalW)
		k := queryKinds[0].k
		for _, qk := range queryKinds {
			if x < qk.w {
				k = qk.k
				break
			}
			x -= qk.w
		}
		local := next(p.count[k])
		name, desc := p.info(k, local)
		variant := next(3)
		var q string
		switch k {
		case KindFunction:
			fp := funcOf(local)
			svc := serviceOf(p.serviceOfNode(k, local)).words()
			switch variant {
			case 0:
				q = "fix " + errorConds[next(len(errorConds))].phrase + " in " + name + " in the " + svc + " service"
			case 1:
				q = "refactor " + svc + " " + strings.ToLower(fp.verb.name) + " " + nounWords[fp.ni] + " " + objectWords[fp.oi]
			default:
				q = "why is " + name + " slow"
			}
		case KindError:
			switch variant {
			case 0:
				q = "debug " + name + ": " + desc
			case 1:
				q = "where does \"" + desc + "\" come from"
			default:
				q = "handle " + name + " in callers"
			}
		case KindFile:
			switch variant {
			case 0:
				q = "add tests for " + name
			case 1:
				q = "refactor " + name
			default:
				q = "what does " + name + " do"
			}
		case KindPackage:
			_, svc, comp := p.packagePath(local)
			switch variant {
			case 0:
				q = "what depends on " + name
			case 1:
				q = "explain the " + comp.name + " package of " + svc.name()
			default:
				q = "reduce coupling of " + name
			}
		case KindService:
			sp := serviceOf(local)
			switch variant {
			case 0:
				q = "list the dependencies of " + name
			case 1:
				q = "fix " + errorConds[next(len(errorConds))].phrase + " in " + sp.words() + " service " +
					components[next(len(components))].name + " handler"
			default:
				q = "how does " + name + " handle " + nounWords[next(len(nouns))] + "s"
			}
		case KindInterface:
			switch variant {
			case 0:
				q = "find implementations of " + name
			case 1:
				q = "add a method to " + name
			default:
				q = "who uses " + name
			}
		}
		out = append(out, q)
	}
	return out
}
