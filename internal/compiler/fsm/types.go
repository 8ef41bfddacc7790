package fsm

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/spec"
	"github.com/fsmgen/fsmgen/internal/suggest"
)

// ErrNeedsGenerated marks the error of an imported package that does not
// load because it imports the output package, which is not generated
// yet, or not from this revision of the spec: the compiler checks what
// the spec uses of it once the package is generated.
var ErrNeedsGenerated = errors.New("the package imports the generated package, which is not generated yet")

// Env is what Build knows of the Go packages around the spec, to check
// that field types name types.
type Env struct {
	// Import returns the type-checked package at an import path of the
	// spec's imports. Nil leaves qualified type names unchecked.
	Import func(path string) (*types.Package, error)
	// LocalTypes are the type names that hand-written files of the output
	// package declare, which field types may name without a qualifier;
	// LocalNames are the names of all their package-level declarations,
	// which behavior may name.
	LocalTypes, LocalNames []string
	// PackagePath is the import path the generated package will have;
	// "" when not known.
	PackagePath string
	// Source is the spec's path in its module, slash-separated, which the
	// generated files name; "" for the spec's file name.
	Source string
}

// typeUse is a name a field type uses: a bare identifier, or a qualified
// one (pkg.Name).
type typeUse struct {
	qual, name string
	typ        spec.String
}

// parseType parses a field's type and checks its package qualifiers; the
// names it uses are resolved later, by types.
func (b *builder) parseType(t spec.String) bool {
	if !t.Set || strings.TrimSpace(t.Value) == "" {
		b.errorf(t.Pos, "field has no type")
		return false
	}
	expr, err := parser.ParseExpr(t.Value)
	if err != nil {
		b.errorf(t.Pos, "type %q is not a Go type expression", t.Value)
		return false
	}
	ok, reported := true, false
	var walk func(e ast.Expr)
	walk = func(e ast.Expr) {
		switch e := e.(type) {
		case *ast.Ident:
			if e.Name == "_" {
				ok = false
				return
			}
			b.typeUses = append(b.typeUses, typeUse{name: e.Name, typ: t})
		case *ast.SelectorExpr:
			id, isID := e.X.(*ast.Ident)
			if !isID {
				ok = false
				return
			}
			imp, known := b.imports[id.Name]
			if !known {
				b.errorf(t.Pos, "type %q uses package %q, which is not under imports%s", t.Value, id.Name, suggest.DidYouMean(id.Name, names(b.imports)))
				ok, reported = false, true
				return
			}
			imp.used = true
			b.typeUses = append(b.typeUses, typeUse{qual: id.Name, name: e.Sel.Name, typ: t})
		case *ast.StarExpr:
			walk(e.X)
		case *ast.ArrayType:
			if e.Len != nil {
				if lit, isLit := e.Len.(*ast.BasicLit); !isLit || lit.Kind != token.INT {
					ok = false
				}
			}
			walk(e.Elt)
		case *ast.MapType:
			walk(e.Key)
			walk(e.Value)
		default:
			ok = false
		}
	}
	walk(expr)
	if !ok && !reported {
		b.errorf(t.Pos, "type %q is not supported: use a name, a qualified name (pkg.Name), a pointer, a slice, an array or a map of those", t.Value)
	}
	return ok
}

// normaliseType prints a type expression in gofmt style, so that types
// compare equal however they were spaced.
func normaliseType(s string) string {
	return strings.Join(strings.Fields(s), "")
}

// predeclaredTypes are the names of Go's predeclared types.
func predeclaredTypes() []string {
	var out []string
	for _, name := range types.Universe.Names() {
		if _, ok := types.Universe.Lookup(name).(*types.TypeName); ok {
			out = append(out, name)
		}
	}
	return out
}

// types checks that every name a field type uses is a type: a predeclared
// type, a type of the generated package (fsmgen's, or the spec's states,
// events and actions), a type written by hand in the output package, or
// an exported type of an imported package.
func (b *builder) types() {
	known := map[string]bool{}
	for _, n := range predeclaredTypes() {
		known[n] = true
	}
	for _, n := range b.env.LocalTypes {
		known[n] = true
	}
	for _, n := range Generated {
		// The exported types of the package (State, Event, ...), not its
		// functions and variables, nor the names of its tests.
		if token.IsExported(n) && !slices.Contains(Values, n) && !strings.HasPrefix(n, "Test") {
			known[n] = true
		}
	}
	for _, ks := range b.kindSets() {
		for _, d := range ks.decls {
			if d.GoName != "" {
				known[d.GoName] = true
			}
		}
	}
	pkgs := map[string]*types.Package{}
	b.pkgs = pkgs
	failed := map[string]bool{}
	for _, u := range b.typeUses {
		if u.qual == "" {
			b.localType(u, known)
			continue
		}
		if b.self(b.imports[u.qual].Path.Value) {
			// The output package under an import of its own: its
			// hand-written types, which it names unqualified.
			b.localType(typeUse{name: u.name, typ: u.typ}, known)
			continue
		}
		if b.env.Import == nil {
			continue
		}
		imp := b.imports[u.qual]
		pkg, ok := pkgs[imp.Path.Value]
		if !ok && !failed[imp.Path.Value] {
			var err error
			pkg, err = b.env.Import(imp.Path.Value)
			switch {
			case errors.Is(err, ErrNeedsGenerated):
				b.errorf(imp.Path.Pos, "package %q, which field types use, imports the generated package: the generated code importing it would make an import cycle; declare the type in the output package or in a package that does not import it", imp.Path.Value)
				failed[imp.Path.Value] = true
				continue
			case err != nil:
				b.errorf(imp.Path.Pos, "cannot load package %q, which field types use: %v", imp.Path.Value, err)
				failed[imp.Path.Value] = true
				continue
			}
			pkgs[imp.Path.Value] = pkg
		}
		if pkg != nil {
			b.qualifiedType(u, pkg)
		}
	}
}

