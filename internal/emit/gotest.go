package emit

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/fsm"
)

// Import paths the generated tests use.
const (
	pkgTesting = "testing"
	pkgRand    = "math/rand/v2"
	pkgAssert  = "github.com/stretchr/testify/assert"
	pkgRequire = "github.com/stretchr/testify/require"
)

// testGen emits the machine's generated tests. They drive the generated
// machine itself, the code production runs, with a fake behaviour whose
// guards answer as each test sets them, and a Recorder as the handler.
type testGen struct {
	m *fsm.Machine
	f *jen.File
}

// TestFile returns the generated tests for m as a jennifer file: one case
// per way through every cell, every state × event pair, JSON round trips,
// the machine's errors, and a random-sequence test of its invariants.
func TestFile(m *fsm.Machine) *jen.File {
	g := &testGen{m: m, f: newFile(m)}
	g.f.ImportName(pkgAssert, "assert")
	g.f.ImportName(pkgRequire, "require")
	g.f.ImportName(pkgRand, "rand")
	if m.HasBehavior() {
		g.genFake()
	}
	g.genTrace()
	g.genRuleTests()
	g.genPaths()
	g.genEveryPair()
	g.genRoundTrips()
	g.genKindStrings()
	g.genMachineErrors()
	if m.HasHandler() {
		g.genRecorder()
	}
	g.genRandom()
	return g.f
}

// restore returns the code that makes a machine in state from, with the
// fake behaviour b and the recorder rec.
func (g *testGen) restore(from jen.Code) jen.Code {
	var args []jen.Code
	if g.m.HasBehavior() {
		args = append(args, jen.Id("b"))
	}
	if g.m.HasHandler() {
		args = append(args, jen.Id("rec"))
	}
	return jen.Id("Restore").Call(append(args, from)...)
}

// setup declares b and rec for restore, with the given guards.
func (g *testGen) setup(guards jen.Code) []jen.Code {
	var out []jen.Code
	if g.m.HasBehavior() {
		out = append(out, jen.Id("b").Op(":=").Op("&").Id("fsmFake").Values(jen.Dict{jen.Id("guards"): guards}))
	}
	if g.m.HasHandler() {
		out = append(out, jen.Id("rec").Op(":=").Op("&").Id("Recorder").Values())
	}
	return out
}

// genFake emits a Behavior whose guards answer as a test scripts them and
// whose effects record that they ran and return zero values:
//
//	type fsmFake struct { guards map[string]bool; script []string; wrong []string; ran []string }
//	func (f *fsmFake) CanRetry(chat.LLMError, int) bool { return f.test("canRetry") }
//	func (f *fsmFake) StartTurn(chat.Conversation, chat.Message) (_ chat.Conversation, _ chat.Request) { ...; return }
func (g *testGen) genFake() {
	f := g.f
	f.Comment("// fsmFake is a Behavior whose guards answer as a test says and whose effects")
	f.Comment("// record that they ran and return zero values. With a script, the guards")
	f.Comment("// must be tested in its order (\"g\": g holds, \"!g\": it does not); without")
	f.Comment("// one, they answer from the guards map.")
	f.Type().Id("fsmFake").Struct(
		jen.Id("guards").Map(jen.String()).Bool(),
		jen.Id("script").Index().String(),
		jen.Id("wrong").Index().String(),
		jen.Id("ran").Index().String(),
	)
	f.Var().Id("_").Id("Behavior").Op("=").Parens(jen.Op("*").Id("fsmFake")).Parens(jen.Nil())
	f.Comment("// test answers for the guard name.")
	f.Func().Params(jen.Id("f").Op("*").Id("fsmFake")).Id("test").Params(jen.Id("name").String()).Bool().Block(
		jen.If(jen.Id("f").Dot("script").Op("==").Nil()).Block(jen.Return(jen.Id("f").Dot("guards").Index(jen.Id("name")))),
		jen.If(jen.Len(jen.Id("f").Dot("script")).Op("==").Lit(0).Op("||").Qual("strings", "TrimPrefix").Call(jen.Id("f").Dot("script").Index(jen.Lit(0)), jen.Lit("!")).Op("!=").Id("name")).Block(
			jen.Id("f").Dot("wrong").Op("=").Append(jen.Id("f").Dot("wrong"), jen.Id("name")),
			jen.Return(jen.False())),
		jen.Id("holds").Op(":=").Op("!").Qual("strings", "HasPrefix").Call(jen.Id("f").Dot("script").Index(jen.Lit(0)), jen.Lit("!")),
		jen.Id("f").Dot("script").Op("=").Id("f").Dot("script").Index(jen.Lit(1), jen.Empty()),
		jen.Return(jen.Id("holds")),
	)
	for _, fns := range [][]*fsm.Func{g.m.Guards, g.m.Effects} {
		for _, fn := range fns {
			if !fn.Used() {
				continue
			}
			var in []jen.Code
			for _, p := range fn.Reads {
				in = append(in, typeCode(g.m, p.Type))
			}
			recv := jen.Id("f").Op("*").Id("fsmFake")
			if fn.Kind == fsm.Guard {
				f.Comment(fmt.Sprintf("// %s answers for the guard %s.", fn.GoName, fn.Name))
				f.Func().Params(recv).Id(fn.GoName).Params(in...).Bool().Block(
					jen.Return(jen.Id("f").Dot("test").Call(jen.Lit(fn.Name))))
				continue
			}
			var out []jen.Code
			for _, s := range fn.Sets {
				out = append(out, jen.Id("_").Add(typeCode(g.m, s.Type)))
			}
			f.Comment(fmt.Sprintf("// %s records that the effect %s ran.", fn.GoName, fn.Name))
			f.Func().Params(recv).Id(fn.GoName).Params(in...).Params(out...).Block(
				jen.Id("f").Dot("ran").Op("=").Append(jen.Id("f").Dot("ran"), jen.Lit(fn.Name)),
				jen.Return())
		}
	}
}

