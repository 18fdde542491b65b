package langs

import (
	"path"
	"strings"

	"github.com/kgctx/kgctx/compose/codeindex/treesitter"
)

// TypeScript and JavaScript: a module per file; functions (declarations,
// and const f = () => ... at the top of a module), classes, methods
// (class fields holding functions too), interfaces and their method
// signatures, type aliases and enums (types), namespaces (their members
// as NS.f); ES imports and exports as bindings (default, named,
// namespace, re-exports, export *), CommonJS require; calls by name
// (f(), ns.f(), Class.m(), this.m(), super.m(), new C(), JSX <C/>);
// extends and implements. Tests: in test files (*.test.*, *.spec.*,
// under __tests__, test or tests), each top-level test(...), it(...),
// describe(...) with a string title is a test named test("title"); it
// tests what it calls.

// jsTestCalls are the test frameworks' functions (Jest, Vitest, Mocha,
// AVA, node:test).
var jsTestCalls = []string{"test", "it", "describe", "suite", "context", "specify", "bench"}

func (x *extractor) js(root treesitter.Node) {
	var sigs []treesitter.Node
	x.jsBlock(root, nil, &sigs)
	for _, s := range sigs {
		x.jsFunc(s, treesitter.Node{}, s.ChildByField("name").Text(), KindFunction)
	}
}

// jsSpec resolves an import specifier: a relative one against the
// file's directory, without a script extension ("src/m"); a package as
// "pkg:" and its name (react, @scope/name, node:fs as fs).
func (x *extractor) jsSpec(spec string) []string {
	if strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../") || spec == "." || spec == ".." {
		p := path.Join(path.Dir(x.f.Path), spec)
		if p == ".." || strings.HasPrefix(p, "../") {
			return nil // outside the root
		}
		for _, e := range []string{".js", ".ts", ".mjs", ".cjs", ".jsx", ".tsx", ".mts", ".cts"} {
			if strings.HasSuffix(p, e) {
				p = strings.TrimSuffix(p, e)
				break
			}
		}
		return []string{p}
	}
	spec = strings.TrimPrefix(spec, "node:")
	parts := strings.Split(spec, "/")
	name := parts[0]
	if strings.HasPrefix(name, "@") && len(parts) > 1 {
		name += "/" + parts[1]
	}
	if name == "" {
		return nil
	}
	return []string{"pkg:" + name}
}

func jsString(n treesitter.Node) (string, bool) {
	if n.Kind() != "string" && n.Kind() != "template_string" {
		return "", false
	}
	var b strings.Builder
	for c := range n.Children() {
		switch c.Kind() {
		case "string_fragment", "escape_sequence":
			b.WriteString(c.Text())
		case "template_substitution":
			b.WriteString("${…}")
		}
	}
	return b.String(), true
}

// jsBlock reads the statements of a module or a namespace's body (prefix:
// the namespaces' names).
func (x *extractor) jsBlock(n treesitter.Node, prefix []string, sigs *[]treesitter.Node) {
	for c := range n.Children() {
		x.jsStatement(c, c, prefix, sigs)
	}
}

