package emit

import (
	"fmt"
	"go/ast"
	"go/parser"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/fsm"
)

// ExamplesFile returns the test file that runs the spec's examples
// through the real Behavior, in the package's external test package (the
// behaviour's package may import the generated one), or nil when there
// are none to run: no examples, or the generated package's import path is
// unknown (a spec checked outside a module; fsm.Build then reports it).
//
//	func TestExamples(t *testing.T) {
//		tests := []struct{ name string; rule int; state, event string }{...}
//		for each: restore the state with the real behaviour, send the event, check the rule fired
//	}
func ExamplesFile(m *fsm.Machine) *jen.File {
	if len(m.Examples) == 0 || m.Behavior == "" || m.ImportPath == "" {
		return nil
	}
	f := jen.NewFile(m.Package + "_test")
	f.HeaderComment(Header)
	f.ImportName(m.ImportPath, m.Package)
	f.ImportName(pkgAssert, "assert")
	f.ImportName(pkgRequire, "require")
	for _, imp := range m.Imports {
		f.ImportAlias(imp.Path, imp.Alias)
	}
	gen := func(name string) *jen.Statement { return jen.Qual(m.ImportPath, name) }
	var rows []jen.Code
	for _, ex := range m.Examples {
		rows = append(rows, jen.Values(
			kv("name", jen.Lit(ex.Rule.Label+": "+ex.Name)),
			kv("rule", jen.Lit(ex.Rule.Index)),
			kv("state", rawString(ex.State)),
			kv("event", rawString(ex.Event))))
	}
	newB := []jen.Code{jen.Id("b").Op(":=").Add(goExpr(m, m.Behavior))}
	if m.BehaviorErr {
		newB = []jen.Code{
			jen.List(jen.Id("b"), jen.Err()).Op(":=").Add(goExpr(m, m.Behavior)),
			jen.Qual(pkgRequire, "NoError").Call(jen.Id("t"), jen.Err(), jen.Lit("make the behaviour")),
		}
	}
	var hArgs []jen.Code
	hArgs = append(hArgs, jen.Id("b"))
	if m.HasHandler() {
		hArgs = append(hArgs, jen.Op("&").Add(gen("Recorder")).Values())
	}
	body := append(newB,
		jen.List(jen.Id("s"), jen.Err()).Op(":=").Add(gen("UnmarshalState")).Call(jen.Index().Byte().Parens(jen.Id("tt").Dot("state"))),
		jen.Qual(pkgRequire, "NoError").Call(jen.Id("t"), jen.Err(), jen.Lit("the example's state")),
		jen.List(jen.Id("ev"), jen.Err()).Op(":=").Add(gen("UnmarshalEvent")).Call(jen.Index().Byte().Parens(jen.Id("tt").Dot("event"))),
		jen.Qual(pkgRequire, "NoError").Call(jen.Id("t"), jen.Err(), jen.Lit("the example's event")),
		jen.List(jen.Id("m"), jen.Err()).Op(":=").Add(gen("Restore")).Call(append(hArgs, jen.Id("s"))...),
		jen.Qual(pkgRequire, "NoError").Call(jen.Id("t"), jen.Err()),
		jen.Var().Id("fired").Index().String(),
		jen.Id("m").Dot("SetObserver").Call(jen.Func().Params(jen.Id("st").Add(gen("Step"))).Block(
			jen.Id("fired").Op("=").Append(jen.Id("fired"), jen.Id("rules").Index(jen.Id("st").Dot("Rule")).Dot("Label")))),
		jen.If(jen.Err().Op(":=").Id("m").Dot("HandleEvent").Call(jen.Id("ev")), jen.Err().Op("!=").Nil()).Block(
			jen.Qual(pkgRequire, "ErrorIs").Call(jen.Id("t"), jen.Err(), gen("ErrRejected"))),
		jen.Qual(pkgAssert, "Contains").Call(jen.Id("t"), jen.Id("fired"), jen.Id("rules").Index(jen.Id("tt").Dot("rule")).Dot("Label"),
			jen.Lit("the spec says this example takes %s; the behaviour made the machine take %q"), jen.Id("rules").Index(jen.Id("tt").Dot("rule")).Dot("Label"), jen.Id("fired")),
	)
	f.Add(paragraphs(
		fmt.Sprintf("TestExamples runs each example of the spec through the real Behavior, made by %s: "+
			"it restores the example's state, sends its event, and checks that the machine takes the rule the "+
			"spec gives the example, so that a guard written by hand cannot contradict the spec unnoticed.", m.Behavior)))
	f.Func().Id("TestExamples").Params(jen.Id("t").Op("*").Qual(pkgTesting, "T")).Block(
		jen.Id("rules").Op(":=").Add(gen("Rules")).Call(),
		jen.Id("tests").Op(":=").Index().Struct(
			jen.Id("name").String(),
			jen.Id("rule").Int(),
			jen.List(jen.Id("state"), jen.Id("event")).String(),
		).ValuesFunc(func(grp *jen.Group) {
			for _, r := range rows {
				grp.Line().Add(r)
			}
			grp.Line()
		}),
		jen.For(jen.List(jen.Id("_"), jen.Id("tt")).Op(":=").Range().Id("tests")).Block(
			jen.Id("t").Dot("Run").Call(jen.Id("tt").Dot("name"), jen.Func().Params(jen.Id("t").Op("*").Qual(pkgTesting, "T")).Block(body...))),
	)
	return f
}

// rawString writes s as a raw string literal when it can, else quoted.
func rawString(s string) jen.Code {
	if !strings.Contains(s, "`") {
		return jen.Op("`" + s + "`")
	}
	return jen.Lit(s)
}

// goExpr turns the behaviour's Go expression, checked by fsm.Build, into
// jennifer code whose qualifiers are the spec's imports, so that the file
// imports them.
func goExpr(m *fsm.Machine, src string) jen.Code {
	expr, err := parser.ParseExpr(src)
	if err != nil {
		return jen.Op(src) // unreachable: fsm.Build parsed it
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
		case *ast.BasicLit:
			return jen.Op(e.Value)
		case *ast.SelectorExpr:
			if id, ok := e.X.(*ast.Ident); ok && paths[id.Name] != "" {
				return jen.Qual(paths[id.Name], e.Sel.Name)
			}
			return conv(e.X).Dot(e.Sel.Name)
		case *ast.CallExpr:
			var args []jen.Code
			for _, a := range e.Args {
				args = append(args, conv(a))
			}
			return conv(e.Fun).Call(args...)
		case *ast.UnaryExpr:
			return jen.Op(e.Op.String()).Add(conv(e.X))
		case *ast.ParenExpr:
			return jen.Parens(conv(e.X))
		case *ast.CompositeLit:
			var elts []jen.Code
			for _, el := range e.Elts {
				if kve, ok := el.(*ast.KeyValueExpr); ok {
					elts = append(elts, conv(kve.Key).Op(":").Add(conv(kve.Value)))
					continue
				}
				elts = append(elts, conv(el))
			}
			return conv(e.Type).Values(elts...)
		}
		return jen.Op(src[e.Pos()-1 : e.End()-1])
	}
	return conv(expr)
}