// genTrace emits fsmTrace, which records the rules a machine fires through
// its observer.
func (g *testGen) genTrace() {
	g.f.Comment("// fsmTrace makes m record the rules it fires, in order, in the returned slice.")
	g.f.Func().Id("fsmTrace").Params(jen.Id("m").Op("*").Id("Machine")).Op("*").Index().Id("Step").Block(
		jen.Id("steps").Op(":=").Op("&").Index().Id("Step").Values(),
		jen.Id("m").Dot("SetObserver").Call(jen.Func().Params(jen.Id("s").Id("Step")).Block(
			jen.Op("*").Id("steps").Op("=").Append(jen.Op("*").Id("steps"), jen.Id("s")))),
		jen.Return(jen.Id("steps")),
	)
}

// genRuleTests emits a table-driven test with one case per way through
// each cell:
//
//	func TestRules(t *testing.T) {
//		tests := []struct{ name string; from State; event Event; guards map[string]bool; ... }{...}
//		for _, tt := range tests { t.Run(tt.name, ...) }
//	}
func (g *testGen) genRuleTests() {
	var rows []jen.Code
	for _, w := range g.m.Ways {
		last := w.Rules[len(w.Rules)-1]
		var labels []string
		for _, r := range w.Rules {
			labels = append(labels, r.Label)
		}
		// One line per case, its fields in the order of the struct.
		trace := wayTrace(g.m, w)
		event := jen.Op("&").Id(w.Event.GoName).Values()
		if w.Rules[0].Timer != nil {
			event = jen.Op("&").Id(w.Event.GoName).Values(kv("Timer", jen.Lit(trace.timerID)))
		}
		d := []jen.Code{
			kv("name", jen.Lit(strings.Join(labels, ", then "))),
			kv("from", jen.Id(w.From.GoName).Values()),
			kv("event", event),
		}
		if len(w.Tests) > 0 {
			var tests []jen.Code
			for _, t := range w.Tests {
				tests = append(tests, jen.Lit(t.String()))
			}
			d = append(d, kv("tests", jen.Index().String().Values(tests...)))
		}
		var rules, effects []jen.Code
		for _, r := range w.Rules {
			rules = append(rules, jen.Lit(r.Index))
		}
		actions := trace.actions
		for _, name := range trace.ran {
			effects = append(effects, jen.Lit(name))
		}
		d = append(d, kv("rules", jen.Index().Int().Values(rules...)))
		if last.Kind != fsm.Transition {
			d = append(d, kv("kind", jen.Id([...]string{"RuleTransition", "RuleIgnore", "RuleReject"}[last.Kind])))
		}
		d = append(d, kv("to", jen.Id(w.To.KindName)))
		if len(actions) > 0 {
			var acts []jen.Code
			for _, a := range actions {
				acts = append(acts, jen.Id(a.KindName))
			}
			d = append(d, kv("actions", jen.Index().Id("ActionKind").Values(acts...)))
		}
		if len(effects) > 0 {
			d = append(d, kv("effects", jen.Index().String().Values(effects...)))
		}
		rows = append(rows, jen.Values(d...))
	}
	fields := []jen.Code{
		jen.Id("name").String(),
		jen.Id("from").Id("State"),
		jen.Id("event").Id("Event"),
		jen.Id("tests").Index().String(),
		jen.Id("rules").Index().Int(),
		jen.Id("kind").Id("RuleKind"),
		jen.Id("to").Id("StateKind"),
		jen.Id("actions").Index().Id("ActionKind"),
		jen.Id("effects").Index().String(),
	}
	run := []jen.Code{}
	if g.m.HasBehavior() {
		run = append(run, jen.Id("b").Op(":=").Op("&").Id("fsmFake").Values(kv("script", jen.Append(jen.Index().String().Values(), jen.Id("tt").Dot("tests").Op("...")))))
	}
	if g.m.HasHandler() {
		run = append(run, jen.Id("rec").Op(":=").Op("&").Id("Recorder").Values())
	}
	run = append(run,
		jen.List(jen.Id("m"), jen.Err()).Op(":=").Add(g.restore(jen.Id("tt").Dot("from"))),
		jen.Qual(pkgRequire, "NoError").Call(jen.Id("t"), jen.Err()))
	if g.delays() {
		run = append(run, jen.Id("b").Dot("ran").Op("=").Nil().Comment("// the delays Restore computed"))
	}
	run = append(run,
		jen.Id("steps").Op(":=").Id("fsmTrace").Call(jen.Id("m")),
		jen.Err().Op("=").Id("m").Dot("HandleEvent").Call(jen.Id("tt").Dot("event")),
		jen.Var().Id("fired").Index().Int(),
		jen.For(jen.List(jen.Id("_"), jen.Id("s")).Op(":=").Range().Op("*").Id("steps")).Block(
			jen.Id("fired").Op("=").Append(jen.Id("fired"), jen.Id("s").Dot("Rule"))),
		jen.Qual(pkgAssert, "Equal").Call(jen.Id("t"), jen.Id("tt").Dot("rules"), jen.Id("fired"), jen.Lit("rules fired")),
		jen.Qual(pkgAssert, "Equal").Call(jen.Id("t"), jen.Id("tt").Dot("to"), jen.Id("m").Dot("Kind").Call(), jen.Lit("state after the event")),
		jen.Switch(jen.Id("tt").Dot("kind")).Block(
			jen.Case(jen.Id("RuleReject")).Block(
				jen.Qual(pkgAssert, "ErrorIs").Call(jen.Id("t"), jen.Err(), jen.Id("ErrRejected")),
				jen.Qual(pkgAssert, "Equal").Call(jen.Id("t"), jen.Id("tt").Dot("from"), jen.Id("m").Dot("State").Call(), jen.Lit("a rejected event changes nothing"))),
			jen.Case(jen.Id("RuleIgnore")).Block(
				jen.Qual(pkgAssert, "NoError").Call(jen.Id("t"), jen.Err()),
				jen.Qual(pkgAssert, "Equal").Call(jen.Id("t"), jen.Id("tt").Dot("from"), jen.Id("m").Dot("State").Call(), jen.Lit("an ignored event changes nothing"))),
			jen.Default().Block(jen.Qual(pkgRequire, "NoError").Call(jen.Id("t"), jen.Err())),
		),
	)
	if g.m.HasHandler() {
		run = append(run,
			jen.Var().Id("acts").Index().Id("ActionKind"),
			jen.For(jen.List(jen.Id("_"), jen.Id("a")).Op(":=").Range().Id("rec").Dot("Actions")).Block(
				jen.Id("acts").Op("=").Append(jen.Id("acts"), jen.Id("a").Dot("Kind").Call())),
			jen.Qual(pkgAssert, "Equal").Call(jen.Id("t"), jen.Id("tt").Dot("actions"), jen.Id("acts"), jen.Lit("actions handed to the Handler")))
	}
	if g.m.HasBehavior() {
		run = append(run,
			jen.Qual(pkgAssert, "Equal").Call(jen.Id("t"), jen.Id("tt").Dot("effects"), jen.Id("b").Dot("ran"), jen.Lit("effects run")),
			jen.Qual(pkgAssert, "Empty").Call(jen.Id("t"), jen.Id("b").Dot("wrong"), jen.Lit("guards tested out of the script's order")),
			jen.Qual(pkgAssert, "Empty").Call(jen.Id("t"), jen.Id("b").Dot("script"), jen.Lit("guards the script expected but the machine did not test")))
	}
	g.f.Comment("// TestRules takes every way through the table: it sends each event to each state")
	g.f.Comment("// with the guards answering as the way needs, in the order the machine tests")
	g.f.Comment("// them, and checks the rules fired, the resulting state, the actions and the")
	g.f.Comment("// effects run. A \"*\" row is tested from the first state it applies to.")
	g.f.Func().Id("TestRules").Params(jen.Id("t").Op("*").Qual(pkgTesting, "T")).Block(
		jen.Id("tests").Op(":=").Index().Struct(fields...).ValuesFunc(func(grp *jen.Group) {
			for _, r := range rows {
				grp.Line().Add(r)
			}
			grp.Line()
		}),
		jen.For(jen.List(jen.Id("_"), jen.Id("tt")).Op(":=").Range().Id("tests")).Block(
			jen.Id("t").Dot("Run").Call(jen.Id("tt").Dot("name"), jen.Func().Params(jen.Id("t").Op("*").Qual(pkgTesting, "T")).Block(run...)),
		),
	)
}

