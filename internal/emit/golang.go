package emit

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/fsm"
)

// Import paths the generated code uses, in one place.
const (
	pkgErrors  = "errors"
	pkgFmt     = "fmt"
	pkgJSON    = "encoding/json"
	pkgSlices  = "slices"
	pkgStrconv = "strconv"
)

// goGen emits the machine's Go package.
type goGen struct {
	m    *fsm.Machine
	f    *jen.File
	kept map[*fsm.State][]*fsm.Field        // see keptFields
	set  map[*fsm.State]map[*fsm.Field]bool // see entrySets
	// via is set while emitting the copy of the rules that calls a
	// Behavior other than the named type (see genHandleEvent).
	via bool
}

// GoFile returns the generated package for m as a jennifer file.
func GoFile(m *fsm.Machine) *jen.File {
	g := &goGen{m: m, f: newFile(m), kept: keptFields(m), set: entrySets(m)}
	g.genPackageDoc()
	g.genKinds()
	g.genInterfaces()
	g.genDecls()
	g.genBehavior()
	g.genRules()
	g.genErrors()
	g.genMachine()
	g.genHandleEvent()
	g.genChoices()
	g.genSteps()
	g.genJSON()
	return g.f
}

func (g *goGen) hasBehavior() bool { return len(g.m.Guards)+len(g.m.Effects) > 0 }

// direct reports whether the spec names a behaviour type of the output
// package (the behavior key) for the machine to call directly.
func (g *goGen) direct() bool { return g.m.Behavior != "" && g.hasBehavior() }

// carries counts, for each state, the transitions into it, and for each
// field, the transitions into its state that carry a value over into it.
// keptFields and entrySets read the two counts.
func carries(m *fsm.Machine) (entries map[*fsm.State]int, carried map[*fsm.Field]int) {
	entries, carried = map[*fsm.State]int{}, map[*fsm.Field]int{}
	for _, r := range m.Rules {
		if r.Stays() {
			continue
		}
		entries[r.To]++
		for _, a := range r.ToInit {
			carried[a.Field]++
		}
	}
	return entries, carried
}

// keptFields returns, for each state, the slice fields whose storage the
// machine keeps from one visit of the state to the next: those that no
// rule fills by carrying a value over, so that only effects fill them,
// with storage they own. When the machine leaves the state it truncates
// them instead of dropping them, and an effect that enters the state again
// finds them empty, with their capacity, and can append without
// allocating: a machine that goes round the same states reaches a steady
// state in which its transitions allocate nothing.
func keptFields(m *fsm.Machine) map[*fsm.State][]*fsm.Field {
	_, carried := carries(m)
	kept := map[*fsm.State][]*fsm.Field{}
	for _, s := range m.States {
		for _, f := range s.Fields {
			if strings.HasPrefix(strings.TrimSpace(f.Type), "[]") && carried[f] == 0 {
				kept[s] = append(kept[s], f)
			}
		}
	}
	return kept
}

// entrySets returns, for each state, the fields that every transition into
// it sets by carrying a value over: the machine need not zero them when it
// leaves the state, since the next transition into it overwrites them
// before its effect runs. A state that no transition enters (the initial
// state, left for good) has none: leaving it zeroes everything, so that
// the machine keeps no reference to its data.
func entrySets(m *fsm.Machine) map[*fsm.State]map[*fsm.Field]bool {
	entries, carried := carries(m)
	set := map[*fsm.State]map[*fsm.Field]bool{}
	for _, s := range m.States {
		for _, f := range s.Fields {
			if n := entries[s]; n > 0 && carried[f] == n {
				if set[s] == nil {
					set[s] = map[*fsm.Field]bool{}
				}
				set[s][f] = true
			}
		}
	}
	return set
}

// clearSlot returns the statements that clear the slot of state s when the
// machine leaves it, so that the next transition into s finds zero in every
// field it does not carry over. Kept slices are truncated (their storage
// stays for the next visit), fields that every transition into s carries
// over are left as they are (see entrySets), the others are zeroed:
//
//	m.st.S.Executions = m.st.S.Executions[:0]
//	m.st.S.Retries = 0
//
// A slot with none to keep or leave is cleared whole: m.st.S = S{}.
func (g *goGen) clearSlot(s *fsm.State) []jen.Code {
	slot := jen.Id("m").Dot("st").Dot(s.GoName)
	kept := map[*fsm.Field]bool{}
	for _, f := range g.kept[s] {
		kept[f] = true
	}
	if len(kept) == 0 && len(g.set[s]) == 0 {
		return []jen.Code{slot.Clone().Op("=").Id(s.GoName).Values()}
	}
	var out []jen.Code
	for _, f := range s.Fields {
		field := slot.Clone().Dot(f.GoName)
		switch {
		case kept[f]:
			out = append(out, field.Clone().Op("=").Add(field.Clone()).Index(jen.Empty(), jen.Lit(0)))
		case !g.set[s][f]:
			out = append(out, field.Clone().Op("=").Add(zeroValue(g.m, f.Type)))
		}
	}
	return out
}

// genPackageDoc emits the package comment from the spec's doc.
func (g *goGen) genPackageDoc() {
	m := g.m
	lines := docLines(fmt.Sprintf("Package %s implements the %s state machine of %s.", m.Package, m.Name, strings.Join(docLines(m.SpecFile), " ")))
	if m.Doc != "" {
		lines = append(lines, "")
		lines = append(lines, docLines(m.Doc)...)
	}
	lines = append(lines, "",
		"Feed events to a Machine with HandleEvent and perform the actions it returns.",
		"The machine is synchronous and deterministic: it does no I/O, and the same",
		"events always give the same actions, so an event log replays exactly.")
	for _, l := range lines {
		if l == "" {
			g.f.PackageComment("//")
		} else {
			g.f.PackageComment("// " + l)
		}
	}
}

// kindSet describes one of the three kind enums.
type kindSet struct {
	typ, what string
	decls     []*fsm.Decl
}

func (g *goGen) kindSets() []kindSet {
	var ss, es, as []*fsm.Decl
	for _, s := range g.m.States {
		ss = append(ss, &s.Decl)
	}
	for _, e := range g.m.Events {
		es = append(es, &e.Decl)
	}
	for _, a := range g.m.Actions {
		as = append(as, &a.Decl)
	}
	return []kindSet{{"StateKind", "state", ss}, {"EventKind", "event", es}, {"ActionKind", "action", as}}
}

// kindType returns the narrowest unsigned type that numbers n kinds from
// 1 (0 is no kind): uint8 up to 255 of them, then uint16, then uint32.
func kindType(n int) *jen.Statement {
	switch {
	case n <= 1<<8-1:
		return jen.Uint8()
	case n <= 1<<16-1:
		return jen.Uint16()
	}
	return jen.Uint32()
}

