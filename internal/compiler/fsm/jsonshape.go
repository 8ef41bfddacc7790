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

// Shape is how encoding/json writes and reads the values of a Go type: what
// a field's saved JSON looks like. Two types of one shape (their String
// equal) read each other's JSON; the parts of a shape let fsmgen diff
// decide more, such as whether a narrower number reads as a wider one, or
// a struct as one with more members.
//
// A shape may be cyclic: the shape of a recursive type points back at
// itself.
type Shape struct {
	Kind ShapeKind
	// Bits is the size of a number: 8, 16, 32 or 64. int, uint and
	// uintptr are 64 bits: fsmgen assumes a 64-bit platform, as every
	// 64-bit port of Go is.
	Bits int
	// Type is the Go type as its package's name qualifies it ("int32",
	// "money.Cents", "[]int"), for messages.
	Type string
	// Name and Pkg are a named type's name and package path; "" for other
	// types. A named type has its underlying type's shape, unless it is
	// Custom.
	Name, Pkg string
	// Custom is set on a named type that writes or reads its own JSON (a
	// JSON or text marshaler): its code, which fsmgen does not see,
	// decides its JSON. The rest of the shape is its underlying type's.
	Custom bool
	// Len is an array's length.
	Len int64
	// Key is a map's key. Elem is the element of a pointer, slice, array
	// or map, or the value a quoted member holds (",string").
	Key, Elem *Shape
	// Members are a struct's members, by JSON name, sorted.
	Members []Member
}

// ShapeKind is what a shape is.
type ShapeKind int

// The kinds of shapes.
const (
	ShapeUnsupported ShapeKind = iota // a type encoding/json refuses: a channel, a function, a complex number
	ShapeBool
	ShapeInt
	ShapeUint
	ShapeFloat
	ShapeString
	ShapeBytes // a slice of bytes, which JSON holds as base64 text
	ShapePointer
	ShapeSlice
	ShapeArray
	ShapeMap
	ShapeStruct
	ShapeInterface // an interface: any, or one with methods (which reads only null)
	ShapeQuoted    // a member tagged ",string": its value's JSON inside a string
)

// Member is a member of a struct's JSON: its name and its value's shape.
type Member struct {
	Name  string
	Shape *Shape
}

// Member returns the member of struct shape s named name, or nil.
func (s *Shape) Member(name string) *Member {
	i, ok := slices.BinarySearchFunc(s.Members, name, func(m Member, n string) int { return strings.Compare(m.Name, n) })
	if !ok {
		return nil
	}
	return &s.Members[i]
}

// Empty reports whether an interface shape is the empty interface.
func (s *Shape) Empty() bool { return s.Kind == ShapeInterface && s.Type == "any" }

// String writes the shape as canonical text: the kinds of basic types,
// the members of structs (by JSON name, sorted), the elements of slices,
// arrays and maps, pointers; a named type that encodes itself as its name
// and its underlying shape, "custom(Name:shape)", and a type met again
// inside itself as "ref(Name)". Names of other types are left out: two
// shapes of one text read each other's JSON.
func (s *Shape) String() string {
	var b strings.Builder
	s.write(&b, map[*Shape]bool{})
	return b.String()
}

func (s *Shape) write(b *strings.Builder, open map[*Shape]bool) {
	if open[s] {
		b.WriteString("ref(" + s.Name + ")")
		return
	}
	open[s] = true
	defer delete(open, s)
	if s.Custom {
		b.WriteString("custom(" + s.Name + ":")
		defer b.WriteString(")")
	}
	switch s.Kind {
	case ShapeBool:
		b.WriteString("bool")
	case ShapeInt, ShapeUint, ShapeFloat:
		fmt.Fprintf(b, "%s%d", [...]string{ShapeInt: "int", ShapeUint: "uint", ShapeFloat: "float"}[s.Kind], s.Bits)
	case ShapeString:
		b.WriteString("string")
	case ShapeBytes:
		b.WriteString("bytes")
	case ShapePointer:
		b.WriteString("*")
		s.Elem.write(b, open)
	case ShapeSlice:
		b.WriteString("[]")
		s.Elem.write(b, open)
	case ShapeArray:
		fmt.Fprintf(b, "[%d]", s.Len)
		s.Elem.write(b, open)
	case ShapeMap:
		b.WriteString("map[")
		s.Key.write(b, open)
		b.WriteString("]")
		s.Elem.write(b, open)
	case ShapeStruct:
		b.WriteString("{")
		for i, m := range s.Members {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(m.Name + ":")
			m.Shape.write(b, open)
		}
		b.WriteString("}")
	case ShapeInterface:
		if s.Empty() {
			b.WriteString("any")
		} else {
			b.WriteString("interface(" + s.Type + ")")
		}
	case ShapeQuoted:
		b.WriteString("quoted(")
		s.Elem.write(b, open)
		b.WriteString(")")
	default:
		b.WriteString("unsupported(" + s.Type + ")")
	}
}

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
	shapes := map[string]*Shape{}
	named := map[*types.Named]*Shape{}
	for _, fields := range all {
		for _, f := range fields {
			if f.Type == "" {
				continue
			}
			shape, ok := shapes[f.Type]
			if !ok {
				shape = b.jsonShape(f.Type, named)
				shapes[f.Type] = shape
			}
			f.JSON = shape
		}
	}
}

