package embed

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
)

func newLexical(tb testing.TB, dim int) *Lexical {
	tb.Helper()
	l, err := NewLexical(LexicalOptions{Dim: dim})
	if err != nil {
		tb.Fatalf("NewLexical(%d): %v", dim, err)
	}
	return l
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func isEmptyVector(v []float32) bool {
	if len(v) == 0 || v[0] != 1 {
		return false
	}
	for _, x := range v[1:] {
		if x != 0 {
			return false
		}
	}
	return true
}

func TestLexicalOptions(t *testing.T) {
	l := newLexical(t, 0)
	if l.Dim() != DefaultLexicalDim || l.Name() != "lexical-v1/128" {
		t.Fatalf("defaults: Dim %d Name %q", l.Dim(), l.Name())
	}
	if got := newLexical(t, 384).Name(); got != "lexical-v1/384" {
		t.Fatalf("Name = %q", got)
	}
	for _, d := range []int{-1, 1, MaxLexicalDim + 1} {
		if _, err := NewLexical(LexicalOptions{Dim: d}); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("Dim %d: err = %v, want ErrInvalidOptions", d, err)
		}
	}
}

func TestLexicalDeterministicAndUnit(t *testing.T) {
	texts := []string{
		"AuthService service handles login tokens",
		"fix null pointer in auth middleware",
		"x",
		"HTTPServer2 v2.3.1 /usr/lib/foo_bar-baz",
		strings.Repeat("verylongidentifier", 40),
	}
	a, b := newLexical(t, 0), newLexical(t, 0)
	for _, s := range texts {
		v1, v2 := a.EmbedInto(nil, s), b.EmbedInto(nil, s)
		if len(v1) != 128 {
			t.Fatalf("len = %d", len(v1))
		}
		for i := range v1 {
			if v1[i] != v2[i] {
				t.Fatalf("%q: not deterministic at %d", s, i)
			}
		}
		if n := norm(v1); math.Abs(n-1) > 1e-5 {
			t.Fatalf("%q: norm %v", s, n)
		}
	}
	// Golden values pin the feature design: if this fails, tokenisation,
	// hashing or weights changed and lexicalVersion must be bumped, since
	// stored indexes hold vectors of the old design under the same Name.
	golden := map[int]float32{6: -0.133844, 9: -0.437375, 13: -0.133844, 15: -0.133844,
		18: -0.133844, 36: 0.177059, 52: 0.505884, 58: -0.505884, 71: -0.177059,
		102: -0.177059, 108: -0.252942, 109: 0.133844, 117: -0.133844, 124: -0.177059}
	v := a.EmbedInto(nil, "AuthService")
	for i, x := range v {
		if math.Abs(float64(x-golden[i])) > 1e-6 {
			t.Fatalf("golden changed at %d: got %v want %v (bump lexicalVersion)", i, x, golden[i])
		}
	}
}

func TestLexicalEmbedMatchesEmbedInto(t *testing.T) {
	l := newLexical(t, 64)
	texts := []string{"alpha beta", "", "Gamma_delta", "ε λ"}
	vs, err := l.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("len = %d", len(vs))
	}
	for i, s := range texts {
		w := l.EmbedInto(nil, s)
		if len(vs[i]) != 64 || cap(vs[i]) != 64 {
			t.Fatalf("vector %d: len %d cap %d", i, len(vs[i]), cap(vs[i]))
		}
		for j := range w {
			if vs[i][j] != w[j] {
				t.Fatalf("text %d differs at %d", i, j)
			}
		}
	}
	// Capacity is capped: appending to one vector must not clobber the next.
	before := vs[1][0]
	_ = append(vs[0], 42)
	if vs[1][0] != before {
		t.Fatal("append to vs[0] overwrote vs[1]")
	}
}

func TestLexicalEmptyText(t *testing.T) {
	l := newLexical(t, 0)
	for _, s := range []string{"", "   ", "\t\n", "!!! --- ...", "_-_", "\xff\xfe", "\u0301"} {
		v := l.EmbedInto(nil, s)
		if !isEmptyVector(v) {
			t.Errorf("%q: want EmptyVector, got %v...", s, v[:4])
		}
	}
	// Stopwords alone are not blank.
	if v := l.EmbedInto(nil, "the"); isEmptyVector(v) {
		t.Error(`"the" embedded as EmptyVector`)
	}
}

func TestLexicalSimilarity(t *testing.T) {
	l := newLexical(t, 0)
	sim := func(a, b string) float32 { return Dot(l.EmbedInto(nil, a), l.EmbedInto(nil, b)) }
	closer := func(q, near, far string) {
		t.Helper()
		sn, sf := sim(q, near), sim(q, far)
		if sn <= sf {
			t.Errorf("sim(%q,%q)=%.3f not > sim(%q,%q)=%.3f", q, near, sn, q, far, sf)
		}
	}
	for _, near := range []string{"auth_service", "auth service", "auth-service", "AUTH_SERVICE", "authService", "authservice"} {
		closer("AuthService", near, "PaymentGateway")
	}
	if s := sim("AuthService", "auth_service"); s < 0.99 {
		t.Errorf("AuthService vs auth_service = %.3f, want ~1 (same words, same identifier)", s)
	}
	if s := sim("AuthService", "auth service"); s < 0.9 {
		t.Errorf("AuthService vs 'auth service' = %.3f, want >= 0.9", s)
	}
	closer("auth middleware", "AuthMiddleware", "DatabasePool")
	closer("HTTPServer", "http server", "HttpClient")
	closer("token", "tokens", "tokenizer")
	closer("fix null pointer in auth middleware",
		"AuthMiddleware middleware checks bearer tokens",
		"DatabasePool service pools postgres connections")

	// More shared words, more similar.
	q := "auth token cache"
	s3, s2, s1, s0 := sim(q, "cache token auth"), sim(q, "auth token store"), sim(q, "auth payment store"), sim(q, "user payment store")
	if !(s3 > s2 && s2 > s1 && s1 > s0) {
		t.Errorf("shared-word ordering: 3:%.3f 2:%.3f 1:%.3f 0:%.3f", s3, s2, s1, s0)
	}
	if s0 > 0.3 {
		t.Errorf("no shared word but sim %.3f", s0)
	}
}

