package emit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// Import paths the generated tests use.
const (
	pkgErrors  = "errors"
	pkgTesting = "testing"
	pkgFsmtest = "github.com/fsmgen/fsmgen/runtime/fsmrt/fsmtest"
)

// testGen emits the machine's generated tests: its tables, a Subject that
// makes the machine for the drivers of package fsmtest, and a test per
// driver. The drivers run the generated machine itself, the code
// production runs, with a fake behaviour whose guards answer as each test
// scripts them, and a Recorder as the handler.
type testGen struct {
	m *fsm.Machine
	f *jen.File
}

// TestFile returns the generated tests for m as a jennifer file: one case
// per way through every cell, the witness path of every rule, every state
// × event pair, random sequences, the machine's errors, JSON round trips
// and the Recorder.
func TestFile(m *fsm.Machine) *jen.File {
	g := &testGen{m: m, f: newFile(m, m.Package, true)}
	g.genFake()
	g.genSubject()
	g.genRuleTests()
	g.genPaths()
	g.genDriven()
	g.genMachineErrors()
	g.genJSON()
	g.genAccessorTests()
	g.genRecorder()
	return g.f
}

// ft names an identifier of package fsmtest.
func ft(name string) *jen.Statement { return jen.Qual(pkgFsmtest, name) }

// testFunc emits func Test<name>(t *testing.T) { body }, with its doc.
func (g *testGen) testFunc(name, doc string, body ...jen.Code) {
	g.f.Add(comment("", doc))
	sig := jen.Func().Id("Test" + name).Params(jen.Id("t").Op("*").Qual(pkgTesting, "T"))
	if len(body) == 1 {
		g.f.Add(short(sig, body...))
		return
	}
	g.f.Add(sig.Block(body...))
}

// table writes the rows of a composite literal one per line.
func table(rows []jen.Code) func(*jen.Group) {
	return func(grp *jen.Group) {
		for _, r := range rows {
			grp.Line().Add(r)
		}
		if len(rows) > 0 {
			grp.Line()
		}
	}
}

// machineType is fsmtest.Machine instantiated for the package.
func machineType() *jen.Statement {
	return ft("Machine").Types(jen.Id("State"), jen.Id("Event"), jen.Id("StateKind"), jen.Id("EventKind"))
}

// genFake emits a Behavior whose guards answer, and whose effects note
// that they ran, as the drivers' script says; the effects return zero
// values:
//
//	type fsmFake struct{ s *fsmtest.Script }
//	func (f fsmFake) CanRetry(chat.LLMError, int) bool { return f.s.Guard("canRetry") }
//	func (f fsmFake) StartTurn(chat.Conversation, chat.Message) (_ chat.Conversation, _ chat.Request) { f.s.Effect("startTurn"); return }
func (g *testGen) genFake() {
	if !g.m.HasBehavior() {
		return
	}
	f := g.f
	f.Comment("// fsmFake is a Behavior whose guards answer, and whose effects note that they")
	f.Comment("// ran, as the drivers' script says; the effects return zero values.")
	f.Type().Id("fsmFake").Struct(jen.Id("s").Op("*").Add(ft("Script")))
	for _, fn := range usedFuncs(g.m) {
		var in []jen.Code
		for _, p := range fn.Reads {
			in = append(in, goType(p.GoType))
		}
		recv := jen.Id("f").Id("fsmFake")
		if fn.Kind == fsm.Guard {
			f.Comment(fmt.Sprintf("// %s answers for the guard %s.", fn.GoName, fn.Name))
			short(f.Func().Params(recv).Id(fn.GoName).Params(in...).Bool(),
				jen.Return(jen.Id("f").Dot("s").Dot("Guard").Call(jen.Lit(fn.Name))))
			continue
		}
		var out []jen.Code
		for _, s := range fn.Sets {
			out = append(out, jen.Id("_").Add(goType(s.GoType)))
		}
		f.Comment(fmt.Sprintf("// %s notes that the effect %s ran.", fn.GoName, fn.Name))
		short(f.Func().Params(recv).Id(fn.GoName).Params(in...).Params(out...),
			jen.Id("f").Dot("s").Dot("Effect").Call(jen.Lit(fn.Name)), jen.Return())
	}
}