// jsStatement reads one top-level statement; docAt is the node the doc
// comment precedes (an export statement around a declaration).
func (x *extractor) jsStatement(c, docAt treesitter.Node, prefix []string, sigs *[]treesitter.Node) {
	switch c.Kind() {
	case "import_statement":
		x.jsImport(c)
	case "export_statement":
		x.jsExport(c, prefix, sigs)
	case "function_declaration", "generator_function_declaration":
		x.jsFunc(c, docAt, join(prefix, c.ChildByField("name").Text()), KindFunction)
	case "function_signature":
		if sigs != nil {
			*sigs = append(*sigs, c)
		}
	case "class_declaration", "abstract_class_declaration", "class":
		x.jsClass(c, docAt, join(prefix, c.ChildByField("name").Text()))
	case "interface_declaration":
		x.jsInterface(c, docAt, join(prefix, c.ChildByField("name").Text()))
	case "type_alias_declaration", "enum_declaration":
		if name := c.ChildByField("name").Text(); name != "" && !x.f.Test {
			x.sym(Sym{Base: join(prefix, name), Kind: KindType, Desc: x.jsDoc(docAt), Sig: x.sig(c, treesitter.Node{}, c.ChildByField("body")),
				Line: c.StartLine(), End: c.EndLine()})
		}
	case "lexical_declaration", "variable_declaration":
		for d := range c.Children() {
			if d.Kind() == "variable_declarator" {
				x.jsDeclarator(d, c, docAt, prefix)
			}
		}
	case "ambient_declaration":
		for d := range c.Children() {
			x.jsStatement(d, docAt, prefix, sigs)
		}
	case "internal_module", "module":
		name := c.ChildByField("name")
		if name.Kind() == "identifier" || name.Kind() == "nested_identifier" {
			x.jsBlock(c.ChildByField("body"), append(append([]string(nil), prefix...), strings.Split(name.Text(), ".")...), sigs)
		}
	case "expression_statement":
		e := c.FirstChild()
		switch e.Kind() {
		case "internal_module", "module":
			x.jsStatement(e, docAt, prefix, sigs)
		case "call_expression":
			if x.f.Test && len(prefix) == 0 {
				x.jsTest(e)
			}
		case "assignment_expression":
			x.jsCommonJS(e, docAt)
		}
	}
}

func join(prefix []string, name string) string {
	if name == "" {
		return ""
	}
	if len(prefix) == 0 {
		return name
	}
	return strings.Join(prefix, ".") + "." + name
}

func (x *extractor) jsImport(n treesitter.Node) {
	src, ok := jsString(n.ChildByField("source"))
	if !ok {
		return
	}
	from := x.jsSpec(src)
	if from == nil {
		return
	}
	clause := n.ChildOfKind("import_clause")
	if clause.IsNull() {
		x.f.Imports = append(x.f.Imports, Binding{Name: "", Path: from}) // import './side-effect'
		return
	}
	for c := range clause.Children() {
		switch c.Kind() {
		case "identifier":
			x.f.Imports = append(x.f.Imports, Binding{Name: c.Text(), Path: from, Symbol: "default"})
		case "namespace_import":
			if id := c.ChildOfKind("identifier"); !id.IsNull() {
				x.f.Imports = append(x.f.Imports, Binding{Name: id.Text(), Path: from})
			}
		case "named_imports":
			for s := range c.Children() {
				if s.Kind() != "import_specifier" {
					continue
				}
				name := s.ChildByField("name").Text()
				local := name
				if a := s.ChildByField("alias"); !a.IsNull() {
					local = a.Text()
				}
				x.f.Imports = append(x.f.Imports, Binding{Name: local, Path: from, Symbol: name})
			}
		}
	}
}

func (x *extractor) jsExport(n treesitter.Node, prefix []string, sigs *[]treesitter.Node) {
	if d := n.ChildByField("declaration"); !d.IsNull() {
		x.jsStatement(d, n, prefix, sigs)
		if n.ChildOfKind("default").IsNull() {
			return
		}
		if name := d.ChildByField("name").Text(); name != "" {
			x.f.Imports = append(x.f.Imports, Binding{Name: "default", Symbol: name, Export: true})
		}
		return
	}
	var from []string
	if s, ok := jsString(n.ChildByField("source")); ok {
		if from = x.jsSpec(s); from == nil {
			return
		}
	}
	if v := n.ChildByField("value"); !v.IsNull() && !n.ChildOfKind("default").IsNull() {
		switch v.Kind() {
		case "identifier":
			x.f.Imports = append(x.f.Imports, Binding{Name: "default", Symbol: v.Text(), Export: true})
		case "function_expression", "arrow_function", "function", "generator_function":
			x.jsFunc(v, n, join(prefix, "default"), KindFunction)
		case "class":
			x.jsClass(v, n, join(prefix, "default"))
		}
		return
	}
	clause := n.ChildOfKind("export_clause")
	if clause.IsNull() {
		if from != nil {
			if ns := n.ChildOfKind("namespace_export"); !ns.IsNull() {
				if id := ns.ChildOfKind("identifier"); !id.IsNull() {
					x.f.Imports = append(x.f.Imports, Binding{Name: id.Text(), Path: from, Export: true})
				}
				return
			}
			x.f.Imports = append(x.f.Imports, Binding{Name: "*", Path: from, Export: true})
		}
		return
	}
	for s := range clause.Children() {
		if s.Kind() != "export_specifier" {
			continue
		}
		name := s.ChildByField("name").Text()
		local := name
		if a := s.ChildByField("alias"); !a.IsNull() {
			local = a.Text()
		}
		if from == nil && local == name {
			continue // export {a}: a is the module's already
		}
		x.f.Imports = append(x.f.Imports, Binding{Name: local, Path: from, Symbol: name, Export: true})
	}
}