// genKinds emits, for states, events and actions:
//
//	type StateKind uint8 // or wider, for more than 255 states
//	const ( StateA StateKind = iota + 1; ... )
//	func (k StateKind) String() string { switch k { case StateA: return "A" ... } }
func (g *goGen) genKinds() {
	for _, ks := range g.kindSets() {
		g.f.Add(comment(ks.typ+" identifies ", fmt.Sprintf("a %s of the %s machine. The zero value is no %s.", ks.what, g.m.Name, ks.what)))
		g.f.Type().Id(ks.typ).Add(kindType(len(ks.decls)))
		consts := make([]jen.Code, 0, len(ks.decls))
		cases := make([]jen.Code, 0, len(ks.decls))
		for i, d := range ks.decls {
			c := jen.Add(comment(d.KindName+" identifies ", fmt.Sprintf("the %s %s.", ks.what, d.Name))).Line().Id(d.KindName)
			if i == 0 {
				c.Id(ks.typ).Op("=").Iota().Op("+").Lit(1)
			}
			consts = append(consts, c)
			cases = append(cases, jen.Case(jen.Id(d.KindName)).Block(jen.Return(jen.Lit(d.Name))))
		}
		g.f.Comment(fmt.Sprintf("// The %ss of the %s machine.", ks.what, g.m.Name))
		g.f.Const().Defs(consts...)
		g.f.Comment(fmt.Sprintf("// String returns the %s's name as the spec writes it.", ks.what))
		g.f.Func().Params(jen.Id("k").Id(ks.typ)).Id("String").Params().String().Block(
			jen.Switch(jen.Id("k")).Block(cases...),
			jen.Return(jen.Lit(ks.typ+"(").Op("+").Qual(pkgStrconv, "Itoa").Call(jen.Int().Call(jen.Id("k"))).Op("+").Lit(")")),
		)
	}
}

// genInterfaces emits the sealed State, Event and Action interfaces.
func (g *goGen) genInterfaces() {
	list := func(ds []*fsm.Decl, ptr bool) string {
		names := make([]string, len(ds))
		for i, d := range ds {
			names[i] = d.GoName
			if ptr {
				names[i] = "*" + d.GoName
			}
		}
		return strings.Join(names, ", ")
	}
	sets := g.kindSets()
	for i, it := range []struct{ name, marker, doc string }{
		{"State", "isState", "State is a state of the %s machine: one of %s."},
		{"Event", "isEvent", "Event is an event the %s machine handles: one of %s. Events are passed by pointer: the machine reads them during HandleEvent and keeps no pointer to them, though it may keep what their fields hold (a slice, a string)."},
		{"Action", "isAction", "Action is an action the %s machine returns: one of %s. Actions are pointers into the machine (see Machine.HandleEvent)."},
	} {
		g.f.Add(comment("", fmt.Sprintf(it.doc, g.m.Name, list(sets[i].decls, i > 0))))
		g.f.Type().Id(it.name).Interface(
			jen.Comment(fmt.Sprintf("// Kind returns which %s this is.", sets[i].what)),
			jen.Id("Kind").Params().Id(sets[i].typ),
			jen.Id(it.marker).Params(),
		)
	}
}

// genDecls emits one struct per state, event and action, with its Kind
// method, e.g.
//
//	// CallingLLM is the state CallingLlm: <doc>
//	type CallingLLM struct { Retries int `json:"retries"` }
//	// Kind returns StateCallingLLM.
//	func (CallingLLM) Kind() StateKind { return StateCallingLLM }
//	func (CallingLLM) isState() {}
//
// Events and actions implement their interface with pointer receivers: a
// machine takes events and returns actions by pointer, and the compiler
// then refuses a value where a pointer is meant.
func (g *goGen) genDecls() {
	for i, ks := range g.kindSets() {
		marker := [...]string{"isState", "isEvent", "isAction"}[i]
		for _, d := range ks.decls {
			fields := make([]jen.Code, 0, len(d.Fields))
			for _, fd := range d.Fields {
				c := jen.Null()
				if fd.Doc != "" {
					c.Add(comment(fd.GoName+" ", fd.Doc)).Line()
				}
				fields = append(fields, c.Id(fd.GoName).Add(typeCode(g.m, fd.Type)).Tag(map[string]string{"json": fd.JSONName}))
			}
			lead := fmt.Sprintf("%s is the %s %s", d.GoName, ks.what, d.Name)
			if d.Doc != "" {
				lead += ": "
			}
			g.f.Add(comment(lead, d.Doc))
			g.f.Type().Id(d.GoName).Struct(fields...)
			recv := jen.Id(d.GoName)
			if ks.what != "state" {
				recv = jen.Op("*").Id(d.GoName)
			}
			g.f.Comment(fmt.Sprintf("// Kind returns %s.", d.KindName))
			g.f.Func().Params(recv.Clone()).Id("Kind").Params().Id(ks.typ).Block(jen.Return(jen.Id(d.KindName)))
			g.f.Func().Params(recv.Clone()).Id(marker).Params().Block()
		}
	}
}

// param is one parameter of a guard or effect: its name and its type.
type param struct {
	name string
	typ  *jen.Statement
}

// params returns the parameters of a guard or effect of m, in order:
// from (or s, for an effect on a row that stays), ev (the caller's event,
// by pointer), to and act. The Behavior interface and the tests' fake take
// them from here.
func params(fn *fsm.Func) []param {
	s := fn.Sig
	var ps []param
	if s.From != nil {
		name := "from"
		if s.Stays {
			name = "s"
		}
		ps = append(ps, param{name, jen.Op("*").Id(s.From.GoName)})
	}
	if s.Event != nil {
		ps = append(ps, param{"ev", jen.Op("*").Id(s.Event.GoName)})
	}
	if s.To != nil {
		ps = append(ps, param{"to", jen.Op("*").Id(s.To.GoName)})
	}
	if s.Act != nil {
		ps = append(ps, param{"act", jen.Op("*").Id(s.Act.GoName)})
	}
	return ps
}

// sigParams returns the named parameters of a guard or effect.
func (g *goGen) sigParams(fn *fsm.Func) []jen.Code {
	var ps []jen.Code
	for _, p := range params(fn) {
		ps = append(ps, jen.Id(p.name).Add(p.typ))
	}
	return ps
}