// jsonShape returns the JSON shape of the type expression t, or nil when
// the builder does not know every type it names. named holds the shapes
// of the named types met so far.
func (b *builder) jsonShape(t string, named map[*types.Named]*Shape) *Shape {
	expr, err := parser.ParseExpr(t)
	if err != nil {
		return nil
	}
	typ := b.goType(expr)
	if typ == nil {
		return nil
	}
	return shapeOf(typ, named)
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

// ShapeOf returns the JSON shape of Go type t.
func ShapeOf(t types.Type) *Shape { return shapeOf(t, map[*types.Named]*Shape{}) }

// shapeOf returns how values of t are encoded in JSON by encoding/json.
// A named type is its underlying type's shape with its name, or, when it
// encodes itself, Custom. named holds the shapes of named types already
// made, which a recursive type's shape points back at.
func shapeOf(t types.Type, named map[*types.Named]*Shape) *Shape {
	qualifier := func(p *types.Package) string { return p.Name() }
	if n, ok := types.Unalias(t).(*types.Named); ok {
		if s := named[n]; s != nil {
			return s
		}
		s := &Shape{Type: types.TypeString(n, qualifier), Name: n.Obj().Name()}
		if p := n.Obj().Pkg(); p != nil {
			s.Pkg = p.Path()
		}
		named[n] = s
		under := shapeOf(n.Underlying(), named)
		name, pkg, typ := s.Name, s.Pkg, s.Type
		*s = *under
		s.Name, s.Pkg, s.Type, s.Custom = name, pkg, typ, encodesItself(n)
		return s
	}
	s := &Shape{Type: types.TypeString(t, qualifier)}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		basicShape(s, u)
	case *types.Pointer:
		s.Kind, s.Elem = ShapePointer, shapeOf(u.Elem(), named)
	case *types.Slice:
		if b, ok := u.Elem().Underlying().(*types.Basic); ok && b.Kind() == types.Byte && !encodes(u.Elem()) {
			s.Kind = ShapeBytes
			break
		}
		s.Kind, s.Elem = ShapeSlice, shapeOf(u.Elem(), named)
	case *types.Array:
		s.Kind, s.Len, s.Elem = ShapeArray, u.Len(), shapeOf(u.Elem(), named)
	case *types.Map:
		s.Kind, s.Key, s.Elem = ShapeMap, shapeOf(u.Key(), named), shapeOf(u.Elem(), named)
	case *types.Struct:
		s.Kind, s.Members = ShapeStruct, structMembers(u, named)
		slices.SortFunc(s.Members, func(a, b Member) int { return strings.Compare(a.Name, b.Name) })
	case *types.Interface:
		s.Kind = ShapeInterface
		if u.Empty() {
			s.Type = "any"
		}
	}
	return s
}

// basicShape fills the shape of a basic type.
func basicShape(s *Shape, b *types.Basic) {
	info := b.Info()
	switch {
	case info&types.IsBoolean != 0:
		s.Kind = ShapeBool
	case info&types.IsString != 0:
		s.Kind = ShapeString
	case info&types.IsFloat != 0:
		s.Kind, s.Bits = ShapeFloat, 64
		if b.Kind() == types.Float32 {
			s.Bits = 32
		}
	case info&types.IsInteger != 0:
		s.Kind, s.Bits = ShapeInt, 64
		if info&types.IsUnsigned != 0 {
			s.Kind = ShapeUint
		}
		switch b.Kind() {
		case types.Int8, types.Uint8:
			s.Bits = 8
		case types.Int16, types.Uint16:
			s.Bits = 16
		case types.Int32, types.Uint32:
			s.Bits = 32
		}
	}
}

// structMembers lists the JSON members of struct s: exported fields under
// their json tag's name or their own, embedded structs without a name
// inlined, fields tagged "-" left out, a basic value tagged ",string"
// quoted.
func structMembers(s *types.Struct, named map[*types.Named]*Shape) []Member {
	var out []Member
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
			if inner, ok := elem.Underlying().(*types.Struct); ok && !encodes(elem) {
				out = append(out, structMembers(inner, named)...)
				continue
			}
		}
		if !f.Exported() {
			continue
		}
		if name == "" {
			name = f.Name()
		}
		shape := shapeOf(f.Type(), named)
		if slices.Contains(strings.Split(opts, ","), "string") {
			shape = quoted(shape)
		}
		out = append(out, Member{Name: name, Shape: shape})
	}
	return out
}

// quoted returns the shape of a member tagged ",string": encoding/json
// quotes a bool, a number or a string (or an unnamed pointer to one) that
// does not encode itself, and ignores the option on anything else.
func quoted(s *Shape) *Shape {
	inner := s
	if s.Kind == ShapePointer && s.Name == "" {
		inner = s.Elem
	}
	switch {
	case inner.Custom:
		return s
	case inner.Kind == ShapeBool, inner.Kind == ShapeInt, inner.Kind == ShapeUint, inner.Kind == ShapeFloat, inner.Kind == ShapeString:
	default:
		return s
	}
	q := &Shape{Kind: ShapeQuoted, Type: inner.Type, Elem: inner}
	if inner == s {
		return q
	}
	p := *s
	p.Elem = q
	return &p
}

// encodes reports whether t is a named type that encodes itself.
func encodes(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && encodesItself(n)
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
