package emit

import (
	"fmt"
	"slices"
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
	m *fsm.Machine
	f *jen.File
}

// GoFile returns the generated package for m as a jennifer file.
func GoFile(m *fsm.Machine) *jen.File {
	g := &goGen{m: m, f: newFile(m)}
	g.genPackageDoc()
	g.genKinds()
	g.genInterfaces()
	g.genDecls()
	g.genTimerTypes()
	g.genBehavior()
	g.genHandler()
	g.genRules()
	g.genErrors()
	g.genMachine()
	g.genHandleEvent()
	g.genOtherwise()
	g.genChoices()
	g.genTakes()
	g.genTimers()
	g.genSteps()
	g.genCoverage()
	g.genJSON()
	return g.f
}

// kv is one keyed element of a composite literal. Literals are written
// with kv in the order of the type's fields, as by hand (jen.Dict sorts
// its keys).
func kv(key string, val jen.Code) jen.Code { return jen.Id(key).Op(":").Add(val) }

// decls returns the declarations of one kind: "state", "event" or "action".
func decls(m *fsm.Machine, what string) []*fsm.Decl {
	var out []*fsm.Decl
	switch what {
	case "state":
		for _, s := range m.States {
			out = append(out, &s.Decl)
		}
	case "event":
		for _, e := range m.Events {
			out = append(out, &e.Decl)
		}
	default:
		for _, a := range m.Actions {
			out = append(out, &a.Decl)
		}
	}
	return out
}

// kindSets describes the three kinds of declarations: their Go interface,
// kind type and marker method.
var kindSets = []struct{ what, iface, kind, marker string }{
	{"state", "State", "StateKind", "isState"},
	{"event", "Event", "EventKind", "isEvent"},
	{"action", "Action", "ActionKind", "isAction"},
}

// genPackageDoc emits the package comment from the spec's doc.
func (g *goGen) genPackageDoc() {
	m := g.m
	var ps []string
	ps = append(ps, fmt.Sprintf("Package %s implements the %s state machine of %s.", m.Package, m.Name, strings.Join(docLines(m.SpecFile), " ")))
	ps = append(ps, m.Doc)
	ps = append(ps, "Feed events to a Machine with HandleEvent: it decides what happens, "+
		"calls the guards and effects of its Behavior, and hands the actions to perform "+
		"to its Handler, in order. The machine is synchronous and deterministic: it does "+
		"no I/O, and the same events always give the same actions, so an event log replays exactly.")
	var lines []string
	for _, p := range ps {
		if strings.TrimSpace(p) == "" {
			continue
		}
		if len(lines) > 0 {
			lines = append(lines, "")
		}
		lines = append(lines, docLines(p)...)
	}
	for _, l := range lines {
		if l == "" {
			g.f.PackageComment("//")
		} else {
			g.f.PackageComment("// " + l)
		}
	}
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
	for _, ks := range kindSets {
		ds := decls(g.m, ks.what)
		g.f.Add(comment("", fmt.Sprintf("%s identifies %s %s of the %s machine. The zero %s is no %s.", ks.kind, article(ks.what), ks.what, g.m.Name, ks.kind, ks.what)))
		g.f.Type().Id(ks.kind).Add(kindType(len(ds)))
		consts := make([]jen.Code, 0, len(ds))
		cases := make([]jen.Code, 0, len(ds))
		for i, d := range ds {
			c := jen.Add(comment("", fmt.Sprintf("%s identifies the %s %s.", d.KindName, ks.what, d.Name))).Line().Id(d.KindName)
			if i == 0 {
				c.Id(ks.kind).Op("=").Iota().Op("+").Lit(1)
			}
			consts = append(consts, c)
			cases = append(cases, jen.Case(jen.Id(d.KindName)).Block(jen.Return(jen.Lit(d.Name))))
		}
		if len(ds) > 0 {
			g.f.Comment(fmt.Sprintf("// The %ss of the %s machine.", ks.what, g.m.Name))
			g.f.Const().Defs(consts...)
		}
		g.f.Comment(fmt.Sprintf("// String returns the %s's name as the spec writes it.", ks.what))
		body := []jen.Code{}
		if len(cases) > 0 {
			body = append(body, jen.Switch(jen.Id("k")).Block(cases...))
		}
		body = append(body, jen.Return(jen.Lit(ks.kind+"(").Op("+").Qual(pkgStrconv, "Itoa").Call(jen.Int().Call(jen.Id("k"))).Op("+").Lit(")")))
		g.f.Func().Params(jen.Id("k").Id(ks.kind)).Id("String").Params().String().Block(body...)
	}
}

