package tripletio

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/engine"
)

func TestValidate(t *testing.T) {
	base := func() engine.TripletInput {
		return engine.TripletInput{Source: "AuthService", Relationship: "depends_on", Target: "PostgresDB"}
	}
	vec := func(xs ...float32) []float32 { return xs }
	cases := []struct {
		name   string
		mutate func(*engine.TripletInput)
		lim    Limits
		is     error  // nil: valid
		field  string // named in the message
	}{
		{"minimal", func(*engine.TripletInput) {}, Limits{}, nil, ""},
		{"all fields", func(t *engine.TripletInput) {
			t.SourceType, t.TargetType, t.SourceDescription, t.TargetDescription = "service", "db", "Auth", "Main DB"
			t.Weight = ptr(0.0)
			t.SourceVector, t.TargetVector = vec(1, 2, 3), vec(0, 0, -1)
			t.SourceProjectID, t.TargetProjectID, t.TargetOrgID = "proj_xyz", "proj-2.a:b", "org_123"
			t.Provenance = &engine.Provenance{ObservationID: "obs_1", SessionID: "ses_1"}
		}, Limits{Dim: 3}, nil, ""},
		{"weight 1", func(t *engine.TripletInput) { t.Weight = ptr(1.0) }, Limits{}, nil, ""},
		{"unicode names", func(t *engine.TripletInput) { t.Source, t.Relationship = "Zürich 東京 🚀", "liegt_in" }, Limits{}, nil, ""},
		{"1024-byte name", func(t *engine.TripletInput) { t.Source = strings.Repeat("a", 1024) }, Limits{}, nil, ""},
		{"1024 bytes after trimming", func(t *engine.TripletInput) { t.Target = "  " + strings.Repeat("é", 512) + "\n" }, Limits{}, nil, ""},
		{"name may contain tab", func(t *engine.TripletInput) { t.Source = "a\tb" }, Limits{}, nil, ""},
		{"128-byte relationship", func(t *engine.TripletInput) { t.Relationship = strings.Repeat("r", 128) }, Limits{}, nil, ""},

		{"empty source", func(t *engine.TripletInput) { t.Source = "" }, Limits{}, ErrInvalidName, "source"},
		{"whitespace-only source", func(t *engine.TripletInput) { t.Source = " \t\u00a0\n" }, Limits{}, ErrInvalidName, "source"},
		{"whitespace-only target", func(t *engine.TripletInput) { t.Target = "   " }, Limits{}, ErrInvalidName, "target"},
		{"1025-byte name", func(t *engine.TripletInput) { t.Source = strings.Repeat("a", 1025) }, Limits{}, ErrInvalidName, "source"},
		{"1025-byte target", func(t *engine.TripletInput) { t.Target = strings.Repeat("a", 1025) }, Limits{}, ErrInvalidName, "target"},
		{"custom name limit", func(t *engine.TripletInput) { t.Source = "abcdef" }, Limits{MaxNameBytes: 5}, ErrInvalidName, "source"},
		{"invalid UTF-8 source", func(t *engine.TripletInput) { t.Source = "caf\xe9" }, Limits{}, ErrInvalidName, "source"},
		{"invalid UTF-8 target", func(t *engine.TripletInput) { t.Target = "\xff\xfe" }, Limits{}, ErrInvalidName, "target"},
		{"empty relationship", func(t *engine.TripletInput) { t.Relationship = " " }, Limits{}, ErrInvalidRelationship, "relationship"},
		{"129-byte relationship", func(t *engine.TripletInput) { t.Relationship = strings.Repeat("r", 129) }, Limits{}, ErrInvalidRelationship, "relationship"},
		{"relationship with newline", func(t *engine.TripletInput) { t.Relationship = "depends\non" }, Limits{}, ErrInvalidRelationship, "U+000A"},
		{"relationship with tab", func(t *engine.TripletInput) { t.Relationship = "a\tb" }, Limits{}, ErrInvalidRelationship, "control"},
		{"relationship with NUL", func(t *engine.TripletInput) { t.Relationship = "a\x00b" }, Limits{}, ErrInvalidRelationship, "control"},
		{"relationship with DEL", func(t *engine.TripletInput) { t.Relationship = "a\x7fb" }, Limits{}, ErrInvalidRelationship, "control"},
		{"relationship with C1 control", func(t *engine.TripletInput) { t.Relationship = "a\u0085b" }, Limits{}, ErrInvalidRelationship, "control"},
		{"relationship invalid UTF-8", func(t *engine.TripletInput) { t.Relationship = "r\xc3" }, Limits{}, ErrInvalidRelationship, "UTF-8"},
		{"type too long", func(t *engine.TripletInput) { t.SourceType = strings.Repeat("t", 257) }, Limits{}, ErrInvalidType, "sourceType"},
		{"type invalid UTF-8", func(t *engine.TripletInput) { t.TargetType = "\x80" }, Limits{}, ErrInvalidType, "targetType"},
		{"description too long", func(t *engine.TripletInput) { t.TargetDescription = strings.Repeat("d", 16385) }, Limits{}, ErrInvalidDescription, "targetDescription"},
		{"description invalid UTF-8", func(t *engine.TripletInput) { t.SourceDescription = "ok \xed\xa0\x80" }, Limits{}, ErrInvalidDescription, "sourceDescription"},
		{"NaN weight", func(t *engine.TripletInput) { t.Weight = ptr(math.NaN()) }, Limits{}, ErrInvalidWeight, "weight"},
		{"+Inf weight", func(t *engine.TripletInput) { t.Weight = ptr(math.Inf(1)) }, Limits{}, ErrInvalidWeight, "weight"},
		{"negative weight", func(t *engine.TripletInput) { t.Weight = ptr(-0.01) }, Limits{}, ErrInvalidWeight, "weight"},
		{"weight above 1", func(t *engine.TripletInput) { t.Weight = ptr(1.0001) }, Limits{}, ErrInvalidWeight, "weight"},
		{"vector wrong dim", func(t *engine.TripletInput) { t.SourceVector = vec(1, 2) }, Limits{Dim: 3}, ErrInvalidVector, "sourceVector"},
		{"vector NaN", func(t *engine.TripletInput) { t.TargetVector = vec(1, float32(math.NaN()), 3) }, Limits{Dim: 3}, ErrInvalidVector, "targetVector[1]"},
		{"vector Inf, dim unchecked", func(t *engine.TripletInput) { t.TargetVector = vec(float32(math.Inf(-1))) }, Limits{}, ErrInvalidVector, "targetVector[0]"},
		{"vector any length when Dim 0", func(t *engine.TripletInput) { t.SourceVector = vec(1, 2, 3, 4, 5) }, Limits{}, nil, ""},
		{"project id bad char", func(t *engine.TripletInput) { t.SourceProjectID = "proj xyz" }, Limits{}, ErrInvalidProjectID, "sourceProjectId"},
		{"project id slash", func(t *engine.TripletInput) { t.TargetProjectID = "a/b" }, Limits{}, ErrInvalidProjectID, "targetProjectId"},
		{"project id too long", func(t *engine.TripletInput) { t.TargetProjectID = strings.Repeat("p", 129) }, Limits{}, ErrInvalidProjectID, "targetProjectId"},
		{"project id 128 bytes", func(t *engine.TripletInput) { t.TargetProjectID = strings.Repeat("p", 128) }, Limits{}, nil, ""},
		{"org id non-ASCII", func(t *engine.TripletInput) { t.TargetOrgID = "orgé" }, Limits{}, ErrInvalidOrgID, "targetOrgId"},
		{"provenance invalid UTF-8", func(t *engine.TripletInput) {
			t.Provenance = &engine.Provenance{SessionID: "\xff"}
		}, Limits{}, ErrInvalidProvenance, "provenance.sessionId"},
		{"negative limit", func(*engine.TripletInput) {}, Limits{MaxRelBytes: -1}, ErrInvalidOptions, "MaxRelBytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := base()
			c.mutate(&tr)
			err := Validate(&tr, c.lim)
			if c.is == nil {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.field) {
				t.Fatalf("error %v, want %v naming %q", err, c.is, c.field)
			}
			if !strings.HasPrefix(err.Error(), "tripletio: ") {
				t.Fatalf("error %q lacks the package prefix", err)
			}
		})
	}
}

func TestValidate_TrimsInPlace(t *testing.T) {
	tr := engine.TripletInput{Source: "  Auth Service\n", Relationship: "\tdepends_on ", Target: "\u00a0DB\u3000"}
	if err := Validate(&tr, Limits{}); err != nil {
		t.Fatal(err)
	}
	if tr.Source != "Auth Service" || tr.Relationship != "depends_on" || tr.Target != "DB" {
		t.Fatalf("not trimmed: %q %q %q", tr.Source, tr.Relationship, tr.Target)
	}
}