// config returns the Config the tests make machines with: the fake
// behaviour following script, and rec.
func (g *testGen) config(script jen.Code) jen.Code {
	var c []jen.Code
	if g.m.HasBehavior() {
		c = append(c, kv("Behavior", jen.Id("fsmFake").Values(script)))
	}
	if g.m.HasHandler() {
		c = append(c, kv("Handler", jen.Id("rec")))
	}
	return jen.Id("Config").Values(c...)
}

// genSubject emits the machine as fsmtest's drivers make and watch it:
//
//	var fsmSubject = &fsmtest.Subject[State, Event, Action, StateKind, EventKind, ActionKind]{
//		Rules: fsmDesc.Rules, States: []State{...}, Events: []Event{...}, ...
//		New: func(script *fsmtest.Script) (fsmtest.Machine[...], *[]Action, error) { ... },
//		Restore: func(s State, script *fsmtest.Script) (fsmtest.Machine[...], *[]Action, error) { ... },
//	}
func (g *testGen) genSubject() {
	m := g.m
	var states, transient, events, terminal, guards, nils []jen.Code
	for _, s := range m.States {
		switch {
		case s.Transient:
			transient = append(transient, jen.Id(s.GoName).Values())
		case s.EndsOnEntry() != nil:
			// Entered and left in one step: no state at rest, and it
			// handles no event (the checker waives them all).
		default:
			states = append(states, stateLit(s, nil))
			for _, cfg := range s.TimedConfigs() {
				states = append(states, stateLit(s, cfg))
			}
		}
		if s.Terminal {
			terminal = append(terminal, jen.Id(s.KindName))
		}
		for _, c := range s.Handles {
			if c.ReadsEvent {
				nils = append(nils, jen.Values(kv("State", stateLit(s, nil)), kv("Event", jen.Parens(jen.Op("*").Id(c.Event.GoName)).Parens(jen.Nil()))))
			}
		}
	}
	for _, e := range m.Events {
		events = append(events, jen.Op("&").Id(e.GoName).Values())
	}
	for _, fn := range m.Guards {
		if fn.Used() {
			guards = append(guards, jen.Lit(fn.Name))
		}
	}
	fields := []jen.Code{
		kv("Rules", jen.Id("fsmDesc").Dot("Rules")),
		kv("States", jen.Index().Id("State").Values(states...)),
	}
	if len(transient) > 0 {
		fields = append(fields, kv("Transient", jen.Index().Id("State").Values(transient...)))
	}
	fields = append(fields, kv("Events", jen.Index().Id("Event").Values(events...)))
	if len(terminal) > 0 {
		fields = append(fields, kv("Terminal", jen.Index().Id("StateKind").Values(terminal...)))
	}
	if len(guards) > 0 {
		fields = append(fields, kv("Guards", jen.Index().String().Values(guards...)))
	}
	if len(nils) > 0 {
		fields = append(fields, kv("NilEvents", jen.Index().Add(ft("NilEvent")).Types(jen.Id("State"), jen.Id("Event")).ValuesFunc(table(nils))))
	}
	results := jen.Params(machineType(), jen.Op("*").Index().Id("Action"), jen.Error())
	build := func(call jen.Code) []jen.Code {
		var out []jen.Code
		actions := jen.Nil()
		if m.HasHandler() {
			out = append(out, jen.Id("rec").Op(":=").Op("&").Id("Recorder").Values())
			actions = jen.Op("&").Id("rec").Dot("Actions")
		}
		return append(out,
			jen.List(jen.Id("m"), jen.Err()).Op(":=").Add(call),
			jen.Return(jen.Id("m"), actions, jen.Err()))
	}
	script := jen.Id("script")
	fields = append(fields,
		kv("Zero", short(jen.Func().Params().Add(machineType()), jen.Return(jen.Op("&").Id("Machine").Values()))),
		kv("New", jen.Func().Params(jen.Id("script").Op("*").Add(ft("Script"))).Add(results.Clone()).Block(
			build(jen.Id("New").Call(g.config(script)))...)),
		kv("Restore", jen.Func().Params(jen.Id("s").Id("State"), jen.Id("script").Op("*").Add(ft("Script"))).Add(results.Clone()).Block(
			build(jen.Id("Restore").Call(g.config(script), jen.Id("s")))...)),
		kv("Load", jen.Func().Params(jen.Id("data").Index().Byte(), jen.Id("script").Op("*").Add(ft("Script"))).Add(results.Clone()).Block(
			build(jen.Id("Load").Call(g.config(script), jen.Id("data")))...)),
	)
	if len(m.Timers) > 0 {
		rearm := jen.Id("LoadOptions").Values(jen.Id("Rearm").Op(":").True())
		fields = append(fields, kv("Rearm", jen.Func().Params(jen.Id("data").Index().Byte(), jen.Id("script").Op("*").Add(ft("Script"))).Add(results.Clone()).Block(
			build(jen.Id("LoadWith").Call(g.config(script), jen.Id("data"), rearm))...)))
		m := jen.Id("m").Assert(jen.Op("*").Id("Machine"))
		fields = append(fields, kv("Timers", jen.Func().Params(jen.Id("m").Add(machineType())).Index().Add(rt("Timer")).Block(
			jen.Var().Id("out").Index().Add(rt("Timer")),
			jen.For(jen.List(jen.Id("_"), jen.Id("t")).Op(":=").Range().Add(m.Clone()).Dot("Timers").Call()).Block(
				jen.Id("out").Op("=").Append(jen.Id("out"), rt("Timer").Values(
					kv("ID", jen.Id("t").Dot("Timer")), kv("Delay", jen.Id("t").Dot("Delay")),
					kv("Deadline", m.Clone().Dot("Deadline").Call(jen.Id("t").Dot("Timer"))))),
			),
			jen.Return(jen.Id("out")),
		)))
	}
	if m.Deferral != nil {
		fields = append(fields, kv("Deferred", jen.Func().Params(jen.Id("m").Add(machineType())).Index().Id("EventKind").Block(
			jen.Return(jen.Id("m").Assert(jen.Op("*").Id("Machine")).Dot("Deferred").Call()))))
	}
	g.f.Comment("// fsmSubject is the machine as the drivers of package fsmtest make and watch")
	g.f.Comment("// it: in any state at rest, with the fake behaviour and a Recorder.")
	g.f.Var().Id("fsmSubject").Op("=").Op("&").Add(ft("Subject")).Types(jen.Id("State"), jen.Id("Event"), jen.Id("Action"), jen.Id("StateKind"), jen.Id("EventKind"), jen.Id("ActionKind")).
		ValuesFunc(table(fields))
}