// genInterfaces emits the sealed State, Event and Action interfaces.
func (g *goGen) genInterfaces() {
	docs := map[string]string{
		"state":  "State is a state of the %s machine: one of %s. States are values.",
		"event":  "Event is an event the %s machine handles: one of %s. Events are passed by pointer; the machine reads them during HandleEvent and keeps no pointer to them, though it may keep what their fields hold.",
		"action": "Action is an action of the %s machine, as a value: one of %s. The machine hands actions to its Handler as method calls; a Recorder turns them into Actions, and UnmarshalAction reads one back from JSON.",
	}
	for _, ks := range kindSets {
		var names []string
		for _, d := range decls(g.m, ks.what) {
			if ks.what == "state" {
				names = append(names, d.GoName)
			} else {
				names = append(names, "*"+d.GoName)
			}
		}
		if len(names) == 0 {
			names = []string{"none"}
		}
		g.f.Add(comment("", fmt.Sprintf(docs[ks.what], g.m.Name, list(names))))
		g.f.Type().Id(ks.iface).Interface(
			jen.Comment(fmt.Sprintf("// Kind returns which %s this is.", ks.what)),
			jen.Id("Kind").Params().Id(ks.kind),
			jen.Id(ks.marker).Params(),
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
// Events and actions implement their interface with pointer receivers: the
// compiler then refuses a value where a pointer is meant.
func (g *goGen) genDecls() {
	for _, ks := range kindSets {
		for _, d := range decls(g.m, ks.what) {
			fields := make([]jen.Code, 0, len(d.Fields))
			for _, fd := range d.Fields {
				c := jen.Null()
				if fd.Doc != "" {
					c.Add(comment(fd.GoName+" ", fd.Doc)).Line()
				}
				fields = append(fields, c.Id(fd.GoName).Add(typeCode(g.m, fd.Type)).Tag(map[string]string{"json": fd.JSONName}))
			}
			lead := fmt.Sprintf("%s is the %s %s", d.GoName, ks.what, d.Name)
			doc := d.Doc
			if ks.what == "state" {
				if extra := hookDoc(g.m.States[d.Index]); extra != "" {
					doc = strings.TrimSpace(doc + "\n\n" + extra)
				}
			}
			if doc != "" {
				lead += ": "
			}
			g.f.Add(comment(lead, doc))
			g.f.Type().Id(d.GoName).Struct(fields...)
			recv := jen.Id(d.GoName)
			if ks.what != "state" {
				recv = jen.Op("*").Id(d.GoName)
			}
			g.f.Comment(fmt.Sprintf("// Kind returns %s.", d.KindName))
			g.f.Func().Params(recv.Clone()).Id("Kind").Params().Id(ks.kind).Block(jen.Return(jen.Id(d.KindName)))
			g.f.Func().Params(recv.Clone()).Id(ks.marker).Params().Block()
		}
	}
}

// params returns the named parameters of a guard or effect, or of an
// action's Handler method: one per field.
func params(m *fsm.Machine, fields []*fsm.Field) []jen.Code {
	var ps []jen.Code
	for _, f := range fields {
		ps = append(ps, jen.Id(f.Param).Add(typeCode(m, f.Type)))
	}
	return ps
}

// results returns the result types of an effect: what it sets, in order.
func results(m *fsm.Machine, fn *fsm.Func) []jen.Code {
	var rs []jen.Code
	for _, f := range fn.Sets {
		rs = append(rs, typeCode(m, f.Type))
	}
	return rs
}

// names lists fields by name for docs.
func fieldNames(fields []*fsm.Field) string {
	var out []string
	for _, f := range fields {
		out = append(out, f.Name)
	}
	return list(out)
}

// funcDoc is the doc comment of a guard or effect in Behavior.
func funcDoc(fn *fsm.Func) jen.Code {
	doc := fn.Doc
	if doc == "" {
		doc = "is the " + kindWord(fn) + " " + fn.Name + "."
	}
	var sig string
	switch {
	case fn.Kind == fsm.Guard && len(fn.Reads) > 0:
		sig = fmt.Sprintf("It is given %s.", fieldNames(fn.Reads))
	case fn.Kind == fsm.Effect:
		sig = "It returns " + fieldNames(fn.Sets)
		if len(fn.Reads) > 0 {
			sig = fmt.Sprintf("It is given %s and returns %s", fieldNames(fn.Reads), fieldNames(fn.Sets))
		}
		if len(fn.Sets) > 1 {
			sig += ", in that order"
		}
		sig += "."
	}
	return paragraphs(fn.GoName+" "+doc, sig)
}

func kindWord(fn *fsm.Func) string {
	if fn.Kind == fsm.Guard {
		return "guard"
	}
	return "effect"
}

// genBehavior emits the interface the hand-written guards and effects
// satisfy, one method per guard or effect, its signature following from
// what it reads and sets:
//
//	type Behavior interface {
//		// CanRetry reports ...
//		CanRetry(error_ chat.LLMError, retries int) bool
//		// ScheduleRetry counts ...
//		ScheduleRetry(retries int, error_ chat.LLMError) (int, chat.ErrorOrigin, int, time.Duration)
//	}
func (g *goGen) genBehavior() {
	if !g.m.HasBehavior() {
		return
	}
	var methods []jen.Code
	for _, fns := range [][]*fsm.Func{g.m.Guards, g.m.Effects} {
		for _, fn := range fns {
			if !fn.Used() {
				continue
			}
			c := jen.Add(funcDoc(fn)).Line().Id(fn.GoName).Params(params(g.m, fn.Reads)...)
			if fn.Kind == fsm.Guard {
				c.Bool()
			} else {
				c.Params(results(g.m, fn)...)
			}
			methods = append(methods, c)
		}
	}
	g.f.Add(paragraphs(
		fmt.Sprintf("Behavior holds the guards and effects of the %s machine, written by hand. "+
			"A guard decides between the branches of a transition; an effect computes what "+
			"the machine cannot carry over: it returns the fields it sets, and the machine "+
			"stores them in the target state and passes them to the actions.", g.m.Name),
		"Guards and effects must be pure: no I/O, clocks or randomness, so that the "+
			"machine stays deterministic. They are given the machine's data as values and "+
			"must not modify what those values point to (the elements of a slice, say): "+
			"return new values instead. States and actions handed out earlier share that "+
			"memory and must never change."))
	g.f.Type().Id("Behavior").Interface(methods...)
}

// genHandler emits the Handler interface, one method per action, and the
// Recorder that implements it by keeping the actions as values:
//
//	type Handler interface { SendLLMRequest(request chat.Request); ... }
//	type Recorder struct { Actions []Action }
//	func (r *Recorder) SendLLMRequest(request chat.Request) { r.Actions = append(r.Actions, &SendLLMRequest{...}) }
func (g *goGen) genHandler() {
	m := g.m
	if !m.HasHandler() {
		return
	}
	var methods []jen.Code
	for _, a := range m.Actions {
		doc := "performs the action " + a.Name + "."
		if a.Doc != "" {
			doc += " " + a.Doc
		}
		methods = append(methods, jen.Add(comment(a.GoName+" ", doc)).Line().Id(a.GoName).Params(params(m, a.Fields)...))
	}
	g.f.Add(paragraphs(
		fmt.Sprintf("Handler performs the actions of the %s machine. HandleEvent calls one "+
			"method per action, in the order the rule lists them, once the machine is in "+
			"its new state. A method must not block (start the work and report its result "+
			"later as an event) and must not call HandleEvent.", m.Name),
		"The values a method is given are the caller's to keep: the machine never changes "+
			"them afterwards."))
	g.f.Type().Id("Handler").Interface(methods...)

	g.f.Add(paragraphs("Recorder is a Handler that keeps every action it is given, as a value, " +
		"in order: for tests, logs and replay. The zero Recorder is ready to use."))
	g.f.Type().Id("Recorder").Struct(
		jen.Comment("// Actions are the actions performed so far, oldest first."),
		jen.Id("Actions").Index().Id("Action"),
	)
	g.f.Var().Id("_").Id("Handler").Op("=").Parens(jen.Op("*").Id("Recorder")).Parens(jen.Nil())
	for _, a := range m.Actions {
		var vals []jen.Code
		for _, fd := range a.Fields {
			vals = append(vals, kv(fd.GoName, jen.Id(fd.Param)))
		}
		g.f.Comment(fmt.Sprintf("// %s records %s %s.", a.GoName, article(a.GoName), a.GoName))
		g.f.Func().Params(jen.Id("r").Op("*").Id("Recorder")).Id(a.GoName).Params(params(m, a.Fields)...).Block(
			jen.Id("r").Dot("Actions").Op("=").Append(jen.Id("r").Dot("Actions"), jen.Op("&").Id(a.GoName).Values(vals...)))
	}
}

// genRules emits the transition table as data:
//
//	type RuleKind uint8; const ( RuleTransition RuleKind = iota; ... )
//	type Rule struct { From StateKind; Event EventKind; ... }
//	var fsmRules = [...]Rule{ {From: StateA, Event: EventX, ...}, ... }
//	func Rules() []Rule
func (g *goGen) genRules() {
	f := g.f
	f.Comment("// RuleKind says what a rule does with its event.")
	f.Type().Id("RuleKind").Uint8()
	f.Comment("// The kinds of rules.")
	f.Const().Defs(
		jen.Comment("// RuleTransition moves to a state (or stays), runs the rule's effect and"),
		jen.Comment("// emits its actions."),
		jen.Id("RuleTransition").Id("RuleKind").Op("=").Iota(),
		jen.Comment("// RuleIgnore drops the event: nothing changes."),
		jen.Id("RuleIgnore"),
		jen.Comment("// RuleReject refuses the event: nothing changes and HandleEvent returns a"),
		jen.Comment("// *RejectedError."),
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
	f.Add(comment("", fmt.Sprintf("Rule is one rule of the %s machine: a row of its spec for one state (a \"*\" row once for all states), a guarded branch of one, or an entry of a state's ignore or reject list.", g.m.Name)))
	f.Type().Id("Rule").Struct(
		jen.Comment("// Kind says what the rule does."), jen.Id("Kind").Id("RuleKind"),
		jen.Comment("// From is the state the rule applies in; zero for a rule many states share"),
		jen.Comment("// (a \"*\" row, or a rule of a composite state), which applies in every"),
		jen.Comment("// state that has no rule of its own for the event."), jen.Id("From").Id("StateKind"),
		jen.Do(func(st *jen.Statement) {
			if len(g.m.Composites) > 0 {
				st.Comment("// Composite names the composite state whose rule it is, shared by its").Line().
					Comment("// substates; \"\" for other rules.").Line().Id("Composite").String()
			}
		}),
		jen.Comment("// Event is the event the rule handles; zero for an eventless rule of a"),
		jen.Comment("// transient state."), jen.Id("Event").Id("EventKind"),
		jen.Comment("// Guard names the guard that must hold, \"else\" on a last branch, or \"\" when"),
		jen.Comment("// unguarded."), jen.Id("Guard").String(),
		jen.Comment("// To is the state after the rule; zero when the rule stays in its state."), jen.Id("To").Id("StateKind"),
		jen.Comment("// Effect names the effect that runs, or \"\"."), jen.Id("Effect").String(),
		jen.Comment("// Actions are the actions the rule emits, in order."), jen.Id("Actions").Index().Id("ActionKind"),
		jen.Comment("// Reason says why a reject rule refuses the event."), jen.Id("Reason").String(),
		jen.Comment("// Label describes the rule on one line, as the spec writes it."), jen.Id("Label").String(),
	)
	f.Comment("// fsmRules is the rule table; a rule's index is its number in Step.Rule.")
	f.Var().Id("fsmRules").Op("=").Index(jen.Op("...")).Id("Rule").ValuesFunc(func(grp *jen.Group) {
		for _, r := range g.m.Rules {
			grp.Line().Add(ruleValue(r))
		}
		grp.Line()
	})
	f.Comment("// Rules returns the rule table: every rule of the spec, state by state in")
	f.Comment("// spec order, then the rules states share (those of composite states, then")
	f.Comment("// the \"*\" rows), then the timers'. Step.Rule indexes it.")
	f.Func().Id("Rules").Params().Index().Id("Rule").Block(
		jen.Id("rules").Op(":=").Qual(pkgSlices, "Clone").Call(jen.Id("fsmRules").Index(jen.Op(":"))),
		jen.For(jen.Id("i").Op(":=").Range().Id("rules")).Block(
			jen.Id("rules").Index(jen.Id("i")).Dot("Actions").Op("=").Qual(pkgSlices, "Clone").Call(jen.Id("rules").Index(jen.Id("i")).Dot("Actions"))),
		jen.Return(jen.Id("rules")),
	)
}

// ruleValue is the table entry of a rule, its fields in order.
func ruleValue(r *fsm.Rule) jen.Code {
	d := []jen.Code{kv("Kind", jen.Id([...]string{"RuleTransition", "RuleIgnore", "RuleReject"}[r.Kind]))}
	switch {
	case r.From == nil:
	case r.From.Composite():
		d = append(d, kv("Composite", jen.Lit(r.From.Name)))
	default:
		d = append(d, kv("From", jen.Id(r.From.KindName)))
	}
	if r.Event != nil {
		d = append(d, kv("Event", jen.Id(r.Event.KindName)))
	}
	switch {
	case r.Guard != nil:
		d = append(d, kv("Guard", jen.Lit(r.Guard.Name)))
	case r.Else:
		d = append(d, kv("Guard", jen.Lit("else")))
	}
	if r.To != nil {
		d = append(d, kv("To", jen.Id(r.To.KindName)))
	}
	if r.Effect != nil {
		d = append(d, kv("Effect", jen.Lit(r.Effect.Name)))
	}
	if len(r.Actions) > 0 {
		var acts []jen.Code
		for _, e := range r.Actions {
			acts = append(acts, jen.Id(e.Action.KindName))
		}
		d = append(d, kv("Actions", jen.Index().Id("ActionKind").Values(acts...)))
	}
	if r.Kind == fsm.Reject {
		d = append(d, kv("Reason", jen.Lit(r.Reason)))
	}
	d = append(d, kv("Label", jen.Lit(r.Label)))
	return jen.Values(d...)
}

// genErrors emits ErrRejected, RejectedError and errReentrant.
func (g *goGen) genErrors() {
	f, pkg := g.f, g.m.Package
	f.Comment("// ErrRejected is wrapped by every *RejectedError, for errors.Is.")
	f.Var().Id("ErrRejected").Op("=").Qual(pkgErrors, "New").Call(jen.Lit("event rejected"))
	f.Comment("// RejectedError reports that the current state refused an event; the machine")
	f.Comment("// is unchanged.")
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
	f.Comment("// errReentrant is returned by HandleEvent when it is called while the machine")
	f.Comment("// hands out the actions of an earlier event.")
	f.Var().Id("errReentrant").Op("=").Qual(pkgErrors, "New").Call(jen.Lit(pkg + ": HandleEvent called from a Handler or Observer " +
		"method (or after one panicked): queue the event and handle it once HandleEvent has returned"))
}

// newParams returns the parameters New and Restore take before the state:
// the behaviour and the handler, when the machine has them.
func (g *goGen) newParams() (ps, init []jen.Code) {
	if g.m.HasBehavior() {
		ps = append(ps, jen.Id("b").Id("Behavior"))
		init = append(init, jen.Id("b").Op(":").Id("b"))
	}
	if g.m.HasHandler() {
		ps = append(ps, jen.Id("h").Id("Handler"))
		init = append(init, jen.Id("h").Op(":").Id("h"))
	}
	return ps, init
}

// nilChecks returns the statements that refuse a nil behaviour or handler,
// with fail turning a message into the statement that reports it.
func (g *goGen) nilChecks(fail func(msg string) jen.Code) []jen.Code {
	var out []jen.Code
	if g.m.HasBehavior() {
		out = append(out, jen.If(jen.Id("b").Op("==").Nil()).Block(fail(g.m.Package+": the Behavior is nil")))
	}
	if g.m.HasHandler() {
		out = append(out, jen.If(jen.Id("h").Op("==").Nil()).Block(fail(g.m.Package+": the Handler is nil")))
	}
	return out
}

// storeState returns the statements that load state value s of the given
// state into storage: m.d.conversation = s.Conversation.
func storeState(s *fsm.State, from jen.Code) []jen.Code {
	var out []jen.Code
	for _, f := range s.Fields {
		out = append(out, jen.Id("m").Dot("d").Dot(f.Data.GoName).Op("=").Add(from).Dot(f.GoName))
	}
	return out
}

// genMachine emits the Machine type, its storage, and its constructors and
// accessors.
//
//	type fsmData struct { conversation chat.Conversation; retries int; ... }
//	type Machine struct { b Behavior; h Handler; obs Observer; kind StateKind; busy bool; d fsmData }
//	func New(b Behavior, h Handler, initial A) *Machine
//	func Restore(b Behavior, h Handler, s State) (*Machine, error)
//	func (m *Machine) State() State
func (g *goGen) genMachine() {
	f, m := g.f, g.m
	var data []jen.Code
	for _, d := range m.Data {
		var owners []string
		for _, s := range d.States {
			owners = append(owners, s.Name)
		}
		data = append(data, jen.Add(comment("", d.GoName+" is the field "+d.Name+" of "+list(owners)+".")).Line().Id(d.GoName).Add(typeCode(m, d.Type)))
	}
	f.Comment("// fsmData is the machine's storage: the fields of every state, once per name")
	f.Comment("// and type. The current state's fields hold its data; the others are zero.")
	f.Type().Id("fsmData").Struct(data...)

	f.Add(comment("", fmt.Sprintf("Machine runs the %s state machine. Create it with New or Restore. It is not safe for "+
		"concurrent use: one goroutine owns it and feeds it one event at a time.", m.Name)))
	var fields []jen.Code
	if m.HasBehavior() {
		fields = append(fields, jen.Id("b").Id("Behavior"))
	}
	if m.HasHandler() {
		fields = append(fields, jen.Id("h").Id("Handler"))
	}
	fields = append(fields,
		jen.Id("obs").Id("Observer"),
		jen.Id("kind").Id("StateKind"),
		jen.Comment("// busy is set while the machine hands out the actions of an event."),
		jen.Id("busy").Bool(),
		jen.Id("d").Id("fsmData"),
		jen.Do(func(st *jen.Statement) {
			if len(m.Timers) > 0 {
				st.Comment("// timers holds each state's running timer, valid while the state is active;").Line().
					Comment("// lastTimer is the id of the last timer started.").Line().
					Id("timers").Index(jen.Lit(len(m.Timers))).Id("fsmTimer").Line().
					Id("lastTimer").Id("TimerID")
			}
		}))
	f.Type().Id("Machine").Struct(fields...)

	ps, init := g.newParams()
	ini := m.Initial
	var needs []string
	if m.HasBehavior() {
		needs = append(needs, "b")
	}
	if m.HasHandler() {
		needs = append(needs, "h")
	}
	newDoc := fmt.Sprintf("New returns a machine in the initial state %s with the given data.", ini.Name)
	if len(m.Start) > 0 {
		newDoc += " Entering it, the machine hands the actions of its entry (and of its ancestors', outermost first) to h before New returns."
	}
	if len(needs) > 0 {
		newDoc += " It panics if " + strings.Join(needs, " or ") + " is nil."
	}
	f.Add(comment("", newDoc))
	newBody := g.nilChecks(func(msg string) jen.Code { return jen.Panic(jen.Lit(msg)) })
	newBody = append(newBody, jen.Id("m").Op(":=").Op("&").Id("Machine").Values(append(init, jen.Id("kind").Op(":").Id(ini.KindName))...))
	newBody = append(newBody, storeState(ini, jen.Id("initial"))...)
	newBody = append(newBody, g.startBody()...)
	newBody = append(newBody, jen.Return(jen.Id("m")))
	f.Func().Id("New").Params(append(ps, jen.Id("initial").Id(ini.GoName))...).Op("*").Id("Machine").Block(newBody...)

	var cases []jen.Code
	for _, s := range m.States {
		if s.Transient {
			cases = append(cases, jen.Case(jen.Id(s.GoName)).Block(jen.Return(jen.Nil(), jen.Qual(pkgErrors, "New").Call(
				jen.Lit(fmt.Sprintf("%s: cannot restore the transient state %s: it is never at rest", m.Package, s.Name))))))
			continue
		}
		body := append([]jen.Code{jen.Id("m").Dot("kind").Op("=").Id(s.KindName)}, storeState(s, jen.Id("s"))...)
		body = append(body, g.armTimers(s)...)
		cases = append(cases, jen.Case(jen.Id(s.GoName)).Block(body...))
	}
	cases = append(cases, jen.Default().Block(jen.Return(jen.Nil(), jen.Qual(pkgFmt, "Errorf").Call(
		jen.Lit(m.Package+": cannot restore %T: it is not a state of the "+m.Name+" machine"), jen.Id("s")))))
	f.Add(comment("", "Restore returns a machine in state s, e.g. one decoded by UnmarshalState. "+
		"It fails for a transient state, which is left in the step that enters it."))
	restoreBody := g.nilChecks(func(msg string) jen.Code { return jen.Return(jen.Nil(), jen.Qual(pkgErrors, "New").Call(jen.Lit(msg))) })
	restoreBody = append(restoreBody,
		jen.Id("m").Op(":=").Op("&").Id("Machine").Values(init...),
		jen.Switch(jen.Id("s").Op(":=").Id("s").Assert(jen.Type())).Block(cases...),
		jen.Return(jen.Id("m"), jen.Nil()))
	f.Func().Id("Restore").Params(append(ps, jen.Id("s").Id("State"))...).Params(jen.Op("*").Id("Machine"), jen.Error()).Block(restoreBody...)

	var scases []jen.Code
	for _, s := range m.States {
		var vals []jen.Code
		for _, fd := range s.Fields {
			vals = append(vals, kv(fd.GoName, jen.Id("m").Dot("d").Dot(fd.Data.GoName)))
		}
		scases = append(scases, jen.Case(jen.Id(s.KindName)).Block(jen.Return(jen.Id(s.GoName).Values(vals...))))
	}
	f.Add(comment("", "State returns the current state, or nil for a Machine not made by New or Restore. "+
		"The value is the caller's to keep: later events never change it."))
	f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("State").Params().Id("State").Block(
		jen.Switch(jen.Id("m").Dot("kind")).Block(scases...),
		jen.Return(jen.Nil()),
	)
	f.Comment("// Kind returns the kind of the current state.")
	f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("Kind").Params().Id("StateKind").Block(jen.Return(jen.Id("m").Dot("kind")))

	f.Comment("// Observer is called after every step the machine takes, before the step's")
	f.Comment("// actions are handed to the Handler.")
	f.Type().Id("Observer").Func().Params(jen.Id("Step"))
	f.Comment("// Step describes one step: an event handled by a rule, or an eventless rule")
	f.Comment("// of a transient state.")
	f.Type().Id("Step").Struct(
		jen.Comment("// From is the state before the step."), jen.Id("From").Id("StateKind"),
		jen.Comment("// Event is the event handled; zero for an eventless step."), jen.Id("Event").Id("EventKind"),
		jen.Comment("// Rule is the number of the rule that fired, an index into Rules()."), jen.Id("Rule").Int(),
		jen.Comment("// To is the state after the step."), jen.Id("To").Id("StateKind"),
	)
	f.Comment("// SetObserver makes the machine call o after every step; nil removes the")
	f.Comment("// observer.")
	f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("SetObserver").Params(jen.Id("o").Id("Observer")).Block(
		jen.Id("m").Dot("obs").Op("=").Id("o"))
}

// genHandleEvent emits the exhaustive nested switch, state then event,
// with the rules of each cell a state handles written out in its case
// (see cellBody). What a state ignores or rejects, and what it leaves to a
// "*" row, goes to otherwise:
//
//	func (m *Machine) HandleEvent(ev Event) error {
//		if m.busy {
//			return errReentrant
//		}
//		switch m.kind {
//		case StateA:
//			switch ev := ev.(type) {
//			case *X:
//				...
//				return nil
//			}
//		...
//		}
//		return m.otherwise(ev)
//	}
func (g *goGen) genHandleEvent() {
	// A machine of many states gets one method per state, so that no
	// function grows with the whole table (the compiler's back end takes
	// more than linear time in a function's size); a small one keeps its
	// rules in HandleEvent, with no call between the dispatch and them.
	split := len(g.m.States) > splitAbove
	var states, methods []jen.Code
	for _, s := range g.m.States {
		// The state's own cells, and the composite rules it takes, in
		// event order; a composite's rules are written once, in a method
		// each state that takes them calls.
		cells := slices.Clone(s.Handles)
		for _, c := range s.Inherited {
			if direct(c) {
				cells = append(cells, c)
			}
		}
		if len(cells) == 0 {
			continue
		}
		slices.SortStableFunc(cells, func(a, b *fsm.Cell) int { return a.Event.Index - b.Event.Index })
		var evCases []jen.Code
		bound := false
		for _, c := range cells {
			if direct(c) && !g.inline(c) {
				bound = true
				evCases = append(evCases, jen.Case(jen.Op("*").Id(c.Event.GoName)).Block(jen.Return(jen.Id("m").Dot(takeMethod(c)).Call(jen.Id("ev")))))
				continue
			}
			bound = bound || c.ReadsEvent
			evCases = append(evCases, jen.Case(jen.Op("*").Id(c.Event.GoName)).Block(g.cellBody(c)...))
		}
		subject := jen.Id("ev").Assert(jen.Type())
		if bound {
			subject = jen.Id("ev").Op(":=").Id("ev").Assert(jen.Type())
		}
		if !split {
			states = append(states, jen.Case(jen.Id(s.KindName)).Block(jen.Switch(subject).Block(evCases...)))
			continue
		}
		methods = append(methods,
			jen.Comment(fmt.Sprintf("// in%s is HandleEvent in the state %s.", s.GoName, s.Name)).Line().
				Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("in"+s.GoName).Params(jen.Id("ev").Id("Event")).Error().Block(
				jen.Switch(subject).Block(evCases...),
				jen.Return(jen.Id("m").Dot("otherwise").Call(jen.Id("ev")))))
		states = append(states, jen.Case(jen.Id(s.KindName)).Block(jen.Return(jen.Id("m").Dot("in"+s.GoName).Call(jen.Id("ev")))))
	}
	g.f.Add(paragraphs(
		"HandleEvent feeds ev to the machine: the rule for the current state and ev "+
			"decides the next state, runs its effect, and hands its actions to the Handler, in "+
			"order, before HandleEvent returns.",
		"When the current state rejects ev, HandleEvent returns a *RejectedError (see "+
			"ErrRejected) and the machine is unchanged; an ignored event returns nil. The "+
			"machine reads ev during the call and keeps no reference to it; a nil event it "+
			"would read is an error, which leaves the machine unchanged too. HandleEvent must "+
			"not be called from a Handler or Observer method."))
	body := []jen.Code{jen.If(jen.Id("m").Dot("busy")).Block(jen.Return(jen.Id("errReentrant")))}
	if len(g.m.Timers) > 0 {
		body = append(body, jen.If(jen.List(jen.Id("t"), jen.Id("ok")).Op(":=").Id("ev").Assert(jen.Op("*").Id("TimerFired")), jen.Id("ok")).Block(
			jen.Return(jen.Id("m").Dot("timerFired").Call(jen.Id("t")))))
	}
	if len(states) > 0 {
		body = append(body, jen.Switch(jen.Id("m").Dot("kind")).Block(states...))
	}
	body = append(body, jen.Return(jen.Id("m").Dot("otherwise").Call(jen.Id("ev"))))
	g.f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("HandleEvent").Params(jen.Id("ev").Id("Event")).Error().Block(body...)
	for _, m := range methods {
		g.f.Add(m)
	}
}

// splitAbove is the number of states above which HandleEvent calls one
// method per state instead of holding every rule itself.
const splitAbove = 64

// genOtherwise emits otherwise, which finishes the events the current
// state does not handle with rules of its own: those it ignores or
// rejects, then those it leaves to a "*" row, each "*" row written once:
//
//	func (m *Machine) otherwise(ev Event) error {
//		switch m.kind {
//		case StateA:
//			switch ev.(type) {
//			case *Y:
//				return m.reject(3)
//			}
//		}
//		if m.kind == 0 {
//			return m.unhandled(ev)
//		}
//		switch ev := ev.(type) {
//		case *Z:
//			<the "*" row for Z>
//		}
//		return m.unhandled(ev)
//	}
func (g *goGen) genOtherwise() {
	var states []jen.Code
	for _, s := range g.m.States {
		var evCases []jen.Code
		for _, c := range s.Refuses {
			r := c.Rules[0]
			evCases = append(evCases, jen.Case(jen.Op("*").Id(c.Event.GoName)).Block(g.refusal(r)))
		}
		if len(evCases) > 0 {
			states = append(states, jen.Case(jen.Id(s.KindName)).Block(jen.Switch(jen.Id("ev").Assert(jen.Type())).Block(evCases...)))
		}
	}
	var body []jen.Code
	if len(states) > 0 {
		body = append(body, jen.Switch(jen.Id("m").Dot("kind")).Block(states...))
	}
	body = append(body, g.sharedDispatch()...)
	body = append(body, jen.Return(jen.Id("m").Dot("unhandled").Call(jen.Id("ev"))))
	g.f.Comment("// otherwise finishes the events the current state does not handle with rules")
	g.f.Comment("// of its own: those it ignores or rejects, then those it leaves to a composite")
	g.f.Comment("// state it is in or to a \"*\" row.")
	g.f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("otherwise").Params(jen.Id("ev").Id("Event")).Error().Block(body...)
}

// refusal is the statement that finishes an ignore or reject rule.
func (g *goGen) refusal(r *fsm.Rule) jen.Code {
	finish := "reject"
	if r.Kind == fsm.Ignore {
		finish = "ignore"
	}
	return jen.Return(jen.Id("m").Dot(finish).Call(jen.Lit(r.Index)))
}

// leaveMethod names the method that takes the eventless rules of a
// transient state, e.g. "leaveProcessingLLMResponse".
func leaveMethod(s *fsm.State) string { return "leave" + s.GoName }

// genChoices emits, for each transient state, the method that takes its
// eventless rules.
func (g *goGen) genChoices() {
	for _, s := range g.m.States {
		if s.Choice == nil {
			continue
		}
		g.f.Comment(fmt.Sprintf("// %s takes the eventless rules of the transient state %s.", leaveMethod(s), s.Name))
		g.f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id(leaveMethod(s)).Params().Error().Block(g.cellBody(s.Choice)...)
	}
}

// cellBody emits the rules of a cell: straight code for one unguarded
// rule, or a switch over the guards:
//
//	switch {
//	case m.b.Guard(m.d.retries, ev.Error):
//		<rule>
//	default:
//		<else rule>
//	}
func (g *goGen) cellBody(c *fsm.Cell) []jen.Code {
	var out []jen.Code
	if c.ReadsEvent {
		// A nil event of a type with fields would panic where the rules
		// read it: refuse it first.
		out = append(out, jen.If(jen.Id("ev").Op("==").Nil()).Block(jen.Return(jen.Id("m").Dot("nilEvent").Call(jen.Id("ev")))))
	}
	if len(c.Rules) == 1 && c.Rules[0].Guard == nil {
		return append(append(out, comment("", c.Rules[0].Label)), g.ruleBody(c.Rules[0])...)
	}
	var cases []jen.Code
	for _, r := range c.Rules {
		body := append([]jen.Code{comment("", r.Label)}, g.ruleBody(r)...)
		if r.Guard != nil {
			cases = append(cases, jen.Case(jen.Id("m").Dot("b").Dot(r.Guard.GoName).Call(g.values(r.GuardArgs)...)).Block(body...))
		} else {
			cases = append(cases, jen.Default().Block(body...))
		}
	}
	return append(out, jen.Switch().Block(cases...))
}

// value renders a value a rule reads.
func (g *goGen) value(v fsm.Value) jen.Code {
	if v.Local != "" {
		return jen.Id(v.Local)
	}
	switch v.Source {
	case fsm.FromEvent:
		return jen.Id("ev").Dot(v.Field.GoName)
	case fsm.FromResult:
		return jen.Id(v.Result.Param)
	case fsm.FromTimer:
		return jen.Id("m").Dot("timers").Index(jen.Lit(v.Timer.Index)).Dot("id")
	case fsm.FromConst:
		return durationCode(v.Timer.Delay)
	}
	return jen.Id("m").Dot("d").Dot(v.Data.GoName)
}

func (g *goGen) values(vs []fsm.Value) []jen.Code {
	out := make([]jen.Code, 0, len(vs))
	for _, v := range vs {
		out = append(out, g.value(v))
	}
	return out
}

// ruleBody emits one rule:
//
//	prevX := m.d.x                                  // values an action reads before the rule changes them
//	conversation, retries := m.b.Effect(m.d.conversation, ev.Message)
//	m.d.conversation = conversation                 // stores: the effect's results, fields from the event
//	m.d.retries = retries
//	m.d.response = chat.Response{}                  // clears: the source state's fields the target lacks
//	m.kind = StateB
//	m.start(7, StateA)                              // tell the observer
//	m.h.SendLLMRequest(request)                     // actions, in order
//	return m.finish()
//
// A "*" rule that moves does not know which state it leaves: it keeps the
// target's storage and zeroes the rest (m.d = fsmData{...}).
func (g *goGen) ruleBody(r *fsm.Rule) []jen.Code {
	if r.Kind != fsm.Transition {
		return []jen.Code{g.refusal(r)}
	}
	var out []jen.Code
	from := jen.Id("from")
	if r.Shared() {
		out = append(out, jen.Id("from").Op(":=").Id("m").Dot("kind"))
	} else {
		from = jen.Id(r.From.KindName)
	}
	for _, c := range r.Captures {
		out = append(out, jen.Id(c.Local).Op(":=").Id("m").Dot("d").Dot(c.Data.GoName))
	}
	for _, run := range r.Exits {
		out = append(out, g.runCompute(run, from)...)
	}
	if e := r.Effect; e != nil {
		call := jen.Id("m").Dot("b").Dot(e.GoName).Call(g.values(r.EffectArgs)...)
		var locals []jen.Code
		for _, set := range e.Sets {
			locals = append(locals, jen.Id(set.Param))
		}
		out = append(out, jen.List(locals...).Op(":=").Add(call))
	}
	if r.Shared() && r.To != nil {
		var keep []jen.Code
		for _, d := range r.Keeps {
			keep = append(keep, kv(d.GoName, jen.Id("m").Dot("d").Dot(d.GoName)))
		}
		out = append(out, jen.Id("m").Dot("d").Op("=").Id("fsmData").Values(keep...))
	}
	for _, st := range r.Stores {
		out = append(out, jen.Id("m").Dot("d").Dot(st.Data.GoName).Op("=").Add(g.value(st.Value)))
	}
	for _, d := range r.Clears {
		out = append(out, jen.Id("m").Dot("d").Dot(d.GoName).Op("=").Add(zeroValue(g.m, d)))
	}
	if r.To != nil && r.To != r.From {
		out = append(out, jen.Id("m").Dot("kind").Op("=").Id(r.To.KindName))
	}
	for _, run := range r.Entries {
		out = append(out, g.runCompute(run, from)...)
	}
	if t := r.Spends; t != nil {
		out = append(out, jen.Id("m").Dot("timers").Index(jen.Lit(t.Index)).Dot("id").Op("=").Lit(0).Comment("// the timer has fired: it runs no more"))
	}
	out = append(out, jen.Id("m").Dot("start").Call(jen.Lit(r.Index), from))
	for _, run := range r.Exits {
		out = append(out, g.runActions(run, from)...)
	}
	if r.To != nil && r.To.Transient {
		// The eventless rule that leaves the transient state hands out
		// the rest of the step's actions; this rule has none of its own.
		for _, run := range r.Entries {
			out = append(out, g.runActions(run, from)...)
		}
		return append(out, jen.Return(jen.Id("m").Dot(leaveMethod(r.To)).Call()))
	}
	for _, e := range r.Actions {
		out = append(out, g.emitAction(e)...)
	}
	for _, run := range r.Entries {
		out = append(out, g.runActions(run, from)...)
	}
	return append(out, jen.Return(jen.Id("m").Dot("finish").Call()))
}

// genSteps emits the helpers that tell the observer and finish refusals.
func (g *goGen) genSteps() {
	f, m := g.f, g.m
	recv := jen.Id("m").Op("*").Id("Machine")
	f.Comment("// start begins handing out the step of rule i from state from: it tells the")
	f.Comment("// observer, if any, and refuses calls of HandleEvent until finish.")
	f.Func().Params(recv.Clone()).Id("start").Params(jen.Id("i").Int(), jen.Id("from").Id("StateKind")).Block(
		jen.Id("m").Dot("busy").Op("=").True(),
		jen.If(jen.Id("m").Dot("obs").Op("!=").Nil()).Block(jen.Id("m").Dot("step").Call(jen.Id("i"), jen.Id("from"))))
	f.Comment("// finish ends the step that start began.")
	f.Func().Params(recv.Clone()).Id("finish").Params().Error().Block(
		jen.Id("m").Dot("busy").Op("=").False(),
		jen.Return(jen.Nil()))
	f.Comment("// step tells the observer, which is set, that rule i moved the machine from")
	f.Comment("// state from.")
	f.Func().Params(recv.Clone()).Id("step").Params(jen.Id("i").Int(), jen.Id("from").Id("StateKind")).Block(
		jen.Id("m").Dot("obs").Call(jen.Id("Step").Values(
			kv("From", jen.Id("from")),
			kv("Event", jen.Id("fsmRules").Index(jen.Id("i")).Dot("Event")),
			kv("Rule", jen.Id("i")),
			kv("To", jen.Id("m").Dot("kind")))))
	tell := func() jen.Code {
		return jen.Id("m").Dot("start").Call(jen.Id("i"), jen.Id("m").Dot("kind"))
	}
	if m.Ignores {
		f.Comment("// ignore finishes rule i, which drops its event.")
		f.Func().Params(recv.Clone()).Id("ignore").Params(jen.Id("i").Int()).Error().Block(
			tell(), jen.Return(jen.Id("m").Dot("finish").Call()))
	}
	if m.Rejects {
		f.Comment("// reject finishes rule i, which refuses its event.")
		f.Func().Params(recv.Clone()).Id("reject").Params(jen.Id("i").Int()).Error().Block(
			tell(),
			jen.Id("m").Dot("busy").Op("=").False(),
			jen.Return(jen.Op("&").Id("RejectedError").Values(
				kv("State", jen.Id("m").Dot("kind")),
				kv("Event", jen.Id("fsmRules").Index(jen.Id("i")).Dot("Event")),
				kv("Reason", jen.Id("fsmRules").Index(jen.Id("i")).Dot("Reason")))))
	}
	if m.ReadsEvents {
		f.Comment("// nilEvent reports a nil event pointer, which HandleEvent refuses where its")
		f.Comment("// rules would read the event.")
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
//	func (v A) MarshalJSON() ([]byte, error)   // {"kind":"a", ...fields}
//	func UnmarshalState(data []byte) (State, error)
func (g *goGen) genJSON() {
	f, m := g.f, g.m
	for _, ks := range kindSets {
		ds := decls(m, ks.what)
		for _, d := range ds {
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
		wrap := "fsmAsPointer"
		if ks.what == "state" {
			wrap = "fsmAsValue"
		}
		var cases []jen.Code
		for _, d := range ds {
			cases = append(cases, jen.Case(jen.Lit(d.Snake)).Block(
				jen.Return(jen.Id(wrap).Types(jen.Id(d.GoName), jen.Id(ks.iface)).Call(jen.Id("fsmDecodeAs").Types(jen.Id(d.GoName)).Call(jen.Id("data"), jen.Lit(ks.what+" "+d.Snake))))))
		}
		cases = append(cases, jen.Default().Block(jen.Return(jen.Nil(), jen.Qual(pkgFmt, "Errorf").Call(
			jen.Lit(m.Package+": decode "+ks.what+": unknown kind %q"), jen.Id("kind")))))
		f.Comment(fmt.Sprintf("// Unmarshal%s decodes %s %s written by its MarshalJSON method.", ks.iface, article(ks.what), ks.what))
		f.Func().Id("Unmarshal"+ks.iface).Params(jen.Id("data").Index().Byte()).Params(jen.Id(ks.iface), jen.Error()).Block(
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
