package codeindex

import (
	"go/ast"
	"go/printer"
	"go/token"
	"strings"
	"unicode"

	"github.com/kgctx/kgctx/compose/codeindex/langs"
)

// Signatures are printed from the syntax tree, as the source writes them
// (parameter names included, types qualified as the file qualifies
// them), folded to one line: go/types would need every import resolved,
// and a file of another platform is not type-checked.

// funcSig is a function's or method's signature: `func (nc *Conn)
// Close()`.
func funcSig(fset *token.FileSet, d *ast.FuncDecl) string {
	return printSig(fset, &ast.FuncDecl{Recv: d.Recv, Name: d.Name, Type: d.Type})
}

// ifaceMethodSig is an interface method's signature as the interface
// writes it: `Put(key string, value []byte) (uint64, error)`.
func ifaceMethodSig(fset *token.FileSet, name *ast.Ident, ft *ast.FuncType) string {
	if ft == nil {
		return name.Name
	}
	return strings.TrimPrefix(printSig(fset, &ast.FuncDecl{Name: name, Type: ft}), "func ")
}

// typeSig is a type's signature: `type Conn struct`, `type KeyValue
// interface`, `type Stack[T any] struct`, and for other types their
// definition: `type Status int`, `type MsgHandler func(msg *Msg)`.
func typeSig(fset *token.FileSet, ts *ast.TypeSpec) string {
	spec := &ast.TypeSpec{Name: ts.Name, TypeParams: ts.TypeParams, Assign: ts.Assign, Type: ts.Type}
	switch ts.Type.(type) {
	case *ast.StructType:
		spec.Type = ast.NewIdent("struct")
	case *ast.InterfaceType:
		spec.Type = ast.NewIdent("interface")
	}
	return printSig(fset, &ast.GenDecl{Tok: token.TYPE, Specs: []ast.Spec{spec}})
}

func printSig(fset *token.FileSet, n ast.Node) string {
	var b strings.Builder
	if err := (&printer.Config{Mode: printer.RawFormat}).Fprint(&b, fset, n); err != nil {
		return ""
	}
	return langs.CapSig(oneLine(b.String()))
}

// oneLine folds a printed declaration to one line: runs of white space
// to one space, none just inside brackets or before a comma, and the
// trailing comma of a parameter list split over lines dropped.
func oneLine(s string) string {
	s = strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
	for _, r := range [...][2]string{{"( ", "("}, {" )", ")"}, {"[ ", "["}, {" ]", "]"}, {" ,", ","}, {",)", ")"}, {",]", "]"}} {
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	return s
}
