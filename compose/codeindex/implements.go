package codeindex

import (
	"go/types"
	"slices"
	"sort"
)

// implements is what go/types says of the module's named types and
// interfaces: which type implements which interface (its pointer's method
// set, so pointer receivers count, as for an assignment of &T), and, for
// each such pair, which of the type's methods implements each of the
// interface's (implemented_by: the interface's method, named where it is
// declared, to the method the type has, named where it is declared: an
// embedded type's method is the embedded type's). Parameter names and
// named results never matter: the compiler's assignability decides.
//
// Every package of the module is checked again as an import, from source
// and declarations only (loader.withUnexported), so that the types
// compared come from one consistent set of packages, unexported ones
// included, whichever packages this run read. Interfaces and types declared in _test.go
// files and in files of another platform are not compared; nor are
// generic interfaces (they describe no method set until instantiated)
// and interfaces with no methods or with type terms (constraints). A
// generic type is compared instantiated with its own type parameters: it
// implements an interface whose methods it has for every type argument.
// Edges are [source id, relationship, target id, package of the type].
func (l *loader) implements() [][4]string {
	l = l.withUnexported()
	type tn struct {
		pkg   string // module import path
		named *types.Named
		typ   types.Type // what is compared: *T (instantiated when generic), or the interface
		names []string   // method names, sorted: a cheap test before types.Implements
	}
	var typs, ifaces []tn
	for _, rel := range l.mod.Pkgs {
		ip := l.mod.importPath(rel)
		pkg, err := l.ImportFrom(ip, l.mod.Root, 0)
		if err != nil || pkg == nil {
			continue
		}
		sc := pkg.Scope()
		for _, name := range sc.Names() {
			obj, ok := sc.Lookup(name).(*types.TypeName)
			if !ok || obj.IsAlias() {
				continue
			}
			named, ok := obj.Type().(*types.Named)
			if !ok {
				continue
			}
			t := tn{pkg: ip, named: named}
			if iface, ok := named.Underlying().(*types.Interface); ok {
				if named.TypeParams().Len() > 0 || iface.NumMethods() == 0 || !iface.IsMethodSet() {
					continue
				}
				t.typ = named
				t.names = methodNames(types.NewMethodSet(named))
				ifaces = append(ifaces, t)
				continue
			}
			var typ types.Type = named
			if tps := named.TypeParams(); tps.Len() > 0 {
				args := make([]types.Type, tps.Len())
				for i := range args {
					args[i] = tps.At(i)
				}
				inst, err := types.Instantiate(nil, named, args, false)
				if err != nil {
					continue
				}
				typ = inst
			}
			t.typ = types.NewPointer(typ)
			if t.names = methodNames(types.NewMethodSet(t.typ)); len(t.names) == 0 {
				continue
			}
			typs = append(typs, t)
		}
	}
	var out [][4]string
	for _, t := range typs {
		tid := symID(t.pkg, t.named.Obj().Name())
		for _, i := range ifaces {
			if !subset(i.names, t.names) {
				continue
			}
			iface := i.named.Underlying().(*types.Interface)
			if !types.Implements(t.typ, iface) {
				continue
			}
			out = append(out, [4]string{tid, RelImplements, symID(i.pkg, i.named.Obj().Name()), t.pkg})
			for k := 0; k < iface.NumMethods(); k++ {
				m := iface.Method(k)
				from := l.methodID(m)
				obj, _, _ := types.LookupFieldOrMethod(t.typ, false, m.Pkg(), m.Name())
				fn, ok := obj.(*types.Func)
				if from == "" || !ok {
					continue
				}
				if to := l.methodID(fn); to != "" {
					out = append(out, [4]string{from, RelImplBy, to, t.pkg})
				}
			}
		}
	}
	return out
}

// methodID is the id of a method of a module named type or interface,
// named after the type that declares it, or "".
func (l *loader) methodID(fn *types.Func) string {
	fn = fn.Origin()
	sig, ok := fn.Type().(*types.Signature)
	if !ok || sig.Recv() == nil || fn.Pkg() == nil {
		return ""
	}
	rt := sig.Recv().Type()
	if p, ok := rt.(*types.Pointer); ok {
		rt = p.Elem()
	}
	named, ok := types.Unalias(rt).(*types.Named)
	if !ok || named.Obj().Pkg() == nil || l.mod.relDir(named.Obj().Pkg().Path()) == "" {
		return ""
	}
	return symID(named.Obj().Pkg().Path(), named.Obj().Name()+"."+fn.Name())
}

func methodNames(ms *types.MethodSet) []string {
	out := make([]string, ms.Len())
	for i := range out {
		out[i] = ms.At(i).Obj().Name()
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// subset says whether every name of a (sorted) is in b (sorted).
func subset(a, b []string) bool {
	j := 0
	for _, x := range a {
		for j < len(b) && b[j] < x {
			j++
		}
		if j == len(b) || b[j] != x {
			return false
		}
	}
	return true
}
