package compose

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSanitize(t *testing.T) {
	cases := []struct{ in, want string }{
		{"AuthService", "AuthService"},
		{"  Auth \t Service  ", "Auth Service"},
		{"Auth\nService", "Auth Service"},
		{"x\r\n## Injected heading", "x ## Injected heading"},
		{"a\u2028- fake item", "a - fake item"},
		{"evil\u202eoverride\u200bzero", "eviloverridezero"},
		{"bell\x07\x1b[31mred", "bell[31mred"},
		{"bad\xffutf8", "badutf8"},
		{"\n\n", ""},
		{strings.Repeat("é", 130), strings.Repeat("é", 119) + "…"},
		{strings.Repeat("a", 120), strings.Repeat("a", 120)},
		{strings.Repeat("a", 121), strings.Repeat("a", 119) + "…"},
	}
	for _, c := range cases {
		if got := Sanitize(c.in, MaxNameRunes); got != c.want {
			t.Errorf("Sanitize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = Sanitize("AuthService", MaxNameRunes) }); n != 0 {
		t.Errorf("clean name allocates %v", n)
	}
}

func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"AuthService", "a\nb", "## h", "\u2028x", "\x00", strings.Repeat("ü", 200)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Sanitize(s, MaxNameRunes)
		if strings.ContainsAny(got, "\n\r\u2028\u2029\u0085\v\f") {
			t.Fatalf("line break survived: %q", got)
		}
		if !utf8.ValidString(got) || utf8.RuneCountInString(got) > MaxNameRunes {
			t.Fatalf("bad output %q", got)
		}
		if strings.HasPrefix(got, " ") || strings.HasSuffix(got, " ") || strings.Contains(got, "  ") {
			t.Fatalf("whitespace not folded: %q", got)
		}
	})
}

func TestTokens(t *testing.T) {
	for s, want := range map[string]int{"": 0, "a": 1, "abcd": 1, "abcde": 2, "→→→→": 1, "→→→→→": 2} {
		if got := Tokens(s); got != want {
			t.Errorf("Tokens(%q) = %d, want %d", s, got, want)
		}
	}
}

func FuzzSanitizedLen(f *testing.F) {
	f.Add("AuthService")
	f.Add(" a  b\n")
	f.Add(strings.Repeat("ß", 130))
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := SanitizedLen(s, MaxNameRunes), utf8.RuneCountInString(Sanitize(s, MaxNameRunes)); got != want {
			t.Fatalf("SanitizedLen(%q) = %d, want %d", s, got, want)
		}
	})
}

// checkClean: a string isClean passes is what the rune loop makes of it,
// so AppendSanitized may append it as is.
func checkClean(t *testing.T, s string) {
	t.Helper()
	if isClean(s, MaxNameRunes) {
		if got := string(appendRunes([]byte("pre"), s, MaxNameRunes)); got != "pre"+s {
			t.Fatalf("isClean(%q), but the rune loop makes %q", s, got[3:])
		}
	}
}

func TestIsCleanIsSanitized(t *testing.T) {
	for c := range 128 {
		ch := string(rune(c))
		for _, s := range []string{ch, "a" + ch + "b", ch + "a", "a" + ch, "a " + ch + " b", ch + ch + "x" + ch + ch} {
			checkClean(t, s)
		}
	}
	for _, s := range []string{"AuthService", "a b c", strings.Repeat("a ", 80), strings.Repeat("a", MaxNameRunes), strings.Repeat("a", MaxNameRunes+1)} {
		checkClean(t, s)
	}
}

func FuzzIsCleanIsSanitized(f *testing.F) {
	for _, s := range []string{"AuthService", "a b", "a  b", " x", "\x7f", strings.Repeat("ab ", 50)} {
		f.Add(s)
	}
	f.Fuzz(checkClean)
}