// states returns the zero value of every state at rest, and events the
// zero value of every event, for the tests that go through them all.
func (g *testGen) statesAndEvents() []jen.Code {
	var states, events []jen.Code
	for _, s := range g.m.States {
		if !s.Transient {
			states = append(states, jen.Id(s.GoName).Values())
		}
	}
	for _, e := range g.m.Events {
		events = append(events, jen.Op("&").Id(e.GoName).Values())
	}
	return []jen.Code{
		jen.Id("states").Op(":=").Index().Id("State").Values(states...),
		jen.Id("events").Op(":=").Index().Id("Event").Values(events...),
	}
}

// genEveryPair emits a test that sends every event to every state at rest
// (guards false) and checks that a rule of the state, or a "*" row, handles
// it: no pair is left unresolved, and the first rule fired is for that
// state and event.
func (g *testGen) genEveryPair() {
	body := append(g.statesAndEvents(), jen.Id("rules").Op(":=").Id("Rules").Call())
	inner := g.setup(jen.Map(jen.String()).Bool().Values())
	inner = append(inner,
		jen.List(jen.Id("m"), jen.Err()).Op(":=").Add(g.restore(jen.Id("s"))),
		jen.Qual(pkgRequire, "NoError").Call(jen.Id("t"), jen.Err()),
		jen.Id("steps").Op(":=").Id("fsmTrace").Call(jen.Id("m")),
		jen.If(jen.Err().Op(":=").Id("m").Dot("HandleEvent").Call(jen.Id("ev")), jen.Err().Op("!=").Nil()).Block(
			jen.Qual(pkgRequire, "ErrorIs").Call(jen.Id("t"), jen.Err(), jen.Id("ErrRejected"), jen.Lit("%s × %s"), jen.Id("s").Dot("Kind").Call(), jen.Id("ev").Dot("Kind").Call())),
		jen.Qual(pkgRequire, "NotEmpty").Call(jen.Id("t"), jen.Op("*").Id("steps"), jen.Lit("%s × %s: no rule fired"), jen.Id("s").Dot("Kind").Call(), jen.Id("ev").Dot("Kind").Call()),
		jen.Id("first").Op(":=").Parens(jen.Op("*").Id("steps")).Index(jen.Lit(0)),
		jen.Id("rule").Op(":=").Id("rules").Index(jen.Id("first").Dot("Rule")),
		jen.Qual(pkgAssert, "Equal").Call(jen.Id("t"), jen.Id("ev").Dot("Kind").Call(), jen.Id("rule").Dot("Event"), jen.Lit("%s × %s: rule %d"), jen.Id("s").Dot("Kind").Call(), jen.Id("ev").Dot("Kind").Call(), jen.Id("first").Dot("Rule")),
		jen.Qual(pkgAssert, "Contains").Call(jen.Id("t"), jen.Index().Id("StateKind").Values(jen.Id("s").Dot("Kind").Call(), jen.Lit(0)), jen.Id("rule").Dot("From"), jen.Lit("%s × %s: rule %d"), jen.Id("s").Dot("Kind").Call(), jen.Id("ev").Dot("Kind").Call(), jen.Id("first").Dot("Rule")),
	)
	body = append(body,
		jen.For(jen.List(jen.Id("_"), jen.Id("s")).Op(":=").Range().Id("states")).Block(
			jen.For(jen.List(jen.Id("_"), jen.Id("ev")).Op(":=").Range().Id("events")).Block(inner...)))
	g.f.Comment("// TestEveryPair sends every event to every state at rest, with every guard false,")
	g.f.Comment("// and checks that a rule of that state, or a \"*\" row, resolves the pair.")
	g.f.Func().Id("TestEveryPair").Params(jen.Id("t").Op("*").Qual(pkgTesting, "T")).Block(body...)
}

