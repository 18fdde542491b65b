package engine

import "testing"

func TestNormalizeName(t *testing.T) {
	same := [][]string{
		{"AuthService", "auth_service", "Auth-Service", "auth service", "AUTH  SERVICE", " authService "},
		{"Straße", "straße", "STRAßE"},
		{"pkg/http/router", "PKG/HTTP/Router"},
	}
	for _, group := range same {
		want := NormalizeName(group[0])
		for _, s := range group[1:] {
			if got := NormalizeName(s); got != want {
				t.Errorf("NormalizeName(%q) = %q, want %q (same as %q)", s, got, want, group[0])
			}
		}
	}
	differ := [][2]string{{"pkg/auth", "pkg.auth"}, {"AuthService", "AuthServices"}, {"a1", "a2"}}
	for _, d := range differ {
		if NormalizeName(d[0]) == NormalizeName(d[1]) {
			t.Errorf("%q and %q normalise alike", d[0], d[1])
		}
	}
	if got := NormalizeName("ÉCOLE_Été"); got != "écoleété" {
		t.Errorf("unicode fold: %q", got)
	}
}

func TestNormalizeRelationship(t *testing.T) {
	cases := map[string]string{
		"depends_on":        "depends_on",
		"dependsOn":         "depends_on",
		"Depends On":        "depends_on",
		"DEPENDS-ON":        "depends_on",
		"/film/film/genre":  "film_film_genre",
		"HTTPCalls":         "http_calls",
		"  calls  ":         "calls",
		"resolved by (fix)": "resolved_by_fix",
		"!!!":               "",
		"v2Uses":            "v2_uses",
		"_hypernym":         "hypernym",
	}
	for in, want := range cases {
		if got := NormalizeRelationship(in); got != want {
			t.Errorf("NormalizeRelationship(%q) = %q, want %q", in, got, want)
		}
	}
}
