package workload

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/index/words"
)

// FB15kDir is the folder of FB15k-237 inside the datasets root.
const FB15kDir = "fb15k-237"

// MaxRelationshipLen is the longest relationship name kgctx accepts; the
// FB15k relation names are built to stay below it (the longest is 81
// bytes, so none is clipped).
const MaxRelationshipLen = engine.DefaultMaxRelBytes

// FB15k is the FB15k-237 training graph with readable names.
//
// Source and Target are entity labels from entity2text.txt, not Freebase
// ids. Labels are not unique, and kgctx merges nodes whose names are equal
// under engine.NormalizeName (case folded, separators and case boundaries
// folded to '_'): in the train split 224 such keys are shared by 501
// entities, e.g. seven "Washington County". Every label after the first
// occurrence of its key (first appearance in train file order) therefore
// gets a " (2)", " (3)", ... suffix (277 entities), and the graph keeps one
// node per Freebase entity: 14,505.
//
// Relationship is the Freebase relation path made readable; see
// RelationName for the rule. SourceType/TargetType is the Freebase type the
// entity most often appears under as a head ("film", "person", ...; ties
// broken alphabetically), or "entity" for entities that never head a
// triplet. Descriptions come from entity2description.tsv when non-empty.
type FB15k struct {
	// Triplets is the train split in file order (272,115 rows).
	Triplets []engine.TripletInput
	// Queries holds one query text per head of the test split, in
	// test-file order, deduplicated by text: the head's label plus up to
	// two content words of its description ("Jeremy Irons English actor").
	// Test heads that never occur in the train split are skipped so every
	// query has a node to find; 8,144 queries remain.
	Queries []string
	// QueryHeads[i] is the node name (the disambiguated label) of the
	// entity Queries[i] was built from, for hit-rate checks.
	QueryHeads []string
	// Entities is the number of distinct nodes in Triplets.
	Entities int
	// Renamed is how many entities got a disambiguation suffix.
	Renamed int
	// Relations is the number of distinct relationships.
	Relations int
	// WithDescription is how many of the Entities carry a description.
	WithDescription int
}

// Each calls fn for every training triplet in order. fn receives a scratch
// copy, so modifying it does not change f; it must not retain the pointer.
// The first error returned by fn stops the iteration and is returned.
func (f *FB15k) Each(fn func(*engine.TripletInput) error) error {
	var t engine.TripletInput
	for i := range f.Triplets {
		t = f.Triplets[i]
		if err := fn(&t); err != nil {
			return err
		}
	}
	return nil
}

