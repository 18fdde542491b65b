package compose

import (
	"strings"
	"testing"
	"unicode"
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

// sanitizeRef is AppendSanitized as it was before its ASCII fast paths:
// every rune classified by the unicode package.
func sanitizeRef(s string, maxRunes int) string {
	var dst []byte
	runes, pendingSpace, cut := 0, false, -1
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
			continue
		case unicode.IsSpace(r) || r == '\u2028' || r == '\u2029' || r == '\u0085':
			pendingSpace = len(dst) > 0
			continue
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Co, r) || unicode.Is(unicode.Cs, r):
			continue
		}
		need := 1
		if pendingSpace {
			need = 2
		}
		if runes+need > maxRunes-1 && cut < 0 {
			cut = len(dst)
		}
		if runes+need > maxRunes {
			return string(append(dst[:cut], "…"...))
		}
		if pendingSpace {
			dst = append(dst, ' ')
			runes++
			pendingSpace = false
		}
		dst = utf8.AppendRune(dst, r)
		runes++
	}
	return string(dst)
}

// TestAppendSanitizedMatchesReference: the ASCII fast paths change no
// output, for every ASCII character around letters and at the ends, and
// for the fuzz seeds below.
func TestAppendSanitizedMatchesReference(t *testing.T) {
	check := func(s string) {
		t.Helper()
		if got, want := string(AppendSanitized([]byte("pre"), s, MaxNameRunes)), "pre"+sanitizeRef(s, MaxNameRunes); got != want {
			t.Fatalf("AppendSanitized(%q) = %q, reference %q", s, got, want)
		}
	}
	for c := range 128 {
		ch := string(rune(c))
		for _, s := range []string{ch, "a" + ch + "b", ch + "a", "a" + ch, "a " + ch + " b", ch + ch + "x" + ch + ch} {
			check(s)
		}
	}
	for _, s := range []string{"AuthService", "a\u00a0b", "x\u2028y", "\u200bz", strings.Repeat("a ", 80), strings.Repeat("a", 200), "é\t\x7f"} {
		check(s)
	}
}

func FuzzAppendSanitized(f *testing.F) {
	for _, s := range []string{"AuthService", "a\nb", " \t x", "\x7f\x00", "\u00a0\u0085", strings.Repeat("ab ", 50)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(AppendSanitized(nil, s, MaxNameRunes)), sanitizeRef(s, MaxNameRunes); got != want {
			t.Fatalf("AppendSanitized(%q) = %q, reference %q", s, got, want)
		}
	})
}