// jsDeclarator reads const f = () => ..., const C = class ...,
// const x = require('m'), const {a, b} = require('m').
func (x *extractor) jsDeclarator(d, decl, docAt treesitter.Node, prefix []string) {
	name, v := d.ChildByField("name"), d.ChildByField("value")
	if v.Kind() == "call_expression" && v.ChildByField("function").Text() == "require" {
		args := v.ChildByField("arguments")
		spec, ok := jsString(args.FirstChild())
		if !ok {
			return
		}
		from := x.jsSpec(spec)
		if from == nil {
			return
		}
		switch name.Kind() {
		case "identifier":
			x.f.Imports = append(x.f.Imports, Binding{Name: name.Text(), Path: from})
		case "object_pattern":
			for p := range name.Children() {
				switch p.Kind() {
				case "shorthand_property_identifier_pattern":
					x.f.Imports = append(x.f.Imports, Binding{Name: p.Text(), Path: from, Symbol: p.Text()})
				case "pair_pattern":
					if k, val := p.ChildByField("key"), p.ChildByField("value"); val.Kind() == "identifier" {
						x.f.Imports = append(x.f.Imports, Binding{Name: val.Text(), Path: from, Symbol: k.Text()})
					}
				}
			}
		}
		return
	}
	if name.Kind() != "identifier" || x.f.Test {
		return
	}
	switch v.Kind() {
	case "arrow_function", "function_expression", "function", "generator_function":
		x.jsFuncValue(v, decl, docAt, join(prefix, name.Text()), KindFunction, nil)
	case "class":
		x.jsClass(v, docAt, join(prefix, name.Text()))
	}
}

// jsCommonJS reads exports.f = function ... and module.exports.f = ...
func (x *extractor) jsCommonJS(a, docAt treesitter.Node) {
	left, right := a.ChildByField("left"), a.ChildByField("right")
	p := jsMemberPath(left)
	if len(p) < 2 || x.f.Test {
		return
	}
	if !(p[0] == "exports" && len(p) == 2 || p[0] == "module" && p[1] == "exports" && len(p) == 3) {
		return
	}
	name := p[len(p)-1]
	switch right.Kind() {
	case "arrow_function", "function_expression", "function":
		x.jsFuncValue(right, a, docAt, name, KindFunction, nil)
	case "identifier":
		x.f.Imports = append(x.f.Imports, Binding{Name: name, Symbol: right.Text(), Export: true})
	}
}

// jsDoc is the JSDoc comment before n.
func (x *extractor) jsDoc(n treesitter.Node) string {
	return x.docBefore(n, []string{"/**"})
}

func (x *extractor) jsFunc(fn, docAt treesitter.Node, base, kind string) {
	if base == "" || x.f.Test {
		return
	}
	if docAt.IsNull() {
		docAt = fn
	}
	x.jsFuncValue(fn, fn, docAt, base, kind, nil)
}

