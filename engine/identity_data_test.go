package engine

import (
	"bufio"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/internal/datasets"
)

// datasetNames returns the distinct entity names of a triplet dataset:
// the given tab-separated columns of every split that exists (train.txt.gz,
// valid.txt, test.txt), in first-appearance order. It skips the test when
// the datasets are absent.
func datasetNames(t *testing.T, dir string, cols ...int) []string {
	t.Helper()
	root, err := datasets.Find("")
	if err != nil {
		t.Skipf("%v; skipping the real-data test", err)
	}
	seen := map[string]bool{}
	var names []string
	files := 0
	for _, f := range []string{"train.txt.gz", "valid.txt", "test.txt"} {
		fh, err := os.Open(filepath.Join(root, dir, f))
		if os.IsNotExist(err) {
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		files++
		var r io.Reader = fh
		if strings.HasSuffix(f, ".gz") {
			if r, err = gzip.NewReader(fh); err != nil {
				t.Fatal(err)
			}
		}
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			fields := strings.Split(strings.TrimRight(sc.Text(), "\r"), "\t")
			for _, c := range cols {
				if c < len(fields) && !seen[fields[c]] {
					seen[fields[c]] = true
					names = append(names, fields[c])
				}
			}
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if files == 0 {
		t.Skipf("%s: no split found under %s", dir, root)
	}
	return names
}

// sharedKeys groups names by key and returns the groups of two or more
// (each sorted, the list sorted by first member).
func sharedKeys(names []string, key func(string) string) [][]string {
	by := map[string][]string{}
	for _, n := range names {
		k := key(n)
		by[k] = append(by[k], n)
	}
	var out [][]string
	for _, g := range by {
		if len(g) > 1 {
			slices.Sort(g)
			out = append(out, g)
		}
	}
	slices.SortFunc(out, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	return out
}

func pairs(groups [][]string) int {
	n := 0
	for _, g := range groups {
		n += len(g) * (len(g) - 1) / 2
	}
	return n
}

// spellingOf is the oracle for ConceptNet's legitimate merges: the phrase
// with hyphens read as spaces and white space collapsed and trimmed.
func spellingOf(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "-", " ")), " ")
}

// TestIdentityRealIDs runs the identity rule over the entity names of the
// shared datasets (defect 12). Distinct ids of a dataset must keep distinct
// keys, except where the two spellings are the same name.
func TestIdentityRealIDs(t *testing.T) {
	t.Run("fb15k-237", func(t *testing.T) {
		names := datasetNames(t, "fb15k-237", 0, 2)
		if len(names) != 14_541 {
			t.Errorf("%d entity ids, the dataset has 14,541", len(names))
		}
		// Freebase mids use '_' as a character: the old rule merged 15
		// groups of ids (17 pairs: "/m/0_jm", "/m/0j__m" and "/m/0jm_"
		// are three), e.g. "/m/015g7" and "/m/015g_7".
		old := sharedKeys(names, normalizeNameV2)
		if len(old) != 15 || pairs(old) != 17 || !slices.Equal(old[0], []string{"/m/015g7", "/m/015g_7"}) {
			t.Errorf("old rule: %d groups, %d pairs, first %q; want 15, 17, [/m/015g7 /m/015g_7]", len(old), pairs(old), old[0])
		}
		if neu := sharedKeys(names, NormalizeName); len(neu) != 0 {
			t.Errorf("new rule merges %d groups of ids: %q", len(neu), neu)
		}
	})
	t.Run("wn18rr", func(t *testing.T) {
		names := datasetNames(t, "wn18rr", 0, 2)
		// The old rule merged "tap_dance.v.01" and "tapdance.v.01" and
		// three more synset pairs.
		if old := sharedKeys(names, normalizeNameV2); len(old) != 4 {
			t.Errorf("old rule: %d groups, want 4", len(old))
		}
		if neu := sharedKeys(names, NormalizeName); len(neu) != 0 {
			t.Errorf("new rule merges %d groups of synsets: %q", len(neu), neu)
		}
	})
	t.Run("conceptnet-100k", func(t *testing.T) {
		names := datasetNames(t, "conceptnet-100k", 1, 2)
		// ConceptNet phrases come in hyphenated and spaced spellings of
		// one concept ("ice cream", "ice-cream"; "t shirt", "t-shirt") and
		// a few with a trailing space: those merge, and nothing else does.
		// The old rule also merged "be at" with "beat", "air plane" with
		// "airplane" and 428 more groups.
		neu := sharedKeys(names, NormalizeName)
		for _, g := range neu {
			for _, n := range g[1:] {
				if spellingOf(n) != spellingOf(g[0]) {
					t.Errorf("%q and %q share a key but are different phrases", g[0], n)
				}
			}
		}
		if len(neu) != 93 || pairs(neu) != 93 {
			t.Errorf("new rule: %d groups, %d pairs; want 93 hyphen/space pairs", len(neu), pairs(neu))
		}
		if old := sharedKeys(names, normalizeNameV2); len(old) != 523 {
			t.Errorf("old rule: %d groups, want 523", len(old))
		}
	})
	t.Run("yago3-10", func(t *testing.T) {
		names := datasetNames(t, "yago3-10", 0, 2)
		// One club written with and without a word break: the same entity.
		want := [][]string{{"A.C._ChievoVerona", "A.C._Chievo_Verona"}}
		if neu := sharedKeys(names, NormalizeName); !slices.EqualFunc(neu, want, slices.Equal) {
			t.Errorf("new rule merges %q, want %q", neu, want)
		}
	})
}
