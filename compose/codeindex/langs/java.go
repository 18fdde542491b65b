package langs

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kgctx/kgctx/compose/codeindex/treesitter"
)

// Java: a package per package clause; classes, interfaces, enums,
// records (nested ones as Outer.Inner), methods and constructors (a
// constructor is Class.Class; overloads are one node, the first
// declaration's); imports (single-type, on demand, static); calls by
// name: m() (the enclosing classes' methods, inherited ones too, then
// static imports), this.m(), super.m(), Type.m(), x.m() where x is a
// parameter, local variable or field of a declared type, new T(), T::m;
// extends and implements. Tests: methods annotated @Test (JUnit 4 and 5,
// @ParameterizedTest, @RepeatedTest, @TestFactory, @TestTemplate),
// named Class.method; in a test file (under src/test, or a class named
// *Test, *Tests, *IT, Test*) only tests are stated. A test tests what it
// calls, and by name FooTest.testBar tests Foo.bar and Foo.

var javaTestAnnotations = []string{"Test", "ParameterizedTest", "RepeatedTest", "TestFactory", "TestTemplate"}

type javaScope struct {
	class []string
	vars  map[string]string // name -> declared type's name, fields first
}

func (x *extractor) java(root treesitter.Node) {
	x.f.Test = isJavaTestFile(x.f.Path)
	root.Walk(func(n treesitter.Node) bool {
		if n.Kind() == "method_declaration" && javaIsTest(n) {
			x.f.Test = true
			return false
		}
		return true
	})
	for c := range root.Children() {
		switch c.Kind() {
		case "package_declaration":
			for p := range c.Children() {
				if p.Kind() == "scoped_identifier" || p.Kind() == "identifier" {
					x.f.Package = p.Text()
				}
			}
		case "import_declaration":
			x.javaImport(c)
		case "class_declaration", "interface_declaration", "enum_declaration", "record_declaration", "annotation_type_declaration":
			x.javaType(c, javaScope{})
		}
	}
}

func (x *extractor) javaImport(n treesitter.Node) {
	static := !n.ChildOfKind("static").IsNull()
	star := !n.ChildOfKind("asterisk").IsNull()
	var name string
	for c := range n.Children() {
		if c.Kind() == "scoped_identifier" || c.Kind() == "identifier" {
			name = c.Text()
		}
	}
	parts := strings.Split(name, ".")
	if name == "" {
		return
	}
	switch {
	case star && static: // import static a.b.C.*: C's members
		if len(parts) >= 2 {
			x.f.Imports = append(x.f.Imports, Binding{Name: "*", Path: parts[:len(parts)-1], Symbol: parts[len(parts)-1]})
		}
	case star: // import a.b.*
		x.f.Imports = append(x.f.Imports, Binding{Name: "*", Path: parts})
	case static: // import static a.b.C.m
		if len(parts) >= 3 {
			n := len(parts)
			x.f.Imports = append(x.f.Imports, Binding{Name: parts[n-1], Path: parts[:n-2], Symbol: parts[n-2] + "." + parts[n-1]})
		}
	default: // import a.b.C
		if len(parts) >= 2 {
			n := len(parts)
			x.f.Imports = append(x.f.Imports, Binding{Name: parts[n-1], Path: parts[:n-1], Symbol: parts[n-1]})
		} else {
			x.f.Imports = append(x.f.Imports, Binding{Name: parts[0], Symbol: parts[0]})
		}
	}
}

// javaIsTest says whether a method carries a test annotation.
func javaIsTest(m treesitter.Node) bool {
	mods := m.ChildOfKind("modifiers")
	for a := range mods.Children() {
		if a.Kind() == "marker_annotation" || a.Kind() == "annotation" {
			name := a.ChildByField("name").Text()
			if i := strings.LastIndexByte(name, '.'); i >= 0 {
				name = name[i+1:]
			}
			if contains(javaTestAnnotations, name) {
				return true
			}
		}
	}
	return false
}

