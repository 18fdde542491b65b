package workload

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/kgctx/kgctx/engine"
)

// Observations generates n observations a coding agent could have written
// about the FB15k entities (each names one or two entity labels and a
// verb from a small vocabulary, with paths, tags, a namespace, a session
// and a work type), deterministic for seed. They give the session
// scenarios a realistic mix: most share words with the FB15k queries, so
// searches return many candidates.
func Observations(fb *FB15k, n int, seed uint64) []engine.ObservationInput {
	rng := rand.New(rand.NewPCG(seed, 0x0b5))
	labels := make([]string, 0, fb.Entities)
	seen := make(map[string]bool, fb.Entities)
	for i := range fb.Triplets {
		for _, l := range []string{fb.Triplets[i].Source, fb.Triplets[i].Target} {
			if !seen[l] {
				seen[l] = true
				labels = append(labels, l)
			}
		}
	}
	verbs := []string{"links to", "was confused with", "explains", "duplicates", "depends on", "is the canonical page for",
		"needs a fix in the parser for", "has a stale description, see", "fails validation when paired with"}
	tags := []string{"data", "parser", "dedup", "schema", "quality", "import", "search", "ranking"}
	namespaces := []string{"backend", "data", "frontend", ""}
	works := []string{"bug_fix", "feature", "refactor", "chore"}
	out := make([]engine.ObservationInput, n)
	for i := range out {
		a := labels[rng.IntN(len(labels))]
		b := labels[rng.IntN(len(labels))]
		var sb strings.Builder
		fmt.Fprintf(&sb, "%s %s %s.", a, verbs[rng.IntN(len(verbs))], b)
		if rng.IntN(3) == 0 {
			fmt.Fprintf(&sb, " Checked during import run %d; keep the mapping until the next dump.", rng.IntN(1000))
		}
		out[i] = engine.ObservationInput{Content: sb.String(), Metadata: engine.ObservationMeta{
			Paths:     []string{fmt.Sprintf("pkg/%s/%s.go", tags[rng.IntN(len(tags))], strings.ToLower(strings.Fields(a + " x")[0]))},
			SessionID: fmt.Sprintf("ses_gen_%d", rng.IntN(n/10+1)),
			Namespace: namespaces[rng.IntN(len(namespaces))],
			Tags:      []string{tags[rng.IntN(len(tags))]},
			WorkType:  works[rng.IntN(len(works))],
		}}
	}
	return out
}
