package fsm

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/types"
	"reflect"
	"slices"
	"strings"
)

// jsonShapes sets the JSON shape of every field whose type the builder
// knows through the spec's imports (see Field.JSON).
func (b *builder) jsonShapes(m *Machine) {
	var all [][]*Field
	for _, s := range m.States {
		all = append(all, s.Fields)
	}
	for _, e := range m.Events {
		all = append(all, e.Fields)
	}
	for _, a := range m.Actions {
		all = append(all, a.Fields)
	}
	for _, fns := range [][]*Func{m.Guards, m.Effects} {
		for _, fn := range fns {
			all = append(all, fn.Reads, fn.Sets)
		}
	}
	shapes := map[string]string{}
	for _, fields := range all {
		for _, f := range fields {
			if f.Type == "" {
				continue
			}
			shape, ok := shapes[f.Type]
			if !ok {
				shape = b.jsonShape(f.Type)
				shapes[f.Type] = shape
			}
			f.JSON = shape
		}
	}
}

// jsonShape returns the JSON shape of the type expression t, or "" when
// the builder does not know every type it names.
func (b *builder) jsonShape(t string) string {
	expr, err := parser.ParseExpr(t)
	if err != nil {
		return ""
	}
	typ := b.goType(expr)
	if typ == nil {
		return ""
	}
	return shapeOf(typ, map[*types.Named]bool{})
}

// goType resolves a type expression that parseType accepted to the type
// it names, or nil when it names a type the builder cannot see (one of
// the output package's, a package that did not load).
func (b *builder) goType(e ast.Expr) types.Type {
	switch e := e.(type) {
	case *ast.Ident:
		if obj, ok := types.Universe.Lookup(e.Name).(*types.TypeName); ok {
			return obj.Type()
		}
	case *ast.SelectorExpr:
		id, _ := e.X.(*ast.Ident)
		if id == nil || b.imports[id.Name] == nil {
			return nil
		}
		pkg := b.pkgs[b.imports[id.Name].Path.Value]
		if pkg == nil {
			return nil
		}
		if obj, ok := pkg.Scope().Lookup(e.Sel.Name).(*types.TypeName); ok && obj.Exported() {
			return obj.Type()
		}
	case *ast.StarExpr:
		if elem := b.goType(e.X); elem != nil {
			return types.NewPointer(elem)
		}
	case *ast.ArrayType:
		elem := b.goType(e.Elt)
		if elem == nil {
			return nil
		}
		if e.Len == nil {
			return types.NewSlice(elem)
		}
		lit, _ := e.Len.(*ast.BasicLit)
		var n int64
		if lit == nil {
			return nil
		}
		if _, err := fmt.Sscan(lit.Value, &n); err != nil {
			return nil
		}
		return types.NewArray(elem, n)
	case *ast.MapType:
		key, elem := b.goType(e.Key), b.goType(e.Value)
		if key != nil && elem != nil {
			return types.NewMap(key, elem)
		}
	}
	return nil
}

// shapeOf writes how values of t are encoded in JSON by encoding/json, so
// that two types of one shape read each other's JSON: the kinds of basic
// types, the members of structs (by JSON name, sorted), the elements of
// slices, arrays and maps, pointers. A named type is its underlying
// type's shape, its name left out — unless it encodes itself (a JSON or
// text marshaler), whose shape is then its name and its underlying shape:
// code decides its JSON, and a type that moves to another package under
// its name keeps its code. seen breaks the cycles of recursive types.
func shapeOf(t types.Type, seen map[*types.Named]bool) string {
	if named, ok := types.Unalias(t).(*types.Named); ok {
		if seen[named] {
			return "ref(" + named.Obj().Name() + ")"
		}
		seen[named] = true
		defer delete(seen, named)
		if encodesItself(named) {
			return "custom(" + named.Obj().Name() + ":" + shapeOf(named.Underlying(), seen) + ")"
		}
		return shapeOf(named.Underlying(), seen)
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		return u.Name()
	case *types.Pointer:
		return "*" + shapeOf(u.Elem(), seen)
	case *types.Slice:
		if b, ok := u.Elem().Underlying().(*types.Basic); ok && b.Kind() == types.Byte {
			return "bytes"
		}
		return "[]" + shapeOf(u.Elem(), seen)
	case *types.Array:
		return fmt.Sprintf("[%d]%s", u.Len(), shapeOf(u.Elem(), seen))
	case *types.Map:
		return "map[" + shapeOf(u.Key(), seen) + "]" + shapeOf(u.Elem(), seen)
	case *types.Struct:
		members := structMembers(u, seen)
		slices.Sort(members)
		return "{" + strings.Join(members, ",") + "}"
	case *types.Interface:
		return "any"
	}
	return "unsupported(" + t.String() + ")"
}

// structMembers lists the JSON members of struct s as "name:shape":
// exported fields under their json tag's name or their own, embedded
// structs without a name inlined, fields tagged "-" left out.
func structMembers(s *types.Struct, seen map[*types.Named]bool) []string {
	var out []string
	for i := range s.NumFields() {
		f := s.Field(i)
		tag := reflect.StructTag(s.Tag(i)).Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" && opts == "" {
			continue
		}
		if f.Embedded() && name == "" {
			elem := f.Type()
			if p, ok := elem.Underlying().(*types.Pointer); ok {
				elem = p.Elem()
			}
			if inner, ok := elem.Underlying().(*types.Struct); ok {
				if named, isNamed := types.Unalias(elem).(*types.Named); !isNamed || !encodesItself(named) {
					out = append(out, structMembers(inner, seen)...)
					continue
				}
			}
		}
		if !f.Exported() {
			continue
		}
		if name == "" {
			name = f.Name()
		}
		out = append(out, name+":"+shapeOf(f.Type(), seen))
	}
	return out
}

// encodesItself reports whether values of t (or of *t) write or read their
// own JSON: MarshalJSON, UnmarshalJSON, MarshalText or UnmarshalText.
func encodesItself(t *types.Named) bool {
	for _, typ := range []types.Type{t, types.NewPointer(t)} {
		ms := types.NewMethodSet(typ)
		for _, name := range []string{"MarshalJSON", "UnmarshalJSON", "MarshalText", "UnmarshalText"} {
			if ms.Lookup(t.Obj().Pkg(), name) != nil {
				return true
			}
		}
	}
	return false
}