// lits writes strings as a []string literal, or nil for none.
func lits(ss []string) jen.Code {
	var out []jen.Code
	for _, s := range ss {
		out = append(out, jen.Lit(s))
	}
	return jen.Index().String().Values(out...)
}

// trace adds a trace's actions and effects to a table row.
func (g *testGen) trace(d []jen.Code, tr fsm.Trace) []jen.Code {
	if len(tr.Actions) > 0 && g.m.HasHandler() {
		var acts []jen.Code
		for _, a := range tr.Actions {
			acts = append(acts, jen.Id(a.KindName))
		}
		d = append(d, kv("Actions", jen.Index().Id("ActionKind").Values(acts...)))
	}
	if len(tr.Effects) > 0 {
		var ran []string
		for _, e := range tr.Effects {
			ran = append(ran, e.Name)
		}
		d = append(d, kv("Effects", lits(ran)))
	}
	return d
}

// event writes the event a way sends: a TimerFired names the timer.
func (g *testGen) event(w *fsm.Way, tr fsm.Trace) jen.Code {
	if w.Event == g.m.TimerFired && tr.TimerID > 0 {
		return jen.Op("&").Id(w.Event.GoName).Values(kv("Timer", jen.Lit(tr.TimerID)))
	}
	return jen.Op("&").Id(w.Event.GoName).Values()
}

