package langs

import (
	"strings"

	"github.com/kgctx/kgctx/compose/codeindex/treesitter"
)

// Python: a module per file; functions, classes (a typing.Protocol is an
// interface), methods (nested classes as Outer.Inner); imports as
// bindings (import a.b, import a.b as x, from m import n as k, from .m
// import *, relative imports); calls by name (f(), mod.f(), Class.m(),
// self.m(), cls.m(), super().m()); base classes. Tests (pytest and
// unittest): in test files (test_*.py, *_test.py, under tests/), the
// functions test*, and the methods test* of classes named Test* or
// deriving from a *TestCase; each tests what it calls, and by name what
// test_foo names (foo, or Foo.foo in class TestFoo).

type pyScope struct {
	class     []string // enclosing classes' names
	testClass bool     // the class holds tests (test file only)
}

func (x *extractor) python(root treesitter.Node) {
	for c := range root.Children() {
		if c.IsNamed() && c.Kind() != "comment" {
			if c.Kind() == "expression_statement" {
				if s := c.FirstChild(); s.Kind() == "string" {
					x.f.Doc = Synopsis(pyString(s))
				}
			}
			break
		}
	}
	x.pyBlock(root, pyScope{})
}

// pyString is a string literal's content.
func pyString(s treesitter.Node) string {
	var b strings.Builder
	for c := range s.Children() {
		if c.Kind() == "string_content" {
			b.WriteString(c.Text())
		}
	}
	return b.String()
}

// pyBlock reads the statements of a module or class body, and of the
// if/try/with blocks within them.
func (x *extractor) pyBlock(n treesitter.Node, sc pyScope) {
	for c := range n.Children() {
		switch c.Kind() {
		case "import_statement", "import_from_statement", "future_import_statement":
			x.pyImport(c)
		case "function_definition":
			x.pyFunc(c, c, sc)
		case "class_definition":
			x.pyClass(c, c, sc)
		case "decorated_definition":
			d := c.ChildByField("definition")
			switch d.Kind() {
			case "function_definition":
				x.pyFunc(d, c, sc)
			case "class_definition":
				x.pyClass(d, c, sc)
			}
		case "if_statement", "try_statement", "with_statement", "block", "else_clause", "elif_clause",
			"except_clause", "finally_clause", "except_group_clause":
			x.pyBlock(c, sc)
		}
	}
}

func (x *extractor) pyImport(n treesitter.Node) {
	if n.Kind() == "import_statement" {
		for c := range n.Children() {
			switch c.Kind() {
			case "dotted_name":
				parts := pyDotted(c)
				if len(parts) > 0 {
					x.f.Imports = append(x.f.Imports, Binding{Name: parts[0], Path: parts[:1]})
				}
			case "aliased_import":
				parts := pyDotted(c.ChildByField("name"))
				if alias := c.ChildByField("alias").Text(); len(parts) > 0 && alias != "" {
					x.f.Imports = append(x.f.Imports, Binding{Name: alias, Path: parts})
				}
			}
		}
		return
	}
	mod := n.ChildByField("module_name")
	var from []string
	switch mod.Kind() {
	case "dotted_name":
		from = pyDotted(mod)
	case "relative_import":
		prefix := mod.ChildOfKind("import_prefix").Text()
		if prefix == "" {
			prefix = "."
		}
		from = append([]string{prefix}, pyDotted(mod.ChildOfKind("dotted_name"))...)
	}
	if n.Kind() == "future_import_statement" || len(from) == 0 {
		return
	}
	for c := range n.Children() {
		if c.Field() != "name" && c.Kind() != "wildcard_import" {
			continue
		}
		switch c.Kind() {
		case "wildcard_import":
			x.f.Imports = append(x.f.Imports, Binding{Name: "*", Path: from})
		case "dotted_name":
			parts := pyDotted(c)
			if len(parts) == 1 {
				x.f.Imports = append(x.f.Imports, Binding{Name: parts[0], Path: from, Symbol: parts[0]})
			}
		case "aliased_import":
			parts := pyDotted(c.ChildByField("name"))
			if alias := c.ChildByField("alias").Text(); len(parts) == 1 && alias != "" {
				x.f.Imports = append(x.f.Imports, Binding{Name: alias, Path: from, Symbol: parts[0]})
			}
		}
	}
}

func pyDotted(n treesitter.Node) []string {
	var out []string
	for c := range n.Children() {
		if c.Kind() == "identifier" {
			out = append(out, c.Text())
		}
	}
	return out
}

// pyDoc is the docstring of a body.
func pyDoc(body treesitter.Node) string {
	for c := range body.Children() {
		if c.Kind() == "comment" {
			continue
		}
		if c.Kind() == "expression_statement" {
			if s := c.FirstChild(); s.Kind() == "string" {
				return Synopsis(pyString(s))
			}
		}
		return ""
	}
	return ""
}