// genRoundTrips emits JSON round-trip tests for every state, event and
// action, with sample values in the fields of predeclared types, and
// checks that malformed JSON is an error.
func (g *testGen) genRoundTrips() {
	for _, ks := range kindSets {
		ds := decls(g.m, ks.what)
		var vals []jen.Code
		for _, d := range ds {
			v := jen.Id(d.GoName).Values(samples(d))
			if ks.what != "state" {
				v = jen.Op("&").Add(v)
			}
			vals = append(vals, v)
		}
		bad := []jen.Code{jen.Lit(`{"kind":"no_such_kind"}`), jen.Lit(`{"kind":""}`), jen.Lit(`[`)}
		if d := mistypedDecl(ds); d != nil {
			bad = append(bad, jen.Lit(mistyped(d)))
		}
		g.f.Comment(fmt.Sprintf("// Test%sJSON checks that every %s survives a JSON round trip with its kind,", ks.iface, ks.what))
		g.f.Comment("// and that malformed JSON is an error.")
		g.f.Func().Id("Test"+ks.iface+"JSON").Params(jen.Id("t").Op("*").Qual(pkgTesting, "T")).Block(
			jen.For(jen.List(jen.Id("_"), jen.Id("v")).Op(":=").Range().Index().Id(ks.iface).ValuesFunc(func(grp *jen.Group) {
				for _, v := range vals {
					grp.Line().Add(v)
				}
				if len(vals) > 0 {
					grp.Line()
				}
			})).Block(
				jen.Id("v").Dot(ks.marker).Call(),
				jen.Id("t").Dot("Run").Call(jen.Id("v").Dot("Kind").Call().Dot("String").Call(), jen.Func().Params(jen.Id("t").Op("*").Qual(pkgTesting, "T")).Block(
					jen.List(jen.Id("data"), jen.Err()).Op(":=").Qual(pkgJSON, "Marshal").Call(jen.Id("v")),
					jen.Qual(pkgRequire, "NoError").Call(jen.Id("t"), jen.Err()),
					jen.List(jen.Id("got"), jen.Err()).Op(":=").Id("Unmarshal"+ks.iface).Call(jen.Id("data")),
					jen.Qual(pkgRequire, "NoError").Call(jen.Id("t"), jen.Err()),
					jen.Qual(pkgAssert, "Equal").Call(jen.Id("t"), jen.Id("v").Dot("Kind").Call(), jen.Id("got").Dot("Kind").Call()),
					jen.List(jen.Id("again"), jen.Err()).Op(":=").Qual(pkgJSON, "Marshal").Call(jen.Id("got")),
					jen.Qual(pkgRequire, "NoError").Call(jen.Id("t"), jen.Err()),
					jen.Qual(pkgAssert, "JSONEq").Call(jen.Id("t"), jen.String().Call(jen.Id("data")), jen.String().Call(jen.Id("again"))),
				)),
			),
			jen.For(jen.List(jen.Id("_"), jen.Id("data")).Op(":=").Range().Index().String().Values(bad...)).Block(
				jen.List(jen.Id("_"), jen.Err()).Op(":=").Id("Unmarshal"+ks.iface).Call(jen.Index().Byte().Call(jen.Id("data"))),
				jen.Qual(pkgAssert, "Error").Call(jen.Id("t"), jen.Err(), jen.Id("data"))),
		)
	}
}