// tests writes a way's guard answers, for the script.
func tests(w *fsm.Way, d []jen.Code) []jen.Code {
	if len(w.Tests) == 0 {
		return d
	}
	var ts []string
	for _, t := range w.Tests {
		ts = append(ts, t.String())
	}
	return append(d, kv("Tests", lits(ts)))
}

// ruleList writes rule numbers as a []int literal.
func ruleList(rules []*fsm.Rule) jen.Code {
	var out []jen.Code
	for _, r := range rules {
		out = append(out, jen.Lit(r.Index))
	}
	return jen.Index().Int().Values(out...)
}

// genRuleTests emits TestRules, one row per way through each cell:
//
//	func TestRules(t *testing.T) {
//		fsmtest.Rules(t, fsmSubject, []fsmtest.Way[State, Event, StateKind, ActionKind]{
//			{From: A{}, Event: &X{}, Tests: []string{"g"}, Rules: []int{0}, To: StateB, Actions: ...},
//			{..., After: B{Retries: 0, Reason: "cancelled"}}, // a way through rules that set constants
//		})
//	}
func (g *testGen) genRuleTests() {
	var rows []jen.Code
	for _, w := range g.m.Ways {
		d := []jen.Code{kv("From", stateLit(w.From, w.Config)), kv("Event", g.event(w, w.Trace))}
		d = tests(w, d)
		d = append(d, kv("Rules", ruleList(w.Rules)), kv("To", jen.Id(w.To.KindName)))
		d = g.trace(d, w.Trace)
		if w.After != nil {
			fields := jen.Dict{}
			for _, h := range w.After {
				fields[jen.Id(h.Field.GoName)] = constCode(h.Const)
			}
			d = append(d, kv("After", jen.Id(w.To.GoName).Values(fields)))
		}
		rows = append(rows, jen.Values(d...))
	}
	g.testFunc("Rules", "TestRules takes every way through the rule table: see fsmtest.Rules.",
		ft("Rules").Call(jen.Id("t"), jen.Id("fsmSubject"),
			jen.Index().Add(ft("Way")).Types(jen.Id("State"), jen.Id("Event"), jen.Id("StateKind"), jen.Id("ActionKind")).ValuesFunc(table(rows))))
}

// genPaths emits TestPaths, which drives a machine made by New along the
// witness path of every rule, laid out as a prefix tree:
//
//	func TestPaths(t *testing.T) {
//		fsmtest.Paths(t, fsmSubject, []fsmtest.Node[Event, ActionKind]{
//			{Up: -1, Event: &X{}, Rules: []int{0}, Actions: ...},
//		}, []int{...}) // rule i's path ends at node i of these
//	}
func (g *testGen) genPaths() {
	m := g.m
	if len(m.Witnesses) == 0 {
		return
	}
	var rows, ends []jen.Code
	for _, n := range m.Witnesses {
		d := []jen.Code{kv("Up", jen.Lit(n.Up))}
		if n.Way.Event != nil { // (none for New's own step: see fsmtest.Paths)
			d = append(d, kv("Event", g.event(n.Way, n.Trace)))
		}
		d = tests(n.Way, d)
		var rules []*fsm.Rule
		rules = append(rules, n.Way.Rules...)
		d = append(d, kv("Rules", ruleList(rules)))
		rows = append(rows, jen.Values(g.trace(d, n.Trace)...))
	}
	for _, e := range m.PathEnds {
		ends = append(ends, jen.Lit(e))
	}
	// One end for each rule, its regions' included.
	doc := fmt.Sprintf("TestPaths drives the machine along the witness path of each of its %d rules, the shortest events from New that fire it: see fsmtest.Paths.", len(m.PathEnds))
	if slices.Contains(m.PathEnds, -1) {
		doc = fmt.Sprintf("TestPaths drives the machine along the witness path of each of its %d rules, the shortest events from New that fire it; a rule of a parallel state for configurations New never leads to has none, and TestRules takes it: see fsmtest.Paths.", len(m.PathEnds))
	}
	if len(m.PathEnds) == 1 {
		doc = "TestPaths drives the machine along the witness path of its one rule, the shortest events from New that fire it: see fsmtest.Paths."
	}
	g.testFunc("Paths", doc,
		ft("Paths").Call(jen.Id("t"), jen.Id("fsmSubject"),
			jen.Index().Add(ft("Node")).Types(jen.Id("Event"), jen.Id("ActionKind")).ValuesFunc(table(rows)),
			jen.Index().Int().Values(ends...)))
}