func (x *extractor) pyFunc(fn, outer treesitter.Node, sc pyScope) {
	name := fn.ChildByField("name").Text()
	if name == "" {
		return
	}
	base := strings.Join(append(append([]string(nil), sc.class...), name), ".")
	body := fn.ChildByField("body")
	s := Sym{Base: base, Kind: KindFunction, Desc: pyDoc(body), Sig: x.sig(fn, treesitter.Node{}, body),
		Line: fn.StartLine(), End: fn.EndLine()}
	rel := RelCalls
	if x.f.Test {
		// A test file states its tests only.
		if !strings.HasPrefix(name, "test") || len(sc.class) > 0 && !sc.testClass {
			return
		}
		s.Test, rel = true, RelTests
	} else if len(sc.class) > 0 {
		s.Kind, s.Owner = KindMethod, sc.class
	}
	if !x.sym(s) {
		return
	}
	if s.Test {
		subj := strings.TrimPrefix(strings.TrimPrefix(name, "test"), "_")
		if subj != "" {
			x.ref(Ref{From: base, Rel: RelTests, How: "name", Path: []string{subj}, Line: s.Line})
			if len(sc.class) == 1 {
				if cls := strings.TrimPrefix(sc.class[0], "Test"); cls != "" && cls != sc.class[0] {
					x.ref(Ref{From: base, Rel: RelTests, How: "name", Path: []string{cls, subj}, Line: s.Line})
				}
			}
		}
	}
	x.pyRefs(body, base, rel, sc.class)
}

// pyRefs states the calls in a function's body (nested functions'
// included: they run as part of it).
func (x *extractor) pyRefs(body treesitter.Node, from, rel string, class []string) {
	body.Walk(func(n treesitter.Node) bool {
		if n.Kind() == "class_definition" {
			return false
		}
		if n.Kind() != "call" {
			return true
		}
		f := n.ChildByField("function")
		line := n.StartLine()
		switch f.Kind() {
		case "identifier":
			x.ref(Ref{From: from, Rel: rel, Path: []string{f.Text()}, Line: line})
		case "attribute":
			obj, attr := f.ChildByField("object"), f.ChildByField("attribute").Text()
			if obj.Kind() == "call" && obj.ChildByField("function").Text() == "super" {
				if len(class) > 0 {
					x.ref(Ref{From: from, Rel: rel, How: "super", Class: class, Path: []string{attr}, Line: line})
				}
				return true
			}
			path := pyAttrPath(f)
			if len(path) == 2 && (path[0] == "self" || path[0] == "cls") {
				if len(class) > 0 {
					x.ref(Ref{From: from, Rel: rel, How: "self", Class: class, Path: path[1:], Line: line})
				}
				return true
			}
			if len(path) > 1 && path[0] != "self" && path[0] != "cls" {
				x.ref(Ref{From: from, Rel: rel, Path: path, Line: line})
			}
		}
		return true
	})
}

// pyAttrPath flattens a.b.c (identifiers only), or nil.
func pyAttrPath(n treesitter.Node) []string {
	switch n.Kind() {
	case "identifier":
		return []string{n.Text()}
	case "attribute":
		p := pyAttrPath(n.ChildByField("object"))
		if p == nil {
			return nil
		}
		return append(p, n.ChildByField("attribute").Text())
	}
	return nil
}

func (x *extractor) pyClass(cls, outer treesitter.Node, sc pyScope) {
	name := cls.ChildByField("name").Text()
	if name == "" {
		return
	}
	path := append(append([]string(nil), sc.class...), name)
	base := strings.Join(path, ".")
	body := cls.ChildByField("body")
	var bases [][]string
	kind := KindType
	testBase := false
	if sup := cls.ChildByField("superclasses"); !sup.IsNull() {
		for c := range sup.Children() {
			p := pyAttrPath(c)
			if p == nil {
				continue
			}
			last := p[len(p)-1]
			switch {
			case last == "Protocol":
				kind = KindInterface
			case last == "object" || last == "ABC" || last == "Generic":
			default:
				bases = append(bases, p)
			}
			if strings.HasSuffix(last, "TestCase") {
				testBase = true
			}
		}
	}
	if x.f.Test {
		if len(sc.class) == 0 && (strings.HasPrefix(name, "Test") || testBase) {
			x.pyBlock(body, pyScope{class: path, testClass: true})
		}
		return
	}
	s := Sym{Base: base, Kind: kind, Desc: pyDoc(body), Sig: x.sig(cls, treesitter.Node{}, body), Line: cls.StartLine(), End: cls.EndLine()}
	if !x.sym(s) {
		return
	}
	for _, b := range bases {
		x.ref(Ref{From: base, Rel: RelExtends, Path: b, Line: s.Line})
	}
	x.pyBlock(body, pyScope{class: path})
}