// samples returns sample values for the fields of d that have
// predeclared types.
func samples(d *fsm.Decl) jen.Dict {
	fields := jen.Dict{}
	for i, fd := range d.Fields {
		if v := sampleValue(fd.Type, i); v != nil {
			fields[jen.Id(fd.GoName)] = v
		}
	}
	return fields
}

// mistypedDecl returns a declaration whose first field has a predeclared
// type, for a JSON value of the wrong type, or nil.
func mistypedDecl(ds []*fsm.Decl) *fsm.Decl {
	for _, d := range ds {
		if len(d.Fields) > 0 && sampleValue(d.Fields[0].Type, 0) != nil {
			return d
		}
	}
	return nil
}

// mistyped returns JSON of d's kind whose first field has a value of the
// wrong type.
func mistyped(d *fsm.Decl) string {
	v := `"not a number"`
	if d.Fields[0].Type == "string" {
		v = `42`
	}
	return fmt.Sprintf(`{"kind":%q,%q:%s}`, d.Snake, d.Fields[0].JSONName, v)
}

// genKindStrings emits a test of the kinds' String methods.
func (g *testGen) genKindStrings() {
	var body []jen.Code
	for _, ks := range kindSets {
		for _, d := range decls(g.m, ks.what) {
			body = append(body, jen.Qual(pkgAssert, "Equal").Call(jen.Id("t"), jen.Lit(d.Name), jen.Id(d.KindName).Dot("String").Call()))
		}
		body = append(body, jen.Qual(pkgAssert, "Equal").Call(jen.Id("t"), jen.Lit(ks.kind+"(0)"), jen.Id(ks.kind).Call(jen.Lit(0)).Dot("String").Call()))
	}
	for _, k := range []string{"RuleTransition", "RuleIgnore", "RuleReject"} {
		body = append(body, jen.Qual(pkgAssert, "NotContains").Call(jen.Id("t"), jen.Id(k).Dot("String").Call(), jen.Lit("RuleKind(")))
	}
	body = append(body, jen.Qual(pkgAssert, "Equal").Call(jen.Id("t"), jen.Lit("RuleKind(9)"), jen.Id("RuleKind").Call(jen.Lit(9)).Dot("String").Call()))
	g.f.Comment("// TestKindStrings checks the names of the kinds, and of a kind out of range.")
	g.f.Func().Id("TestKindStrings").Params(jen.Id("t").Op("*").Qual(pkgTesting, "T")).Block(body...)
}