// jsFuncValue states a function whose value is fn, declared by decl (its
// span and signature), documented before docAt.
func (x *extractor) jsFuncValue(fn, decl, docAt treesitter.Node, base, kind string, owner []string) {
	body := fn.ChildByField("body")
	sigEnd := body
	if fn != decl && (fn.Kind() == "arrow_function" || strings.HasPrefix(fn.Kind(), "function")) {
		sigEnd = body // const f = (x) => ...: the signature runs to the body
	}
	s := Sym{Base: base, Kind: kind, Desc: x.jsDoc(docAt), Sig: x.sig(decl, treesitter.Node{}, sigEnd),
		Line: decl.StartLine(), End: decl.EndLine(), Owner: owner}
	if !x.sym(s) {
		return
	}
	var class []string
	if owner != nil {
		class = owner
	}
	x.jsRefs(body, base, RelCalls, class)
}

func (x *extractor) jsClass(c, docAt treesitter.Node, base string) {
	if base == "" || x.f.Test {
		return
	}
	if docAt.IsNull() {
		docAt = c
	}
	body := c.ChildByField("body")
	s := Sym{Base: base, Kind: KindType, Desc: x.jsDoc(docAt), Sig: x.sig(c, treesitter.Node{}, body), Line: c.StartLine(), End: c.EndLine()}
	if !x.sym(s) {
		return
	}
	owner := strings.Split(base, ".")
	for h := range c.Children() {
		if h.Kind() != "class_heritage" {
			continue
		}
		for cl := range h.Children() {
			switch cl.Kind() {
			case "extends_clause", "implements_clause":
				for t := range cl.Children() {
					if p := jsTypePath(t); p != nil {
						x.ref(Ref{From: base, Rel: RelExtends, Path: p, Line: s.Line})
					}
				}
			default: // JavaScript: class_heritage holds the expression
				if p := jsTypePath(cl); p != nil {
					x.ref(Ref{From: base, Rel: RelExtends, Path: p, Line: s.Line})
				}
			}
		}
	}
	for m := range body.Children() {
		name := jsPropName(m.ChildByField("name"))
		if name == "" {
			continue
		}
		mb := base + "." + name
		switch m.Kind() {
		case "method_definition":
			x.jsFuncValue(m, m, m, mb, KindMethod, owner)
		case "public_field_definition", "field_definition":
			v := m.ChildByField("value")
			switch v.Kind() {
			case "arrow_function", "function_expression", "function":
				x.jsFuncValue(v, m, m, mb, KindMethod, owner)
			}
		case "abstract_method_signature", "method_signature":
			x.sym(Sym{Base: mb, Kind: KindMethod, Desc: x.jsDoc(m), Sig: x.sig(m, treesitter.Node{}, treesitter.Node{}),
				Line: m.StartLine(), End: m.EndLine(), Owner: owner})
		}
	}
}

func jsPropName(n treesitter.Node) string {
	switch n.Kind() {
	case "property_identifier", "private_property_identifier", "identifier":
		return n.Text()
	case "string":
		s, _ := jsString(n)
		return s
	}
	return ""
}

// jsTypePath is a heritage clause's type as a path: B, a.B, B<T>.
func jsTypePath(n treesitter.Node) []string {
	switch n.Kind() {
	case "identifier", "type_identifier":
		return []string{n.Text()}
	case "member_expression", "nested_type_identifier", "nested_identifier":
		p := strings.Split(n.Text(), ".")
		for _, s := range p {
			if s == "" || strings.ContainsAny(s, " ()<>\n") {
				return nil
			}
		}
		return p
	case "generic_type":
		return jsTypePath(n.ChildByField("name"))
	}
	return nil
}

func (x *extractor) jsInterface(c, docAt treesitter.Node, base string) {
	if base == "" || x.f.Test {
		return
	}
	if docAt.IsNull() {
		docAt = c
	}
	body := c.ChildByField("body")
	s := Sym{Base: base, Kind: KindInterface, Desc: x.jsDoc(docAt), Sig: x.sig(c, treesitter.Node{}, body), Line: c.StartLine(), End: c.EndLine()}
	if !x.sym(s) {
		return
	}
	for h := range c.Children() {
		if h.Kind() == "extends_type_clause" {
			for t := range h.Children() {
				if p := jsTypePath(t); p != nil {
					x.ref(Ref{From: base, Rel: RelExtends, Path: p, Line: s.Line})
				}
			}
		}
	}
	owner := strings.Split(base, ".")
	for m := range body.Children() {
		if m.Kind() != "method_signature" {
			continue
		}
		if name := jsPropName(m.ChildByField("name")); name != "" {
			x.sym(Sym{Base: base + "." + name, Kind: KindMethod, Desc: x.jsDoc(m), Sig: x.sig(m, treesitter.Node{}, treesitter.Node{}),
				Line: m.StartLine(), End: m.EndLine(), Owner: owner})
		}
	}
}