// otherLanguages maps type names of other languages to Go's, for
// suggestions.
var otherLanguages = map[string]string{
	"integer": "int", "long": "int64", "short": "int16", "boolean": "bool", "str": "string",
	"text": "string", "float": "float64", "double": "float64", "number": "float64", "char": "rune",
	"object": "any", "Object": "any", "String": "string", "Integer": "int", "Boolean": "bool",
}

func (b *builder) localType(u typeUse, known map[string]bool) {
	if known[u.name] {
		return
	}
	if types.Universe.Lookup(u.name) != nil {
		b.errorf(u.typ.Pos, "type %q uses %s, which is not a type", u.typ.Value, u.name)
		return
	}
	if b.generatedValue(u.name) {
		b.errorf(u.typ.Pos, "type %q uses %s, which is a function, variable or constant fsmgen generates, not a type", u.typ.Value, u.name)
		return
	}
	hint := suggest.DidYouMean(u.name, names(known))
	if goName, ok := otherLanguages[u.name]; ok {
		hint = fmt.Sprintf(" (did you mean %q?)", goName)
	}
	b.errorf(u.typ.Pos, "unknown type %s in %q: use a Go type (int, string, …), a type of an imported package (pkg.Name), or a type declared in the output package%s", u.name, u.typ.Value, hint)
}

// generatedValue reports whether name is a function, variable or constant
// of the generated package: one of Values, or a kind constant.
func (b *builder) generatedValue(name string) bool {
	if slices.Contains(Values, name) {
		return true
	}
	for _, ks := range b.kindSets() {
		for _, d := range ks.decls {
			if d.KindName == name {
				return true
			}
		}
	}
	return false
}

func (b *builder) qualifiedType(u typeUse, pkg *types.Package) {
	full := u.qual + "." + u.name
	obj := pkg.Scope().Lookup(u.name)
	switch {
	case obj == nil:
		var exported []string
		for _, n := range pkg.Scope().Names() {
			if _, isType := pkg.Scope().Lookup(n).(*types.TypeName); isType && token.IsExported(n) {
				exported = append(exported, n)
			}
		}
		b.errorf(u.typ.Pos, "package %s (%s) has no type %s%s", u.qual, pkg.Path(), u.name, suggest.DidYouMean(u.name, exported))
	case !obj.Exported():
		b.errorf(u.typ.Pos, "%s is not exported by package %s, so the generated package cannot use it", full, pkg.Path())
	default:
		tn, isType := obj.(*types.TypeName)
		if !isType {
			b.errorf(u.typ.Pos, "%s is a %s, not a type", full, objectKind(obj))
			return
		}
		if named, ok := tn.Type().(*types.Named); ok && named.TypeParams().Len() > 0 {
			b.errorf(u.typ.Pos, "%s is a generic type: name an instance of it in the package (type X = %s[...]) and use that", full, full)
		}
	}
}

func objectKind(obj types.Object) string {
	switch obj.(type) {
	case *types.Func:
		return "function"
	case *types.Var:
		return "variable"
	case *types.Const:
		return "constant"
	}
	return "name"
}

// zero returns how the zero value of type t (a type expression checked by
// parseType) is written, as far as the builder knows the types it names.
func (b *builder) zero(t string) Zero {
	expr, err := parser.ParseExpr(t)
	if err != nil {
		return ZeroNew
	}
	switch e := expr.(type) {
	case *ast.StarExpr, *ast.MapType:
		return ZeroNil
	case *ast.ArrayType:
		if e.Len == nil {
			return ZeroNil
		}
		return ZeroComposite
	case *ast.Ident:
		if obj, ok := types.Universe.Lookup(e.Name).(*types.TypeName); ok {
			return zeroOf(obj.Type())
		}
	case *ast.SelectorExpr:
		id, _ := e.X.(*ast.Ident)
		if id == nil || b.imports[id.Name] == nil {
			return ZeroNew
		}
		pkg := b.pkgs[b.imports[id.Name].Path.Value]
		if pkg == nil {
			return ZeroNew
		}
		if obj, ok := pkg.Scope().Lookup(e.Sel.Name).(*types.TypeName); ok {
			return zeroOf(obj.Type())
		}
	}
	return ZeroNew
}

// zeroOf returns how the zero value of a type-checked type is written.
func zeroOf(t types.Type) Zero {
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsNumeric != 0:
			return ZeroNumber
		case u.Info()&types.IsString != 0:
			return ZeroString
		case u.Info()&types.IsBoolean != 0:
			return ZeroBool
		case u.Kind() == types.UnsafePointer:
			return ZeroNil
		}
	case *types.Pointer, *types.Slice, *types.Map, *types.Chan, *types.Signature, *types.Interface:
		return ZeroNil
	case *types.Struct, *types.Array:
		return ZeroComposite
	}
	return ZeroNew
}