// genMachineErrors emits a test of the errors the machine and its
// constructors return: an uninitialised machine, a nil event, a nil
// behaviour or handler, a transient state restored, a call from the
// observer.
func (g *testGen) genMachineErrors() {
	m := g.m
	var body []jen.Code
	anyEvent := jen.Op("&").Id(m.Events[0].GoName).Values()
	// The JSON decoding helpers' failures, whatever the spec's fields.
	st := m.States[0].GoName
	body = append(body,
		jen.List(jen.Id("_"), jen.Err()).Op(":=").Id("fsmAsValue").Types(jen.Id(st), jen.Id("State")).Call(jen.Id("fsmDecodeAs").Types(jen.Id(st)).Call(jen.Index().Byte().Call(jen.Lit("[")), jen.Lit("test"))),
		jen.Qual(pkgAssert, "Error").Call(jen.Id("t"), jen.Err()),
		jen.List(jen.Id("_"), jen.Err()).Op("=").Id("fsmAsPointer").Types(jen.Id(st), jen.Id("State")).Call(jen.Nil(), jen.Err()),
		jen.Qual(pkgAssert, "Error").Call(jen.Id("t"), jen.Err()),
		jen.Id("rejected").Op(":=").Op("&").Id("RejectedError").Values(kv("State", jen.Id(m.States[0].KindName)), kv("Event", jen.Id(m.Events[0].KindName)), kv("Reason", jen.Lit("a test"))),
		jen.Qual(pkgAssert, "ErrorIs").Call(jen.Id("t"), jen.Id("rejected"), jen.Id("ErrRejected")),
		jen.Qual(pkgAssert, "Equal").Call(jen.Id("t"), jen.Lit(fmt.Sprintf("%s: %s rejects %s: a test", m.Package, m.States[0].Name, m.Events[0].Name)), jen.Id("rejected").Dot("Error").Call()),
	)
	body = append(body,
		jen.Var().Id("zero").Id("Machine"),
		jen.Qual(pkgAssert, "ErrorContains").Call(jen.Id("t"), jen.Id("zero").Dot("HandleEvent").Call(anyEvent), jen.Lit("not initialised")),
		jen.Qual(pkgAssert, "Nil").Call(jen.Id("t"), jen.Id("zero").Dot("State").Call()),
	)
	body = append(body, g.setup(jen.Map(jen.String()).Bool().Values())...)
	body = append(body,
		jen.List(jen.Id("m"), jen.Err()).Op(":=").Add(g.restore(jen.Id(m.Initial.GoName).Values())),
		jen.Qual(pkgRequire, "NoError").Call(jen.Id("t"), jen.Err()),
		jen.Qual(pkgAssert, "ErrorContains").Call(jen.Id("t"), jen.Id("m").Dot("HandleEvent").Call(jen.Nil()), jen.Lit("not an event")),
		jen.List(jen.Id("_"), jen.Err()).Op("=").Add(g.restore(jen.Nil())),
		jen.Qual(pkgAssert, "Error").Call(jen.Id("t"), jen.Err(), jen.Lit("a nil state")),
	)
	for _, s := range m.States {
		if s.Transient {
			body = append(body,
				jen.List(jen.Id("_"), jen.Err()).Op("=").Add(g.restore(jen.Id(s.GoName).Values())),
				jen.Qual(pkgAssert, "ErrorContains").Call(jen.Id("t"), jen.Err(), jen.Lit("transient")))
		}
	}
	// A nil event where a rule reads it.
	for _, s := range m.States {
		for _, c := range s.Handles {
			if !c.ReadsEvent {
				continue
			}
			body = append(body,
				jen.List(jen.Id("m"), jen.Err()).Op("=").Add(g.restore(jen.Id(s.GoName).Values())),
				jen.Qual(pkgRequire, "NoError").Call(jen.Id("t"), jen.Err()),
				jen.Qual(pkgAssert, "ErrorContains").Call(jen.Id("t"), jen.Id("m").Dot("HandleEvent").Call(jen.Parens(jen.Op("*").Id(c.Event.GoName)).Parens(jen.Nil())), jen.Lit("nil")),
				jen.Qual(pkgAssert, "Equal").Call(jen.Id("t"), jen.Id(s.GoName).Values(), jen.Id("m").Dot("State").Call(), jen.Lit("a nil event changes nothing")),
			)
		}
	}
	// HandleEvent from the observer.
	body = append(body,
		jen.List(jen.Id("m"), jen.Err()).Op("=").Add(g.restore(jen.Id(m.Initial.GoName).Values())),
		jen.Qual(pkgRequire, "NoError").Call(jen.Id("t"), jen.Err()),
		jen.Var().Id("inner").Error(),
		jen.Id("m").Dot("SetObserver").Call(jen.Func().Params(jen.Id("Step")).Block(jen.Id("inner").Op("=").Id("m").Dot("HandleEvent").Call(anyEvent.Clone()))),
		jen.Id("_").Op("=").Id("m").Dot("HandleEvent").Call(anyEvent.Clone()),
		jen.Qual(pkgAssert, "ErrorContains").Call(jen.Id("t"), jen.Id("inner"), jen.Lit("HandleEvent called from")),
	)
	// Nil behaviour and handler.
	var nils [][]jen.Code
	if m.HasBehavior() {
		args := []jen.Code{jen.Nil()}
		if m.HasHandler() {
			args = append(args, jen.Id("rec"))
		}
		nils = append(nils, args)
	}
	if m.HasHandler() {
		var args []jen.Code
		if m.HasBehavior() {
			args = append(args, jen.Id("b"))
		}
		nils = append(nils, append(args, jen.Nil()))
	}
	for _, args := range nils {
		body = append(body,
			jen.List(jen.Id("_"), jen.Err()).Op("=").Id("Restore").Call(append(append([]jen.Code(nil), args...), jen.Id(m.Initial.GoName).Values())...),
			jen.Qual(pkgAssert, "ErrorContains").Call(jen.Id("t"), jen.Err(), jen.Lit("is nil")),
			jen.Qual(pkgAssert, "Panics").Call(jen.Id("t"), jen.Func().Params().Block(jen.Id("New").Call(append(append([]jen.Code(nil), args...), jen.Id(m.Initial.GoName).Values())...))),
		)
	}
	g.f.Comment("// TestMachineErrors checks the errors of an uninitialised machine, a nil event, a")
	g.f.Comment("// nil behaviour or handler, a transient state restored, and HandleEvent called")
	g.f.Comment("// from the observer.")
	g.f.Func().Id("TestMachineErrors").Params(jen.Id("t").Op("*").Qual(pkgTesting, "T")).Block(body...)
}

