package treesitter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func newRuntime(t *testing.T, o *Options) *Runtime {
	t.Helper()
	r, err := New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(context.Background()) })
	return r
}

// sexp prints the named nodes of a subtree as an s-expression, fields
// named: the oracle is tree-sitter's own notation.
func sexp(n Node) string {
	var b strings.Builder
	var rec func(Node)
	rec = func(n Node) {
		if f := n.Field(); f != "" {
			b.WriteString(f + ": ")
		}
		b.WriteString("(" + n.Kind())
		for c := range n.Children() {
			if c.IsNamed() {
				b.WriteString(" ")
				rec(c)
			}
		}
		b.WriteString(")")
	}
	rec(n)
	return b.String()
}

func TestParseEveryLanguage(t *testing.T) {
	r := newRuntime(t, nil)
	cases := []struct {
		lang Language
		src  string
		want string
	}{
		{Python, "def f(x):\n    return g(x)\n",
			"(module (function_definition name: (identifier) parameters: (parameters (identifier)) body: (block (return_statement (call function: (identifier) arguments: (argument_list (identifier)))))))"},
		{JavaScript, "function f(x) { return g(x); }",
			"(program (function_declaration name: (identifier) parameters: (formal_parameters (identifier)) body: (statement_block (return_statement (call_expression function: (identifier) arguments: (arguments (identifier)))))))"},
		{TypeScript, "interface I { m(): void }",
			"(program (interface_declaration name: (type_identifier) body: (interface_body (method_signature name: (property_identifier) parameters: (formal_parameters) return_type: (type_annotation (predefined_type))))))"},
		{TSX, "const a = <div>{x}</div>;",
			"(program (lexical_declaration (variable_declarator name: (identifier) value: (jsx_element open_tag: (jsx_opening_element name: (identifier)) (jsx_expression (identifier)) close_tag: (jsx_closing_element name: (identifier))))))"},
		{Java, "class A { void m() {} }",
			"(program (class_declaration name: (identifier) body: (class_body (method_declaration type: (void_type) name: (identifier) parameters: (formal_parameters) body: (block)))))"},
		{Rust, "fn main() { foo::bar(); }",
			"(source_file (function_item name: (identifier) parameters: (parameters) body: (block (expression_statement (call_expression function: (scoped_identifier path: (identifier) name: (identifier)) arguments: (arguments))))))"},
	}
	for _, c := range cases {
		tr, err := r.Parse(context.Background(), c.lang, []byte(c.src))
		if err != nil {
			t.Fatalf("%s: %v", c.lang, err)
		}
		if got := sexp(tr.Root()); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.lang, got, c.want)
		}
		if tr.Errors() != 0 {
			t.Errorf("%s: %d errors in a clean source", c.lang, tr.Errors())
		}
	}
}

