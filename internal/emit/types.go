package emit

import (
	"go/ast"
	"go/parser"
	"path"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/fsm"
)

// newFile starts a jennifer file for the machine's package with the
// generated-code header and the spec's import aliases.
func newFile(m *fsm.Machine) *jen.File {
	f := jen.NewFile(m.Package)
	f.HeaderComment(Header)
	for _, imp := range m.Imports {
		if path.Base(imp.Path) == imp.Alias {
			f.ImportName(imp.Path, imp.Alias)
		} else {
			f.ImportAlias(imp.Path, imp.Alias)
		}
	}
	return f
}

// typeCode turns a field's Go type expression, checked by fsm.Build, into
// jennifer code whose qualifiers are resolved through the spec's imports.
func typeCode(m *fsm.Machine, t string) *jen.Statement {
	expr, err := parser.ParseExpr(t)
	if err != nil {
		return jen.Id(t) // unreachable: fsm.Build parsed it
	}
	paths := map[string]string{}
	for _, imp := range m.Imports {
		paths[imp.Alias] = imp.Path
	}
	var conv func(e ast.Expr) *jen.Statement
	conv = func(e ast.Expr) *jen.Statement {
		switch e := e.(type) {
		case *ast.Ident:
			return jen.Id(e.Name)
		case *ast.SelectorExpr:
			return jen.Qual(paths[e.X.(*ast.Ident).Name], e.Sel.Name)
		case *ast.StarExpr:
			return jen.Op("*").Add(conv(e.X))
		case *ast.ArrayType:
			if e.Len == nil {
				return jen.Index().Add(conv(e.Elt))
			}
			return jen.Index(jen.Id(e.Len.(*ast.BasicLit).Value)).Add(conv(e.Elt))
		case *ast.MapType:
			return jen.Map(conv(e.Key)).Add(conv(e.Value))
		}
		return jen.Id(t)
	}
	return conv(expr)
}

// zeroValue returns the zero value of a storage field, written as the IR
// says: 0, "", false, nil, T{} or, for a type whose kind is not known,
// *new(T).
func zeroValue(m *fsm.Machine, d *fsm.Data) jen.Code {
	switch d.Zero {
	case fsm.ZeroNumber:
		return jen.Lit(0)
	case fsm.ZeroString:
		return jen.Lit("")
	case fsm.ZeroBool:
		return jen.False()
	case fsm.ZeroNil:
		return jen.Nil()
	case fsm.ZeroComposite:
		return typeCode(m, d.Type).Clone().Values()
	}
	return jen.Op("*").New(typeCode(m, d.Type))
}

// sampleValue returns a non-zero literal for a field of a predeclared
// type, for the generated JSON round-trip tests, or nil for other types.
func sampleValue(t string, n int) jen.Code {
	switch t {
	case "string":
		return jen.Lit("sample " + string(rune('a'+n%26)))
	case "bool":
		return jen.True()
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return jen.Lit(n + 1)
	case "float32", "float64":
		return jen.Lit(float64(n) + 0.5)
	}
	return nil
}