// genBehavior emits the interface the hand-written guards and effects
// satisfy:
//
//	type Behavior interface {
//		// CanRetry reports ... Guard of CallingLlm × LlmError (agent.yaml:88:9).
//		CanRetry(from *CallingLLM, ev *LLMError) bool
//		...
//	}
func (g *goGen) genBehavior() {
	if !g.hasBehavior() {
		return
	}
	var methods []jen.Code
	for _, fns := range [][]*fsm.Func{g.m.Guards, g.m.Effects} {
		for _, fn := range fns {
			if len(fn.Uses) == 0 {
				continue
			}
			role := "Effect"
			if fn.Kind == fsm.Guard {
				role = "Guard"
			}
			var where []string
			for _, r := range fn.Uses {
				where = append(where, fmt.Sprintf("%s (%s)", fsm.RuleLabel(r), posOf(r)))
			}
			doc := fn.Doc
			if doc == "" {
				doc = "is the " + strings.ToLower(role) + " " + fn.Name + "."
			}
			c := jen.Add(comment(fn.GoName+" ", doc)).Line().
				Comment("//").Line().
				Add(comment("", role+" of "+strings.Join(where, "; ")+".")).Line()
			if fn.Kind == fsm.Effect && fn.Sig.Stays && fn.Sig.From != nil {
				c.Comment("// It updates s in place: the machine stays in its state.").Line()
			}
			c.Id(fn.GoName).Params(g.sigParams(fn)...)
			if fn.Kind == fsm.Guard {
				c.Bool()
			}
			methods = append(methods, c)
		}
	}
	g.f.Add(comment("", fmt.Sprintf("Behavior holds the guards and effects of the %s machine, written by hand. "+
		"Guards decide between the branches of a transition; effects compute the target state's and the action's fields "+
		"that the machine cannot carry over from the source state and the event. "+
		"All must be pure: no I/O, clocks or randomness, and they must not keep the pointers they are given, "+
		"so that the machine stays deterministic. A guard must not modify its arguments, and no method may "+
		"modify the event, which is the caller's.", g.m.Name)))
	if t := g.m.Behavior; g.direct() {
		g.f.Comment("//")
		g.f.Add(comment("", fmt.Sprintf("Given a *%s, the behaviour written in this package, the machine calls its methods "+
			"directly, so that the compiler can inline them; any other Behavior, such as a test's fake, is called "+
			"through this interface.", t)))
	}
	if kept := g.keptList(); kept != "" {
		g.f.Comment("//")
		g.f.Add(comment("", "The slice fields that no transition carries over ("+kept+") keep their storage "+
			"when the machine leaves their state: an effect that enters the state again finds them empty, with "+
			"that storage, and may append to them to reuse it, so that transitions need not allocate. Such a "+
			"field must only hold storage the machine owns: fill it by appending, or with a slice the effect "+
			"made, never with one that an event, another state or the effect's own data holds."))
	}
	g.f.Type().Id("Behavior").Interface(methods...)
}

// keptList names the kept fields, e.g. "ExecutingTools.Executions", for docs.
func (g *goGen) keptList() string {
	var names []string
	for _, s := range g.m.States {
		for _, f := range g.kept[s] {
			names = append(names, s.GoName+"."+f.GoName)
		}
	}
	return strings.Join(names, ", ")
}