func TestNodeSpansAndText(t *testing.T) {
	r := newRuntime(t, nil)
	src := "import os\n\nclass A:\n    def m(self):\n        pass\n"
	tr, err := r.Parse(context.Background(), Python, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var cls Node
	tr.Root().Walk(func(n Node) bool {
		if n.Kind() == "class_definition" {
			cls = n
		}
		return true
	})
	if cls.IsNull() {
		t.Fatal("no class_definition")
	}
	if got := cls.ChildByField("name").Text(); got != "A" {
		t.Errorf("class name %q", got)
	}
	if cls.StartLine() != 3 || cls.EndLine() != 5 {
		t.Errorf("class lines %d-%d, want 3-5", cls.StartLine(), cls.EndLine())
	}
	fn := cls.ChildByField("body").ChildOfKind("function_definition")
	if fn.ChildByField("name").Text() != "m" || fn.Parent().Parent() != cls {
		t.Errorf("method %q, parent chain broken", fn.ChildByField("name").Text())
	}
	// Keywords stay in the dump; punctuation does not.
	if fn.ChildOfKind("def").IsNull() {
		t.Error("the def keyword is not in the dump")
	}
	if !fn.ChildOfKind(":").IsNull() {
		t.Error("punctuation is in the dump")
	}
}

func TestSyntaxErrorKeepsTheRest(t *testing.T) {
	r := newRuntime(t, nil)
	src := "def good():\n    pass\n\ndef bad():\n    x = = 1\n\ndef later():\n    pass\n"
	tr, err := r.Parse(context.Background(), Python, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Errors() == 0 {
		t.Error("a broken source reports no errors")
	}
	var names []string
	tr.Root().Walk(func(n Node) bool {
		if n.Kind() == "function_definition" {
			names = append(names, n.ChildByField("name").Text())
		}
		return true
	})
	if !strings.Contains(strings.Join(names, ","), "good") || !strings.Contains(strings.Join(names, ","), "later") {
		t.Errorf("functions around the error: %v", names)
	}
}

func TestQueryPredicates(t *testing.T) {
	r := newRuntime(t, nil)
	ctx := context.Background()
	q, err := r.NewQuery(ctx, Python, `
(call function: (identifier) @fn (#eq? @fn "print"))
(call function: (identifier) @other (#not-eq? @other "print") (#match? @other "^get_"))
(function_definition name: (identifier) @def (#any-of? @def "a" "b"))
(class_definition name: (identifier) @cls (#set! kind "x"))
`)
	if err != nil {
		t.Fatal(err)
	}
	src := "def a(): print(1)\ndef b(): get_x()\ndef c(): set_y(); get_z()\nclass K: pass\n"
	ms, err := r.Match(ctx, q, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		for _, c := range m.Captures {
			got = append(got, fmt.Sprintf("%s=%s@%d", c.Name, c.Text(), c.StartLine))
		}
	}
	want := "def=a@1 fn=print@1 def=b@2 other=get_x@2 other=get_z@3 cls=K@4"
	if strings.Join(got, " ") != want {
		t.Errorf("matches:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
}

func TestQueryErrors(t *testing.T) {
	r := newRuntime(t, nil)
	for _, src := range []string{`(no_such_node) @x`, `(call`, `((identifier) @x (#match? @x "("))`, `((identifier) @x (#eq? @x))`} {
		if _, err := r.NewQuery(context.Background(), Python, src); !errors.Is(err, ErrQuery) {
			t.Errorf("%q: err %v, want ErrQuery", src, err)
		}
	}
	if _, err := r.NewQuery(context.Background(), "cobol", "(x)"); !errors.Is(err, ErrUnknownLanguage) {
		t.Errorf("unknown language: %v", err)
	}
}

// TestTagsQueriesCompile: the embedded tags queries compile against their
// grammars (TypeScript's extends JavaScript's).
func TestTagsQueriesCompile(t *testing.T) {
	r := newRuntime(t, nil)
	for _, l := range Languages {
		src, err := TagsQuery(l)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.NewQuery(context.Background(), l, src); err != nil {
			t.Errorf("%s: %v", l, err)
		}
	}
}

func TestConcurrentParsesAndRecycling(t *testing.T) {
	// A tiny recycling threshold: every instance is dropped after one
	// call, so the pool's refill path runs on every parse.
	r := newRuntime(t, &Options{Instances: 2, RecycleAbove: 1})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 {
				name := fmt.Sprintf("f%d_%d", g, i)
				tr, err := r.Parse(context.Background(), Python, []byte("def "+name+"(): pass\n"))
				if err != nil {
					errs <- err
					return
				}
				if got := tr.Root().FirstChild().ChildByField("name").Text(); got != name {
					errs <- fmt.Errorf("parsed %q, want %q", got, name)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestLimits(t *testing.T) {
	r := newRuntime(t, &Options{MaxMemory: 32 << 20})
	ctx := context.Background()
	if _, err := r.Parse(ctx, Python, make([]byte, MaxSourceSize+1)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("oversized source: %v", err)
	}
	// Deep nesting that needs more than 32 MiB for its tree.
	deep := strings.Repeat("[", 300_000) + strings.Repeat("]", 300_000)
	_, err := r.Parse(ctx, Python, []byte("x = "+deep+"\n"))
	if err != nil && !errors.Is(err, ErrParse) {
		t.Errorf("memory-hungry source: %v, want a tree or ErrParse", err)
	}
	// The runtime still parses after a failure.
	if _, err := r.Parse(ctx, Python, []byte("x = 1\n")); err != nil {
		t.Errorf("after a failed parse: %v", err)
	}
}

func TestCancel(t *testing.T) {
	r := newRuntime(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Parse(ctx, Python, []byte("x = 1\n")); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled ctx: %v", err)
	}
	// A timeout during a long parse gives ErrParse, and the next parse
	// starts afresh (the stopped parser is reset, not resumed).
	rt := newRuntime(t, &Options{ParseTimeout: 5 * time.Millisecond, Instances: 1})
	big := []byte(strings.Repeat("def f(a, b):\n    return a + b * (a - b)\n", 40_000))
	if _, err := rt.Parse(context.Background(), Python, []byte("x = 1\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Parse(context.Background(), Python, big); !errors.Is(err, ErrParse) {
		t.Errorf("timed-out parse: %v, want ErrParse", err)
	}
	tr, err := rt.Parse(context.Background(), Python, []byte("def g(): pass\n"))
	if err != nil || sexp(tr.Root()) != "(module (function_definition name: (identifier) parameters: (parameters) body: (block (pass_statement))))" {
		t.Errorf("after a timeout: %v %v", tr, err)
	}
	// Cancelled during a parse: the caller's error, within moments.
	r2 := newRuntime(t, &Options{Instances: 1})
	if _, err := r2.Parse(context.Background(), Python, []byte("x = 1\n")); err != nil {
		t.Fatal(err)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel2)
	start := time.Now()
	if _, err := r2.Parse(ctx2, Python, big); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled parse: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("cancelled parse returned after %v", d)
	}
}

func TestInterpreter(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a module in the interpreter")
	}
	r := newRuntime(t, &Options{Interpreter: true})
	tr, err := r.Parse(context.Background(), Java, []byte("class A {}"))
	if err != nil {
		t.Fatal(err)
	}
	if got := sexp(tr.Root()); got != "(program (class_declaration name: (identifier) body: (class_body)))" {
		t.Errorf("interpreter: %s", got)
	}
}

func TestCompilationCache(t *testing.T) {
	dir := t.TempDir()
	for range 2 {
		r, err := New(context.Background(), &Options{CacheDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Parse(context.Background(), Java, []byte("class A {}")); err != nil {
			t.Fatal(err)
		}
		if err := r.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}
