package langs

import (
	"strings"

	"github.com/kgctx/kgctx/compose/codeindex/treesitter"
)

// Rust: a module per file (src/a/b.rs and src/a/b/mod.rs are crate::a::b;
// lib.rs and main.rs the crate's root; a file under tests, examples or
// benches, or src/bin, a crate of its own), inline modules (mod tests {
// }) as a prefix of their items' names (tests.it_works); functions,
// structs, enums, unions and type aliases (types), traits (interfaces)
// with their methods, impl blocks' methods as Type.method (has_method from
// the type, wherever it is declared in the crate); use declarations as
// bindings (groups, aliases, globs, pub use re-exports); calls by path
// (f(), module::f(), Type::f(), Self::f(), crate::, self::, super::,
// self.m(), and f(...) inside a macro's arguments); impl Trait for Type
// as implements. Tests: #[test] functions (and #[tokio::test] and the
// like), in any file; inside #[cfg(test)] modules and under tests only
// tests are stated. A test tests what it calls, and test_foo tests foo by
// name.

type rsScope struct {
	mod    int      // 0: the file's module; else 1 + index into File.Mods
	prefix []string // inline modules' names
	test   bool     // inside #[cfg(test)] or a tests/ file
}

func (x *extractor) rust(root treesitter.Node) {
	var doc []string
	for c := range root.Children() {
		if c.Kind() != "line_comment" && c.Kind() != "block_comment" {
			break
		}
		if !c.ChildOfKind("inner_doc_comment_marker").IsNull() {
			doc = append(doc, c.ChildOfKind("doc_comment").Text())
		}
	}
	x.f.Doc = Synopsis(strings.Join(doc, "\n"))
	x.rsItems(root, rsScope{test: x.f.Test})
}

// rsAttrs are the attributes just before an item (their text).
func rsAttrs(n treesitter.Node) []string {
	var out []string
	for p := n.PrevSibling(); !p.IsNull(); p = p.PrevSibling() {
		switch p.Kind() {
		case "attribute_item":
			out = append(out, p.ChildOfKind("attribute").Text())
		case "line_comment", "block_comment":
		default:
			return out
		}
	}
	return out
}

func rsIsTest(attrs []string) bool {
	for _, a := range attrs {
		a = strings.TrimSpace(a)
		if a == "test" || strings.HasSuffix(a, "::test") || strings.HasPrefix(a, "test(") || strings.Contains(a, "::test(") {
			return true
		}
	}
	return false
}

func rsCfgTest(attrs []string) bool {
	for _, a := range attrs {
		if strings.HasPrefix(strings.ReplaceAll(a, " ", ""), "cfg(test") {
			return true
		}
	}
	return false
}

func (x *extractor) rsDoc(n treesitter.Node) string {
	return x.docBefore(n, []string{"///", "/**"}, "attribute_item")
}

func (x *extractor) rsItems(n treesitter.Node, sc rsScope) {
	for c := range n.Children() {
		switch c.Kind() {
		case "use_declaration":
			x.rsUse(c.ChildByField("argument"), nil, sc.mod)
		case "mod_item":
			name := c.ChildByField("name").Text()
			body := c.ChildByField("body")
			if name == "" {
				continue
			}
			if body.IsNull() {
				if sc.mod == 0 {
					x.f.ModDecls = append(x.f.ModDecls, name)
				}
				continue
			}
			p := append(append([]string(nil), sc.prefix...), name)
			x.f.Mods = append(x.f.Mods, p)
			x.rsItems(body, rsScope{mod: len(x.f.Mods), prefix: p, test: sc.test || rsCfgTest(rsAttrs(c))})
		case "function_item":
			x.rsFunc(c, sc, nil, nil)
		case "struct_item", "enum_item", "union_item", "type_item":
			if sc.test {
				continue
			}
			name := c.ChildByField("name").Text()
			x.sym(Sym{Base: join(sc.prefix, name), Mod: sc.mod, Kind: KindType, Desc: x.rsDoc(c),
				Sig: x.sig(c, treesitter.Node{}, c.ChildByField("body")), Line: c.StartLine(), End: c.EndLine()})
		case "trait_item":
			if sc.test {
				continue
			}
			name := c.ChildByField("name").Text()
			body := c.ChildByField("body")
			if !x.sym(Sym{Base: join(sc.prefix, name), Mod: sc.mod, Kind: KindInterface, Desc: x.rsDoc(c),
				Sig: x.sig(c, treesitter.Node{}, body), Line: c.StartLine(), End: c.EndLine()}) {
				continue
			}
			for m := range body.Children() {
				if m.Kind() == "function_item" || m.Kind() == "function_signature_item" {
					x.rsFunc(m, sc, []string{name}, []string{name})
				}
			}
		case "impl_item":
			typ := rsTypePath(c.ChildByField("type"))
			if typ == nil || sc.test {
				continue
			}
			if tr := rsTypePath(c.ChildByField("trait")); tr != nil {
				x.ref(Ref{Mod: sc.mod, Rel: RelExtends, FromPath: typ, Path: tr, Line: c.StartLine()})
			}
			for m := range c.ChildByField("body").Children() {
				if m.Kind() == "function_item" {
					x.rsFunc(m, sc, typ, typ)
				}
			}
		}
	}
}

// rsTypePath is a type as a path: S, S<T>, a::S.
func rsTypePath(n treesitter.Node) []string {
	switch n.Kind() {
	case "type_identifier", "identifier":
		return []string{n.Text()}
	case "generic_type":
		return rsTypePath(n.ChildByField("type"))
	case "scoped_type_identifier", "scoped_identifier":
		p := rsPath(n)
		return p
	}
	return nil
}

