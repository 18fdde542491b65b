package relevance

import (
	"math"
	"slices"
	"time"

	"github.com/kgctx/kgctx/engine"
)

// line is one triplet line of a block, names as rendered.
type line struct{ Src, Rel, Dst string }

// blockOut is what a system put in one block: its text, its triplet lines
// and its observation ids, and its size in tokens.
type blockOut struct {
	Text   string
	Lines  []line
	ObsIDs []string
	Tokens int
	// Inconsistent: kgctx's block text disagrees with its own triplets,
	// observation ids or token count.
	Inconsistent bool
	// Explain holds, when asked (Config.Misses), one line per triplet with
	// kgctx's score parts.
	Explain []string
	// Map holds the lines of a code map section (kgctx's "## Code Map", the
	// repo map baseline's "## Repository Map"): parseMap of Text.
	Map []mapLine
}

// goldTriplet is a triplet a question needs, as normalised keys.
type goldTriplet struct{ Src, Rel, Dst string }

// goldFile is a file a commit changed: its node's key and the keys of the
// nodes it defines or contains.
type goldFile struct {
	Key     string
	Members []string
}

// question is one item of a set with its gold data. Only the fields of its
// set's kind are set.
type question struct {
	ID    string
	Text  string
	Scope engine.Tenant
	// MetaQA, FB15k: the answers' names.
	Answers []string
	// FB15k: the asked triplet (1-hop) or the chain (2-hop).
	Gold []goldTriplet
	// codeloc: gold functions' names and gold files; FuncFiles[i] is the
	// path of the file that defines Funcs[i] ("" when unknown), for
	// finding a function by its bare name in that file's code map section.
	Funcs     []string
	FuncFiles []string
	Files     []goldFile
	// LoCoMo: the evidence turns' observation ids (their texts, in the
	// same order, for the misses file), and the QA category.
	Evidence     []string
	EvidenceText []string
	Category     int
}

func gold(src, rel, dst string) goldTriplet {
	return goldTriplet{engine.NormalizeName(src), engine.NormalizeRelationship(rel), engine.NormalizeName(dst)}
}

// endpoints is the set of normalised names that occur as a source or a
// target of b's lines.
func endpoints(b *blockOut) map[string]bool {
	m := make(map[string]bool, 2*len(b.Lines))
	for _, l := range b.Lines {
		m[engine.NormalizeName(l.Src)] = true
		m[engine.NormalizeName(l.Dst)] = true
	}
	return m
}

// fraction of keys (deduplicated) that are in set; NaN without keys.
func fraction(keys []string, in func(string) bool) float64 {
	seen := map[string]bool{}
	hit := 0
	for _, k := range keys {
		if seen[k] {
			continue
		}
		seen[k] = true
		if in(k) {
			hit++
		}
	}
	if len(seen) == 0 {
		return math.NaN()
	}
	return float64(hit) / float64(len(seen))
}

// answerScores: answer hit (1 when any gold answer is an endpoint of a
// line) and answer recall (the fraction of distinct gold answers that are).
func answerScores(q *question, b *blockOut) (hit, recall float64) {
	ends := endpoints(b)
	keys := make([]string, len(q.Answers))
	for i, a := range q.Answers {
		keys[i] = engine.NormalizeName(a)
	}
	recall = fraction(keys, func(k string) bool { return ends[k] })
	if recall > 0 {
		hit = 1
	}
	return hit, recall
}

// tripletsHit is 1 when every gold triplet of q is a line of b (names and
// relationship compared normalised): for a 1-hop question the gold-triplet
// hit, for a 2-hop one the path hit.
func tripletsHit(q *question, b *blockOut) float64 {
	have := make(map[goldTriplet]bool, len(b.Lines))
	for _, l := range b.Lines {
		have[gold(l.Src, l.Rel, l.Dst)] = true
	}
	for _, g := range q.Gold {
		if !have[g] {
			return 0
		}
	}
	return 1
}

// codeScores: function recall is the fraction of gold functions that are
// an endpoint of a line; file recall the fraction of gold files reached,
// a file being reached when its node, or a node it defines or contains,
// is an endpoint of a line.
func codeScores(q *question, b *blockOut) (fn, file float64) {
	ends := endpoints(b)
	keys := make([]string, len(q.Funcs))
	for i, f := range q.Funcs {
		keys[i] = engine.NormalizeName(f)
	}
	fn = fraction(keys, func(k string) bool { return ends[k] })
	reached := 0
	for _, f := range q.Files {
		if ends[f.Key] || slices.ContainsFunc(f.Members, func(m string) bool { return ends[m] }) {
			reached++
		}
	}
	file = math.NaN()
	if len(q.Files) > 0 {
		file = float64(reached) / float64(len(q.Files))
	}
	return fn, file
}

