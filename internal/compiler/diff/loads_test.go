package diff

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// loadsPkgs are the packages of the types the cases retype: p, which
// imports a and b, two packages with a Stamp that encodes itself.
var loadsPkgs = map[string]string{
	"example.com/a": `package a

type Stamp struct{ At int64 }

func (s Stamp) MarshalText() ([]byte, error) { return nil, nil }

type Plain struct{ At int64 }
`,
	"example.com/b": `package b

type Stamp struct{ At int64 }

func (s Stamp) MarshalText() ([]byte, error) { return nil, nil }

type Stamp2 struct{ At string }

func (s Stamp2) MarshalText() ([]byte, error) { return nil, nil }

type Plain struct{ At int64 }
`,
	"example.com/p": `package p

import (
	"example.com/a"
	"example.com/b"
)

type Cents int64
type Name string
type Bytes []byte

type LimitsV1 struct {
	Max int32
	Min int32 ` + "`json:\"min\"`" + `
}
type LimitsWider struct {
	Max  int64
	Min  int32 ` + "`json:\"min\"`" + `
	Step int
}
type LimitsFewer struct{ Max int32 }
type LimitsNarrower struct {
	Max int16
	Min int32 ` + "`json:\"min\"`" + `
}
type LimitsRecased struct {
	MAX int32
	Min int32 ` + "`json:\"MIN\"`" + `
}
type Embedded struct {
	LimitsV1
}

type Tree struct {
	N    int32
	Kids []Tree
}
type TreeWider struct {
	N    int64
	Kids []TreeWider
}
type TreeNarrower struct {
	N    int8
	Kids []TreeNarrower
}

type Quoted struct {
	N int32 ` + "`json:\",string\"`" + `
}
type QuotedWider struct {
	N int64 ` + "`json:\",string\"`" + `
}
type Unquoted struct{ N int64 }

var _ a.Stamp
var _ b.Stamp
`,
}