// javaSigStart is where a declaration's signature starts: after its
// annotations.
func javaSigStart(n treesitter.Node) treesitter.Node {
	mods := n.ChildOfKind("modifiers")
	if mods.IsNull() {
		return treesitter.Node{}
	}
	for c := range mods.Children() {
		if c.Kind() != "marker_annotation" && c.Kind() != "annotation" && !c.IsExtra() {
			return c
		}
	}
	for c := mods.NextSibling(); !c.IsNull(); c = c.NextSibling() {
		if !c.IsExtra() {
			return c
		}
	}
	return treesitter.Node{}
}

// javaTypeName is a type's simple name: Foo for Foo, Foo<T>, a.b.Foo.
func javaTypeName(n treesitter.Node) string {
	switch n.Kind() {
	case "type_identifier", "identifier":
		return n.Text()
	case "generic_type":
		for c := range n.Children() {
			if c.Kind() == "type_identifier" || c.Kind() == "scoped_type_identifier" {
				return javaTypeName(c)
			}
		}
	case "scoped_type_identifier":
		t := n.Text()
		if i := strings.LastIndexByte(t, '.'); i >= 0 {
			return t[i+1:]
		}
		return t
	}
	return ""
}

func (x *extractor) javaType(n treesitter.Node, sc javaScope) {
	name := n.ChildByField("name").Text()
	if name == "" {
		return
	}
	class := append(append([]string(nil), sc.class...), name)
	base := strings.Join(class, ".")
	body := n.ChildByField("body")
	kind := KindType
	if n.Kind() == "interface_declaration" {
		kind = KindInterface
	}
	line := n.StartLine()
	if !x.f.Test {
		s := Sym{Base: base, Kind: kind, Desc: x.docBefore(n, []string{"/**"}), Sig: x.sig(n, javaSigStart(n), body), Line: line, End: n.EndLine()}
		if !x.sym(s) {
			return
		}
		if sup := n.ChildByField("superclass"); !sup.IsNull() {
			for c := range sup.Children() {
				if t := javaTypeName(c); t != "" {
					x.ref(Ref{From: base, Rel: RelExtends, Path: []string{t}, Class: sc.class, Line: line})
				}
			}
		}
		for c := range n.Children() {
			if c.Kind() == "super_interfaces" || c.Kind() == "extends_interfaces" {
				for tl := range c.Children() {
					if tl.Kind() != "type_list" {
						continue
					}
					for t := range tl.Children() {
						if tn := javaTypeName(t); tn != "" {
							x.ref(Ref{From: base, Rel: RelExtends, Path: []string{tn}, Class: sc.class, Line: line})
						}
					}
				}
			}
		}
	}
	// Fields' types, for calls on them.
	inner := javaScope{class: class, vars: map[string]string{}}
	for k, v := range sc.vars {
		inner.vars[k] = v
	}
	members := body
	if eb := body.ChildOfKind("enum_body_declarations"); !eb.IsNull() {
		members = eb
	}
	for m := range members.Children() {
		if m.Kind() == "field_declaration" || m.Kind() == "constant_declaration" {
			t := javaTypeName(m.ChildByField("type"))
			for d := range m.Children() {
				if d.Kind() == "variable_declarator" && t != "" {
					inner.vars[d.ChildByField("name").Text()] = t
				}
			}
		}
	}
	for m := range members.Children() {
		switch m.Kind() {
		case "method_declaration", "constructor_declaration", "compact_constructor_declaration":
			x.javaMethod(m, inner, kind)
		case "class_declaration", "interface_declaration", "enum_declaration", "record_declaration", "annotation_type_declaration":
			x.javaType(m, inner)
		}
	}
}

