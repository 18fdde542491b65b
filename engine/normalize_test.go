package engine

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestNormalizeName pins the identity rule (defect 12): separators and case
// boundaries fold to one '_', they do not vanish, so names that differ by
// where a separator sits stay distinct.
func TestNormalizeName(t *testing.T) {
	keys := map[string]string{
		"AuthService":      "auth_service",
		"auth_service":     "auth_service",
		"auth-service":     "auth_service",
		"Auth Service":     "auth_service",
		"AUTH_SERVICE":     "auth_service",
		"authService":      "auth_service",
		"Auth-Service":     "auth_service",
		"AUTH  SERVICE":    "auth_service",
		" authService ":    "auth_service",
		"auth - service":   "auth_service",
		"auth _ service":   "auth_service",
		"auth__-- service": "auth__service", // underscores are counted
		"__init__":         "__init__",
		"  _private ":      "_private",
		"/m/01n4w_":        "/m/01n4w_",
		"/m/060__7":        "/m/060__7",
		"HTTPServer":       "http_server",
		"parseJSON":        "parse_json",
		"JSONParser":       "json_parser",
		"XMLHttpRequest":   "xml_http_request",
		"HTTPSConn":        "https_conn",
		"userIDs":          "user_ids", // an acronym's plural is not a new word
		"GetIDsFor":        "get_ids_for",
		"v1_2":             "v1_2",
		"v12":              "v12",
		"V12":              "v12",
		"MD5Hash":          "md5hash", // no boundary next to a digit
		"kill_src_2_10":    "kill_src_2_10",
		"kill_src_21_0":    "kill_src_21_0",
		"/m/015g7":         "/m/015g7",
		"/m/015g_7":        "/m/015g_7",
		"pkg/auth":         "pkg/auth",
		"pkg.auth":         "pkg.auth",
		"pkg/Auth":         "pkg/auth",
		"pkg/http/Router":  "pkg/http/router",
		"ÉCOLE_Été":        "école_été",
		"ÉcoleÉté":         "école_été",
		"Straße":           "straße",
		"STRAẞE":           "straße",
		"STRAßE":           "straße", // ß has no upper case: it is no boundary
		"\u212aelvin":      "kelvin", // Kelvin sign folds to k
		"a\u00a0b":         "a_b",    // no-break space is whitespace
		"a\u2003\tb":       "a_b",
		"ǅemal":            "ǆemal", // title case folds
		"x𝐀𝐁":              "x𝐀𝐁",   // caseless letters have no boundary
		"-_-":              "_",
		"- -":              "",
		"":                 "",
	}
	for in, want := range keys {
		if got := NormalizeName(in); got != want {
			t.Errorf("NormalizeName(%q) = %q, want %q", in, got, want)
		}
	}
	differ := [][2]string{
		{"v1_2", "v12"}, {"kill_src_2_10", "kill_src_21_0"}, {"/m/015g7", "/m/015g_7"},
		{"pkg/auth", "pkg.auth"}, {"AuthService", "AuthServices"}, {"a1", "a2"}, {"a b", "ab"},
		{"pkg/auth", "pkg/ auth"}, {"/m/01n4w", "/m/01n4w_"}, {"/m/060_7", "/m/060__7"},
		{"/m/0__wm", "/m/0_wm_"}, {"_private", "private"},
	}
	for _, d := range differ {
		if NormalizeName(d[0]) == NormalizeName(d[1]) {
			t.Errorf("%q and %q normalise alike", d[0], d[1])
		}
	}
}

// TestAppendNormalizedNameAllocs: building a key in a reused buffer
// allocates nothing, on the ASCII fast path and off it.
func TestAppendNormalizedNameAllocs(t *testing.T) {
	buf := make([]byte, 0, 64)
	for _, name := range []string{"HTTPServer_Config-v2", "ÉcoleÉté straße"} {
		if n := testing.AllocsPerRun(100, func() { buf = AppendNormalizedName(buf[:0], name) }); n != 0 {
			t.Errorf("AppendNormalizedName(%q) allocates %v times", name, n)
		}
	}
	// Appending keeps what the buffer held; a leading separator of the
	// appended name is still dropped.
	if got := string(AppendNormalizedName([]byte("x:"), " Auth Service")); got != "x:auth_service" {
		t.Errorf("append = %q", got)
	}
}

// checkNormalizeProps checks the properties the store relies on for one
// name: the key is a fixed point, and dropping its separators gives the
// old (version-2) key, so names equal under the new rule were equal under
// the old one (which is what makes the migration need no split).
func checkNormalizeProps(t *testing.T, s string) {
	t.Helper()
	k := NormalizeName(s)
	if again := NormalizeName(k); again != k {
		t.Fatalf("not idempotent: %q -> %q -> %q", s, k, again)
	}
	if old := normalizeNameV2(s); strings.ReplaceAll(k, "_", "") != old {
		t.Fatalf("%q: new key %q without separators is not the old key %q", s, k, old)
	}
	if strings.Count(k, "_") < strings.Count(s, "_") {
		t.Fatalf("%q: key %q lost an underscore", s, k)
	}
}

// TestNormalizeNameProperties runs the properties over random names drawn
// from an alphabet rich in the cases that matter: separators, case
// boundaries, digits, punctuation and runes whose folding is unusual.
func TestNormalizeNameProperties(t *testing.T) {
	alphabet := []rune("aAbBzZ09_-. /\t\u00a0\u2003ÉéßẞſK\u212aǅǆǄ𝐀ıİΣσςﬀ")
	r := rand.New(rand.NewPCG(1, 2))
	var sb strings.Builder
	keys := map[string]string{}
	for range 200_000 {
		sb.Reset()
		for n := r.IntN(8); n >= 0; n-- {
			sb.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		s := sb.String()
		checkNormalizeProps(t, s)
		// Equal under the new rule implies equal under the old one: the
		// keys seen so far act as the oracle.
		k := NormalizeName(s)
		if prev, ok := keys[k]; ok && normalizeNameV2(prev) != normalizeNameV2(s) {
			t.Fatalf("%q and %q share new key %q but not the old key", prev, s, k)
		}
		keys[k] = s
	}
}

func FuzzNormalizeName(f *testing.F) {
	for _, s := range []string{"AuthService", "HTTPServer", "/m/015g_7", "ÉCOLE_Été", "STRAßE", "userIDs", "a\u00a0B", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(checkNormalizeProps)
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