// evidenceRecall is the fraction of q's evidence observations whose id is
// in the block.
func evidenceRecall(q *question, b *blockOut) float64 {
	return fraction(q.Evidence, func(id string) bool { return slices.Contains(b.ObsIDs, id) })
}

// precision is the share of a block's items (its triplet lines, then its
// observations) for which holds says true, given the item's line or
// observation id: what share of the block is gold. NaN for an empty block
// (it has no share to measure; the empty count reports it).
func precision(b *blockOut, line func(line) bool, obs func(string) bool) float64 {
	n := len(b.Lines) + len(b.ObsIDs)
	if n == 0 {
		return math.NaN()
	}
	hits := 0
	for _, l := range b.Lines {
		if line != nil && line(l) {
			hits++
		}
	}
	for _, id := range b.ObsIDs {
		if obs != nil && obs(id) {
			hits++
		}
	}
	return float64(hits) / float64(n)
}

// answerPrecision: the share of lines with a gold answer as an endpoint.
func answerPrecision(q *question, b *blockOut) float64 {
	ans := make(map[string]bool, len(q.Answers))
	for _, a := range q.Answers {
		ans[engine.NormalizeName(a)] = true
	}
	return precision(b, func(l line) bool {
		return ans[engine.NormalizeName(l.Src)] || ans[engine.NormalizeName(l.Dst)]
	}, nil)
}

// triplePrecision: the share of lines that are gold triplets.
func triplePrecision(q *question, b *blockOut) float64 {
	return precision(b, func(l line) bool { return slices.Contains(q.Gold, gold(l.Src, l.Rel, l.Dst)) }, nil)
}

// codePrecision: the share of lines with an endpoint that is a gold
// function, a gold file or a node a gold file defines or contains (names
// normalised, as codeScores compares them).
func codePrecision(q *question, b *blockOut) float64 {
	named := map[string]bool{}
	for _, f := range q.Funcs {
		named[engine.NormalizeName(f)] = true
	}
	for _, f := range q.Files {
		named[f.Key] = true
		for _, m := range f.Members {
			named[m] = true
		}
	}
	return precision(b, func(l line) bool {
		return named[engine.NormalizeName(l.Src)] || named[engine.NormalizeName(l.Dst)]
	}, nil)
}

// evidencePrecision: the share of a block's items (triplet lines and
// observations) that are evidence observations.
func evidencePrecision(q *question, b *blockOut) float64 {
	return precision(b, nil, func(id string) bool { return slices.Contains(q.Evidence, id) })
}

// duplicateLines reports whether a block repeats a triplet line or an
// observation.
func duplicateLines(b *blockOut) bool {
	seen := map[line]bool{}
	for _, l := range b.Lines {
		if seen[l] {
			return true
		}
		seen[l] = true
	}
	ids := map[string]bool{}
	for _, id := range b.ObsIDs {
		if ids[id] {
			return true
		}
		ids[id] = true
	}
	return false
}

// acc accumulates one row: metric sums (a NaN value, a metric that does
// not apply to a question, is left out of that metric's mean), tokens,
// latencies and block anomalies.
type acc struct {
	sums                            []float64
	counts                          []int
	tokens                          float64
	lat                             []time.Duration
	n                               int
	empty, over, dups, inconsistent int
}

func newAcc(metrics int) *acc {
	return &acc{sums: make([]float64, metrics), counts: make([]int, metrics)}
}

func (a *acc) add(vals []float64, b *blockOut, budget int, lat time.Duration) {
	a.n++
	for i, v := range vals {
		if !math.IsNaN(v) {
			a.sums[i] += v
			a.counts[i]++
		}
	}
	a.tokens += float64(b.Tokens)
	a.lat = append(a.lat, lat)
	if len(b.Lines) == 0 && len(b.ObsIDs) == 0 && len(b.Map) == 0 {
		a.empty++
	}
	if b.Tokens > budget {
		a.over++
	}
	if duplicateLines(b) {
		a.dups++
	}
	if b.Inconsistent {
		a.inconsistent++
	}
}

// percentile is the nearest-rank p-th percentile of ds (sorted in place).
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	i := int(math.Ceil(p/100*float64(len(ds)))) - 1
	return ds[max(0, min(i, len(ds)-1))]
}

func msOf(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