func (x *extractor) javaMethod(m treesitter.Node, sc javaScope, ownerKind string) {
	name := m.ChildByField("name").Text()
	if m.Kind() == "compact_constructor_declaration" || name == "" {
		name = sc.class[len(sc.class)-1]
	}
	cls := strings.Join(sc.class, ".")
	base := cls + "." + name
	body := m.ChildByField("body")
	test := javaIsTest(m)
	s := Sym{Base: base, Kind: KindMethod, Desc: x.docBefore(m, []string{"/**"}), Sig: x.sig(m, javaSigStart(m), body),
		Line: m.StartLine(), End: m.EndLine(), Owner: sc.class}
	rel := RelCalls
	if test {
		s.Kind, s.Owner, s.Test, rel = KindFunction, nil, true, RelTests
	} else if x.f.Test {
		return
	}
	if !x.sym(s) {
		return
	}
	if test {
		subject := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(sc.class[len(sc.class)-1], "Tests"), "Test"), "IT")
		if rest, ok := strings.CutPrefix(subject, "Test"); ok && rest != "" {
			subject = rest
		}
		if subject != "" && subject != sc.class[len(sc.class)-1] {
			if mname, ok := strings.CutPrefix(name, "test"); ok && mname != "" {
				x.ref(Ref{From: base, Rel: RelTests, How: "name", Path: []string{subject, lowerFirst(mname)}, Line: s.Line})
			}
			x.ref(Ref{From: base, Rel: RelTests, How: "name", Path: []string{subject}, Line: s.Line})
		}
	}
	vars := map[string]string{}
	for k, v := range sc.vars {
		vars[k] = v
	}
	x.javaRefs(m, base, rel, sc.class, vars)
}

func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToLower(r)) + s[n:]
}

// javaRefs states the calls of a method (parameters and locals typed as
// declared, in source order).
func (x *extractor) javaRefs(m treesitter.Node, from, rel string, class []string, vars map[string]string) {
	m.Walk(func(n treesitter.Node) bool {
		line := n.StartLine()
		switch n.Kind() {
		case "class_body":
			return false // an anonymous or local class: its methods are not this one
		case "formal_parameter", "spread_parameter", "catch_formal_parameter", "enhanced_for_statement", "local_variable_declaration":
			t := javaTypeName(n.ChildByField("type"))
			if name := n.ChildByField("name").Text(); name != "" && t != "" {
				vars[name] = t
			}
			for d := range n.Children() {
				if d.Kind() != "variable_declarator" {
					continue
				}
				vt := t
				if t == "var" || t == "" {
					if v := d.ChildByField("value"); v.Kind() == "object_creation_expression" {
						vt = javaTypeName(v.ChildByField("type"))
					}
				}
				if vt != "" && vt != "var" {
					vars[d.ChildByField("name").Text()] = vt
				}
			}
		case "method_invocation":
			name := n.ChildByField("name").Text()
			obj := n.ChildByField("object")
			switch obj.Kind() {
			case "":
				x.ref(Ref{From: from, Rel: rel, How: "implicit", Class: class, Path: []string{name}, Line: line})
			case "this":
				x.ref(Ref{From: from, Rel: rel, How: "self", Class: class, Path: []string{name}, Line: line})
			case "super":
				x.ref(Ref{From: from, Rel: rel, How: "super", Class: class, Path: []string{name}, Line: line})
			case "identifier":
				o := obj.Text()
				if t, ok := vars[o]; ok {
					x.ref(Ref{From: from, Rel: rel, Class: class, Path: []string{t, name}, Line: line})
				} else if r, _ := utf8.DecodeRuneInString(o); unicode.IsUpper(r) {
					x.ref(Ref{From: from, Rel: rel, Class: class, Path: []string{o, name}, Line: line})
				}
			case "field_access":
				if o := obj.ChildByField("object"); o.Kind() == "this" {
					if t, ok := vars[obj.ChildByField("field").Text()]; ok {
						x.ref(Ref{From: from, Rel: rel, Class: class, Path: []string{t, name}, Line: line})
					}
				}
			}
		case "object_creation_expression":
			if t := javaTypeName(n.ChildByField("type")); t != "" {
				x.ref(Ref{From: from, Rel: rel, How: "new", Class: class, Path: []string{t}, Line: line})
			}
		case "method_reference":
			var parts []string
			for c := range n.Children() {
				if c.IsNamed() {
					parts = append(parts, c.Text())
				}
			}
			if len(parts) == 2 && parts[1] != "new" {
				if t, ok := vars[parts[0]]; ok {
					parts[0] = t
				}
				if parts[0] == "this" {
					x.ref(Ref{From: from, Rel: rel, How: "self", Class: class, Path: parts[1:], Line: line})
				} else if r, _ := utf8.DecodeRuneInString(parts[0]); unicode.IsUpper(r) {
					x.ref(Ref{From: from, Rel: rel, Class: class, Path: parts, Line: line})
				}
			}
		}
		return true
	})
}