// genRecorder emits a test that the Recorder keeps each action with its
// values.
func (g *testGen) genRecorder() {
	var body []jen.Code
	body = append(body, jen.Id("rec").Op(":=").Op("&").Id("Recorder").Values())
	var want []jen.Code
	for i, a := range g.m.Actions {
		v := fmt.Sprintf("a%d", i)
		body = append(body, jen.Id(v).Op(":=").Op("&").Id(a.GoName).Values(samples(&a.Decl)))
		var args []jen.Code
		for _, fd := range a.Fields {
			args = append(args, jen.Id(v).Dot(fd.GoName))
		}
		body = append(body, jen.Id("rec").Dot(a.GoName).Call(args...))
		want = append(want, jen.Id(v))
	}
	body = append(body, jen.Qual(pkgAssert, "Equal").Call(jen.Id("t"), jen.Index().Id("Action").Values(want...), jen.Id("rec").Dot("Actions")))
	g.f.Comment("// TestRecorder checks that the Recorder keeps every action with its values.")
	g.f.Func().Id("TestRecorder").Params(jen.Id("t").Op("*").Qual(pkgTesting, "T")).Block(body...)
}

// genRandom emits a test that sends random events with random guard
// results and checks the machine's invariants after every step.
func (g *testGen) genRandom() {
	m := g.m
	var terminal, transient []jen.Code
	for _, s := range m.States {
		if s.Terminal {
			terminal = append(terminal, jen.Id(s.KindName).Op(":").True())
		}
		if s.Transient {
			transient = append(transient, jen.Id(s.KindName).Op(":").True())
		}
	}
	var guards []jen.Code
	for _, fn := range m.Guards {
		if fn.Used() {
			guards = append(guards, jen.Lit(fn.Name))
		}
	}
	body := []jen.Code{
		jen.Id("r").Op(":=").Qual(pkgRand, "New").Call(jen.Qual(pkgRand, "NewPCG").Call(jen.Lit(1), jen.Lit(2))),
		g.statesAndEvents()[1],
		jen.Id("terminal").Op(":=").Map(jen.Id("StateKind")).Bool().Values(terminal...),
		jen.Id("transient").Op(":=").Map(jen.Id("StateKind")).Bool().Values(transient...),
	}
	newM := g.setup(jen.Map(jen.String()).Bool().Values())
	var newArgs []jen.Code
	if m.HasBehavior() {
		newArgs = append(newArgs, jen.Id("b"))
	}
	if m.HasHandler() {
		newArgs = append(newArgs, jen.Id("rec"))
	}
	newM = append(newM, jen.Id("m").Op(":=").Id("New").Call(append(newArgs, jen.Id(m.Initial.GoName).Values())...))
	setGuards := jen.Null()
	if m.HasBehavior() {
		body = append(body, jen.Id("guards").Op(":=").Index().String().Values(guards...))
		setGuards = jen.For(jen.List(jen.Id("_"), jen.Id("name")).Op(":=").Range().Id("guards")).Block(
			jen.Id("b").Dot("guards").Index(jen.Id("name")).Op("=").Id("r").Dot("IntN").Call(jen.Lit(2)).Op("==").Lit(0))
	}
	loop := append(newM, jen.For(jen.Id("i").Op(":=").Lit(0), jen.Id("i").Op("<").Lit(50), jen.Id("i").Op("++")).Block(
		setGuards,
		jen.Id("before").Op(":=").Id("m").Dot("State").Call(),
		jen.Id("ev").Op(":=").Id("events").Index(jen.Id("r").Dot("IntN").Call(jen.Len(jen.Id("events")))),
		jen.Err().Op(":=").Id("m").Dot("HandleEvent").Call(jen.Id("ev")),
		jen.Id("after").Op(":=").Id("m").Dot("Kind").Call(),
		jen.Qual(pkgRequire, "NotZero").Call(jen.Id("t"), jen.Id("after"), jen.Lit("run %d step %d: no state"), jen.Id("run"), jen.Id("i")),
		jen.Qual(pkgRequire, "False").Call(jen.Id("t"), jen.Id("transient").Index(jen.Id("after")), jen.Lit("run %d step %d: stopped in transient state %s"), jen.Id("run"), jen.Id("i"), jen.Id("after")),
		jen.If(jen.Id("terminal").Index(jen.Id("before").Dot("Kind").Call())).Block(
			jen.Qual(pkgRequire, "Equal").Call(jen.Id("t"), jen.Id("before").Dot("Kind").Call(), jen.Id("after"), jen.Lit("run %d step %d: left a terminal state"), jen.Id("run"), jen.Id("i"))),
		jen.If(jen.Err().Op("!=").Nil()).Block(
			jen.Qual(pkgRequire, "ErrorIs").Call(jen.Id("t"), jen.Err(), jen.Id("ErrRejected")),
			jen.Qual(pkgRequire, "Equal").Call(jen.Id("t"), jen.Id("before"), jen.Id("m").Dot("State").Call(), jen.Lit("run %d step %d: a rejected event changed the state"), jen.Id("run"), jen.Id("i")),
		),
	))
	body = append(body, jen.For(jen.Id("run").Op(":=").Lit(0), jen.Id("run").Op("<").Lit(200), jen.Id("run").Op("++")).Block(loop...))
	g.f.Comment("// TestRandomSequences sends random events with random guard results and checks,")
	g.f.Comment("// after every step, that the machine is in a state at rest, never leaves a")
	g.f.Comment("// terminal state, and that a rejected event changes nothing.")
	g.f.Func().Id("TestRandomSequences").Params(jen.Id("t").Op("*").Qual(pkgTesting, "T")).Block(body...)
}

// delays reports whether a timer's delay is computed by an effect, which
// Restore runs.
func (g *testGen) delays() bool {
	for _, t := range g.m.Timers {
		if t.DelayFunc != nil {
			return true
		}
	}
	return false
}

// wayTrace works out what way w does from a machine made by Restore, whose
// timers all run, numbered from 1 outermost first: the id of the timer
// that fires (for a TimerFired), the actions handed to the Handler and the
// effects run, in order.
func wayTrace(m *fsm.Machine, w *fsm.Way) *witness {
	n := &witness{way: w, timers: map[*fsm.Timer]int{}}
	for i, t := range timerChain(w.From) {
		n.counter = i + 1
		n.timers[t] = n.counter
	}
	n.simulate(m)
	return n
}
