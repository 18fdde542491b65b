package workload

import (
	"bufio"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/engine"
)

func TestRelationNames(t *testing.T) {
	cases := map[string]string{
		"/film/film/genre":                                          "film_genre",
		"/people/person/place_of_birth":                             "person_place_of_birth",
		"/award/award_category/winners./award/award_honor/ceremony": "award_category_winners_ceremony",
	}
	for in, want := range cases {
		if got := RelationName(in); got != want {
			t.Errorf("RelationName(%q) = %q, want %q", in, got, want)
		}
	}
	got := RelationNames([]string{"/olympics/olympic_games/sports", "/user/jg/default_domain/olympic_games/sports", "/film/film/genre"})
	want := []string{"olympics_olympic_games_sports", "user_jg_default_domain_olympic_games_sports", "film_genre"}
	if !slices.Equal(got, want) {
		t.Errorf("RelationNames collision handling = %q, want %q", got, want)
	}
	if got := RelationNames([]string{
		"/soccer/football_team/current_roster./soccer/football_roster_position/position",
		"/soccer/football_team/current_roster./sports/sports_team_roster/position",
	}); got[0] == got[1] || strings.HasSuffix(got[1], "_2") {
		t.Errorf("long forms must differ without a counter: %q", got)
	}
	long := "/" + strings.Repeat("segment_", 150) + "/x/y" // over MaxRelationshipLen: clipped
	if n := RelationNames([]string{long, long + "/"})[0]; len(n) > MaxRelationshipLen {
		t.Errorf("name of %d bytes exceeds %d", len(n), MaxRelationshipLen)
	}
}

func TestContentWords(t *testing.T) {
	if got := contentWords("city in Texas, United States", 2); got != "city Texas" {
		t.Errorf("contentWords = %q", got)
	}
	if got := contentWords("", 2); got != "" {
		t.Errorf("contentWords(empty) = %q", got)
	}
}

func TestLoadFB15k(t *testing.T) {
	dir := datasets(t)
	f, err := LoadFB15k(dir)
	skipIfMissing(t, err)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Triplets) != 272_115 {
		t.Errorf("triplets = %d, want 272115", len(f.Triplets))
	}
	t.Logf("entities %d (renamed %d), relations %d, with description %d, queries %d",
		f.Entities, f.Renamed, f.Relations, f.WithDescription, len(f.Queries))

	names := make(map[string]bool)
	keys := make(map[string]string)
	rels := make(map[string]bool)
	withDesc := 0
	for _, tr := range f.Triplets {
		if c := tr; engine.ValidateTriplet(&c, engine.Limits{}, 0) != nil || c.Source != tr.Source || c.Target != tr.Target {
			t.Fatalf("triplet rejected or altered by engine.ValidateTriplet: %+v", tr)
		}
		for _, n := range []string{tr.Source, tr.Target} {
			if strings.HasPrefix(n, "/m/") {
				t.Fatalf("Freebase id %q leaked into a node name", n)
			}
			names[n] = true
		}
		if tr.SourceDescription != "" {
			withDesc++
		}
		if len(tr.Relationship) == 0 || len(tr.Relationship) > MaxRelationshipLen || strings.ContainsAny(tr.Relationship, "/.") {
			t.Fatalf("bad relationship %q", tr.Relationship)
		}
		rels[tr.Relationship] = true
		if tr.SourceType == "" || tr.TargetType == "" {
			t.Fatalf("missing type in %+v", tr)
		}
	}
	for n := range names {
		k := engine.NormalizeName(n)
		if other, dup := keys[k]; dup {
			t.Fatalf("%q and %q would merge in kgctx (key %q)", n, other, k)
		}
		keys[k] = n
	}
	if len(names) != f.Entities || f.Entities < 14_500 || f.Entities > 14_541 {
		t.Errorf("distinct node names = %d, Entities = %d; want ~14.5k", len(names), f.Entities)
	}
	for r := range rels {
		if strings.HasSuffix(r, "_2") {
			t.Errorf("relationship %q needed a collision counter", r)
		}
	}
	if len(rels) != 237 || f.Relations != 237 {
		t.Errorf("relationships = %d (Relations %d), want 237", len(rels), f.Relations)
	}
	if f.Renamed == 0 || !names["Washington County (2)"] {
		t.Errorf("expected duplicate labels to be disambiguated (renamed %d)", f.Renamed)
	}
	if withDesc < len(f.Triplets)*9/10 || f.WithDescription < f.Entities*9/10 {
		t.Errorf("descriptions on %d/%d triplet sources, %d/%d entities: want most", withDesc, len(f.Triplets), f.WithDescription, f.Entities)
	}
	if len(f.Queries) < 5000 || len(f.Queries) != len(f.QueryHeads) {
		t.Errorf("queries = %d (heads %d), want thousands", len(f.Queries), len(f.QueryHeads))
	}
	for i, h := range f.QueryHeads {
		if !names[h] {
			t.Fatalf("query %q: head %q is not a node", f.Queries[i], h)
		}
	}
	t.Logf("first triplet %+v", f.Triplets[0])
	t.Logf("sample queries %q", f.Queries[:5])

	// Each yields the triplets in order, as copies.
	i := 0
	if err := f.Each(func(tr *engine.TripletInput) error {
		if tr.Source != f.Triplets[i].Source || tr.Target != f.Triplets[i].Target {
			t.Fatalf("Each row %d differs", i)
		}
		tr.Source = "mutated"
		i++
		return nil
	}); err != nil || i != len(f.Triplets) || f.Triplets[0].Source == "mutated" {
		t.Errorf("Each: err=%v rows=%d first=%q", err, i, f.Triplets[0].Source)
	}
}

func TestFB15kReader(t *testing.T) {
	if testing.Short() {
		t.Skip("encodes 272k triplets: skipped in -short mode")
	}
	dir := datasets(t)
	rc, err := FB15kReader(dir)
	skipIfMissing(t, err)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	n := 0
	for sc.Scan() {
		if n == 0 {
			var tr engine.TripletInput
			if err := json.Unmarshal(sc.Bytes(), &tr); err != nil || tr.Source == "" || tr.Relationship == "" {
				t.Fatalf("first line %q: %v", sc.Text(), err)
			}
			if !strings.Contains(sc.Text(), `"sourceDescription"`) {
				t.Errorf("expected camelCase json tags, got %s", sc.Text())
			}
		}
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 272_115 {
		t.Errorf("ndjson lines = %d, want 272115", n)
	}
}