// rsPath flattens a scoped path (a::b::c, crate::x, Self::new), or nil.
func rsPath(n treesitter.Node) []string {
	switch n.Kind() {
	case "identifier", "type_identifier", "crate", "self", "super", "field_identifier":
		return []string{n.Text()}
	case "scoped_identifier", "scoped_type_identifier":
		var p []string
		if path := n.ChildByField("path"); !path.IsNull() {
			if p = rsPath(path); p == nil {
				return nil
			}
		}
		name := n.ChildByField("name").Text()
		if name == "" {
			return nil
		}
		return append(p, name)
	case "generic_type":
		return rsPath(n.ChildByField("type"))
	}
	return nil
}

// rsUse states the bindings of a use tree under prefix.
func (x *extractor) rsUse(n treesitter.Node, prefix []string, mod int) {
	bind := func(path []string, alias string) {
		if len(path) == 0 {
			return
		}
		name := path[len(path)-1]
		if alias == "" {
			alias = name
		}
		if name == "self" { // use a::b::{self}: b itself
			path = path[:len(path)-1]
			if len(path) == 0 {
				return
			}
			name = path[len(path)-1]
			if alias == "self" {
				alias = name
			}
		}
		x.f.Imports = append(x.f.Imports, Binding{Mod: mod, Name: alias, Path: path[:len(path)-1], Symbol: name})
	}
	switch n.Kind() {
	case "identifier", "scoped_identifier", "crate", "self", "super":
		if p := rsPath(n); p != nil {
			bind(append(append([]string(nil), prefix...), p...), "")
		}
	case "use_as_clause":
		if p := rsPath(n.ChildByField("path")); p != nil {
			bind(append(append([]string(nil), prefix...), p...), n.ChildByField("alias").Text())
		}
	case "use_wildcard":
		var p []string
		for c := range n.Children() {
			if q := rsPath(c); q != nil {
				p = q
			}
		}
		x.f.Imports = append(x.f.Imports, Binding{Mod: mod, Name: "*", Path: append(append([]string(nil), prefix...), p...)})
	case "scoped_use_list":
		p := append([]string(nil), prefix...)
		if path := n.ChildByField("path"); !path.IsNull() {
			q := rsPath(path)
			if q == nil {
				return
			}
			p = append(p, q...)
		}
		x.rsUse(n.ChildByField("list"), p, mod)
	case "use_list":
		for c := range n.Children() {
			x.rsUse(c, prefix, mod)
		}
	}
}

// rsFunc states a function; in an impl or a trait (owner set) a method
// Type.f. self is the type Self and self name.
func (x *extractor) rsFunc(fn treesitter.Node, sc rsScope, owner, self []string) {
	name := fn.ChildByField("name").Text()
	if name == "" {
		return
	}
	attrs := rsAttrs(fn)
	test := rsIsTest(attrs)
	base := join(sc.prefix, name)
	kind := KindFunction
	if owner != nil {
		base = join(sc.prefix, owner[len(owner)-1]+"."+name)
		kind = KindMethod
	}
	if sc.test && !test {
		return
	}
	body := fn.ChildByField("body")
	s := Sym{Base: base, Mod: sc.mod, Kind: kind, Desc: x.rsDoc(fn), Sig: x.sig(fn, treesitter.Node{}, body),
		Line: fn.StartLine(), End: fn.EndLine(), Owner: owner}
	rel := RelCalls
	if test {
		s.Kind, s.Owner, s.Test, rel = KindFunction, nil, true, RelTests
	}
	if !x.sym(s) {
		return
	}
	if test {
		if subj := strings.TrimPrefix(strings.TrimPrefix(name, "test"), "_"); subj != "" && subj != name {
			x.ref(Ref{From: base, Mod: sc.mod, Rel: RelTests, How: "name", Path: []string{subj}, Line: s.Line})
		}
	}
	x.rsRefs(body, base, rel, sc.mod, self)
}

func (x *extractor) rsRefs(body treesitter.Node, from, rel string, mod int, self []string) {
	if body.IsNull() {
		return
	}
	subst := func(p []string) []string {
		if len(p) > 1 && p[0] == "Self" && self != nil {
			return append(append([]string(nil), self...), p[1:]...)
		}
		return p
	}
	body.Walk(func(n treesitter.Node) bool {
		switch n.Kind() {
		case "function_item", "impl_item", "mod_item", "trait_item":
			return false
		case "call_expression":
			f := n.ChildByField("function")
			if f.Kind() == "generic_function" {
				f = f.ChildByField("function")
			}
			line := n.StartLine()
			switch f.Kind() {
			case "identifier", "scoped_identifier":
				if p := rsPath(f); p != nil {
					x.ref(Ref{From: from, Mod: mod, Rel: rel, Path: subst(p), Line: line})
				}
			case "field_expression":
				if v := f.ChildByField("value"); v.Kind() == "self" && self != nil {
					x.ref(Ref{From: from, Mod: mod, Rel: rel, How: "self", Class: self, Path: []string{f.ChildByField("field").Text()}, Line: line})
				}
			}
		case "token_tree":
			// A macro's arguments are tokens: name(...) among them is taken
			// as a call of name (assert_eq!(parse(x), ...)).
			for c := range n.Children() {
				if c.Kind() == "identifier" {
					if nx := c.NextSibling(); nx.Kind() == "token_tree" && strings.HasPrefix(nx.Text(), "(") {
						x.ref(Ref{From: from, Mod: mod, Rel: rel, Path: []string{c.Text()}, Line: c.StartLine()})
					}
				}
			}
		}
		return true
	})
}