// genDriven emits the tests that need nothing but the subject.
func (g *testGen) genDriven() {
	g.testFunc("EveryPair", "TestEveryPair checks that a rule resolves every state × event pair: see fsmtest.EveryPair.",
		ft("EveryPair").Call(jen.Id("t"), jen.Id("fsmSubject")))
	g.testFunc("RandomSequences", "TestRandomSequences checks the machine's invariants along random events: see fsmtest.Random.",
		ft("Random").Call(jen.Id("t"), jen.Id("fsmSubject")))
	g.testFunc("Saved", "TestSaved checks that the machine survives Save and Load in every state, and that Load reads strictly: see fsmtest.Saved.",
		ft("Saved").Call(jen.Id("t"), jen.Id("fsmSubject")))
	if g.m.Deferral != nil {
		g.testFunc("Deferral", "TestDeferral checks the events the machine defers, holds, saves and recalls: see fsmtest.Deferral.",
			ft("Deferral").Call(jen.Id("t"), jen.Id("fsmSubject")))
	}
}

// genMachineErrors emits a test of the machine's errors: those fsmtest
// checks for every machine, and a Config without the behaviour or the
// handler the machine needs.
func (g *testGen) genMachineErrors() {
	m := g.m
	body := []jen.Code{ft("Errors").Call(jen.Id("t"), jen.Id("fsmSubject"))}
	ini := stateLit(m.Initial, nil).(*jen.Statement)
	first := true
	for _, dep := range []struct {
		field string
		has   bool
		other jen.Code
	}{
		{"Behavior", m.HasBehavior(), kv("Handler", jen.Op("&").Id("Recorder").Values())},
		{"Handler", m.HasHandler(), kv("Behavior", jen.Id("fsmFake").Values())},
	} {
		if !dep.has {
			continue
		}
		var cfg []jen.Code
		if (dep.field == "Behavior" && m.HasHandler()) || (dep.field == "Handler" && m.HasBehavior()) {
			cfg = append(cfg, dep.other)
		}
		assign := jen.Op("=")
		if first {
			assign = jen.Op(":=")
			first = false
		}
		body = append(body,
			jen.List(jen.Id("_"), jen.Err()).Add(assign).Id("New").Call(jen.Id("Config").Values(cfg...)),
			ft("Missing").Call(jen.Id("t"), jen.Err(), jen.Lit(dep.field)),
			jen.List(jen.Id("_"), jen.Err()).Op("=").Id("Restore").Call(jen.Id("Config").Values(cfg...), ini.Clone()),
			ft("Missing").Call(jen.Id("t"), jen.Err(), jen.Lit(dep.field)),
			jen.List(jen.Id("_"), jen.Err()).Op("=").Id("Load").Call(jen.Id("Config").Values(cfg...), jen.Nil()),
			ft("Missing").Call(jen.Id("t"), jen.Err(), jen.Lit(dep.field)))
	}
	g.testFunc("MachineErrors", "TestMachineErrors checks the machine's errors: see fsmtest.Errors; and New, Restore and Load refuse a Config without what the machine needs.", body...)
}

