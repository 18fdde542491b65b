package langs

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/compose/codeindex/treesitter"
)

func newRuntime(t testing.TB) *treesitter.Runtime {
	t.Helper()
	rt, err := treesitter.New(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	return rt
}

// resolve extracts the sources (path -> text) and resolves them; the
// edges come back as "source rel target" with ids.
func resolve(t *testing.T, rt *treesitter.Runtime, srcs map[string]string) []string {
	t.Helper()
	in := Input{Files: map[string]*File{}}
	for p, s := range srcs {
		f, err := Extract(context.Background(), rt, p, []byte(s))
		if err != nil {
			t.Fatal(err)
		}
		in.Files[p] = f
	}
	var out []string
	for _, e := range Resolve(in).Edges {
		out = append(out, strings.Join(e[:], " "))
	}
	return out
}

// TestNeverGuessed: a name two modules answer, a method on a value of
// unknown type, and an unknown import resolve to nothing.
func TestNeverGuessed(t *testing.T) {
	rt := newRuntime(t)
	edges := resolve(t, rt, map[string]string{
		"a/conftest.py": "def helper():\n    pass\n",
		"b/conftest.py": "def helper():\n    pass\n",
		"main.py":       "import conftest\nfrom somewhere import thing\n\n\ndef run(x):\n    conftest.helper()\n    x.save()\n    thing()\n\n\ndef save():\n    pass\n",
	})
	for _, e := range edges {
		if strings.HasPrefix(e, "py:main.py#run calls") {
			t.Errorf("guessed: %s", e)
		}
	}
	if !slices.Contains(edges, "py:main.py imports ext:python:somewhere") {
		t.Errorf("the external import is not stated: %v", edges)
	}
}

// TestResolveAcrossFiles: a call through a re-export chain, a method
// inherited from a base in another module, implemented_by through a
// base class.
func TestResolveAcrossFiles(t *testing.T) {
	rt := newRuntime(t)
	edges := resolve(t, rt, map[string]string{
		"src/base.ts":  "export interface Store { get(k: string): string }\nexport class Base implements Store {\n  get(k: string) { return this.norm(k); }\n  norm(k: string) { return k; }\n}\n",
		"src/impl.ts":  "import {Base} from './base';\nexport class Impl extends Base {\n  put(k: string) { return this.norm(k); }\n}\n",
		"src/index.ts": "export * from './impl';\nexport {Base as Root} from './base';\n",
		"app.ts":       "import {Impl, Root} from './src';\nexport function main() { new Impl().put('x'); Root.prototype; }\n",
	})
	for _, want := range []string{
		"js:src/impl.ts#Impl extends js:src/base.ts#Base",
		"js:src/impl.ts#Impl.put calls js:src/base.ts#Base.norm",
		"js:src/base.ts#Base implements js:src/base.ts#Store",
		"js:src/base.ts#Store.get implemented_by js:src/base.ts#Base.get",
		"js:app.ts imports js:src/index.ts",
	} {
		if !slices.Contains(edges, want) {
			t.Errorf("missing %q in\n%s", want, strings.Join(edges, "\n"))
		}
	}
}

// FuzzExtract: no source, however broken, makes extraction or resolution
// panic, and every symbol's span lies in the file.
func FuzzExtract(f *testing.F) {
	for _, s := range []string{
		"def f(:\n  class\n", "class A(B, C.D):\n    def m(self): super().m()\n",
		"export default class extends X {}", "import {a as} from './x'; a()", "const {a, b: c} = require('x')",
		"package p; class A { void m() { new B().c(); this.d(); } }", "import static a.b.C.*; @Test void t() {}",
		"impl<T> Tr for S<T> { fn m(&self) { Self::n(); } }", "mod m { use super::*; #[test] fn t() { f() } }",
		"test('x', () => { it(`y${z}`, f) })", strings.Repeat("(", 5000), "\x00\xff\xfe",
	} {
		f.Add(s)
	}
	rt := newRuntime(f)
	f.Fuzz(func(t *testing.T, src string) {
		in := Input{Files: map[string]*File{}}
		for _, p := range []string{"a.py", "tests/test_a.py", "a.ts", "a.tsx", "a.js", "A.java", "src/lib.rs", "tests/t.rs"} {
			fl, err := Extract(context.Background(), rt, p, []byte(src))
			if err != nil {
				continue // over a parser limit: no facts
			}
			for _, s := range fl.Syms {
				if s.Line < 1 || s.End < s.Line || s.End > fl.Lines+1 || len(s.Sig) > MaxSig+3 {
					t.Errorf("%s: %+v outside the file's %d lines or too long", p, s, fl.Lines)
				}
			}
			in.Files[p] = fl
		}
		Resolve(in)
	})
}

// TestStarImportCycles: modules that star-import each other in a web
// resolve in bounded time, and a name they all re-export still resolves.
func TestStarImportCycles(t *testing.T) {
	rt := newRuntime(t)
	srcs := map[string]string{"pkg/__init__.py": "", "pkg/leaf.py": "def target():\n    pass\n"}
	const n = 40
	for i := range n {
		var b strings.Builder
		for j := range n {
			if j != i {
				b.WriteString("from pkg.m" + itoa(j) + " import *\n")
			}
		}
		b.WriteString("from pkg.leaf import *\n\n\ndef f" + itoa(i) + "():\n    target()\n    missing()\n")
		srcs["pkg/m"+itoa(i)+".py"] = b.String()
	}
	edges := resolve(t, rt, srcs)
	if !slices.Contains(edges, "py:pkg/m7.py#f7 calls py:pkg/leaf.py#target") {
		t.Errorf("the re-exported name does not resolve")
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
