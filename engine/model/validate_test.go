package model

import (
	"math"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func FuzzValidateTriplet(f *testing.F) {
	f.Add("AuthService", "depends_on", "PostgresDB", "service", 0.5, "proj_2")
	f.Add(" a ", "calls\n", "b", "", -1.0, "")
	f.Add("\xff", "r", "t", "", math.NaN(), "bad id")
	f.Add(strings.Repeat("x", 1025), "r", "t", "", 1.0, "")
	f.Add("s", strings.Repeat("aB", 400), "t", "", 1.0, "")
	f.Add("s", strings.Repeat("Ⱥ", 400), "t", "", 1.0, "")
	f.Fuzz(func(t *testing.T, src, rel, dst, typ string, w float64, proj string) {
		in := TripletInput{Source: src, Relationship: rel, Target: dst, SourceType: typ, Weight: &w, TargetProjectID: proj}
		err := ValidateTriplet(&in, Limits{}, 0)
		if err != nil {
			return
		}
		for _, s := range []string{in.Source, in.Target} {
			if s == "" || s != strings.TrimSpace(s) || !utf8.ValidString(s) || len(s) > 1024 {
				t.Fatalf("accepted bad name %q", s)
			}
		}
		if in.Relationship == "" || len(in.Relationship) > 1024 || NormalizeRelationship(in.Relationship) == "" || len(NormalizeRelationship(in.Relationship)) > 1024 ||
			strings.IndexFunc(in.Relationship, unicode.IsControl) >= 0 {
			t.Fatalf("accepted bad relationship %q", in.Relationship)
		}
		if math.IsNaN(w) || w < 0 || w > 1 {
			t.Fatalf("accepted weight %v", w)
		}
		if proj != "" && ValidateID(proj) != nil {
			t.Fatalf("accepted project %q", proj)
		}
		// Validation is idempotent.
		again := in
		if err := ValidateTriplet(&again, Limits{}, 0); err != nil || again.Source != in.Source {
			t.Fatalf("second validation differs: %v", err)
		}
	})
}