// posOf returns a rule's spec position without directories, for comments.
func posOf(r *fsm.Rule) string {
	p := r.Pos
	p.File = r.From.Pos.File
	s := p.String()
	if i := strings.LastIndexAny(s, `/\`); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// genRules emits the transition table as data:
//
//	type RuleKind uint8; const ( RuleTransition RuleKind = iota; ... )
//	type Rule struct { From StateKind; Event EventKind; ... }
//	var rules = [...]Rule{ {From: StateA, Event: EventX, ...}, ... }
//	func Rules() []Rule { return slices.Clone(rules[:]) }
func (g *goGen) genRules() {
	f := g.f
	f.Comment("// RuleKind says what a rule does with its event.")
	f.Type().Id("RuleKind").Uint8()
	f.Comment("// The kinds of rules.")
	f.Const().Defs(
		jen.Comment("// RuleTransition moves to a state (or stays) and emits the rule's action, if any."),
		jen.Id("RuleTransition").Id("RuleKind").Op("=").Iota(),
		jen.Comment("// RuleIgnore drops the event: nothing changes and HandleEvent returns no action."),
		jen.Id("RuleIgnore"),
		jen.Comment("// RuleReject refuses the event: nothing changes and HandleEvent returns a *RejectedError."),
		jen.Id("RuleReject"),
	)
	f.Comment("// String returns \"transition\", \"ignore\" or \"reject\".")
	f.Func().Params(jen.Id("k").Id("RuleKind")).Id("String").Params().String().Block(
		jen.Switch(jen.Id("k")).Block(
			jen.Case(jen.Id("RuleTransition")).Block(jen.Return(jen.Lit("transition"))),
			jen.Case(jen.Id("RuleIgnore")).Block(jen.Return(jen.Lit("ignore"))),
			jen.Case(jen.Id("RuleReject")).Block(jen.Return(jen.Lit("reject"))),
		),
		jen.Return(jen.Lit("RuleKind(").Op("+").Qual(pkgStrconv, "Itoa").Call(jen.Int().Call(jen.Id("k"))).Op("+").Lit(")")),
	)
	f.Add(comment("", fmt.Sprintf("Rule is one row of the %s transition table.", g.m.Name)))
	f.Type().Id("Rule").Struct(
		jen.Comment("// Kind says what the rule does."), jen.Id("Kind").Id("RuleKind"),
		jen.Comment("// From is the state the rule applies in."), jen.Id("From").Id("StateKind"),
		jen.Comment("// Event is the event the rule handles; zero for an eventless rule of a transient state."), jen.Id("Event").Id("EventKind"),
		jen.Comment("// Guard names the guard that must hold, \"else\" on a last branch, or \"\" when unguarded."), jen.Id("Guard").String(),
		jen.Comment("// To is the state after the rule; From when it stays."), jen.Id("To").Id("StateKind"),
		jen.Comment("// Effect names the effect that runs, or \"\"."), jen.Id("Effect").String(),
		jen.Comment("// Action is the action emitted; zero for none."), jen.Id("Action").Id("ActionKind"),
		jen.Comment("// Reason says why a reject rule refuses the event."), jen.Id("Reason").String(),
		jen.Comment("// Pos is where the spec writes the rule, as file:line:col."), jen.Id("Pos").String(),
	)
	var rows []jen.Code
	for _, r := range g.m.Rules {
		d := jen.Dict{jen.Id("From"): jen.Id(r.From.KindName), jen.Id("To"): jen.Id(r.To.KindName), jen.Id("Pos"): jen.Lit(posOf(r))}
		d[jen.Id("Kind")] = jen.Id([...]string{"RuleTransition", "RuleIgnore", "RuleReject"}[r.Kind])
		if r.Event != nil {
			d[jen.Id("Event")] = jen.Id(r.Event.KindName)
		}
		switch {
		case r.Guard != nil:
			d[jen.Id("Guard")] = jen.Lit(r.Guard.Name)
		case r.Else:
			d[jen.Id("Guard")] = jen.Lit("else")
		}
		if r.Effect != nil {
			d[jen.Id("Effect")] = jen.Lit(r.Effect.Name)
		}
		if r.Action != nil {
			d[jen.Id("Action")] = jen.Id(r.Action.KindName)
		}
		if r.Kind == fsm.Reject {
			d[jen.Id("Reason")] = jen.Lit(r.Reason)
		}
		rows = append(rows, jen.Values(d))
	}
	f.Comment("// fsmRules is the transition table; a rule's index is its number in Step.Rule.")
	f.Var().Id("fsmRules").Op("=").Index(jen.Op("...")).Id("Rule").ValuesFunc(func(grp *jen.Group) {
		for _, r := range rows {
			grp.Line().Add(r)
		}
		grp.Line()
	})
	f.Comment("// Rules returns the transition table: every row of the spec, wildcards and ignore and")
	f.Comment("// reject lists expanded, state by state in spec order. Step.Rule indexes it.")
	f.Func().Id("Rules").Params().Index().Id("Rule").Block(jen.Return(jen.Qual(pkgSlices, "Clone").Call(jen.Id("fsmRules").Index(jen.Op(":")))))
}

// genErrors emits ErrRejected and RejectedError.
func (g *goGen) genErrors() {
	f, pkg := g.f, g.m.Package
	f.Comment("// ErrRejected is wrapped by every *RejectedError, for errors.Is.")
	f.Var().Id("ErrRejected").Op("=").Qual(pkgErrors, "New").Call(jen.Lit("event rejected"))
	f.Comment("// RejectedError reports that the current state refused an event; the machine is unchanged.")
	f.Type().Id("RejectedError").Struct(
		jen.Comment("// State is the state that refused the event."), jen.Id("State").Id("StateKind"),
		jen.Comment("// Event is the refused event's kind."), jen.Id("Event").Id("EventKind"),
		jen.Comment("// Reason says why, as the spec gives it."), jen.Id("Reason").String(),
	)
	f.Comment("// Error returns \"" + pkg + ": STATE rejects EVENT: REASON\".")
	f.Func().Params(jen.Id("e").Op("*").Id("RejectedError")).Id("Error").Params().String().Block(
		jen.Return(jen.Qual(pkgFmt, "Sprintf").Call(jen.Lit(pkg+": %s rejects %s: %s"), jen.Id("e").Dot("State"), jen.Id("e").Dot("Event"), jen.Id("e").Dot("Reason"))))
	f.Comment("// Unwrap returns ErrRejected.")
	f.Func().Params(jen.Op("*").Id("RejectedError")).Id("Unwrap").Params().Error().Block(jen.Return(jen.Id("ErrRejected")))
}

// genMachine emits the Machine type, its storage, and its constructors and
// accessors.
//
//	type Machine struct { b Behavior; obs Observer; kind StateKind; st states; act actions }
//	func New(b Behavior, initial A) *Machine
//	func Restore(b Behavior, s State) (*Machine, error)
//	func (m *Machine) State() State
func (g *goGen) genMachine() {
	f, m := g.f, g.m
	slots := func(typ, doc string, ds []*fsm.Decl) {
		var fields []jen.Code
		for _, d := range ds {
			fields = append(fields, jen.Id(d.GoName).Id(d.GoName))
		}
		f.Comment(doc)
		f.Type().Id(typ).Struct(fields...)
	}
	sets := g.kindSets()
	var but []string
	if g.keptList() != "" {
		but = append(but, "the storage of kept slices (see Behavior), which are empty")
	}
	if len(g.set) > 0 {
		but = append(but, "the fields that every transition into their state carries over, which keep their last value until the next such transition overwrites it")
	}
	statesDoc := "// fsmStates stores the current state's data in the field of its kind; the others are zero"
	if len(but) > 0 {
		statesDoc += ", but for " + strings.Join(but, ", and for ")
	}
	statesDoc += "."
	slots("fsmStates", statesDoc, sets[0].decls)
	slots("fsmActions", "// fsmActions stores the last action of each kind; HandleEvent returns pointers to them.", sets[2].decls)

	f.Add(comment("", fmt.Sprintf("Machine runs the %s state machine. Create it with New or Restore. It is not safe for "+
		"concurrent use: one goroutine owns it and feeds it one event at a time.", m.Name)))
	fields := []jen.Code{}
	if g.hasBehavior() {
		fields = append(fields, jen.Id("b").Id("Behavior"))
	}
	if g.direct() {
		fields = append(fields, jen.Comment("// direct is b when it is a *"+m.Behavior+": its methods are called without the interface."),
			jen.Id("direct").Op("*").Id(m.Behavior))
	}
	fields = append(fields, jen.Id("obs").Id("Observer"), jen.Id("kind").Id("StateKind"), jen.Id("st").Id("fsmStates"), jen.Id("act").Id("fsmActions"))
	f.Type().Id("Machine").Struct(fields...)

	var params, init []jen.Code
	if g.hasBehavior() {
		params = append(params, jen.Id("b").Id("Behavior"))
		init = append(init, jen.Id("b").Op(":").Id("b"))
	}
	ini := m.Initial
	f.Add(comment("", fmt.Sprintf("New returns a machine in the initial state %s with the given data.", ini.Name)))
	var setDirect []jen.Code
	if g.direct() {
		setDirect = append(setDirect, jen.List(jen.Id("m").Dot("direct"), jen.Id("_")).Op("=").Id("b").Assert(jen.Op("*").Id(m.Behavior)))
	}
	f.Func().Id("New").Params(append(params, jen.Id("initial").Id(ini.GoName))...).Op("*").Id("Machine").Block(
		append(append([]jen.Code{
			jen.Id("m").Op(":=").Op("&").Id("Machine").Values(append(init, jen.Id("kind").Op(":").Id(ini.KindName))...)},
			setDirect...),
			jen.Id("m").Dot("st").Dot(ini.GoName).Op("=").Id("initial"),
			jen.Return(jen.Id("m")),
		)...,
	)

	var cases []jen.Code
	for _, s := range m.States {
		if s.Transient {
			cases = append(cases, jen.Case(jen.Id(s.GoName)).Block(jen.Return(jen.Nil(), jen.Qual(pkgErrors, "New").Call(
				jen.Lit(fmt.Sprintf("%s: cannot restore the transient state %s: it is never at rest", m.Package, s.Name))))))
			continue
		}
		cases = append(cases, jen.Case(jen.Id(s.GoName)).Block(
			jen.List(jen.Id("m").Dot("kind"), jen.Id("m").Dot("st").Dot(s.GoName)).Op("=").List(jen.Id(s.KindName), jen.Id("s"))))
	}
	cases = append(cases, jen.Default().Block(jen.Return(jen.Nil(), jen.Qual(pkgFmt, "Errorf").Call(
		jen.Lit(m.Package+": cannot restore %T: not a state of the "+m.Name+" machine"), jen.Id("s")))))
	restoreDoc := "Restore returns a machine in state s, e.g. one decoded by UnmarshalState. " +
		"It fails for a transient state, which is left in the step that enters it."
	if g.keptList() != "" {
		restoreDoc += " The machine owns the storage of s's slices from then on (see Behavior): give it a state no other machine uses."
	}
	f.Add(comment("", restoreDoc))
	f.Func().Id("Restore").Params(append(params, jen.Id("s").Id("State"))...).Params(jen.Op("*").Id("Machine"), jen.Error()).Block(
		append(append([]jen.Code{jen.Id("m").Op(":=").Op("&").Id("Machine").Values(init...)}, setDirect...),
			jen.Switch(jen.Id("s").Op(":=").Id("s").Assert(jen.Type())).Block(cases...),
			jen.Return(jen.Id("m"), jen.Nil()),
		)...,
	)

	var scases []jen.Code
	for _, s := range m.States {
		scases = append(scases, jen.Case(jen.Id(s.KindName)).Block(jen.Return(jen.Id("m").Dot("st").Dot(s.GoName))))
	}
	f.Add(comment("", "State returns the current state, or nil for a Machine not made by New or Restore. "+
		"Its slices share memory with the machine, which changes them in later steps: read them, do not "+
		"modify them, and copy what you keep."))
	f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("State").Params().Id("State").Block(
		jen.Switch(jen.Id("m").Dot("kind")).Block(scases...),
		jen.Return(jen.Nil()),
	)
	f.Comment("// Kind returns the kind of the current state.")
	f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("Kind").Params().Id("StateKind").Block(jen.Return(jen.Id("m").Dot("kind")))

	f.Comment("// Observer is called after every step the machine takes.")
	f.Type().Id("Observer").Func().Params(jen.Id("Step"))
	f.Comment("// Step describes one step: an event handled by a rule, or an eventless rule of a transient state.")
	f.Type().Id("Step").Struct(
		jen.Comment("// From is the state before the step."), jen.Id("From").Id("StateKind"),
		jen.Comment("// Event is the event handled; zero for an eventless step."), jen.Id("Event").Id("EventKind"),
		jen.Comment("// Rule is the number of the rule that fired, an index into Rules()."), jen.Id("Rule").Int(),
		jen.Comment("// To is the state after the step."), jen.Id("To").Id("StateKind"),
		jen.Comment("// Action is the action returned, or nil."), jen.Id("Action").Id("Action"),
	)
	f.Comment("// SetObserver makes the machine call o after every step; nil removes the observer.")
	f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("SetObserver").Params(jen.Id("o").Id("Observer")).Block(
		jen.Id("m").Dot("obs").Op("=").Id("o"))
}

// leaveMethod names the method that takes the eventless transitions of a
// transient state, e.g. "leaveProcessingLLMResponse", or
// "leaveProcessingLLMResponseVia" in the rules that call the behaviour
// through the interface (see genHandleEvent).
func (g *goGen) leaveMethod(c *fsm.Cell) string {
	if g.via {
		return "leave" + c.State.GoName + "Via"
	}
	return "leave" + c.State.GoName
}

// single returns the cell's only rule when it ignores or rejects without
// guards, so that HandleEvent can handle it inline.
func single(c *fsm.Cell) *fsm.Rule {
	if len(c.Rules) == 1 && c.Rules[0].Kind != fsm.Transition {
		return c.Rules[0]
	}
	return nil
}

// readsEvents reports whether any rule reads an event, so that HandleEvent
// checks for nil events and the package needs nilEvent.
func (g *goGen) readsEvents() bool {
	for _, s := range g.m.States {
		for _, c := range s.Cells {
			if single(c) == nil && usesEvent(c) {
				return true
			}
		}
	}
	return false
}

// usesEvent reports whether the cell's code reads the event's fields.
func usesEvent(c *fsm.Cell) bool {
	if c.Event == nil || len(c.Event.Fields) == 0 {
		return false
	}
	for _, r := range c.Rules {
		if r.Guard != nil && r.Guard.Sig.Event != nil || r.Effect != nil && r.Effect.Sig.Event != nil {
			return true
		}
		for _, a := range append(append([]fsm.Assign(nil), r.ToInit...), r.ActInit...) {
			if a.Source == fsm.FromEvent {
				return true
			}
		}
	}
	return false
}

// genHandleEvent emits the exhaustive nested switch, state then event,
// with the rules of each cell written out in its case (see cellBody): one
// function, as a switch written by hand for speed would be, with no call
// between the dispatch and the rules. The events a state ignores or
// rejects go to refuse, out of the way of the ones it handles:
//
//	func (m *Machine) HandleEvent(ev Event) (Action, error) {
//		switch m.kind {
//		case StateA:
//			switch ev := ev.(type) {
//			case *X:
//				if ev == nil {
//					return nil, m.nilEvent(ev)
//				}
//				from := &m.st.A
//				...
//				return &m.act.Z, nil
//			default:
//				return m.refuse(ev)
//			}
//		...
//		}
//		return nil, m.unhandled(ev)
//	}
//
// When the spec names a behaviour type, HandleEvent calls it directly and
// hands any other Behavior to handleVia, the same rules calling it
// through the interface: each copy has one kind of call, with no test at
// each call.
func (g *goGen) genHandleEvent() {
	doc := "HandleEvent feeds ev to the machine and returns the action to perform, or nil when there is " +
		"nothing to do. The action points into the machine and stays valid until the next call; copy what you need " +
		"to keep. When the current state rejects ev, HandleEvent returns a *RejectedError (see ErrRejected) and the " +
		"machine is unchanged. The machine reads ev during the call and keeps no reference to it; a nil event it " +
		"would read is an error, which leaves the machine unchanged too."
	recv := jen.Id("m").Op("*").Id("Machine")
	sig := func(name string) *jen.Statement {
		return jen.Func().Params(recv.Clone()).Id(name).Params(jen.Id("ev").Id("Event")).Params(jen.Id("Action"), jen.Error())
	}
	unhandled := jen.Return(jen.Nil(), jen.Id("m").Dot("unhandled").Call(jen.Id("ev")))
	g.f.Add(comment("", doc))
	if !g.direct() {
		g.f.Add(sig("HandleEvent").Block(g.dispatch(), unhandled))
	} else {
		g.f.Add(sig("HandleEvent").Block(
			jen.If(jen.Id("m").Dot("direct").Op("==").Nil()).Block(jen.Return(jen.Id("m").Dot("handleVia").Call(jen.Id("ev")))),
			g.dispatch(), unhandled.Clone()))
		g.via = true
		g.f.Add(comment("", "handleVia is HandleEvent for a Behavior other than *"+g.m.Behavior+
			" (a test's fake, a wrapper): the same rules, calling it through the interface."))
		g.f.Add(sig("handleVia").Block(g.dispatch(), unhandled.Clone()))
		g.via = false
	}
	g.genRefuse()
}

// dispatch returns HandleEvent's switch over the states and the events
// each handles.
func (g *goGen) dispatch() jen.Code {
	var states []jen.Code
	for _, s := range g.m.States {
		if s.Transient {
			continue
		}
		var evCases []jen.Code
		bound, refused := false, false
		for _, c := range s.Cells {
			if single(c) != nil {
				refused = true
				continue
			}
			body := g.cellBody(c)
			if usesEvent(c) {
				bound = true
				// A nil event of a type with fields would panic where the
				// rules read it: refuse it first.
				body = append([]jen.Code{jen.If(jen.Id("ev").Op("==").Nil()).Block(
					jen.Return(jen.Nil(), jen.Id("m").Dot("nilEvent").Call(jen.Id("ev"))))}, body...)
			}
			evCases = append(evCases, jen.Case(jen.Op("*").Id(c.Event.GoName)).Block(body...))
		}
		refuse := jen.Return(jen.Id("m").Dot("refuse").Call(jen.Id("ev")))
		if len(evCases) == 0 {
			states = append(states, jen.Case(jen.Id(s.KindName)).Block(refuse))
			continue
		}
		if refused {
			evCases = append(evCases, jen.Default().Block(refuse))
		}
		subject := jen.Id("ev").Assert(jen.Type())
		if bound {
			subject = jen.Id("ev").Op(":=").Id("ev").Assert(jen.Type())
		}
		states = append(states, jen.Case(jen.Id(s.KindName)).Block(jen.Switch(subject).Block(evCases...)))
	}
	return jen.Switch(jen.Id("m").Dot("kind")).Block(states...)
}

// genRefuse emits refuse, which finishes the rules by which a state
// ignores or rejects an event:
//
//	func (m *Machine) refuse(ev Event) (Action, error) {
//		switch m.kind {
//		case StateA:
//			switch ev.(type) {
//			case *Y:
//				return m.reject(3)
//			}
//		}
//		return nil, m.unhandled(ev)
//	}
func (g *goGen) genRefuse() {
	var states []jen.Code
	for _, s := range g.m.States {
		var evCases []jen.Code
		for _, c := range s.Cells {
			r := single(c)
			if r == nil {
				continue
			}
			finish := "reject"
			if r.Kind == fsm.Ignore {
				finish = "ignore"
			}
			evCases = append(evCases, jen.Case(jen.Op("*").Id(c.Event.GoName)).Block(jen.Return(jen.Id("m").Dot(finish).Call(jen.Lit(r.Index)))))
		}
		if len(evCases) > 0 {
			states = append(states, jen.Case(jen.Id(s.KindName)).Block(jen.Switch(jen.Id("ev").Assert(jen.Type())).Block(evCases...)))
		}
	}
	if len(states) == 0 {
		return
	}
	g.f.Comment("// refuse finishes the rule by which the current state ignores or rejects ev, or reports an ev that is not an event of the machine.")
	g.f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("refuse").Params(jen.Id("ev").Id("Event")).Params(jen.Id("Action"), jen.Error()).Block(
		jen.Switch(jen.Id("m").Dot("kind")).Block(states...),
		jen.Return(jen.Nil(), jen.Id("m").Dot("unhandled").Call(jen.Id("ev"))),
	)
}

// genChoices emits, for each transient state, the method that takes its
// eventless transitions, and its copy for handleVia (see genHandleEvent).
func (g *goGen) genChoices() {
	for _, via := range g.modes() {
		g.via = via
		for _, s := range g.m.States {
			if s.Choice == nil {
				continue
			}
			doc := fmt.Sprintf("// %s takes the eventless transitions of the transient state %s.", g.leaveMethod(s.Choice), s.Name)
			if via {
				doc = fmt.Sprintf("// %s is %s for handleVia.", g.leaveMethod(s.Choice), "leave"+s.GoName)
			}
			g.f.Comment(doc)
			g.f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id(g.leaveMethod(s.Choice)).Params().Params(jen.Id("Action"), jen.Error()).
				Block(g.cellBody(s.Choice)...)
		}
	}
	g.via = false
}

// modes returns the copies of the rules to emit: one, or, when the spec
// names a behaviour type, the direct one and the one for handleVia.
func (g *goGen) modes() []bool {
	if g.direct() {
		return []bool{false, true}
	}
	return []bool{false}
}

// cellBody emits the rules of a cell: straight code for one unguarded
// rule, or a switch over the guards:
//
//	from := &m.st.A
//	switch {
//	case m.b.Guard(from, ev):
//		<rule>
//	default:
//		<else rule>
//	}
func (g *goGen) cellBody(c *fsm.Cell) []jen.Code {
	var out []jen.Code
	needFrom := false
	for _, r := range c.Rules {
		if hasStateSource(r) || r.Effect != nil && r.Effect.Sig.From != nil || r.Guard != nil && r.Guard.Sig.From != nil {
			needFrom = true
		}
	}
	fromName := "from"
	if len(c.Rules) == 1 && c.Rules[0].Stays() {
		fromName = "s"
	}
	if needFrom {
		out = append(out, jen.Id(fromName).Op(":=").Op("&").Id("m").Dot("st").Dot(c.State.GoName))
	}
	if len(c.Rules) == 1 && c.Rules[0].Guard == nil {
		return append(out, g.ruleBody(c.Rules[0], fromName)...)
	}
	var cases []jen.Code
	for _, r := range c.Rules {
		body := append([]jen.Code{comment("", fsm.RuleLabel(r))}, g.ruleBody(r, fromName)...)
		if r.Guard != nil {
			cases = append(cases, jen.Case(g.call(r.Guard, g.guardArgs(r, fromName))).Block(body...))
		} else {
			cases = append(cases, jen.Default().Block(body...))
		}
	}
	return append(out, jen.Switch().Block(cases...))
}

// call calls guard or effect fn through the Behavior interface:
//
//	m.b.Guard(from, ev)
//
// When the spec names a behaviour type, HandleEvent calls that type
// directly, so that the compiler can inline the method, and handleVia
// calls any other Behavior through the interface, both with the caller's
// event:
//
//	m.direct.Effect(from, ev, to, act)  // HandleEvent
//	m.b.Effect(from, ev, to, act)       // handleVia
func (g *goGen) call(fn *fsm.Func, args []jen.Code) *jen.Statement {
	if g.direct() && !g.via {
		return jen.Id("m").Dot("direct").Dot(fn.GoName).Call(args...)
	}
	return jen.Id("m").Dot("b").Dot(fn.GoName).Call(args...)
}

func hasStateSource(r *fsm.Rule) bool {
	for _, a := range append(append([]fsm.Assign(nil), r.ToInit...), r.ActInit...) {
		if a.Source == fsm.FromState {
			return true
		}
	}
	return false
}

func (g *goGen) guardArgs(r *fsm.Rule, fromName string) []jen.Code {
	var args []jen.Code
	if r.Guard.Sig.From != nil {
		args = append(args, jen.Id(fromName))
	}
	if r.Guard.Sig.Event != nil {
		args = append(args, jen.Id("ev"))
	}
	return args
}

// assigns renders carry-over assignments as statements on slot, one per
// field: slot.F = from.F. Field by field, the values go straight into the
// machine; a composite literal would be built on the stack and copied,
// which for wide fields costs more than the rest of a transition.
func assigns(slot *jen.Statement, as []fsm.Assign, fromName string) []jen.Code {
	var out []jen.Code
	for _, a := range as {
		src := jen.Id("ev").Dot(a.Src.GoName)
		if a.Source == fsm.FromState {
			src = jen.Id(fromName).Dot(a.Src.GoName)
		}
		out = append(out, slot.Clone().Dot(a.Field.GoName).Op("=").Add(src))
	}
	return out
}

// ruleBody emits one rule:
//
//	m.st.B.F = from.F              // target state, carried over (the rest of its slot is zero)
//	m.act.X = X{}                  // action: fields the effect sets start zero
//	m.act.X.G = ev.G               // action, carried over
//	m.b.Effect(from, ev, &m.st.B, &m.act.X)
//	m.st.A = A{}                   // the state left is cleared (see clearSlot)
//	m.kind = StateB
//	if m.obs != nil { m.step(7, StateA, &m.act.X) }
//	return &m.act.X, nil
func (g *goGen) ruleBody(r *fsm.Rule, fromName string) []jen.Code {
	switch r.Kind {
	case fsm.Ignore:
		return []jen.Code{jen.Return(jen.Id("m").Dot("ignore").Call(jen.Lit(r.Index)))}
	case fsm.Reject:
		return []jen.Code{jen.Return(jen.Id("m").Dot("reject").Call(jen.Lit(r.Index)))}
	}
	var out []jen.Code
	toSlot := jen.Id("m").Dot("st").Dot(r.To.GoName)
	if !r.Stays() {
		// The slot of a state other than the current one is zero (but for
		// kept storage, which is empty, and for the fields every transition
		// into it carries over): only carried fields need setting.
		out = append(out, assigns(toSlot, r.ToInit, fromName)...)
	}
	var actRef jen.Code = jen.Nil()
	if r.Action != nil {
		actSlot := jen.Id("m").Dot("act").Dot(r.Action.GoName)
		if len(r.ActInit) < len(r.Action.Fields) {
			// The slot holds the last action of its kind.
			out = append(out, actSlot.Clone().Op("=").Id(r.Action.GoName).Values())
		}
		out = append(out, assigns(actSlot, r.ActInit, fromName)...)
		actRef = jen.Op("&").Add(actSlot)
	}
	if e := r.Effect; e != nil {
		var args []jen.Code
		if e.Sig.From != nil {
			args = append(args, jen.Id(fromName))
		}
		if e.Sig.Event != nil {
			args = append(args, jen.Id("ev"))
		}
		if e.Sig.To != nil {
			args = append(args, jen.Op("&").Add(toSlot.Clone()))
		}
		if e.Sig.Act != nil {
			args = append(args, jen.Op("&").Id("m").Dot("act").Dot(r.Action.GoName))
		}
		out = append(out, g.call(e, args))
	}
	if !r.Stays() {
		if len(r.From.Fields) > 0 {
			out = append(out, g.clearSlot(r.From)...)
		}
		out = append(out, jen.Id("m").Dot("kind").Op("=").Id(r.To.KindName))
	}
	if r.To.Transient {
		out = append(out,
			tellObserver(r, jen.Nil()),
			jen.Return(jen.Id("m").Dot(g.leaveMethod(r.To.Choice)).Call()))
		return out
	}
	return append(out, tellObserver(r, actRef), jen.Return(actRef, jen.Nil()))
}

// tellObserver emits the report of rule r's step, written out in each rule
// so that a machine without an observer pays one comparison:
//
//	if m.obs != nil {
//		m.step(7, StateA, &m.act.X)
//	}
func tellObserver(r *fsm.Rule, act jen.Code) jen.Code {
	return jen.If(jen.Id("m").Dot("obs").Op("!=").Nil()).Block(
		jen.Id("m").Dot("step").Call(jen.Lit(r.Index), jen.Id(r.From.KindName), act))
}

// genSteps emits the helpers that finish a step and tell the observer.
func (g *goGen) genSteps() {
	f, m := g.f, g.m
	obs := func(from, act jen.Code) jen.Code {
		return jen.Id("m").Dot("obs").Call(jen.Id("Step").Values(jen.Dict{
			jen.Id("From"):   from,
			jen.Id("Event"):  jen.Id("fsmRules").Index(jen.Id("i")).Dot("Event"),
			jen.Id("Rule"):   jen.Id("i"),
			jen.Id("To"):     jen.Id("m").Dot("kind"),
			jen.Id("Action"): act,
		}))
	}
	recv := jen.Id("m").Op("*").Id("Machine")
	f.Comment("// step tells the observer, which is set, that rule i moved the machine from state from.")
	f.Func().Params(recv.Clone()).Id("step").Params(jen.Id("i").Int(), jen.Id("from").Id("StateKind"), jen.Id("act").Id("Action")).Block(
		obs(jen.Id("from"), jen.Id("act")))
	f.Comment("// ignore finishes rule i, which drops its event.")
	tell := jen.If(jen.Id("m").Dot("obs").Op("!=").Nil()).Block(
		jen.Id("m").Dot("step").Call(jen.Id("i"), jen.Id("m").Dot("kind"), jen.Nil()))
	f.Func().Params(recv.Clone()).Id("ignore").Params(jen.Id("i").Int()).Params(jen.Id("Action"), jen.Error()).Block(
		tell,
		jen.Return(jen.Nil(), jen.Nil()))
	f.Comment("// reject finishes rule i, which refuses its event.")
	f.Func().Params(recv.Clone()).Id("reject").Params(jen.Id("i").Int()).Params(jen.Id("Action"), jen.Error()).Block(
		tell.Clone(),
		jen.Id("r").Op(":=").Op("&").Id("fsmRules").Index(jen.Id("i")),
		jen.Return(jen.Nil(), jen.Op("&").Id("RejectedError").Values(jen.Dict{
			jen.Id("State"): jen.Id("r").Dot("From"), jen.Id("Event"): jen.Id("r").Dot("Event"), jen.Id("Reason"): jen.Id("r").Dot("Reason")})))
	if g.readsEvents() {
		f.Comment("// nilEvent reports a nil event pointer, which HandleEvent refuses where its rules would read the event.")
		f.Func().Params(recv.Clone()).Id("nilEvent").Params(jen.Id("ev").Id("Event")).Error().Block(
			jen.Return(jen.Qual(pkgFmt, "Errorf").Call(jen.Lit(m.Package+": %s cannot handle a nil %T: an event must point to a value"), jen.Id("m").Dot("kind"), jen.Id("ev"))))
	}
	f.Comment("// unhandled explains why HandleEvent found no rule for ev.")
	f.Func().Params(recv.Clone()).Id("unhandled").Params(jen.Id("ev").Id("Event")).Error().Block(
		jen.If(jen.Id("m").Dot("kind").Op("==").Lit(0)).Block(
			jen.Return(jen.Qual(pkgErrors, "New").Call(jen.Lit(m.Package+": the machine is not initialised: create it with New or Restore")))),
		jen.Return(jen.Qual(pkgFmt, "Errorf").Call(jen.Lit(m.Package+": %s cannot handle %T: it is not an event of the "+m.Name+" machine"), jen.Id("m").Dot("kind"), jen.Id("ev"))),
	)
}

// genJSON emits the JSON encoding of states, events and actions:
//
//	func (s A) MarshalJSON() ([]byte, error)   // {"kind":"a", ...fields}
//	func UnmarshalState(data []byte) (State, error)
func (g *goGen) genJSON() {
	f, m := g.f, g.m
	for i, ks := range g.kindSets() {
		for _, d := range ks.decls {
			recv := jen.Id("v").Id(d.GoName)
			f.Comment(fmt.Sprintf("// MarshalJSON encodes the %s as {\"kind\": %q, ...its fields}.", ks.what, d.Snake))
			if len(d.Fields) == 0 {
				f.Func().Params(jen.Id(d.GoName)).Id("MarshalJSON").Params().Params(jen.Index().Byte(), jen.Error()).Block(
					jen.Return(jen.Index().Byte().Call(jen.Lit(fmt.Sprintf(`{"kind":%q}`, d.Snake))), jen.Nil()))
				continue
			}
			f.Func().Params(recv).Id("MarshalJSON").Params().Params(jen.Index().Byte(), jen.Error()).Block(
				jen.Type().Id("fields").Id(d.GoName),
				jen.Return(jen.Qual(pkgJSON, "Marshal").Call(jen.Struct(
					jen.Id("Kind").String().Tag(map[string]string{"json": "kind"}),
					jen.Id("fields"),
				).Values(jen.Lit(d.Snake), jen.Id("fields").Call(jen.Id("v"))))),
			)
		}
		name := [...]string{"State", "Event", "Action"}[i]
		wrap := [...]string{"fsmAsValue", "fsmAsPointer", "fsmAsPointer"}[i]
		var cases []jen.Code
		for _, d := range ks.decls {
			cases = append(cases, jen.Case(jen.Lit(d.Snake)).Block(
				jen.Return(jen.Id(wrap).Types(jen.Id(d.GoName), jen.Id(name)).Call(jen.Id("fsmDecodeAs").Types(jen.Id(d.GoName)).Call(jen.Id("data"), jen.Lit(ks.what+" "+d.Snake))))))
		}
		cases = append(cases, jen.Default().Block(jen.Return(jen.Nil(), jen.Qual(pkgFmt, "Errorf").Call(
			jen.Lit(m.Package+": decode "+ks.what+": unknown kind %q"), jen.Id("kind")))))
		f.Comment(fmt.Sprintf("// Unmarshal%s decodes %s %s written by its MarshalJSON method.", name, article(ks.what), ks.what))
		f.Func().Id("Unmarshal"+name).Params(jen.Id("data").Index().Byte()).Params(jen.Id(name), jen.Error()).Block(
			jen.List(jen.Id("kind"), jen.Err()).Op(":=").Id("fsmDecodeKind").Call(jen.Id("data"), jen.Lit(ks.what)),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
			jen.Switch(jen.Id("kind")).Block(cases...),
		)
	}
	f.Comment("// fsmDecodeKind reads the \"kind\" of a JSON-encoded state, event or action.")
	f.Func().Id("fsmDecodeKind").Params(jen.Id("data").Index().Byte(), jen.Id("what").String()).Params(jen.String(), jen.Error()).Block(
		jen.Var().Id("head").Struct(jen.Id("Kind").String().Tag(map[string]string{"json": "kind"})),
		jen.If(jen.Err().Op(":=").Qual(pkgJSON, "Unmarshal").Call(jen.Id("data"), jen.Op("&").Id("head")), jen.Err().Op("!=").Nil()).Block(
			jen.Return(jen.Lit(""), jen.Qual(pkgFmt, "Errorf").Call(jen.Lit(m.Package+": decode %s: %w"), jen.Id("what"), jen.Err()))),
		jen.If(jen.Id("head").Dot("Kind").Op("==").Lit("")).Block(
			jen.Return(jen.Lit(""), jen.Qual(pkgFmt, "Errorf").Call(jen.Lit(m.Package+": decode %s: no \"kind\""), jen.Id("what")))),
		jen.Return(jen.Id("head").Dot("Kind"), jen.Nil()),
	)
	f.Comment("// fsmDecodeAs decodes data into a new T.")
	f.Func().Id("fsmDecodeAs").Types(jen.Id("T").Any()).Params(jen.Id("data").Index().Byte(), jen.Id("what").String()).Params(jen.Op("*").Id("T"), jen.Error()).Block(
		jen.Id("v").Op(":=").New(jen.Id("T")),
		jen.If(jen.Err().Op(":=").Qual(pkgJSON, "Unmarshal").Call(jen.Id("data"), jen.Id("v")), jen.Err().Op("!=").Nil()).Block(
			jen.Return(jen.Nil(), jen.Qual(pkgFmt, "Errorf").Call(jen.Lit(m.Package+": decode %s: %w"), jen.Id("what"), jen.Err()))),
		jen.Return(jen.Id("v"), jen.Nil()),
	)
	f.Comment("// fsmAsValue returns *v as an I, or the error.")
	f.Func().Id("fsmAsValue").Types(jen.Id("T").Any(), jen.Id("I").Any()).Params(jen.Id("v").Op("*").Id("T"), jen.Err().Error()).Params(jen.Id("I"), jen.Error()).Block(
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Var().Id("zero").Id("I"), jen.Return(jen.Id("zero"), jen.Err())),
		jen.Return(jen.Any().Call(jen.Op("*").Id("v")).Assert(jen.Id("I")), jen.Nil()),
	)
	f.Comment("// fsmAsPointer returns v as an I, or the error.")
	f.Func().Id("fsmAsPointer").Types(jen.Id("T").Any(), jen.Id("I").Any()).Params(jen.Id("v").Op("*").Id("T"), jen.Err().Error()).Params(jen.Id("I"), jen.Error()).Block(
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Var().Id("zero").Id("I"), jen.Return(jen.Id("zero"), jen.Err())),
		jen.Return(jen.Any().Call(jen.Id("v")).Assert(jen.Id("I")), jen.Nil()),
	)
}

func article(word string) string {
	if strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}
