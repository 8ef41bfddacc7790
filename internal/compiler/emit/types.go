package emit

import (
	"path"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// newFile starts a jennifer file of package pkg for the machine, with the
// generated-code header, which names fsmgen's version and the spec, and
// the names the spec's packages are imported under. A file of the
// generated package itself (in is true) names what the package declares
// unqualified, even where the spec imports the package to name it.
func newFile(m *fsm.Machine, pkg string, in bool) *jen.File {
	f := jen.NewFile(pkg)
	if in && m.ImportPath != "" {
		f = jen.NewFilePathName(m.ImportPath, pkg)
	}
	f.HeaderComment(Header)
	f.HeaderComment("versions:")
	f.HeaderComment("\tfsmgen " + fsmrt.Version)
	f.HeaderComment("source: " + strings.Join(docLines(m.Source), " "))
	f.ImportName(pkgFsmrt, "fsmrt")
	f.ImportName(pkgFsmtest, "fsmtest")
	for _, imp := range m.Imports {
		switch {
		case imp.Path == m.ImportPath:
			// The generated package: unqualified in it, and under its
			// own name outside it.
		case path.Base(imp.Path) == imp.GoName:
			f.ImportName(imp.Path, imp.GoName)
		default:
			f.ImportAlias(imp.Path, imp.GoName)
		}
	}
	return f
}

// goType writes a Go type or expression of the spec, resolved by
// fsm.Build: its qualified names through the file's imports, the rest as
// the spec writes it (gofmt spaces it).
func goType(c fsm.GoCode) *jen.Statement {
	st := jen.Null()
	for _, t := range c {
		if t.Ident != nil {
			st.Qual(t.Ident.GoImportPath, t.Ident.GoName)
		} else {
			st.Op(t.Text)
		}
	}
	return st
}

// zeroValue returns the zero value of a storage field, written as the IR
// says: 0, "", false, nil, T{} or, for a type whose kind is not known,
// *new(T).
func zeroValue(d *fsm.Data) jen.Code {
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
		return goType(d.GoType).Values()
	}
	return jen.Op("*").New(goType(d.GoType))
}

// sampleValue returns a non-zero literal for a field of a predeclared
// type, for the generated JSON round-trip tests, or nil for other types.
func sampleValue(t fsm.GoCode, n int) jen.Code {
	switch t.Predeclared() {
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
