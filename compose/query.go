package compose

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"unicode"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/index/fuse"
	"github.com/kgctx/kgctx/index/text"
	"github.com/kgctx/kgctx/index/words"
	"github.com/kgctx/kgctx/traverse"
)

// The ranking reads the query: its content words are what a triplet can
// explain (traverse.Query). A word is the lower-cased, Porter-stemmed part
// of an identifier or phrase (text.SplitName's parts: "AuthService" is
// "auth" and "servic"); words that say nothing about the graph, the stop
// words of package words (English function words, question words, and the
// verbs requests and commit subjects are made of: "fix", "add", "update",
// "tell", "find"), are dropped. The index, the embedder and the benchmark
// baselines read words by the same list and stemmer.
// Two words match when their stems are equal, or when one stem starts the
// other and the shorter has at least minPrefixMatch letters ("direct"
// matches "director", "birth" matches "birthplac").

// maxQueryWords is how many distinct content words of a query count (one
// bit each in the walk's masks); later ones are ignored.
const maxQueryWords = 64

// minPrefixMatch is the shortest stem that matches the words it starts.
const minPrefixMatch = 5

// queryWords is an analysed query.
type queryWords struct {
	stems   []string
	raw     []string // the lower-case part each stem was first made from
	weights []float64
}

// analyseQuery returns the content words of q, distinct, in order of
// first appearance, each of weight 1 (see weigh).
func analyseQuery(q string) queryWords {
	var qw queryWords
	for _, p := range text.SplitName(q) {
		if !words.IsContent(p) {
			continue
		}
		st := words.Stem(p)
		dup := false
		for _, s := range qw.stems {
			if s == st {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		if len(qw.stems) == maxQueryWords {
			break
		}
		qw.stems = append(qw.stems, st)
		qw.raw = append(qw.raw, p)
		qw.weights = append(qw.weights, 1)
	}
	return qw
}

// nameStems returns the stems of a name or relationship (text.AppendWords).
// Unlike a query's words, a name keeps its numbers and lone letters: they
// count in how much of the name a query covers.
func nameStems(name string) []string { return text.AppendWords(nil, name) }

// wordsMatch reports whether two stems match (see the package comment
// above).
func wordsMatch(a, b string) bool {
	if a == b {
		return true
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	return len(a) >= minPrefixMatch && strings.HasPrefix(b, a)
}

// weigh sets each word's weight to its inverse document frequency among
// node names, BM25's ln(1 + (N - df + 0.5)/(df + 0.5)): a word that half
// the names hold ("service", "movie", "award") explains little of what a
// question is about, one no name holds (a relation word, "directed")
// much. Without frequencies (an empty index) every word weighs 1.
func (qw *queryWords) weigh(fr *text.TermFreqs) {
	if fr == nil || fr.Docs == 0 {
		return
	}
	n := float64(fr.Docs)
	for i, p := range qw.raw {
		df := float64(fr.Name[p])
		qw.weights[i] = max(math.Log(1+(n-df+0.5)/(df+0.5)), 0.05)
	}
}

// weighScope is weigh with a scope's own name frequencies.
func (qw *queryWords) weighScope(nf *nameFreqs) {
	n := float64(nf.nodes)
	for i, p := range qw.raw {
		df := float64(nf.df[p])
		qw.weights[i] = max(math.Log(1+(n-df+0.5)/(df+0.5)), 0.05)
	}
}

// gatherNames returns the nameWords of hits' live nodes (nil for the
// others) in sc.names, read in one tight loop first: at a million nodes
// each name is a few cache misses, which a loop that does nothing else
// lets overlap (the stems are then read from the cache).
func (c *Composer) gatherNames(v *engine.View, hits []fuse.Ranked, sc *queryScratch) []*nameWords {
	nws := slices.Grow(sc.names[:0], len(hits))[:len(hits)]
	touch := 0
	for i, h := range hits {
		nws[i] = nil
		if v.Live(h.ID) {
			nw := c.nameStems.get(h.ID, v.NodeName)
			nws[i] = nw
			if len(nw.joined) > 0 {
				touch += int(nw.joined[0])
			}
		}
	}
	sc.names, sc.touch = nws, touch
	return nws
}

// mask is the set of query words (bits) the stems match.
func (qw *queryWords) mask(stems []string) uint64 {
	var m uint64
	for i, q := range qw.stems {
		for _, s := range stems {
			if wordsMatch(q, s) {
				m |= 1 << uint(i)
				break
			}
		}
	}
	return m
}

// queryScratch is a request's traverse.Query and what it is built from.
type queryScratch struct {
	words queryWords
	// joined is the query's tokens (text.SplitName), stop words
	// included, joined by single spaces, with one at each end: runIn's q
	// (verbatim matches).
	joined string
	freqs  text.TermFreqs
	q      traverse.Query
	hits   []fuse.Ranked
	relM   []uint64
	relSet []uint32 // per relationship id: stamp of the memo in relM
	stamp  uint32
	seeds  []seedScore
	// runners are the rescored hits past the seeds, best first (a view
	// of seeds' array, valid until the next calibrate).
	runners []seedScore
	spans   []wordSpan // addNamed's query words
	// names is gatherNames' result; touch keeps its reads from being
	// dropped.
	names []*nameWords
	touch int
	code  codeScratch
	// scopeDF, when set, are the scope's name frequencies, which weigh
	// the query's words instead of the index's (see scopeFreqs).
	scopeDF *nameFreqs
}

// seedScore is a seed's calibrated score and its parts.
type seedScore struct {
	node     uint32
	score    float64
	fused    float64 // the index's fused score (best = 1)
	name     float64 // the name match (0 when the name matches no query word)
	verbatim bool
	mask     uint64 // the query words its name matches
}

// maxRelsChecked bounds the relationships a request checks against the
// query to find the matched ones (MatchedRels); a store with more (an
// open vocabulary of free-text relationships) skips it.
const maxRelsChecked = 4096

// alikeRate is the walk's reading of enumerations (traverse.Query.Alike)
// outside code graphs: a node's one birthplace outranks one of its
// twenty nominations by 1 + 0.2 ln 20 = 1.6 when the query picks
// neither, and the weaker in proportion, less than a matched word's gain.
const alikeRate = 0.2

// textDepth is how many text hits a request reads to know which nodes'
// names match query words.
const textDepth = 60

// buildQuery fills sc's traverse.Query for query text q over view v: the
// query's words, the masks of the text hits' names, and a memo of
// relationship masks. It returns nil when the query has no content word
// (the walk then ranks by seeds and weights alone).
func (c *Composer) buildQuery(v *engine.View, q string, sc *queryScratch) *traverse.Query {
	sc.words = analyseQuery(q)
	if sc.scopeDF != nil {
		sc.words.weighScope(sc.scopeDF)
	} else {
		sc.words.weigh(&sc.freqs)
	}
	sc.joined = " " + strings.Join(text.SplitName(q), " ") + " "
	sc.q.Nodes = sc.q.Nodes[:0]
	if len(sc.words.stems) == 0 {
		return nil
	}
	sc.q.Weights = sc.words.weights
	sc.q.RelFactor, sc.q.Aside, sc.q.AsideFactor, sc.q.Alike = nil, nil, 0, 0
	nws := c.gatherNames(v, sc.hits, sc)
	for i, h := range sc.hits {
		if nws[i] == nil {
			continue
		}
		if m := sc.words.mask(nws[i].stems); m != 0 {
			sc.q.Nodes = append(sc.q.Nodes, traverse.NodeMask{Node: h.ID, Mask: m})
		}
	}
	sc.stamp++
	if sc.stamp == 0 {
		clear(sc.relSet)
		sc.stamp = 1
	}
	stamp := sc.stamp
	// The relationships the query matches, when they are few enough to
	// check them all: hubs offer their edges beyond the scanned prefix.
	// Known and none is an empty list, never nil (unknown), whatever the
	// scratch held before: nil makes the walk scan hubs further.
	sc.q.MatchedRels = sc.q.MatchedRels[:0]
	if sc.q.MatchedRels == nil {
		sc.q.MatchedRels = make([]uint32, 0, 8)
	}
	if n := v.RelCount(); n <= maxRelsChecked {
		for r := range uint32(n) {
			if sc.words.mask(c.relStems.get(r, v.RelName).stems) != 0 {
				sc.q.MatchedRels = append(sc.q.MatchedRels, r)
			}
		}
	} else {
		sc.q.MatchedRels = nil
	}
	sc.q.Rel = func(r uint32) uint64 {
		if int(r) >= len(sc.relSet) {
			n := max(int(r)+1, 2*len(sc.relSet), 64)
			sc.relSet = append(sc.relSet, make([]uint32, n-len(sc.relSet))...)
			sc.relM = append(sc.relM, make([]uint64, n-len(sc.relM))...)
		}
		if sc.relSet[r] == stamp {
			return sc.relM[r]
		}
		m := sc.words.mask(c.relStems.get(r, v.RelName).stems)
		sc.relSet[r], sc.relM[r] = stamp, m
		return m
	}
	return &sc.q
}

// Seed calibration. The index's fused ranks say which nodes the query is
// about, but not by how much: a node found by one ranking gets half the
// score of one found by both, whatever the match. A seed's score is
// therefore recomputed from its name:
//
//	name = matched(name)/best matched × covered(name) × (1 if verbatim, else verbatimMiss)
//
// matched(name) is the weight of the query words the name matches (the
// best seed's is the unit, so gaps between seeds are kept), covered(name)
// the share of the name's own words the query holds ("Jon Voight" is half
// covered by "movies with Jon Amiel"), and verbatim says the name's words,
// stop words included, stand in the query in a row ("Deep End" in "the
// screenwriter of Deep End", unlike "The Deep End"). A node whose name
// matches nothing (found through its description, or by the vector
// ranking alone) keeps fusedShare of its fused score: names are what a
// query names, descriptions and embeddings support. A seed's score is the
// larger of its name score and that share (codeFusedShare for a code
// symbol whose name matches).
//
// A code symbol (an exact name with a location: ownName) is matched on
// its own name without the package qualifier for coverage and verbatim
// ("nats.Conn.doReconnect" covers Conn and doReconnect; every symbol of a
// package shares its first word).
const (
	verbatimMiss = 0.75
	fusedShare   = 0.5
	// codeFusedShare is fusedShare for a code symbol whose name matches:
	// its doc comment repeating a common word ("the connection's
	// connection") supports its name, it does not outrank a better name.
	codeFusedShare = 0.25
	// seedPool is how many times topK fused hits are rescored.
	seedPool = 3
)

// calibrate rescores the fused hits of sc (see above), keeps the k best
// and returns them as the walk's seeds, appended to dst[:0]. The seeds'
// name masks join the query's node masks.
func (c *Composer) calibrate(v *engine.View, hits []fuse.Ranked, k int, sc *queryScratch, dst []traverse.Seed) []traverse.Seed {
	sc.seeds = sc.seeds[:0]
	best := 0.0
	type match struct {
		mw, cover      float64
		verbatim, code bool
		mask           uint64
	}
	ms := make([]match, len(hits))
	nws := c.gatherNames(v, hits, sc)
	for i, h := range hits {
		nw := nws[i]
		if nw == nil {
			continue
		}
		if len(sc.words.stems) == 0 || len(nw.stems) == 0 {
			continue
		}
		mask := sc.words.mask(nw.stems)
		if mask == 0 {
			continue
		}
		own, code := ownName(v, h.ID)
		if code {
			nw = c.ownStems.get(h.ID, func(uint32) string { return own })
		}
		stems := nw.stems
		covered := 0
		for _, st := range stems {
			for _, q := range sc.words.stems {
				if wordsMatch(q, st) {
					covered++
					break
				}
			}
		}
		mw := 0.0
		for b := range sc.words.stems {
			if mask&(1<<uint(b)) != 0 {
				mw += sc.words.weights[b]
			}
		}
		cover := float64(covered) / float64(len(stems))
		ms[i] = match{mw: mw, cover: cover, verbatim: runIn(sc.joined, nw.joined), mask: mask, code: code}
		best = max(best, mw)
	}
	// A test's name spelled out in the query makes it about tests.
	if sc.code.aside {
		for i, h := range hits {
			if ms[i].verbatim && sc.code.isTest(h.ID) {
				sc.code.aside = false
				break
			}
		}
	}
	for i, h := range hits {
		if !v.Live(h.ID) {
			continue
		}
		s := seedScore{node: h.ID, fused: h.Score, mask: ms[i].mask}
		if m := ms[i]; m.mw > 0 && best > 0 {
			s.name = m.mw / best * m.cover
			if !m.verbatim {
				s.name *= verbatimMiss
			}
			s.verbatim = m.verbatim
			sc.q.Nodes = append(sc.q.Nodes, traverse.NodeMask{Node: h.ID, Mask: m.mask})
		}
		share := fusedShare
		if ms[i].code && s.name > 0 {
			share = codeFusedShare
		}
		s.score = max(s.name, share*s.fused)
		if sc.code.aside && sc.code.isTest(h.ID) {
			s.score *= asideFactor
		}
		sc.seeds = append(sc.seeds, s)
	}
	slices.SortStableFunc(sc.seeds, func(a, b seedScore) int { return cmp.Compare(b.score, a.score) })
	if !slices.ContainsFunc(sc.seeds[:min(len(sc.seeds), 3)], func(s seedScore) bool { return codeNode(v, s.node) }) {
		spreadSeeds(sc.seeds)
	}
	sc.runners = sc.seeds[min(len(sc.seeds), k):]
	sc.seeds = sc.seeds[:min(len(sc.seeds), k)]
	dst = dst[:0]
	for _, s := range sc.seeds {
		dst = append(dst, traverse.Seed{Node: s.node, Score: s.score})
	}
	return dst
}

// seedRedundancy spreads the seeds over what the query asks: a seed
// whose name matches exactly the query words of n better seeds counts
// 1/(1 + seedRedundancy × n), so ten "... Time Zone" nodes do not crowd
// "France" out of "the time zones of France" (outside code graphs, where
// several symbols named alike are often all the change touches).
const seedRedundancy = 0.5

// spreadSeeds applies seedRedundancy to ss, sorted best first, and sorts
// it again.
func spreadSeeds(ss []seedScore) {
	for i := range ss {
		if ss[i].mask == 0 {
			continue
		}
		n := 0
		for _, b := range ss[:i] {
			if b.mask == ss[i].mask {
				n++
			}
		}
		ss[i].score /= 1 + seedRedundancy*float64(n)
	}
	slices.SortStableFunc(ss, func(a, b seedScore) int { return cmp.Compare(b.score, a.score) })
}

// maxNameRun is the most query words looked up together as one name.
const maxNameRun = 6

// addNamed appends to hits, with a fused score of 0, the nodes of scope
// (in allow) whose whole name is a run of the query's words ("Rent" in
// "What is the language of Rent?", "Midnight's Children") and that the
// index did not return: a name the query spells out is a candidate seed
// whatever the rankers made of it (a one-word name among thousands of
// names sharing the query's other word falls past their depth).
// Calibration then scores it like any other hit. A run is the query's
// text from one word to another, punctuation around it trimmed, looked up
// under the store's identity rule; runs are matched longest first from
// each word, and a word inside a matched run starts no other ("Elephant
// Boy" names one node, not also "Elephant" and "Boy"). A run must hold a
// content word and a word spelled as a name.
func (c *Composer) addNamed(v *engine.View, q string, scope engine.Tenant, allow *roaring.Bitmap, sc *queryScratch, hits []fuse.Ranked) []fuse.Ranked {
	if len(sc.words.stems) == 0 {
		return hits
	}
	// The query's words: byte spans, and whether each holds a content word.
	sc.spans = sc.spans[:0]
	for i := 0; i < len(q); {
		for i < len(q) && isSpace(q[i]) {
			i++
		}
		j := i
		for j < len(q) && !isSpace(q[j]) {
			j++
		}
		if j > i {
			w := strings.TrimFunc(q[i:j], isEdgePunct)
			if w != "" {
				start := i + strings.Index(q[i:j], w)
				content := false
				for _, p := range text.SplitName(w) {
					if words.IsContent(p) {
						content = true
						break
					}
				}
				sc.spans = append(sc.spans, wordSpan{start, start + len(w), content, spelledAsName(w)})
			}
		}
		i = j
	}
	var found [8]uint32
	ws := sc.spans
	for i := 0; i < len(ws); {
		n := 0
		for j := min(len(ws), i+maxNameRun) - 1; j >= i && n == 0; j-- {
			if !slices.ContainsFunc(ws[i:j+1], func(w wordSpan) bool { return w.content }) ||
				!slices.ContainsFunc(ws[i:j+1], func(w wordSpan) bool { return w.name }) {
				continue
			}
			run := q[ws[i].start:ws[j].end]
			ids := v.LookupScope(found[:0], scope, run)
			if len(ids) == 0 { // "Aquitaine's first level division"
				if r, ok := trimPossessive(run); ok {
					ids = v.LookupScope(found[:0], scope, r)
				}
			}
		nodes:
			for _, id := range ids {
				if !allow.Contains(id) {
					continue
				}
				n = j + 1 - i
				for _, h := range hits {
					if h.ID == id {
						continue nodes
					}
				}
				hits = append(hits, fuse.Ranked{ID: id})
			}
		}
		i += max(n, 1)
	}
	return hits
}

// trimPossessive returns run without a final possessive ('s, ’s, or the
// apostrophe of a plural's).
func trimPossessive(run string) (string, bool) {
	for _, suf := range []string{"'s", "’s", "'S", "’S"} {
		if r, ok := strings.CutSuffix(run, suf); ok && r != "" {
			return r, true
		}
	}
	if r, ok := strings.CutSuffix(run, "s'"); ok {
		return r + "s", true
	}
	return run, false
}

// wordSpan is a query word's bytes, whether it holds a content word, and
// whether it is spelled as a name (spelledAsName).
type wordSpan struct {
	start, end int
	content    bool
	name       bool
}

// spelledAsName says whether a query word is written as a name rather than
// as a common word: a capital letter ("Rent", "AuthService"), a digit or an
// underscore ("v2", "parse_config"). A run is looked up only when it holds
// one: "actors" in "who are the actors in ..." names the question's
// category, not a node the question is about.
func spelledAsName(w string) bool {
	for _, r := range w {
		if unicode.IsUpper(r) || unicode.IsDigit(r) || r == '_' {
			return true
		}
	}
	return false
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// isEdgePunct is the punctuation trimmed around a query word: sentence
// marks and brackets, never what names hold inside (apostrophes, dots).
func isEdgePunct(r rune) bool { return strings.ContainsRune(`?!.,;:"()[]{}<>`+"`", r) }

// runIn reports whether a run of tokens stands in a query's tokens as
// consecutive elements, both joined by single spaces (nameWords.joined);
// q also starts and ends with a space. Tokens hold no space, so a
// match bounded by spaces is a run of whole tokens.
func runIn(q, run string) bool {
	if run == "" {
		return false
	}
	for i := 0; ; {
		j := strings.Index(q[i:], run)
		if j < 0 {
			return false
		}
		j += i
		if j > 0 && q[j-1] == ' ' && j+len(run) < len(q) && q[j+len(run)] == ' ' {
			return true
		}
		i = j + 1
	}
}

// nameWords is what a query is matched against of a name: its content
// stems (nameStems), and its tokens, stop words included, joined by single
// spaces (text.SplitName; verbatim matches, see runIn).
type nameWords struct {
	stems  []string
	joined string
	// inline backs stems for a name of up to len(inline) words, so that
	// a request reading a name's stems misses the cache once for the
	// record and once for its bytes (newNameWords).
	inline [4]string
}

// newNameWords makes name's nameWords: one record and one string, which
// joined and every stem are substrings of.
func newNameWords(name string) *nameWords {
	stems := nameStems(name)
	joined := strings.Join(text.SplitName(name), " ")
	n := len(joined)
	for _, st := range stems {
		n += len(st)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(joined)
	for _, st := range stems {
		b.WriteString(st)
	}
	all := b.String()
	w := &nameWords{joined: all[:len(joined)]}
	if len(stems) <= len(w.inline) {
		w.stems = w.inline[:len(stems):len(stems)]
	} else {
		w.stems = make([]string, len(stems))
	}
	off := len(joined)
	for i, st := range stems {
		w.stems[i] = all[off : off+len(st)]
		off += len(st)
	}
	return w
}

// stemCache remembers the nameWords of node names by dense id: the walk
// asks for the names of a few hundred text hits per request, and stemming
// is the costly part. A node's name never changes and ids are never
// reused, so an entry never goes stale; memory grows with the nodes
// queries touch (a few dozen bytes each). Reads are lock-free; a miss
// computes and stores (racing writers store equal values).
type stemCache struct{ chunks chunked[stemChunk] }

type stemChunk [1 << lenChunkBits]atomic.Pointer[nameWords]

func (c *stemCache) get(id uint32, name func(uint32) string) *nameWords {
	ci, off := int(id>>lenChunkBits), id&(1<<lenChunkBits-1)
	if ch := c.chunks.load(ci); ch != nil {
		if p := ch[off].Load(); p != nil {
			return p
		}
	}
	n := name(id)
	w := newNameWords(n)
	c.chunks.chunk(ci)[off].Store(w)
	return w
}
