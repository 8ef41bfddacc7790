package emit

import (
	"fmt"

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

// testGen emits the machine's generated tests.
type testGen struct {
	m *fsm.Machine
	f *jen.File
}

// TestFile returns the generated tests for m as a jennifer file: one case
// per rule, JSON round trips, and a random-sequence test of the invariants.
func TestFile(m *fsm.Machine) *jen.File {
	g := &testGen{m: m, f: newFile(m)}
	g.f.ImportName(pkgAssert, "assert")
	g.f.ImportName(pkgRequire, "require")
	g.f.ImportName(pkgRand, "rand")
	if len(m.Guards)+len(m.Effects) > 0 {
		g.genFake()
	}
	g.genRuleTests()
	g.genRoundTrips()
	g.genRandom()
	return g.f
}

func (g *testGen) hasBehavior() bool { return len(g.m.Guards)+len(g.m.Effects) > 0 }

// genFake emits a Behavior whose guards answer from a map and whose
// effects record their names:
//
//	type fakeBehavior struct { guards map[string]bool; ran []string }
//	func (f *fakeBehavior) CanRetry(*CallingLLM, *LLMError) bool { return f.guards["canRetry"] }
func (g *testGen) genFake() {
	f := g.f
	f.Comment("// fsmFakeBehavior is a Behavior whose guards return what a test sets and whose effects record that they ran.")
	f.Type().Id("fsmFakeBehavior").Struct(jen.Id("guards").Map(jen.String()).Bool(), jen.Id("ran").Index().String())
	f.Var().Id("_").Id("Behavior").Op("=").Parens(jen.Op("*").Id("fsmFakeBehavior")).Parens(jen.Nil())
	for _, fns := range [][]*fsm.Func{g.m.Guards, g.m.Effects} {
		for _, fn := range fns {
			if len(fn.Uses) == 0 {
				continue
			}
			var types []jen.Code
			for _, p := range params(fn) {
				types = append(types, p.typ)
			}
			recv := jen.Id("f").Op("*").Id("fsmFakeBehavior")
			if fn.Kind == fsm.Guard {
				f.Comment(fmt.Sprintf("// %s returns what the test set for the guard %s.", fn.GoName, fn.Name))
				f.Func().Params(recv).Id(fn.GoName).Params(types...).Bool().Block(
					jen.Return(jen.Id("f").Dot("guards").Index(jen.Lit(fn.Name))))
			} else {
				f.Comment(fmt.Sprintf("// %s records that the effect %s ran.", fn.GoName, fn.Name))
				f.Func().Params(recv).Id(fn.GoName).Params(types...).Block(
					jen.Id("f").Dot("ran").Op("=").Append(jen.Id("f").Dot("ran"), jen.Lit(fn.Name)))
			}
		}
	}
}

// ruleCase is one generated test case: an event sent in a state, with the
// guards set so that a chain of rules fires.
type ruleCase struct {
	name    string
	from    *fsm.State
	event   *fsm.Event
	guards  map[string]bool
	rules   []*fsm.Rule // the rules that fire, in order (more than one through transient states)
	effects []string
}

// cases lists one case per way through every cell: each rule of each cell,
// continued through every branch of the transient states it enters.
func (g *testGen) cases() []ruleCase {
	var out []ruleCase
	var follow func(c ruleCase, r *fsm.Rule, chain []*fsm.Rule)
	// pick sets the guards of chain so that r fires.
	pick := func(guards map[string]bool, chain []*fsm.Rule, r *fsm.Rule) map[string]bool {
		next := map[string]bool{}
		for k, v := range guards {
			next[k] = v
		}
		for _, other := range chain {
			if other.Guard == nil {
				continue
			}
			next[other.Guard.Name] = other == r
			if other == r {
				break
			}
		}
		return next
	}
	follow = func(c ruleCase, r *fsm.Rule, chain []*fsm.Rule) {
		c.guards = pick(c.guards, chain, r)
		c.rules = append(append([]*fsm.Rule(nil), c.rules...), r)
		if r.Effect != nil {
			c.effects = append(append([]string(nil), c.effects...), r.Effect.Name)
		}
		if r.Kind == fsm.Transition && r.To.Transient && r.To.Choice != nil {
			for _, next := range r.To.Choice.Rules {
				follow(c, next, r.To.Choice.Rules)
			}
			return
		}
		names := ""
		for i, fired := range c.rules {
			if i > 0 {
				names += ", then "
			}
			names += fsm.RuleLabel(fired)
		}
		c.name = names
		out = append(out, c)
	}
	for _, s := range g.m.States {
		for _, cell := range s.Cells {
			for _, r := range cell.Rules {
				follow(ruleCase{from: s, event: cell.Event, guards: map[string]bool{}}, r, cell.Rules)
			}
		}
	}
	return out
}

// newMachine returns the code that makes a machine in state `from`.
func (g *testGen) restore(behavior jen.Code, state jen.Code) jen.Code {
	args := []jen.Code{}
	if g.hasBehavior() {
		args = append(args, behavior)
	}
	return jen.Id("Restore").Call(append(args, state)...)
}

// genRuleTests emits a table-driven test with one case per way through
// each cell of the transition table:
//
//	func TestRules(t *testing.T) {
//		tests := []struct{ name string; from State; event Event; guards map[string]bool; ... }{...}
//		for _, tt := range tests { t.Run(tt.name, ...) }
//	}
func (g *testGen) genRuleTests() {
	var rows []jen.Code
	for _, c := range g.cases() {
		last := c.rules[len(c.rules)-1]
		d := jen.Dict{
			jen.Id("name"):  jen.Lit(c.name),
			jen.Id("from"):  jen.Id(c.from.GoName).Values(),
			jen.Id("event"): jen.Op("&").Id(c.event.GoName).Values(),
			jen.Id("kind"):  jen.Id([...]string{"RuleTransition", "RuleIgnore", "RuleReject"}[last.Kind]),
			jen.Id("to"):    jen.Id(last.To.KindName),
		}
		var rules []jen.Code
		for _, r := range c.rules {
			rules = append(rules, jen.Lit(r.Index))
		}
		d[jen.Id("rules")] = jen.Index().Int().Values(rules...)
		if len(c.guards) > 0 {
			gd := jen.Dict{}
			for k, v := range c.guards {
				gd[jen.Lit(k)] = jen.Lit(v)
			}
			d[jen.Id("guards")] = jen.Map(jen.String()).Bool().Values(gd)
		}
		if last.Action != nil {
			d[jen.Id("action")] = jen.Id(last.Action.KindName)
		}
		if len(c.effects) > 0 {
			var es []jen.Code
			for _, e := range c.effects {
				es = append(es, jen.Lit(e))
			}
			d[jen.Id("effects")] = jen.Index().String().Values(es...)
		}
		rows = append(rows, jen.Values(d))
	}
	behavior := jen.Null()
	check := []jen.Code{}
	if g.hasBehavior() {
		behavior = jen.Id("b").Op(":=").Op("&").Id("fsmFakeBehavior").Values(jen.Dict{jen.Id("guards"): jen.Id("tt").Dot("guards")})
		check = append(check, jen.Qual(pkgAssert, "Equal").Call(jen.Id("t"), jen.Id("tt").Dot("effects"), jen.Id("b").Dot("ran"), jen.Lit("effects run")))
	}
	g.f.Comment("// TestRules sends each event to each state with the guards set so that every rule of the")
	g.f.Comment("// table fires, and checks the rule, the resulting state, the action and the effects run.")
	g.f.Func().Id("TestRules").Params(jen.Id("t").Op("*").Qual(pkgTesting, "T")).Block(
		jen.Id("tests").Op(":=").Index().Struct(
			jen.Id("name").String(),
			jen.Id("from").Id("State"),
			jen.Id("event").Id("Event"),
			jen.Id("guards").Map(jen.String()).Bool(),
			jen.Id("rules").Index().Int(),
			jen.Id("kind").Id("RuleKind"),
			jen.Id("to").Id("StateKind"),
			jen.Id("action").Id("ActionKind"),
			jen.Id("effects").Index().String(),
		).ValuesFunc(func(grp *jen.Group) {
			for _, r := range rows {
				grp.Line().Add(r)
			}
			grp.Line()
		}),
		jen.For(jen.List(jen.Id("_"), jen.Id("tt")).Op(":=").Range().Id("tests")).Block(
			jen.Id("t").Dot("Run").Call(jen.Id("tt").Dot("name"), jen.Func().Params(jen.Id("t").Op("*").Qual(pkgTesting, "T")).BlockFunc(func(grp *jen.Group) {
				grp.Add(behavior)
				grp.List(jen.Id("m"), jen.Err()).Op(":=").Add(g.restore(jen.Id("b"), jen.Id("tt").Dot("from")))
				grp.Qual(pkgRequire, "NoError").Call(jen.Id("t"), jen.Err())
				grp.Var().Id("fired").Index().Int()
				grp.Id("m").Dot("SetObserver").Call(jen.Func().Params(jen.Id("s").Id("Step")).Block(
					jen.Id("fired").Op("=").Append(jen.Id("fired"), jen.Id("s").Dot("Rule"))))
				grp.List(jen.Id("act"), jen.Err()).Op(":=").Id("m").Dot("HandleEvent").Call(jen.Id("tt").Dot("event"))
				grp.Qual(pkgAssert, "Equal").Call(jen.Id("t"), jen.Id("tt").Dot("rules"), jen.Id("fired"), jen.Lit("rules fired"))
				grp.Qual(pkgAssert, "Equal").Call(jen.Id("t"), jen.Id("tt").Dot("to"), jen.Id("m").Dot("Kind").Call(), jen.Lit("state after the event"))
				grp.Switch(jen.Id("tt").Dot("kind")).Block(
					jen.Case(jen.Id("RuleReject")).Block(
						jen.Qual(pkgAssert, "ErrorIs").Call(jen.Id("t"), jen.Err(), jen.Id("ErrRejected")),
						jen.Qual(pkgAssert, "Nil").Call(jen.Id("t"), jen.Id("act")),
						jen.Qual(pkgAssert, "Equal").Call(jen.Id("t"), jen.Id("tt").Dot("from"), jen.Id("m").Dot("State").Call(), jen.Lit("a rejected event changes nothing"))),
					jen.Case(jen.Id("RuleIgnore")).Block(
						jen.Qual(pkgAssert, "NoError").Call(jen.Id("t"), jen.Err()),
						jen.Qual(pkgAssert, "Nil").Call(jen.Id("t"), jen.Id("act")),
						jen.Qual(pkgAssert, "Equal").Call(jen.Id("t"), jen.Id("tt").Dot("from"), jen.Id("m").Dot("State").Call(), jen.Lit("an ignored event changes nothing"))),
					jen.Default().Block(
						jen.Qual(pkgRequire, "NoError").Call(jen.Id("t"), jen.Err()),
						jen.If(jen.Id("tt").Dot("action").Op("==").Lit(0)).Block(
							jen.Qual(pkgAssert, "Nil").Call(jen.Id("t"), jen.Id("act"))).
							Else().Block(
							jen.Qual(pkgRequire, "NotNil").Call(jen.Id("t"), jen.Id("act")),
							jen.Qual(pkgAssert, "Equal").Call(jen.Id("t"), jen.Id("tt").Dot("action"), jen.Id("act").Dot("Kind").Call()))),
				)
				for _, c := range check {
					grp.Add(c)
				}
			})),
		),
	)
}

// genRoundTrips emits JSON round-trip tests for every state, event and
// action, with sample values in the fields of predeclared types.
func (g *testGen) genRoundTrips() {
	sets := []struct {
		name, what string
		decls      []*fsm.Decl
		pointer    bool
	}{{name: "State", what: "state"}, {name: "Event", what: "event", pointer: true}, {name: "Action", what: "action", pointer: true}}
	for _, s := range g.m.States {
		sets[0].decls = append(sets[0].decls, &s.Decl)
	}
	for _, e := range g.m.Events {
		sets[1].decls = append(sets[1].decls, &e.Decl)
	}
	for _, a := range g.m.Actions {
		sets[2].decls = append(sets[2].decls, &a.Decl)
	}
	for _, set := range sets {
		var vals []jen.Code
		for _, d := range set.decls {
			fields := jen.Dict{}
			for i, fd := range d.Fields {
				if v := sampleValue(fd.Type, i); v != nil {
					fields[jen.Id(fd.GoName)] = v
				}
			}
			v := jen.Id(d.GoName).Values(fields)
			if set.pointer {
				v = jen.Op("&").Add(v)
			}
			vals = append(vals, v)
		}
		g.f.Comment(fmt.Sprintf("// Test%sJSON checks that every %s survives a JSON round trip with its kind.", set.name, set.what))
		g.f.Func().Id("Test"+set.name+"JSON").Params(jen.Id("t").Op("*").Qual(pkgTesting, "T")).Block(
			jen.For(jen.List(jen.Id("_"), jen.Id("v")).Op(":=").Range().Index().Id(set.name).ValuesFunc(func(grp *jen.Group) {
				for _, v := range vals {
					grp.Line().Add(v)
				}
				grp.Line()
			})).Block(
				jen.Id("t").Dot("Run").Call(jen.Id("v").Dot("Kind").Call().Dot("String").Call(), jen.Func().Params(jen.Id("t").Op("*").Qual(pkgTesting, "T")).Block(
					jen.List(jen.Id("data"), jen.Err()).Op(":=").Qual(pkgJSON, "Marshal").Call(jen.Id("v")),
					jen.Qual(pkgRequire, "NoError").Call(jen.Id("t"), jen.Err()),
					jen.List(jen.Id("got"), jen.Err()).Op(":=").Id("Unmarshal"+set.name).Call(jen.Id("data")),
					jen.Qual(pkgRequire, "NoError").Call(jen.Id("t"), jen.Err()),
					jen.Qual(pkgAssert, "Equal").Call(jen.Id("t"), jen.Id("v"), jen.Id("got")),
				)),
			),
			jen.List(jen.Id("_"), jen.Err()).Op(":=").Id("Unmarshal"+set.name).Call(jen.Index().Byte().Call(jen.Lit(`{"kind":"no_such_kind"}`))),
			jen.Qual(pkgAssert, "Error").Call(jen.Id("t"), jen.Err(), jen.Lit("an unknown kind is an error")),
		)
	}
}

// genRandom emits a test that sends random events with random guard
// results and checks the machine's invariants after every step.
func (g *testGen) genRandom() {
	m := g.m
	var events, terminal, transient []jen.Code
	for _, e := range m.Events {
		events = append(events, jen.Op("&").Id(e.GoName).Values())
	}
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
		if len(fn.Uses) > 0 {
			guards = append(guards, jen.Lit(fn.Name))
		}
	}
	body := []jen.Code{
		jen.Id("r").Op(":=").Qual(pkgRand, "New").Call(jen.Qual(pkgRand, "NewPCG").Call(jen.Lit(1), jen.Lit(2))),
		jen.Id("events").Op(":=").Index().Id("Event").Values(events...),
		jen.Id("terminal").Op(":=").Map(jen.Id("StateKind")).Bool().Values(terminal...),
		jen.Id("transient").Op(":=").Map(jen.Id("StateKind")).Bool().Values(transient...),
	}
	newM := jen.Id("m").Op(":=").Id("New").Call(jen.Id(m.Initial.GoName).Values())
	setGuards := jen.Null()
	if g.hasBehavior() {
		body = append(body, jen.Id("guards").Op(":=").Index().String().Values(guards...))
		newM = jen.Id("b").Op(":=").Op("&").Id("fsmFakeBehavior").Values(jen.Dict{jen.Id("guards"): jen.Map(jen.String()).Bool().Values()}).Line().
			Id("m").Op(":=").Id("New").Call(jen.Id("b"), jen.Id(m.Initial.GoName).Values())
		setGuards = jen.For(jen.List(jen.Id("_"), jen.Id("name")).Op(":=").Range().Id("guards")).Block(
			jen.Id("b").Dot("guards").Index(jen.Id("name")).Op("=").Id("r").Dot("IntN").Call(jen.Lit(2)).Op("==").Lit(0))
	}
	body = append(body, jen.For(jen.Id("run").Op(":=").Lit(0), jen.Id("run").Op("<").Lit(200), jen.Id("run").Op("++")).Block(
		newM,
		jen.For(jen.Id("i").Op(":=").Lit(0), jen.Id("i").Op("<").Lit(50), jen.Id("i").Op("++")).Block(
			setGuards,
			jen.Id("before").Op(":=").Id("m").Dot("State").Call(),
			jen.Id("ev").Op(":=").Id("events").Index(jen.Id("r").Dot("IntN").Call(jen.Len(jen.Id("events")))),
			jen.List(jen.Id("act"), jen.Err()).Op(":=").Id("m").Dot("HandleEvent").Call(jen.Id("ev")),
			jen.Id("after").Op(":=").Id("m").Dot("Kind").Call(),
			jen.Qual(pkgRequire, "NotZero").Call(jen.Id("t"), jen.Id("after"), jen.Lit("run %d step %d: no state"), jen.Id("run"), jen.Id("i")),
			jen.Qual(pkgRequire, "False").Call(jen.Id("t"), jen.Id("transient").Index(jen.Id("after")), jen.Lit("run %d step %d: stopped in transient state %s"), jen.Id("run"), jen.Id("i"), jen.Id("after")),
			jen.If(jen.Id("terminal").Index(jen.Id("before").Dot("Kind").Call())).Block(
				jen.Qual(pkgRequire, "Equal").Call(jen.Id("t"), jen.Id("before").Dot("Kind").Call(), jen.Id("after"), jen.Lit("run %d step %d: left a terminal state"), jen.Id("run"), jen.Id("i"))),
			jen.If(jen.Err().Op("!=").Nil()).Block(
				jen.Qual(pkgRequire, "ErrorIs").Call(jen.Id("t"), jen.Err(), jen.Id("ErrRejected")),
				jen.Qual(pkgRequire, "Nil").Call(jen.Id("t"), jen.Id("act")),
				jen.Qual(pkgRequire, "Equal").Call(jen.Id("t"), jen.Id("before"), jen.Id("m").Dot("State").Call(), jen.Lit("run %d step %d: a rejected event changed the state"), jen.Id("run"), jen.Id("i")),
			),
		),
	))
	g.f.Comment("// TestRandomSequences sends random events with random guard results and checks, after every")
	g.f.Comment("// step, that the machine is in a state at rest, never leaves a terminal state, and that a")
	g.f.Comment("// rejected event changes nothing.")
	g.f.Func().Id("TestRandomSequences").Params(jen.Id("t").Op("*").Qual(pkgTesting, "T")).Block(body...)
}