// jsMemberPath flattens a.b.c (identifiers, this) or nil.
func jsMemberPath(n treesitter.Node) []string {
	switch n.Kind() {
	case "identifier", "property_identifier", "private_property_identifier":
		return []string{n.Text()}
	case "this":
		return []string{"this"}
	case "super":
		return []string{"super"}
	case "member_expression":
		p := jsMemberPath(n.ChildByField("object"))
		if p == nil {
			return nil
		}
		prop := n.ChildByField("property")
		if prop.IsNull() {
			return nil
		}
		return append(p, prop.Text())
	case "non_null_expression", "parenthesized_expression":
		return jsMemberPath(n.FirstChild())
	}
	return nil
}

// jsRefs states the calls in a body.
func (x *extractor) jsRefs(body treesitter.Node, from, rel string, class []string) {
	if body.IsNull() {
		return
	}
	body.Walk(func(n treesitter.Node) bool {
		switch n.Kind() {
		case "class", "class_declaration":
			return false
		case "call_expression":
			x.jsCall(n.ChildByField("function"), from, rel, class, "", n.StartLine())
		case "new_expression":
			x.jsCall(n.ChildByField("constructor"), from, rel, class, "new", n.StartLine())
		case "jsx_opening_element", "jsx_self_closing_element":
			if name := n.ChildByField("name"); name.Kind() == "identifier" {
				if t := name.Text(); t != "" && t[0] >= 'A' && t[0] <= 'Z' {
					x.ref(Ref{From: from, Rel: rel, Path: []string{t}, Line: n.StartLine()})
				}
			}
		}
		return true
	})
}

func (x *extractor) jsCall(f treesitter.Node, from, rel string, class []string, how string, line int) {
	p := jsMemberPath(f)
	if len(p) == 0 || p[0] == "require" && len(p) == 1 {
		return
	}
	switch p[0] {
	case "this":
		if len(p) == 2 && class != nil {
			x.ref(Ref{From: from, Rel: rel, How: "self", Class: class, Path: p[1:], Line: line})
		}
		return
	case "super":
		if len(p) == 2 && class != nil {
			x.ref(Ref{From: from, Rel: rel, How: "super", Class: class, Path: p[1:], Line: line})
		}
		return
	}
	x.ref(Ref{From: from, Rel: rel, How: how, Path: p, Line: line})
}

// jsTest states a top-level test(...), it(...) or describe(...) call with
// a string title as a test.
func (x *extractor) jsTest(call treesitter.Node) {
	fn := call.ChildByField("function")
	p := jsMemberPath(fn)
	if fn.Kind() == "call_expression" { // test.each(table)(title, fn)
		p = jsMemberPath(fn.ChildByField("function"))
	}
	if len(p) == 0 || !contains(jsTestCalls, p[0]) {
		return
	}
	args := call.ChildByField("arguments")
	title, ok := jsString(args.FirstChild())
	if !ok {
		return
	}
	title = strings.Join(strings.Fields(title), " ")
	if len(title) > 80 {
		title = CapSig(title[:80])
	}
	base := p[0] + `("` + strings.ReplaceAll(title, `"`, `'`) + `")`
	s := Sym{Base: base, Kind: KindFunction, Test: true, Sig: oneLine(strings.SplitN(call.Text(), "\n", 2)[0]),
		Line: call.StartLine(), End: call.EndLine()}
	if !x.sym(s) {
		return
	}
	x.jsRefs(args, base, RelTests, nil)
}
