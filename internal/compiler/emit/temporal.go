package emit

import (
	"fmt"
	"go/token"
	"go/types"
	"path"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// Import paths of the Temporal glue.
const (
	pkgFsmtemporal = "github.com/fsmgen/fsmgen/temporal/fsmtemporal"
	pkgWorkflow    = "go.temporal.io/sdk/workflow"
	pkgContext     = "context"
	pkgTime        = "time"
)

// TemporalPath is the glue's file name in the spec's output.temporal
// directory.
func TemporalPath(m *fsm.Machine) string {
	return path.Join(m.Output.TemporalDir, fsm.SnakeName(m.Name)+"_temporal_gen.go")
}

// RevisionPath is the revision record's file name in the spec's
// output.temporal directory: the spec of the revision running workflows
// were last generated for, with its Revision and MinRevision.
func RevisionPath(m *fsm.Machine) string {
	return path.Join(m.Output.TemporalDir, fsm.SnakeName(m.Name)+"_temporal_revision.json")
}

// TemporalPackage is the name of the glue's package: the last element of
// its directory.
func TemporalPackage(m *fsm.Machine) string { return path.Base(m.Output.TemporalDir) }

// Temporal returns the glue that runs m as a Temporal workflow through
// package fsmtemporal (docs/temporal.md): the workflow's name and
// revisions, the Activities interface with one method per action an
// activity performs, the Pure interface with one per pure action, Def
// and Perform. revision and minRevision are the revisions fsmgen keeps
// in the package's revision record.
func Temporal(m *fsm.Machine, revision, minRevision int) ([]byte, error) {
	return goFile("the Temporal glue", temporalFile(m, revision, minRevision))
}

// temporalGen emits the glue of one machine.
type temporalGen struct {
	m   *fsm.Machine
	f   *jen.File
	pkg string // the machine's import path
}

// q qualifies a name of the machine's package.
func (g *temporalGen) q(name string) *jen.Statement { return jen.Qual(g.pkg, name) }

func temporalFile(m *fsm.Machine, revision, minRevision int) *jen.File {
	g := &temporalGen{m: m, f: newFile(m, TemporalPackage(m), false), pkg: m.ImportPath}
	g.f.ImportName(m.ImportPath, m.Package)
	g.f.ImportName(pkgFsmtemporal, "fsmtemporal")
	g.f.ImportName(pkgWorkflow, "workflow")
	g.f.Comment(fmt.Sprintf("Name is the %s workflow's type name, and its activities' prefix.", m.Name))
	g.f.Const().Id("Name").Op("=").Lit(m.Name)
	g.f.Add(paragraphs(fmt.Sprintf("Revision is the revision of %s this code runs, and MinRevision the oldest "+
		"whose running workflows it continues (see fsmtemporal.Def). fsmgen keeps them in %s: "+
		"a change of the spec raises Revision, and one that breaks what running workflows "+
		"saved or do (declared under breaks:) raises MinRevision with it; an undeclared "+
		"break is refused when the code is generated.", m.Source, path.Base(RevisionPath(m)))))
	g.f.Const().Defs(
		jen.Id("Revision").Qual(pkgWorkflow, "Version").Op("=").Lit(revision),
		jen.Id("MinRevision").Qual(pkgWorkflow, "Version").Op("=").Lit(minRevision),
	)
	g.activities()
	g.pureInterface()
	g.def()
	g.recorder()
	g.perform()
	return g.f
}

// performed are the actions activities perform: all but the timers' and
// the pure ones.
func (g *temporalGen) performed() []*fsm.Action {
	var out []*fsm.Action
	for _, a := range g.m.Actions {
		if a != g.m.StartTimer && a != g.m.CancelTimer && !a.Pure {
			out = append(out, a)
		}
	}
	return out
}

// pure are the actions the workflow performs itself: those the spec marks
// pure.
func (g *temporalGen) pure() []*fsm.Action {
	var out []*fsm.Action
	for _, a := range g.m.Actions {
		if a.Pure {
			out = append(out, a)
		}
	}
	return out
}

// pureInterface emits the Pure interface, when the machine has pure
// actions:
//
//	type Pure interface {
//		Tally(ctx workflow.Context, amount int64) error
//	}
func (g *temporalGen) pureInterface() {
	var methods []jen.Code
	for _, a := range g.pure() {
		doc := "performs the pure action " + a.Name + "."
		if a.Doc != "" {
			doc += " " + a.Doc
		}
		ps := []jen.Code{jen.Id("ctx").Qual(pkgWorkflow, "Context")}
		for _, f := range a.Fields {
			ps = append(ps, jen.Id(f.Param).Add(g.goType(f.GoType)))
		}
		methods = append(methods, jen.Add(comment(a.GoName+" ", doc)).Line().Id(a.GoName).Params(ps...).Error())
	}
	if len(methods) == 0 {
		return
	}
	g.f.Add(paragraphs(fmt.Sprintf("Pure performs the %s machine's pure actions (pure: true in the spec) "+
		"inside the workflow, not as activities: one method per pure action, given the "+
		"workflow's context and the action's fields. It runs inside the workflow: "+
		"deterministic, no I/O. A method runs again whenever the workflow replays and "+
		"writes nothing to its history: it may compute, log with workflow.GetLogger or "+
		"count with workflow.GetMetricsHandler (both quiet on replay), but never call "+
		"another system, wait, or read a clock other than workflow.Now. An error is an "+
		"action that failed for good (fsmtemporal.Options.ActionFailed).", g.m.Name)))
	g.f.Type().Id("Pure").Interface(methods...)
}

// inWorkflow returns the Def's InWorkflow, the dispatch from a pure action
// to p's method for it.
func (g *temporalGen) inWorkflow() *jen.Statement {
	var cases []jen.Code
	fields := false
	for _, a := range g.pure() {
		fields = fields || len(a.Fields) > 0
		args := []jen.Code{jen.Id("ctx")}
		for _, f := range a.Fields {
			args = append(args, jen.Id("a").Dot(f.GoName))
		}
		cases = append(cases, jen.Case(jen.Op("*").Add(g.q(a.GoName))).Block(
			jen.Return(jen.True(), jen.Id("p").Dot(a.GoName).Call(args...))))
	}
	sw := jen.Switch(jen.Id("a").Assert(jen.Type())).Block(cases...)
	if fields {
		sw = jen.Switch(jen.Id("a").Op(":=").Id("a").Assert(jen.Type())).Block(cases...)
	}
	return jen.Func().Params(jen.Id("ctx").Qual(pkgWorkflow, "Context"), jen.Id("a").Add(g.q("Action"))).Params(jen.Bool(), jen.Error()).Block(
		sw, jen.Return(jen.False(), jen.Nil()))
}

// activities emits the Activities interface.
func (g *temporalGen) activities() {
	var methods []jen.Code
	for _, a := range g.performed() {
		doc := "performs the action " + a.Name + "."
		if a.Doc != "" {
			doc += " " + a.Doc
		}
		ps := []jen.Code{jen.Id("ctx").Qual(pkgContext, "Context")}
		for _, f := range a.Fields {
			ps = append(ps, jen.Id(f.Param).Add(g.goType(f.GoType)))
		}
		methods = append(methods, jen.Add(comment(a.GoName+" ", doc)).Line().Id(a.GoName).Params(ps...).Error())
	}
	per := "action of the spec"
	if len(g.pure()) > 0 {
		per = "action of the spec but the pure ones (Pure)"
	}
	g.f.Add(paragraphs(fmt.Sprintf("Activities performs the %s machine's actions on a worker: one method per "+
		"%s, given the action's fields. An error is retried under the action's "+
		"retry policy (fsmtemporal.Options.Actions).", g.m.Name, per)))
	g.f.Type().Id("Activities").Interface(methods...)
}

// goType writes a type of the spec as the workflow's package sees it: the
// machine package's own exported names qualified with its import path
// (fsm.Build leaves them bare when it does not load that package).
func (g *temporalGen) goType(c fsm.GoCode) *jen.Statement {
	st := jen.Null()
	for i, t := range c {
		switch {
		case t.Ident != nil:
			st.Qual(t.Ident.GoImportPath, t.Ident.GoName)
		case bareName(c, i) && token.IsExported(t.Text):
			st.Qual(g.pkg, t.Text)
		default:
			st.Op(t.Text)
		}
	}
	return st
}

// bareName reports whether token i of c is a name the spec leaves bare: an
// identifier, not a selector's second half, not predeclared; so one the
// machine's own package declares.
func bareName(c fsm.GoCode, i int) bool {
	afterDot := i > 0 && c[i-1].Ident == nil && c[i-1].Text == "."
	t := c[i]
	return t.Ident == nil && !afterDot && token.IsIdentifier(t.Text) && types.Universe.Lookup(t.Text) == nil
}

// UnexportedName returns the first name of type c that the machine's
// package declares without exporting it, which the Temporal glue cannot
// name; "" when there is none.
func UnexportedName(c fsm.GoCode) string {
	for i, t := range c {
		if bareName(c, i) && !token.IsExported(t.Text) {
			return t.Text
		}
	}
	return ""
}

// defType is fsmtemporal.Def of the machine.
func (g *temporalGen) defType() *jen.Statement {
	return jen.Qual(pkgFsmtemporal, "Def").Types(jen.Op("*").Add(g.q("Machine")), g.q("Event"), g.q("Action"), jen.Id("Activities"))
}

// def emits Def.
func (g *temporalGen) def() {
	m := g.m
	machine := jen.Op("*").Add(g.q("Machine"))
	var params []jen.Code
	config := []jen.Code{}
	var with []string
	if m.HasBehavior() {
		params = append(params, jen.Id("b").Add(g.q("Behavior")))
		config = append(config, kv("Behavior", jen.Id("b")))
		with = append(with, "b's guards and effects")
	}
	pure := len(g.pure()) > 0
	if pure {
		params = append(params, jen.Id("p").Id("Pure"))
		with = append(with, "p's pure actions")
	}
	doc := "Def returns the " + m.Name + " machine's Def"
	if len(with) > 0 {
		doc += ", with " + strings.Join(with, " and ") + ": every worker of the workflow must be given the same"
	}
	config = append(config, kv("Handler", jen.Op("&").Id("rec").Dot("Recorder")))
	open := jen.Func().Params(jen.Id("saved").Index().Byte()).Params(machine, jen.Qual(pkgFsmtemporal, "Recorder").Types(g.q("Action")), jen.Error()).Block(
		jen.Id("rec").Op(":=").Op("&").Id("recorder").Values(),
		jen.Id("c").Op(":=").Add(g.q("Config")).Values(config...),
		jen.If(jen.Id("saved").Op("==").Nil()).Block(
			jen.List(jen.Id("m"), jen.Err()).Op(":=").Add(g.q("New")).Call(jen.Id("c")),
			jen.Return(jen.Id("m"), jen.Id("rec"), jen.Err()),
		),
		jen.List(jen.Id("m"), jen.Err()).Op(":=").Add(g.q("Load")).Call(jen.Id("c"), jen.Id("saved")),
		jen.Return(jen.Id("m"), jen.Id("rec"), jen.Err()),
	)
	fields := []jen.Code{
		kv("Name", jen.Id("Name")),
		kv("Revision", jen.Id("Revision")),
		kv("MinRevision", jen.Id("MinRevision")),
		kv("Open", open),
		kv("UnmarshalEvent", g.q("UnmarshalEvent")),
		kv("UnmarshalAction", g.q("UnmarshalAction")),
	}
	if m.TimerFired != nil {
		fields = append(fields, g.timers()...)
	}
	var names []jen.Code
	for _, a := range g.performed() {
		names = append(names, jen.Lit(a.Name))
	}
	fields = append(fields,
		kv("Actions", jen.Index().String().Values(lines(names)...)),
		kv("ActionName", jen.Func().Params(jen.Id("a").Add(g.q("Action"))).String().Block(
			jen.Return(jen.Id("a").Dot("Kind").Call().Dot("String").Call()))),
	)
	if pure {
		fields = append(fields, kv("InWorkflow", g.inWorkflow()))
	}
	fields = append(fields,
		kv("State", jen.Func().Params(jen.Id("m").Add(machine)).Any().Block(
			jen.Return(jen.Id("m").Dot("State").Call()))),
	)
	var terminal []jen.Code
	for _, s := range m.States {
		if s.Terminal {
			terminal = append(terminal, g.q(s.KindName))
		}
	}
	if len(terminal) > 0 {
		fields = append(fields, kv("Terminal", jen.Func().Params(jen.Id("m").Add(machine)).Bool().Block(
			jen.Switch(jen.Id("m").Dot("Kind").Call()).Block(
				jen.Case(terminal...).Block(jen.Return(jen.True())),
			),
			jen.Return(jen.False()),
		)))
	}
	fields = append(fields, kv("Perform", jen.Id("Perform")))
	g.f.Add(paragraphs(doc + "."))
	g.f.Func().Id("Def").Params(params...).Op("*").Add(g.defType()).Block(
		jen.Return(jen.Op("&").Add(g.defType()).Values(lines(fields)...)),
	)
}

// lines puts each element of a composite literal on a line of its own.
func lines(elems []jen.Code) []jen.Code {
	out := make([]jen.Code, 0, len(elems)+1)
	for _, e := range elems {
		out = append(out, jen.Line().Add(e))
	}
	return append(out, jen.Line())
}

// timers returns the Def's fields for the machine's timers.
func (g *temporalGen) timers() []jen.Code {
	m := g.m
	machine := jen.Op("*").Add(g.q("Machine"))
	timerID := jen.Qual(pkgFsmrt, "TimerID")
	return []jen.Code{
		kv("TimerFired", jen.Func().Params(jen.Id("id").Add(timerID), jen.List(jen.Id("deadline"), jen.Id("now")).Qual(pkgTime, "Time")).Add(g.q("Event")).Block(
			jen.Return(jen.Op("&").Add(g.q(m.TimerFired.GoName)).Values(
				kv("Timer", jen.Id("id")), kv("Deadline", jen.Id("deadline")), kv("Now", jen.Id("now")))))),
		kv("Timer", jen.Func().Params(jen.Id("a").Add(g.q("Action"))).Params(timerID, jen.Qual(pkgFsmtemporal, "TimerOp")).Block(
			jen.Switch(jen.Id("a").Op(":=").Id("a").Assert(jen.Type())).Block(
				jen.Case(jen.Op("*").Add(g.q(m.StartTimer.GoName))).Block(
					jen.Return(jen.Id("a").Dot("Timer"), jen.Qual(pkgFsmtemporal, "StartTimer"))),
				jen.Case(jen.Op("*").Add(g.q(m.CancelTimer.GoName))).Block(
					jen.Return(jen.Id("a").Dot("Timer"), jen.Qual(pkgFsmtemporal, "CancelTimer"))),
			),
			jen.Return(jen.Lit(0), jen.Qual(pkgFsmtemporal, "NotTimer")))),
		kv("Timers", jen.Func().Params(jen.Id("m").Add(machine)).Index().Add(timerID).Block(
			jen.Var().Id("ids").Index().Add(timerID),
			jen.For(jen.List(jen.Id("_"), jen.Id("t")).Op(":=").Range().Id("m").Dot("Timers").Call()).Block(
				jen.Id("ids").Op("=").Append(jen.Id("ids"), jen.Id("t").Dot("Timer"))),
			jen.Return(jen.Id("ids")))),
		kv("Deadline", jen.Func().Params(jen.Id("m").Add(machine), jen.Id("id").Add(timerID)).Qual(pkgTime, "Time").Block(
			jen.Return(jen.Id("m").Dot("Deadline").Call(jen.Id("id"))))),
	}
}

// recorder emits the Recorder the workflow records a step with.
func (g *temporalGen) recorder() {
	g.f.Comment("recorder is the generated Recorder as fsmtemporal records a step with it.")
	g.f.Type().Id("recorder").Struct(g.q("Recorder"))
	g.f.Line()
	forget := jen.Id("r").Dot("Recorder").Dot("Actions").Op("=").Id("r").Dot("Recorder").Dot("Actions").Index(jen.Empty(), jen.Lit(0))
	if g.m.TimerFired != nil {
		g.f.Func().Params(jen.Id("r").Op("*").Id("recorder")).Id("Begin").Params(jen.Id("now").Qual(pkgTime, "Time")).Block(
			jen.Id("r").Dot("Now").Op("=").Id("now"), forget)
	} else {
		g.f.Func().Params(jen.Id("r").Op("*").Id("recorder")).Id("Begin").Params(jen.Qual(pkgTime, "Time")).Block(forget)
	}
	g.f.Line()
	g.f.Func().Params(jen.Id("r").Op("*").Id("recorder")).Id("Actions").Params().Index().Add(g.q("Action")).Block(
		jen.Return(jen.Id("r").Dot("Recorder").Dot("Actions")))
}

// perform emits Perform, the dispatch from an action to its activity
// method.
func (g *temporalGen) perform() {
	var cases []jen.Code
	fields := false
	for _, a := range g.performed() {
		fields = fields || len(a.Fields) > 0
		args := []jen.Code{jen.Id("ctx")}
		for _, f := range a.Fields {
			args = append(args, jen.Id("a").Dot(f.GoName))
		}
		cases = append(cases, jen.Case(jen.Op("*").Add(g.q(a.GoName))).Block(
			jen.Return(jen.Id("x").Dot(a.GoName).Call(args...))))
	}
	var body []jen.Code
	switch {
	case fields:
		body = append(body, jen.Switch(jen.Id("a").Op(":=").Id("a").Assert(jen.Type())).Block(cases...))
	case len(cases) > 0:
		body = append(body, jen.Switch(jen.Id("a").Assert(jen.Type())).Block(cases...))
	}
	g.f.Comment("Perform performs action a with x's method for it.")
	g.f.Func().Id("Perform").Params(
		jen.Id("ctx").Qual(pkgContext, "Context"), jen.Id("x").Id("Activities"), jen.Id("a").Add(g.q("Action")),
	).Error().Block(append(body,
		jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit(TemporalPackage(g.m)+": action %T is not performed by an activity"), jen.Id("a"))),
	)...)
}