// genJSON emits TestJSON: every state, event and action, with sample
// values in its fields of predeclared types, survives a JSON round trip,
// and malformed JSON is refused.
func (g *testGen) genJSON() {
	var body []jen.Code
	for _, ks := range kindSets {
		ds := decls(g.m, ks.what)
		var vals []jen.Code
		for _, d := range ds {
			fields := samples(d)
			if ks.what == "state" {
				regionSamples(g.m, d, fields)
			}
			v := jen.Id(d.GoName).Values(fields)
			if ks.what != "state" {
				v = jen.Op("&").Add(v)
			}
			vals = append(vals, v)
		}
		args := []jen.Code{jen.Id("t"), jen.Index().Id(ks.iface).Values(vals...), jen.Id("Unmarshal" + ks.iface)}
		if d := mistypedDecl(ds); d != nil {
			args = append(args, rawString(mistyped(d)))
		}
		body = append(body, ft("JSON").Call(args...))
	}
	g.testFunc("JSON", "TestJSON checks that every state, event and action survives a JSON round trip, and that malformed JSON is refused: see fsmtest.JSON.", body...)
}

// samples returns sample values for the fields of d that have
// predeclared types.
func samples(d *fsm.Decl) jen.Dict {
	fields := jen.Dict{}
	for i, fd := range d.Fields {
		if v := sampleValue(fd.GoType, i); v != nil {
			fields[jen.Id(fd.GoName)] = v
		}
	}
	return fields
}

// mistypedDecl returns a declaration whose first field has a predeclared
// type, for a JSON value of the wrong type, or nil.
func mistypedDecl(ds []*fsm.Decl) *fsm.Decl {
	for _, d := range ds {
		if len(d.Fields) > 0 && sampleValue(d.Fields[0].GoType, 0) != nil {
			return d
		}
	}
	return nil
}

// mistyped returns JSON of d's kind whose first field has a value of the
// wrong type.
func mistyped(d *fsm.Decl) string {
	v := `"not a number"`
	if d.Fields[0].GoType.Predeclared() == "string" {
		v = `42`
	}
	return fmt.Sprintf(`{"kind":%q,%q:%s}`, d.Snake, d.Fields[0].JSONName, v)
}

// genRecorder emits a test that the Recorder keeps the values of the
// actions that have fields (TestRules checks which actions it keeps).
func (g *testGen) genRecorder() {
	body := []jen.Code{jen.Id("rec").Op(":=").Op("&").Id("Recorder").Values()}
	var want []jen.Code
	for i, a := range g.m.Actions {
		if len(a.Fields) == 0 {
			continue
		}
		v := fmt.Sprintf("a%d", i)
		body = append(body, jen.Id(v).Op(":=").Op("&").Id(a.GoName).Values(samples(&a.Decl)))
		var args []jen.Code
		for _, fd := range a.Fields {
			args = append(args, jen.Id(v).Dot(fd.GoName))
		}
		body = append(body, jen.Id("rec").Dot(a.GoName).Call(args...))
		want = append(want, jen.Id(v))
	}
	if len(want) == 0 {
		return
	}
	body = append(body, ft("Recorded").Call(jen.Id("t"), jen.Index().Id("Action").Values(want...), jen.Id("rec").Dot("Actions")))
	g.testFunc("Recorder", "TestRecorder checks that the Recorder keeps the values of the actions.", body...)
}