// LoadFB15k reads FB15k-237 from dir, which may be the datasets root, the
// fb15k-237 folder itself, or "" to locate the root with FindDatasets.
func LoadFB15k(dir string) (*FB15k, error) {
	dir, err := datasetDir(dir, FB15kDir)
	if err != nil {
		return nil, err
	}

	labels := make(map[string]string, 16384)
	if err := eachLine(dir, "entity2text.txt", func(_ int, line string) error {
		id, label, ok := strings.Cut(line, "\t")
		if !ok || id == "" {
			return fmt.Errorf("%w: want id<TAB>label", ErrMalformed)
		}
		labels[id] = strings.TrimSpace(label)
		return nil
	}); err != nil {
		return nil, err
	}

	descs := make(map[string]string, 16384)
	if err := eachLine(dir, "entity2description.tsv", func(_ int, line string) error {
		cols := strings.SplitN(line, "\t", 3)
		if len(cols) < 2 || cols[0] == "" {
			return fmt.Errorf("%w: want id<TAB>label<TAB>description", ErrMalformed)
		}
		if _, ok := labels[cols[0]]; !ok && strings.TrimSpace(cols[1]) != "" {
			// entity2text wins; the description file's label is only a
			// fallback because the two sources disagree on 2k entities.
			labels[cols[0]] = strings.TrimSpace(cols[1])
		}
		if len(cols) == 3 {
			if d := strings.TrimSpace(cols[2]); d != "" {
				descs[cols[0]] = d
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}

	// Read train into compact ids first: names depend on the whole file
	// (disambiguation order, relation-name collisions, entity types).
	type triple struct {
		h, t uint32
		r    uint16
	}
	entIdx := make(map[string]uint32, 16384)
	var entIDs []string
	relIdx := make(map[string]uint16, 256)
	var relPaths []string
	triples := make([]triple, 0, 272115)
	intern := func(id string) uint32 {
		if i, ok := entIdx[id]; ok {
			return i
		}
		i := uint32(len(entIDs))
		entIdx[id] = i
		entIDs = append(entIDs, id)
		return i
	}
	if err := eachLine(dir, "train.txt", func(_ int, line string) error {
		h, rest, ok1 := strings.Cut(line, "\t")
		r, t, ok2 := strings.Cut(rest, "\t")
		if !ok1 || !ok2 || h == "" || r == "" || t == "" || strings.Contains(t, "\t") {
			return fmt.Errorf("%w: want head<TAB>relation<TAB>tail", ErrMalformed)
		}
		ri, ok := relIdx[r]
		if !ok {
			if len(relPaths) >= 1<<16 {
				return fmt.Errorf("%w: more than 65536 relations", ErrMalformed)
			}
			ri = uint16(len(relPaths))
			relIdx[r] = ri
			relPaths = append(relPaths, r)
		}
		triples = append(triples, triple{h: intern(h), t: intern(t), r: ri})
		return nil
	}); err != nil {
		return nil, err
	}

	relNames := RelationNames(relPaths)

	// Entity type: the Freebase type the entity most often heads.
	typeCount := make([]map[string]int, len(entIDs))
	for _, tr := range triples {
		ty := relationHeadType(relPaths[tr.r])
		if typeCount[tr.h] == nil {
			typeCount[tr.h] = make(map[string]int, 4)
		}
		typeCount[tr.h][ty]++
	}
	types := make([]string, len(entIDs))
	for i, m := range typeCount {
		best, bestN := "entity", 0
		for ty, n := range m {
			if n > bestN || (n == bestN && ty < best) {
				best, bestN = ty, n
			}
		}
		types[i] = best
	}

	// Names: disambiguate in first-appearance order so the result does not
	// depend on map iteration.
	names := make([]string, len(entIDs))
	taken := make(map[string]struct{}, len(entIDs))
	out := &FB15k{Entities: len(entIDs), Relations: len(relPaths)}
	for i, id := range entIDs {
		label, ok := labels[id]
		if !ok || label == "" {
			label = id
		}
		name := label
		for n := 2; ; n++ {
			if _, dup := taken[engine.NormalizeName(name)]; !dup {
				break
			}
			name = label + " (" + strconv.Itoa(n) + ")"
		}
		if name != label {
			out.Renamed++
		}
		taken[engine.NormalizeName(name)] = struct{}{}
		names[i] = name
		if descs[id] != "" {
			out.WithDescription++
		}
	}

	out.Triplets = make([]engine.TripletInput, len(triples))
	for i, tr := range triples {
		h, t := entIDs[tr.h], entIDs[tr.t]
		out.Triplets[i] = engine.TripletInput{
			Source:            names[tr.h],
			Relationship:      relNames[tr.r],
			Target:            names[tr.t],
			SourceType:        types[tr.h],
			TargetType:        types[tr.t],
			SourceDescription: descs[h],
			TargetDescription: descs[t],
		}
	}

	seen := make(map[string]struct{}, 8192)
	if err := eachLine(dir, "test.txt", func(_ int, line string) error {
		h, _, ok := strings.Cut(line, "\t")
		if !ok || h == "" {
			return fmt.Errorf("%w: want head<TAB>relation<TAB>tail", ErrMalformed)
		}
		ei, ok := entIdx[h]
		if !ok {
			return nil
		}
		label := labels[h]
		if label == "" {
			label = names[ei]
		}
		q := label
		if w := contentWords(descs[h], 2); w != "" {
			q += " " + w
		}
		if _, dup := seen[q]; dup {
			return nil
		}
		seen[q] = struct{}{}
		out.Queries = append(out.Queries, q)
		out.QueryHeads = append(out.QueryHeads, names[ei])
		return nil
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// RelationName turns one Freebase relation path into a readable
// snake_case name: the last two segments of the path ("type_property"), and
// for compound relations through a mediator node ("a/b/c./d/e/f") the last
// segment of every later part appended. So "/film/film/genre" becomes
// "film_genre" and "/award/award_category/winners./award/award_honor/ceremony"
// becomes "award_category_winners_ceremony". The domain is dropped because
// it nearly always repeats the type; RelationNames adds it back for the few
// paths whose short names collide.
func RelationName(path string) string {
	parts := strings.Split(path, ".")
	segs := pathSegments(parts[0])
	if len(segs) > 2 {
		segs = segs[len(segs)-2:]
	}
	for _, p := range parts[1:] {
		if s := pathSegments(p); len(s) > 0 {
			segs = append(segs, s[len(s)-1])
		}
	}
	return clipName(strings.Join(segs, "_"))
}

// RelationNames maps relation paths to names with RelationName; every
// group of paths whose short names collide uses the whole path instead,
// all segments joined by '_' (e.g. "olympics_olympic_games_sports" versus
// "user_jg_default_domain_olympic_games_sports"). Should two names still
// collide after normalisation, later ones get a numeric suffix in input
// order. All names are at most MaxRelationshipLen bytes. In FB15k-237 the
// 237 paths give 237 names, 8 of them in the long form (three groups of
// roster "position" relations and the two "olympic_games_sports").
func RelationNames(paths []string) []string {
	short := make([]string, len(paths))
	count := make(map[string]int, len(paths))
	for i, p := range paths {
		short[i] = RelationName(p)
		count[short[i]]++
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = short[i]
		if count[short[i]] > 1 {
			out[i] = longRelationName(p)
		}
	}
	// Final guard: identical long forms cannot occur for distinct paths in
	// Freebase, but keep the mapping injective whatever the input is.
	used := make(map[string]struct{}, len(out))
	for i, n := range out {
		base := n
		for k := 2; ; k++ {
			if _, dup := used[engine.NormalizeRelationship(n)]; !dup {
				break
			}
			suf := "_" + strconv.Itoa(k)
			n = clipName(base[:min(len(base), MaxRelationshipLen-len(suf))] + suf)
		}
		used[engine.NormalizeRelationship(n)] = struct{}{}
		out[i] = n
	}
	return out
}

func longRelationName(path string) string {
	var segs []string
	for _, p := range strings.Split(path, ".") {
		segs = append(segs, pathSegments(p)...)
	}
	return clipName(strings.Join(segs, "_"))
}

// relationHeadType is the Freebase type of a relation's head: the
// second-to-last segment of the path's first part ("/film/film/genre" ->
// "film", "/people/person/nationality" -> "person").
func relationHeadType(path string) string {
	first, _, _ := strings.Cut(path, ".")
	segs := pathSegments(first)
	if len(segs) < 2 {
		return "entity"
	}
	return segs[len(segs)-2]
}

func pathSegments(p string) []string {
	raw := strings.Split(p, "/")
	segs := raw[:0]
	for _, s := range raw {
		if s != "" {
			segs = append(segs, s)
		}
	}
	return segs
}

// clipName cuts a name to MaxRelationshipLen bytes; relation paths are
// ASCII so cutting bytes cannot split a rune.
func clipName(s string) string {
	if len(s) > MaxRelationshipLen {
		s = s[:MaxRelationshipLen]
	}
	return s
}

// contentWords returns the first n words of s that are not stop words
// (package words: the words kgctx itself drops from a query), stripped of
// surrounding punctuation: enough to steer a query towards the right
// "Washington County" without pasting the whole description.
func contentWords(s string, n int) string {
	var out []string
	for _, w := range strings.Fields(s) {
		w = strings.Trim(w, ",.;:()[]\"'!?")
		if w == "" || words.IsStop(strings.ToLower(w)) {
			continue
		}
		out = append(out, w)
		if len(out) == n {
			break
		}
	}
	return strings.Join(out, " ")
}
