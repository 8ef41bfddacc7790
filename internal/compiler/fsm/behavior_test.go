package fsm_test

import (
	"fmt"
	"go/types"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// behaviorSpec runs its examples through the behaviour BEHAVIOR; its
// output package is example.com/m/cart, which the spec imports as cart.
const behaviorSpec = `version: 2
machine: Cart
package: cart
imports:
  cart: example.com/m/cart
  beside: example.com/m/cart/rules
  gone: example.com/m/gone
  strconv: strconv
  strings: strings
behavior: 'BEHAVIOR'
output:
  go: .
states:
  Filling:
    initial: true
    fields:
      items: int
  Placed:
    terminal: true
    ignore: [Checkout]
events:
  Checkout: {}
transitions:
  - from: Filling
    on: Checkout
    guards:
      - if: hasItems
        to: Placed
        examples:
          - name: placed
            state: {items: 2}
      - else: true
        ignore: true
guards:
  hasItems:
    reads:
      items: int
`

// TestBehavior checks the behavior expression: names of the output
// package (qualified with its import, or not) are checked against its
// hand-written declarations and written for the examples' external test,
// or the test goes in the package when one is unexported; a package that
// does not load because it imports the output package leaves the check
// to the compiler, and one that does not load for another reason is an
// error; the rest is type-checked.
func TestBehavior(t *testing.T) {
	t.Parallel()
	e := env
	e.PackagePath = "example.com/m/cart"
	e.LocalNames = []string{"Config", "Workflow", "newWorkflow"}
	std := env.Import
	e.Import = func(path string) (*types.Package, error) {
		switch path {
		case "example.com/m/cart":
			t.Errorf("the output package is loaded")
			return nil, fmt.Errorf("not generated")
		case "example.com/m/cart/rules":
			return nil, fmt.Errorf("%w: undefined: cart.Behavior", fsm.ErrNeedsGenerated)
		case "example.com/m/gone":
			return nil, fmt.Errorf("no required module provides package example.com/m/gone")
		}
		return std(path)
	}
	tests := []struct {
		behavior string
		code     string // the resolved expression, the output package's names as P.Name
		internal bool
		err      string
	}{
		{behavior: "cart.Workflow{}", code: "P.Workflow{}"},
		{behavior: "Workflow{}", code: "P.Workflow{}"},
		{behavior: "&cart.Workflow{}", code: "&P.Workflow{}"},
		{behavior: "cart.Config{Workflow: 1}", code: "P.Config{Workflow:1}"},
		{behavior: "newWorkflow()", code: "P.newWorkflow()", internal: true},
		{behavior: "cart.newWorkflow()", code: "P.newWorkflow()", internal: true},
		{behavior: "beside.New(beside.Config{Min: 1})", code: "example.com/m/cart/rules.New(example.com/m/cart/rules.Config{Min:1})"},
		{behavior: "strconv.Atoi(`1`)", code: "strconv.Atoi(`1`)"},
		{behavior: "Workflw{}", err: `behavior "Workflw{}" names Workflw, which no hand-written file of the output package declares: declare it there, or name a package of the spec's imports (pkg.Workflw) (did you mean "Workflow"?)`},
		{behavior: "cart.NewWorkflow()", err: `behavior "cart.NewWorkflow()" names NewWorkflow, which no hand-written file of the output package declares`},
		{behavior: "policy.New()", err: `behavior names policy, which is not one of the spec's imports: add it under imports`},
		{behavior: "gone.New()", err: `cannot load package "example.com/m/gone", which behavior names: no required module provides package example.com/m/gone`},
		{behavior: "strings.Cut(`a`, `b`)", err: `behavior "strings.Cut(` + "`a`, `b`" + `)" gives (before string, after string, found bool): it must give the Behavior, or the Behavior and an error`},
		{behavior: "strconv.Atoi(1)", err: `behavior "strconv.Atoi(1)": cannot use 1 (untyped int constant) as string value in argument to strconv.Atoi`},
		{behavior: "func() {}", err: `behavior "func() {}": write a call, a name or a composite literal`},
	}
	for _, tt := range tests {
		t.Run(tt.behavior, func(t *testing.T) {
			t.Parallel()
			f, diags := spec.Parse("x.yaml", []byte(strings.Replace(behaviorSpec, "BEHAVIOR", tt.behavior, 1)))
			require.Empty(t, diags)
			m, diags := fsm.Build(f, e)
			var errs []string
			for _, d := range diags.Errors() {
				errs = append(errs, d.Msg)
				assert.Contains(t, []string{"invalid-behavior", "import-not-loaded"}, d.Rule, "%s", d)
			}
			if tt.err != "" {
				require.Len(t, errs, 1, "%s", diags)
				assert.Contains(t, errs[0], tt.err)
				return
			}
			require.Empty(t, errs)
			var code strings.Builder
			for _, tok := range m.BehaviorCode {
				switch {
				case tok.Ident == nil:
					code.WriteString(tok.Text)
				case tok.Ident.GoImportPath == "example.com/m/cart":
					code.WriteString("P." + tok.Ident.GoName)
				default:
					code.WriteString(tok.Ident.GoImportPath + "." + tok.Ident.GoName)
				}
			}
			assert.Equal(t, tt.code, code.String())
			assert.Equal(t, tt.internal, m.ExamplesInPackage)
		})
	}
}

// TestFieldTypeImportsGenerated checks that a field type from a package
// that imports the output package is refused as the import cycle it
// would make, saying what to do.
func TestFieldTypeImportsGenerated(t *testing.T) {
	t.Parallel()
	e := env
	e.PackagePath = "example.com/m/cart"
	e.Import = func(path string) (*types.Package, error) {
		if path == "example.com/m/cart/rules" {
			return nil, fmt.Errorf("%w: undefined: cart.Behavior", fsm.ErrNeedsGenerated)
		}
		return env.Import(path)
	}
	src := strings.NewReplacer("BEHAVIOR", "strconv.Atoi(`1`)", "items: int", "items: beside.Count").Replace(behaviorSpec)
	f, diags := spec.Parse("x.yaml", []byte(src))
	require.Empty(t, diags)
	_, diags = fsm.Build(f, e)
	errs := diags.Errors()
	require.Len(t, errs, 1, "%s", diags)
	assert.Equal(t, "import-not-loaded", errs[0].Rule)
	assert.Equal(t, `package "example.com/m/cart/rules", which field types use, imports the generated package: the generated code importing it would make an import cycle; declare the type in the output package or in a package that does not import it`, errs[0].Msg)
	assert.Equal(t, 6, errs[0].Pos.Line, "at the import")
}