// loadsTypes type-checks loadsPkgs and returns a function that makes the
// shape of a type expression in p's file, where a and b are imported.
func loadsTypes(t *testing.T) func(t *testing.T, expr string) *fsm.Shape {
	t.Helper()
	fset := token.NewFileSet()
	var pos token.Pos
	done := map[string]*types.Package{}
	var imp importerFunc
	imp = func(path string) (*types.Package, error) {
		if p := done[path]; p != nil {
			return p, nil
		}
		src, ok := loadsPkgs[path]
		if !ok {
			return nil, fmt.Errorf("no package %s", path)
		}
		f, err := parser.ParseFile(fset, path+".go", src, 0)
		if err != nil {
			return nil, err
		}
		if path == "example.com/p" {
			pos = f.Name.End()
		}
		p, err := (&types.Config{Importer: imp}).Check(path, fset, []*ast.File{f}, nil)
		done[path] = p
		return p, err
	}
	p, err := imp("example.com/p")
	require.NoError(t, err)
	return func(t *testing.T, expr string) *fsm.Shape {
		tv, err := types.Eval(fset, p, pos, expr)
		require.NoError(t, err, expr)
		require.True(t, tv.IsType(), expr)
		return fsm.ShapeOf(tv.Type)
	}
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// TestLoads checks which retypes keep saved data loading, and what the
// verdicts say. The end-to-end test TestRetypeLoads checks the same
// decisions against real Save and Load.
func TestLoads(t *testing.T) {
	t.Parallel()
	shape := loadsTypes(t)
	tests := []struct {
		old, new string
		want     Verdict
		why      string
	}{
		// Numbers by kind and range.
		{"int32", "int64", OK, "every int32 fits in int64"},
		{"int", "int64", OK, "their JSON is alike"}, // int is 64 bits
		{"int64", "int", OK, "their JSON is alike"},
		{"int8", "int16", OK, "every int8 fits in int16"},
		{"uint32", "int64", OK, "every uint32 fits in int64"},
		{"uint16", "uint32", OK, ""},
		{"float32", "float64", OK, "every float32 fits in float64"},
		{"int64", "int32", Breaks, "an int64 beyond the range of int32 does not load"},
		{"uint64", "int64", Breaks, "beyond the range of int64"},
		{"uint", "int", Breaks, "beyond the range of int"},
		{"uint32", "int32", Breaks, "beyond the range of int32"},
		{"int", "uint", Breaks, "a negative int does not load as uint"},
		{"int32", "uint64", Breaks, "a negative int32"},
		{"float64", "float32", Breaks, "beyond the range of float32"},
		{"float32", "int64", Breaks, "a number with a fraction does not load as int64"},
		{"float64", "int", Breaks, "a number with a fraction"},
		{"int32", "float64", OK, "every int32 is exact in float64"},
		{"uint32", "float64", OK, "exact"},
		{"int16", "float32", OK, "exact"},
		{"int32", "float32", Review, "one beyond 2^24 (16777216) is rounded"},
		{"int64", "float64", Review, "one beyond 2^53 (9007199254740992) is rounded"},
		{"int", "float64", Review, "2^53"},
		{"uint64", "float64", Review, "2^53"},
		{"int", "string", Breaks, "a JSON number does not load as string"},
		{"string", "int", Breaks, "a JSON string does not load as int"},
		{"bool", "string", Breaks, "a JSON boolean"},
		// Named types without an encoding of their own.
		{"int64", "Cents", OK, "their JSON is alike"},
		{"int32", "Cents", OK, "every int32 fits in p.Cents"},
		{"Cents", "int32", Breaks, "a p.Cents beyond the range of int32"},
		{"string", "Name", OK, "their JSON is alike"},
		{"Name", "string", OK, "their JSON is alike"},
		{"a.Plain", "b.Plain", OK, "their JSON is alike"},
		{"[]byte", "Bytes", OK, "alike"},
		{"[]byte", "string", Breaks, "it loads as its base64 text"},
		{"string", "[]byte", Breaks, "a JSON string does not load as []byte"},
		// Types that encode themselves.
		{"a.Stamp", "b.Stamp", Review, "b.Stamp (example.com/b) reads its own JSON, as a.Stamp (example.com/a) did"},
		{"a.Stamp", "b.Stamp2", Breaks, "each read their own JSON"},
		{"a.Stamp", "a.Plain", Breaks, "a.Stamp wrote its own JSON, which a.Plain may not read"},
		{"string", "a.Stamp", Breaks, "a.Stamp reads its own JSON, in code fsmgen does not see, which may not read what string wrote"},
		{"a.Stamp", "*a.Stamp", OK, ""},
		{"*a.Stamp", "*b.Stamp", Review, "reads its own JSON"},
		// Pointers.
		{"int32", "*int64", OK, "every int32 fits in int64"},
		{"*int32", "int64", Review, "a nil *int32 loads as the zero int64"},
		{"*int64", "int32", Breaks, "beyond the range of int32"},
		{"*string", "*Name", OK, ""},
		// Slices, arrays and maps.
		{"[]int32", "[]int64", OK, "its elements: every int32 fits in int64"},
		{"[]int64", "[]int32", Breaks, "its elements: an int64 beyond"},
		{"[2]int32", "[]int64", OK, ""},
		{"[]int32", "[4]int32", Review, "the elements of a []int32 past the first 4 are dropped"},
		{"[4]int32", "[8]int32", OK, ""},
		{"map[string]int32", "map[string]float64", OK, "its values: every int32 is exact in float64"},
		{"map[int32]string", "map[int64]string", OK, ""},
		{"map[int32]string", "map[string]string", OK, "its keys: JSON holds an int32 key as its decimal text, which loads as string"},
		{"map[string]string", "map[int]string", Breaks, "its keys"},
		{"map[int64]string", "map[int8]string", Breaks, "its keys: an int64 beyond the range of int8"},
		// Structs, read leniently beneath a state's own members.
		{"LimitsV1", "LimitsWider", OK, "member Max: every int32 fits in int64; the members p.LimitsWider adds (Step) load as their zero values"},
		{"LimitsV1", "LimitsFewer", Review, "p.LimitsFewer has no member min: the values saved in it are dropped"},
		{"LimitsV1", "LimitsNarrower", Breaks, "member Max: an int32 beyond the range of int16 does not load"},
		{"LimitsV1", "LimitsRecased", OK, "encoding/json matches members in any case: Max loads into MAX, min loads into MIN"},
		{"LimitsV1", "Embedded", OK, "their JSON is alike"},
		{"[]LimitsV1", "[]LimitsWider", OK, "its elements: member Max"},
		{"Tree", "TreeWider", OK, "member N: every int32 fits in int64"},
		{"Tree", "TreeNarrower", Breaks, "member N: an int32 beyond the range of int8"},
		{"Quoted", "QuotedWider", OK, "member N: every int32 fits in int64"},
		{"Quoted", "Unquoted", Breaks, "member N: int32 was saved as a quoted string"},
		{"Unquoted", "QuotedWider", Breaks, "member N: a JSON number does not load as int64"},
		// Interfaces.
		{"int32", "any", Review, "it loads as plain JSON values"},
		{"any", "int32", Breaks, "whatever was saved in any may not be an int32"},
		{"string", "error", Breaks, "only null loads into the interface error"},
	}
	for _, tt := range tests {
		t.Run(tt.old+" to "+tt.new, func(t *testing.T) {
			v, why := loads(shape(t, tt.old), shape(t, tt.new))
			assert.Equal(t, tt.want, v, "verdict: %s", why)
			assert.Contains(t, why, tt.why)
		})
	}
}

// TestShapeString checks the canonical text of shapes: names left out
// but for types that encode themselves, a recursive type's reference.
func TestShapeString(t *testing.T) {
	t.Parallel()
	shape := loadsTypes(t)
	tests := map[string]string{
		"Cents":       "int64",
		"[]byte":      "bytes",
		"Bytes":       "bytes",
		"*Name":       "*string",
		"LimitsV1":    "{Max:int32,min:int32}",
		"Embedded":    "{Max:int32,min:int32}",
		"Tree":        "{Kids:[]ref(Tree),N:int32}",
		"Quoted":      "{N:quoted(int32)}",
		"a.Stamp":     "custom(Stamp:{At:int64})",
		"map[int]any": "map[int64]any",
		"[3]uint8":    "[3]uint8",
		"error":       "interface(error)",
		"complex64":   "unsupported(complex64)",
	}
	for expr, want := range tests {
		assert.Equal(t, want, shape(t, expr).String(), expr)
	}
}