func TestLexicalUnicode(t *testing.T) {
	l := newLexical(t, 0)
	sim := func(a, b string) float32 { return Dot(l.EmbedInto(nil, a), l.EmbedInto(nil, b)) }
	cases := []string{"Straße", "ÜBERGRÖßE", "認証サービス", "Привет мир", "مرحبا", "é", "🙂 emoji 🙂", "İstanbul"}
	for _, s := range cases {
		v := l.EmbedInto(nil, s)
		if n := norm(v); math.Abs(n-1) > 1e-5 {
			t.Errorf("%q: norm %v", s, n)
		}
	}
	// Case folding works beyond ASCII.
	if s := sim("ПРИВЕТ мир", "привет МИР"); s < 0.999 {
		t.Errorf("Cyrillic case folding: %.3f", s)
	}
	// Combining marks stay inside the word: "e\u0301" is one word.
	if s := sim("cafe\u0301 menu", "cafe\u0301 menu"); s < 0.999 {
		t.Errorf("combining mark: %.3f", s)
	}
	// CJK without spaces still matches on shared characters.
	if sim("認証サービス", "認証") <= sim("認証サービス", "決済") {
		t.Error("CJK: shared ideographs not closer")
	}
}

func TestLexicalEmbedIntoZeroAlloc(t *testing.T) {
	l := newLexical(t, 0)
	dst := make([]float32, l.Dim())
	texts := []string{"fix null pointer in auth middleware", "AuthService", "認証サービス Straße", ""}
	allocs := testing.AllocsPerRun(200, func() {
		for _, s := range texts {
			dst = l.EmbedInto(dst, s)
		}
	})
	if allocs != 0 {
		t.Fatalf("EmbedInto allocs = %v, want 0", allocs)
	}
}

func TestLexicalEmbedCancelled(t *testing.T) {
	l := newLexical(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Embed(ctx, []string{"a"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestLexicalConcurrent(t *testing.T) {
	l := newLexical(t, 0)
	want := l.EmbedInto(nil, "concurrent AuthService use")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			vs, err := l.Embed(context.Background(), []string{"concurrent AuthService use", "other"})
			if err != nil {
				t.Error(err)
				return
			}
			for i := range want {
				if vs[0][i] != want[i] {
					t.Error("concurrent result differs")
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestPartSplitting(t *testing.T) {
	// Split points are observable through similarity: each pair must embed
	// identically because they tokenise to the same parts and compound.
	l := newLexical(t, 0)
	same := [][2]string{
		{"AuthService", "auth_service"},
		{"HTTPServer", "http_server"},
		{"oauth2Client", "oauth_2_client"},
		{"parseJSONBody", "parse-json-body"},
		{"getV2Users", "get_v_2_users"},
	}
	for _, p := range same {
		a, b := l.EmbedInto(nil, p[0]), l.EmbedInto(nil, p[1])
		if s := Dot(a, b); s < 0.9999 {
			t.Errorf("%q vs %q: %.4f, want identical", p[0], p[1], s)
		}
	}
}

func FuzzLexical(f *testing.F) {
	for _, s := range []string{"", " ", "AuthService", "auth_service v2", "認証サービス", "\xff", "e\u0301", "A1b2C3", strings.Repeat("ab", 100)} {
		f.Add(s)
	}
	l := newLexical(f, 32)
	f.Fuzz(func(t *testing.T, s string) {
		v := l.EmbedInto(nil, s)
		if len(v) != 32 {
			t.Fatalf("len %d", len(v))
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("%q: non-finite component", s)
			}
		}
		if isEmptyVector(v) {
			// Documented blank behaviour: only for text without letters
			// or digits (or, never seen, exactly cancelling features).
			return
		}
		if n := norm(v); math.Abs(n-1) > 1e-5 {
			t.Fatalf("%q: norm %v", s, n)
		}
	})
}

func BenchmarkLexical_Embed(b *testing.B) {
	l := newLexical(b, 0)
	texts := []string{
		"AuthService", "PaymentGateway", "auth_service", "DatabasePool",
		"UserRepository", "handleLoginRequest", "redis", "JWTValidator",
		"http_server", "OrderEventPublisher", "config.yaml", "KafkaConsumerGroup",
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Embed(ctx, texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(texts))/b.Elapsed().Seconds(), "texts/s")
}

func BenchmarkLexical_EmbedInto(b *testing.B) {
	l := newLexical(b, 0)
	dst := make([]float32, l.Dim())
	q := "fix null pointer in auth middleware"
	b.ReportAllocs()
	for b.Loop() {
		dst = l.EmbedInto(dst, q)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "texts/s")
}

func BenchmarkLexical_NodeText(b *testing.B) {
	l := newLexical(b, 0)
	dst := make([]float32, l.Dim())
	q := "AuthService service handles login tokens, refresh tokens and session cookies for the web frontend"
	b.ReportAllocs()
	b.SetBytes(int64(len(q)))
	for b.Loop() {
		dst = l.EmbedInto(dst, q)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "texts/s")
}