// ExamplesFile returns the test file that runs the spec's examples
// through the real Behavior, or nil when there are none to run: no
// examples, or the generated package's import path is unknown (a spec
// checked outside a module). The file is in the package's external test
// package, so that the behaviour may live in a package that imports the
// generated one, unless the behavior expression names an unexported name
// of the generated package: then it is in the package itself. The
// expression is written as the spec gives it, through fsmBehavior, which
// takes a value, or a value and an error: whether it gives an error is
// the compiler's to know, as its packages may not load before this one
// is generated.
//
//	func fsmBehavior[B any](b B, errs ...error) (B, error) { return b, errors.Join(errs...) }
//
//	func TestExamples(t *testing.T) {
//		b, err := fsmBehavior(mypkg.New(...))
//		if err != nil { t.Fatalf(...) }
//		fsmtest.Examples(t, pkg.Rules(), func(state []byte) (fsmtest.Machine[...], error) {...}, pkg.UnmarshalEvent, []fsmtest.Example{...})
//	}
func ExamplesFile(m *fsm.Machine) *jen.File {
	behaves := m.HasBehavior()
	if len(m.Examples) == 0 || behaves && m.Behavior == "" || m.ImportPath == "" {
		return nil
	}
	var f *jen.File
	if m.ExamplesInPackage {
		f = newFile(m, m.Package, true)
	} else {
		f = newFile(m, m.Package+"_test", false)
		f.ImportName(m.ImportPath, m.Package)
	}
	gen := func(name string) *jen.Statement { return jen.Qual(m.ImportPath, name) }
	var rows []jen.Code
	for _, ex := range m.Examples {
		rows = append(rows, jen.Values(
			kv("Name", jen.Lit(ex.Name)),
			kv("Rule", jen.Lit(ex.Rule.Index)),
			kv("State", rawString(ex.State)),
			kv("Event", rawString(ex.Event))))
	}
	var body, cfg []jen.Code
	if behaves {
		body = []jen.Code{
			jen.List(jen.Id("b"), jen.Err()).Op(":=").Id("fsmBehavior").Call(goType(m.BehaviorCode)),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Id("t").Dot("Fatalf").Call(jen.Lit("make the behaviour: %v"), jen.Err())),
		}
		cfg = []jen.Code{kv("Behavior", jen.Id("b"))}
	}
	if m.HasHandler() {
		cfg = append(cfg, kv("Handler", jen.Op("&").Add(gen("Recorder")).Values()))
	}
	machine := ft("Machine").Types(gen("State"), gen("Event"), gen("StateKind"), gen("EventKind"))
	restore := jen.Func().Params(jen.Id("data").Index().Byte()).Params(machine, jen.Error()).Block(
		jen.List(jen.Id("s"), jen.Err()).Op(":=").Add(gen("UnmarshalState")).Call(jen.Id("data")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
		jen.Return(gen("Restore").Call(gen("Config").Values(cfg...), jen.Id("s"))))
	body = append(body, ft("Examples").Call(jen.Id("t"), gen("Rules").Call(), restore, gen("UnmarshalEvent"),
		jen.Index().Add(ft("Example")).ValuesFunc(table(rows))))
	if !behaves {
		f.Comment("// TestExamples runs each example of the spec through the machine's rules (it")
		f.Comment("// has no guards or effects): see fsmtest.Examples.")
		f.Func().Id("TestExamples").Params(jen.Id("t").Op("*").Qual(pkgTesting, "T")).Block(body...)
		return f
	}
	f.Comment("// fsmBehavior returns the behaviour the spec's behavior expression makes, and")
	f.Comment("// the error it gives, if it gives one.")
	f.Func().Id("fsmBehavior").Types(jen.Id("B").Any()).
		Params(jen.Id("b").Id("B"), jen.Id("errs").Op("...").Error()).
		Params(jen.Id("B"), jen.Error()).
		Block(jen.Return(jen.Id("b"), jen.Qual(pkgErrors, "Join").Call(jen.Id("errs").Op("..."))))
	f.Add(paragraphs(
		fmt.Sprintf("TestExamples runs each example of the spec through the real Behavior, made by %s: "+
			"see fsmtest.Examples.", strings.Join(strings.Fields(m.Behavior), " "))))
	f.Func().Id("TestExamples").Params(jen.Id("t").Op("*").Qual(pkgTesting, "T")).Block(body...)
	return f
}

// rawString writes s as a raw string literal when it can, else quoted.
func rawString(s string) jen.Code {
	if !strings.Contains(s, "`") {
		return jen.Op("`" + s + "`")
	}
	return jen.Lit(s)
}
