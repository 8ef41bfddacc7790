package emit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// Import paths the generated code uses, in one place.
const (
	pkgJSON  = "encoding/json"
	pkgFsmrt = "github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// goGen emits the machine's Go package.
type goGen struct {
	m *fsm.Machine
	f *jen.File
}

// GoFile returns the generated package for m as a jennifer file.
func GoFile(m *fsm.Machine) *jen.File {
	g := &goGen{m: m, f: newFile(m, m.Package)}
	g.genPackageDoc()
	g.genVersion()
	g.genKinds()
	g.genInterfaces()
	g.genDecls()
	g.genBehavior()
	g.genHandler()
	g.genConfig()
	g.genRules()
	g.genMachine()
	g.genHandleEvent()
	g.genOtherwise()
	g.genChoices()
	g.genTakes()
	g.genTimers()
	g.genUnmarshal()
	return g.f
}

// kv is one keyed element of a composite literal. Literals are written
// with kv in the order of the type's fields, as by hand (jen.Dict sorts
// its keys).
func kv(key string, val jen.Code) jen.Code { return jen.Id(key).Op(":").Add(val) }

// short completes a function declaration with a body of one line, which
// gofmt keeps on one line when it fits: func (A) Kind() StateKind { return StateA }.
func short(decl *jen.Statement, stmts ...jen.Code) *jen.Statement {
	decl.Op("{")
	for i, s := range stmts {
		if i > 0 {
			decl.Op(";")
		}
		decl.Add(s)
	}
	return decl.Op("}")
}

// filled writes strings as the elements of a composite literal, as many
// on a line as fit in about 80 columns.
func filled(ss []string) func(*jen.Group) {
	return func(grp *jen.Group) {
		width := 80
		for _, s := range ss {
			lit := fmt.Sprintf("%q", s)
			if width+len(lit)+2 > 80 {
				grp.Line().Lit(s)
				width = 0
			} else {
				grp.Lit(s)
			}
			width += len(lit) + 2
		}
		grp.Line()
	}
}

// rt names an identifier of package fsmrt.
func rt(name string) *jen.Statement { return jen.Qual(pkgFsmrt, name) }

// kinds are the type arguments of fsmrt's machine types.
func kinds(n int) []jen.Code {
	return []jen.Code{jen.Id("StateKind"), jen.Id("EventKind"), jen.Id("ActionKind")}[:n]
}

// core is the machine's fsmrt.Core, m.core.
func core() *jen.Statement { return jen.Id("m").Dot("core") }

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
	lines := paragraphLines(
		fmt.Sprintf("Package %s implements the %s state machine of %s.", m.Package, m.Name, strings.Join(docLines(m.SpecFile), " ")),
		m.Doc,
		"Feed events to a Machine with HandleEvent: it decides what happens, "+
			"calls the guards and effects of its Behavior, and hands the actions to perform "+
			"to its Handler, in order. The machine is synchronous and deterministic: it does "+
			"no I/O, and the same events always give the same actions, so an event log replays exactly.",
	)
	for _, l := range lines {
		g.f.PackageComment(strings.TrimRight("// "+l, " "))
	}
}

// genVersion emits the compile-time check that the file and package fsmrt
// were made for each other:
//
//	const (
//		_ = fsmrt.RegenerateWithNewerFsmgen(3 - fsmrt.MinVersion)
//		_ = fsmrt.UpgradeFsmgenRuntime(fsmrt.MaxVersion - 3)
//	)
func (g *goGen) genVersion() {
	g.f.Comment("// This file needs the package fsmrt of the fsmgen that wrote it.")
	g.f.Const().Defs(
		jen.Id("_").Op("=").Add(rt("RegenerateWithNewerFsmgen")).Call(jen.Lit(fsmrt.GenVersion).Op("-").Add(rt("MinVersion"))),
		jen.Id("_").Op("=").Add(rt("UpgradeFsmgenRuntime")).Call(rt("MaxVersion").Op("-").Lit(fsmrt.GenVersion)),
	)
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
//	func (k StateKind) String() string { return fsmrt.KindName(k, "StateKind", fsmStateNames[:]) }
//	var fsmStateNames = [...]string{"A", ...}
func (g *goGen) genKinds() {
	for _, ks := range kindSets {
		ds := decls(g.m, ks.what)
		g.f.Add(comment("", fmt.Sprintf("%s identifies %s %s of the %s machine. The zero %s is no %s.", ks.kind, article(ks.what), ks.what, g.m.Name, ks.kind, ks.what)))
		g.f.Type().Id(ks.kind).Add(kindType(len(ds)))
		if len(ds) == 0 {
			g.f.Comment(fmt.Sprintf("// String returns %s(k): the machine has no %ss.", ks.kind, ks.what))
			short(g.f.Func().Params(jen.Id("k").Id(ks.kind)).Id("String").Params().String(),
				jen.Return(rt("KindName").Call(jen.Id("k"), jen.Lit(ks.kind), jen.Nil())))
			continue
		}
		consts := make([]jen.Code, 0, len(ds))
		names := make([]string, 0, len(ds))
		for i, d := range ds {
			c := jen.Id(d.KindName)
			if i == 0 {
				c.Id(ks.kind).Op("=").Iota().Op("+").Lit(1)
			}
			consts = append(consts, c)
			names = append(names, d.Name)
		}
		g.f.Add(comment("", fmt.Sprintf("The %ss of the %s machine: %s identifies the %s %s, and so on.", ks.what, g.m.Name, ds[0].KindName, ks.what, ds[0].Name)))
		g.f.Const().Defs(consts...)
		namesVar := "fsm" + ks.iface + "Names"
		g.f.Comment(fmt.Sprintf("// String returns the %s's name as the spec writes it.", ks.what))
		short(g.f.Func().Params(jen.Id("k").Id(ks.kind)).Id("String").Params().String(),
			jen.Return(rt("KindName").Call(jen.Id("k"), jen.Lit(ks.kind), jen.Id(namesVar).Index(jen.Op(":")))))
		g.f.Comment(fmt.Sprintf("// %s are the names of the %ss, in kind order.", namesVar, ks.what))
		g.f.Var().Id(namesVar).Op("=").Index(jen.Op("...")).String().ValuesFunc(filled(names))
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
// and MarshalJSON methods, e.g.
//
//	// CallingLLM is the state CallingLlm: <doc>
//	type CallingLLM struct { Retries int `json:"retries"` }
//
//	// Kind returns StateCallingLLM.
//	func (CallingLLM) Kind() StateKind { return StateCallingLLM }
//	func (CallingLLM) isState()         {}
//
//	// MarshalJSON encodes the state as {"kind": "calling_llm", ...its fields}.
//	func (v CallingLLM) MarshalJSON() ([]byte, error) {
//		type fields CallingLLM
//		return fsmrt.MarshalKind("calling_llm", fields(v))
//	}
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
				fields = append(fields, c.Id(fd.GoName).Add(goType(fd.GoType)).Tag(map[string]string{"json": fd.JSONName}))
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
			short(g.f.Func().Params(recv.Clone()).Id("Kind").Params().Id(ks.kind), jen.Return(jen.Id(d.KindName)))
			short(g.f.Func().Params(recv.Clone()).Id(ks.marker).Params())
			g.f.Comment(fmt.Sprintf("// MarshalJSON encodes the %s as {\"kind\": %q, ...its fields}.", ks.what, d.Snake))
			sig := jen.Func().Params(jen.Id("v").Id(d.GoName)).Id("MarshalJSON").Params().Params(jen.Index().Byte(), jen.Error())
			if len(d.Fields) == 0 {
				g.f.Add(short(jen.Func().Params(jen.Id(d.GoName)).Id("MarshalJSON").Params().Params(jen.Index().Byte(), jen.Error()),
					jen.Return(jen.Index().Byte().Call(rawString(fmt.Sprintf(`{"kind":%q}`, d.Snake))), jen.Nil())))
				continue
			}
			g.f.Add(sig.Block(
				jen.Type().Id("fields").Id(d.GoName),
				jen.Return(rt("MarshalKind").Call(jen.Lit(d.Snake), jen.Id("fields").Call(jen.Id("v")))),
			))
		}
	}
}

// params returns the named parameters of a guard or effect, or of an
// action's Handler method: one per field.
func params(fields []*fsm.Field) []jen.Code {
	var ps []jen.Code
	for _, f := range fields {
		ps = append(ps, jen.Id(f.Param).Add(goType(f.GoType)))
	}
	return ps
}

// fieldNames lists fields by name for docs.
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

// usedFuncs returns the guards and the effects the machine calls, in spec
// order.
func usedFuncs(m *fsm.Machine) []*fsm.Func {
	var out []*fsm.Func
	for _, fn := range append(slices.Clip(m.Guards), m.Effects...) {
		if fn.Used() {
			out = append(out, fn)
		}
	}
	return out
}

// genBehavior emits the interface the hand-written guards and effects
// satisfy, one method per guard or effect, its signature following from
// what it reads and sets:
//
//	type Behavior interface {
//		// CanRetry reports ...
//		CanRetry(err chat.LLMError, retries int) bool
//		// ScheduleRetry counts ...
//		ScheduleRetry(retries int, err chat.LLMError) (int, chat.ErrorOrigin, int, time.Duration)
//	}
func (g *goGen) genBehavior() {
	if !g.m.HasBehavior() {
		return
	}
	var methods []jen.Code
	for _, fn := range usedFuncs(g.m) {
		c := jen.Add(funcDoc(fn)).Line().Id(fn.GoName).Params(params(fn.Reads)...)
		if fn.Kind == fsm.Guard {
			c.Bool()
		} else {
			var rs []jen.Code
			for _, f := range fn.Sets {
				rs = append(rs, goType(f.GoType))
			}
			c.Params(rs...)
		}
		methods = append(methods, c)
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
		method := jen.Add(comment(a.GoName+" ", doc)).Line().Id(a.GoName).Params(params(a.Fields)...)
		if a == m.StartTimer {
			method.Add(jen.Qual("time", "Time"))
		}
		methods = append(methods, method)
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
	fields := []jen.Code{
		jen.Comment("// Actions are the actions performed so far, oldest first."),
		jen.Id("Actions").Index().Id("Action"),
	}
	if m.StartTimer != nil {
		fields = append(fields,
			jen.Comment("// Now is the time StartTimer counts deadlines from: a timer started with"),
			jen.Comment("// delay d fires at Now plus d."),
			jen.Id("Now").Qual("time", "Time"))
	}
	g.f.Type().Id("Recorder").Struct(fields...)
	for _, a := range m.Actions {
		var vals []jen.Code
		for _, fd := range a.Fields {
			vals = append(vals, kv(fd.GoName, jen.Id(fd.Param)))
		}
		record := jen.Id("r").Dot("Actions").Op("=").Append(jen.Id("r").Dot("Actions"), jen.Op("&").Id(a.GoName).Values(vals...))
		sig := jen.Func().Params(jen.Id("r").Op("*").Id("Recorder")).Id(a.GoName).Params(params(a.Fields)...)
		if a == m.StartTimer {
			g.f.Comment("// StartTimer records a StartTimer and returns its deadline, Now plus delay.")
			g.f.Add(short(sig.Qual("time", "Time"), record, jen.Return(jen.Id("r").Dot("Now").Dot("Add").Call(jen.Id(a.Fields[1].Param)))))
			continue
		}
		g.f.Comment(fmt.Sprintf("// %s records %s %s.", a.GoName, article(a.GoName), a.GoName))
		g.f.Add(short(sig, record))
	}
}

// genConfig emits Config, what New and Restore take: the behaviour and
// the handler when the machine has them, and the initial state's data
// when it has fields. A spec that gains its first guard, action or
// initial field adds a field to Config; New and Restore keep their shape.
func (g *goGen) genConfig() {
	m := g.m
	var fields []jen.Code
	var needs []string
	if m.HasBehavior() {
		needs = append(needs, "its guards and effects (Behavior)")
		fields = append(fields, jen.Comment("// Behavior holds the guards and effects, written by hand. It must not be nil."), jen.Id("Behavior").Id("Behavior"))
	}
	if m.HasHandler() {
		needs = append(needs, "whatever performs its actions (Handler)")
		fields = append(fields, jen.Comment("// Handler performs the actions. It must not be nil."), jen.Id("Handler").Id("Handler"))
	}
	if len(m.Initial.Fields) > 0 {
		needs = append(needs, "the data it starts with (Initial)")
		fields = append(fields,
			jen.Add(comment("", fmt.Sprintf("Initial is the data of the initial state, %s, that New starts the machine with; Restore, which is given a state, does not use it.", m.Initial.Name))),
			jen.Id("Initial").Id(m.Initial.GoName))
	}
	doc := fmt.Sprintf("Config is what New and Restore make a %s machine with: %s.", m.Name, list(needs))
	if len(needs) == 0 {
		doc = fmt.Sprintf("Config is what New and Restore make a %s machine with. The machine has no guards, effects, actions or initial data, so it is empty; should the spec gain them, Config gains fields and New and Restore keep their shape.", m.Name)
	}
	g.f.Add(comment("", doc))
	g.f.Type().Id("Config").Struct(fields...)
}

// genRules emits the aliases of fsmrt's types and the rule table:
//
//	type Rule = fsmrt.Rule[StateKind, EventKind, ActionKind]
//	var fsmDesc = fsmrt.Desc[StateKind, EventKind, ActionKind]{Package: "p", Machine: "M", Rules: []Rule{...}}
//	func Rules() []Rule { return fsmDesc.CopyRules() }
func (g *goGen) genRules() {
	f, m := g.f, g.m
	f.Comment("// Rule is a rule of the machine; Rules returns them all.")
	f.Type().Id("Rule").Op("=").Add(rt("Rule")).Types(kinds(3)...)
	f.Comment("// Step is a step the machine takes, which its observer is given (see")
	f.Comment("// SetObserver).")
	f.Type().Id("Step").Op("=").Add(rt("Step")).Types(kinds(2)...)
	f.Comment("// RejectedError reports an event the current state refused; it wraps")
	f.Comment("// fsmrt.ErrRejected.")
	f.Type().Id("RejectedError").Op("=").Add(rt("RejectedError")).Types(kinds(2)...)
	if len(m.Timers) > 0 {
		f.Comment("// TimerID identifies a timer the machine started, numbered from 1 as the")
		f.Comment("// machine starts them.")
		f.Type().Id("TimerID").Op("=").Add(rt("TimerID"))
	}
	f.Comment("// fsmDesc describes the machine to package fsmrt; its rule table is indexed by")
	f.Comment("// Step.Rule.")
	desc := []jen.Code{kv("Package", jen.Lit(m.Package)), kv("Machine", jen.Lit(m.Name)), kv("Shape", jen.Lit(m.Shape))}
	var more []jen.Code // the members that need lines of their own
	if len(m.Timers) > 0 {
		var timers []jen.Code
		for _, t := range m.Timers {
			first, last := t.State, t.State
			if t.State.Composite() {
				first, last = t.State.First, t.State.Last
			}
			fields := []jen.Code{kv("State", jen.Lit(t.State.Snake)), kv("First", jen.Id(first.KindName)), kv("Last", jen.Id(last.KindName))}
			if len(t.State.RenamedFrom) > 0 {
				var was []jen.Code
				for _, old := range t.State.RenamedFrom {
					was = append(was, jen.Lit(fsm.SnakeName(old)))
				}
				fields = append(fields, kv("Was", jen.Index().String().Values(was...)))
			}
			timers = append(timers, jen.Values(fields...))
		}
		more = append(more, kv("Timers", jen.Index().Add(rt("TimerOf")).Types(jen.Id("StateKind")).Values(timers...)))
	}
	if renamed := renamedFields(m); len(renamed) > 0 {
		more = append(more, kv("Renamed", jen.Map(jen.String()).Map(jen.String()).String().ValuesFunc(table(renamed))))
	}
	rules := kv("Rules", jen.Index().Id("Rule").ValuesFunc(table(ruleValues(m))))
	if len(more) == 0 {
		desc = append(desc, rules)
	} else {
		// One member a line.
		for i, c := range append(append(desc, more...), rules) {
			if i < len(desc) {
				desc[i] = jen.Line().Add(c)
			} else {
				desc = append(desc, jen.Line().Add(c))
			}
		}
		desc = append(desc, jen.Line())
	}
	f.Var().Id("fsmDesc").Op("=").Add(rt("Desc")).Types(kinds(3)...).Values(desc...)
	f.Comment("// Rules returns the rule table, which Step.Rule indexes: the rules of each state")
	f.Comment("// in spec order, then those states share, then the timers'.")
	short(f.Func().Id("Rules").Params().Index().Id("Rule"), jen.Return(jen.Id("fsmDesc").Dot("CopyRules").Call()))
}

// ruleValues are the entries of the rule table.
func ruleValues(m *fsm.Machine) []jen.Code {
	var out []jen.Code
	for _, r := range m.Rules {
		out = append(out, ruleValue(r))
	}
	return out
}

// renamedFields returns, for each state, event and action with fields
// renamed (renamed_from), the entry of the map from its old JSON names to
// its new ones: "state created": {"order_idd": "order_id"}.
func renamedFields(m *fsm.Machine) []jen.Code {
	var out []jen.Code
	for _, ks := range kindSets {
		for _, d := range decls(m, ks.what) {
			var pairs []jen.Code
			for _, f := range d.Fields {
				for _, old := range f.RenamedFrom {
					pairs = append(pairs, jen.Lit(fsm.SnakeName(old)).Op(":").Lit(f.JSONName))
				}
			}
			if len(pairs) > 0 {
				out = append(out, jen.Lit(ks.what+" "+d.Snake).Op(":").Values(pairs...))
			}
		}
	}
	return out
}

// ruleKind names the fsmrt constant of a rule's kind.
func ruleKind(k fsm.RuleKind) *jen.Statement {
	return rt([...]string{"RuleTransition", "RuleIgnore", "RuleReject"}[k])
}

// ruleValue is the table entry of a rule, its fields in order.
func ruleValue(r *fsm.Rule) jen.Code {
	d := []jen.Code{kv("Kind", ruleKind(r.Kind))}
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
//	type Machine struct { core fsmrt.Core[...]; b Behavior; h Handler; d fsmData }
//	func New(c Config) (*Machine, error)
//	func Restore(c Config, s State) (*Machine, error)
//	func (m *Machine) State() State
func (g *goGen) genMachine() {
	f, m := g.f, g.m
	if len(m.Data) > 0 {
		var data []jen.Code
		for _, d := range m.Data {
			var owners []string
			for _, s := range d.States {
				owners = append(owners, s.Name)
			}
			data = append(data, jen.Add(comment("", d.GoName+" is the field "+d.Name+" of "+list(owners)+".")).Line().Id(d.GoName).Add(goType(d.GoType)))
		}
		f.Comment("// fsmData is the machine's storage: the fields of every state, once per name")
		f.Comment("// and type. The current state's fields hold its data; the others are zero.")
		f.Type().Id("fsmData").Struct(data...)
	}

	f.Add(comment("", fmt.Sprintf("Machine runs the %s state machine. Create it with New or Restore. It is not safe for "+
		"concurrent use: one goroutine owns it and feeds it one event at a time.", m.Name)))
	fields := []jen.Code{jen.Id("core").Add(rt("Core")).Types(kinds(3)...)}
	init := []jen.Code{kv("core", rt("NewCore").Call(jen.Op("&").Id("fsmDesc"), jen.Id("s")))}
	var checks []jen.Code
	for _, dep := range []struct {
		name, field string
		has         bool
	}{{"Behavior", "b", m.HasBehavior()}, {"Handler", "h", m.HasHandler()}} {
		if !dep.has {
			continue
		}
		fields = append(fields, jen.Id(dep.field).Id(dep.name))
		init = append(init, kv(dep.field, jen.Id("c").Dot(dep.name)))
		checks = append(checks, jen.If(jen.Id("c").Dot(dep.name).Op("==").Nil()).Block(
			jen.Return(jen.Nil(), jen.Id("fsmDesc").Dot("NoDependency").Call(jen.Lit(dep.name)))))
	}
	if len(m.Data) > 0 {
		fields = append(fields, jen.Id("d").Id("fsmData"))
	}
	if len(m.Timers) > 0 {
		fields = append(fields,
			jen.Comment("// timers holds each state's running timer, valid while the state is active;"),
			jen.Comment("// lastTimer is the id of the last timer started."),
			jen.Id("timers").Index(jen.Lit(len(m.Timers))).Add(rt("Timer")),
			jen.Id("lastTimer").Id("TimerID"))
	}
	f.Type().Id("Machine").Struct(fields...)

	f.Comment("// fsmNew returns a machine in state s with c's behaviour and handler, or the")
	f.Comment("// error of a nil one.")
	f.Func().Id("fsmNew").Params(jen.Id("c").Id("Config"), jen.Id("s").Id("StateKind")).Params(jen.Op("*").Id("Machine"), jen.Error()).Block(
		append(checks, jen.Return(jen.Op("&").Id("Machine").Values(init...), jen.Nil()))...)

	ini := m.Initial
	newDoc := fmt.Sprintf("New returns a machine in the initial state %s", ini.Name)
	if len(ini.Fields) > 0 {
		newDoc += ", with the data c.Initial holds"
	}
	newDoc += "."
	if len(m.Start) > 0 {
		newDoc += " Entering it, the machine hands the actions of its entry (and of its ancestors', outermost first) to c.Handler before New returns."
	}
	if len(checks) > 0 {
		newDoc += " It fails when c lacks what the machine needs."
	}
	f.Add(comment("", newDoc))
	newBody := append(storeState(ini, jen.Id("c").Dot("Initial")), g.startBody()...)
	if len(newBody) == 0 {
		newBody = []jen.Code{jen.Return(jen.Id("fsmNew").Call(jen.Id("c"), jen.Id(ini.KindName)))}
	} else {
		newBody = append([]jen.Code{
			jen.List(jen.Id("m"), jen.Err()).Op(":=").Id("fsmNew").Call(jen.Id("c"), jen.Id(ini.KindName)),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
		}, newBody...)
		newBody = append(newBody, jen.Return(jen.Id("m"), jen.Nil()))
	}
	f.Func().Id("New").Params(jen.Id("c").Id("Config")).Params(jen.Op("*").Id("Machine"), jen.Error()).Block(newBody...)

	g.genRestore()
	g.genSaved()

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
		jen.Switch(core().Dot("State")).Block(scases...),
		jen.Return(jen.Nil()),
	)
	f.Comment("// Kind returns the kind of the current state.")
	short(f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("Kind").Params().Id("StateKind"), jen.Return(core().Dot("State")))
	f.Comment("// SetObserver makes the machine call o after every step, before the step's")
	f.Comment("// actions are handed to the Handler; nil removes the observer.")
	short(f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("SetObserver").Params(jen.Id("o").Func().Params(jen.Id("Step"))),
		core().Dot("SetObserver").Call(jen.Id("o")))
}

// genRestore emits put, which puts the machine in a state with its data,
// and Restore:
//
//	func Restore(c Config, s State) (*Machine, error) {
//		m, err := fsmNew(c, 0)
//		...
//		if err := m.put(s); err != nil { return nil, err }
//		m.startTimers() // with timers
//		return m, nil
//	}
//	func (m *Machine) put(s State) error { switch s := s.(type) { case A: m.core.State = StateA; m.d.x = s.X ... } }
func (g *goGen) genRestore() {
	f, m := g.f, g.m
	var cases, bare []jen.Code
	for _, s := range m.States {
		if s.Transient {
			cases = append(cases, jen.Case(jen.Id(s.GoName)).Block(jen.Return(jen.Nil(), jen.Id("fsmDesc").Dot("Transient").Call(jen.Lit(s.Name)))))
			continue
		}
		if len(s.Fields) == 0 {
			bare = append(bare, jen.Id(s.GoName))
			continue
		}
		body := append([]jen.Code{core().Dot("State").Op("=").Id(s.KindName)}, storeState(s, jen.Id("s"))...)
		cases = append(cases, jen.Case(jen.Id(s.GoName)).Block(body...))
	}
	if len(bare) > 0 {
		// The states without fields: their kind is all there is to put.
		cases = append([]jen.Code{jen.Case(bare...).Block(core().Dot("State").Op("=").Id("s").Dot("Kind").Call())}, cases...)
	}
	cases = append(cases, jen.Default().Block(jen.Return(jen.Nil(), jen.Id("fsmDesc").Dot("Unrestorable").Call(jen.Id("s")))))
	restoreDoc := "Restore returns a machine in state s, e.g. one decoded by UnmarshalState, with c's behaviour and handler; it does not run s's entry."
	if len(m.Initial.Fields) > 0 {
		restoreDoc = "Restore returns a machine in state s, e.g. one decoded by UnmarshalState, with c's behaviour and handler (not c.Initial); it does not run s's entry."
	}
	if len(m.Timers) > 0 {
		restoreDoc += " The timers of s and its ancestors run, numbered afresh from 1, with no deadline known: see Timers; Load restores a saved machine's timers as they were."
	}
	f.Add(comment("", restoreDoc+" It fails for a transient state, which is left in the step that enters it."))
	body := []jen.Code{
		jen.List(jen.Id("m"), jen.Err()).Op(":=").Id("fsmNew").Call(jen.Id("c"), jen.Lit(0)),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
	}
	if len(m.Timers) > 0 {
		body = append(body,
			jen.If(jen.List(jen.Id("m"), jen.Err()).Op("=").Id("m").Dot("put").Call(jen.Id("s")), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
			jen.Id("m").Dot("startTimers").Call(),
			jen.Return(jen.Id("m"), jen.Nil()))
	} else {
		body = append(body, jen.Return(jen.Id("m").Dot("put").Call(jen.Id("s"))))
	}
	f.Func().Id("Restore").Params(jen.Id("c").Id("Config"), jen.Id("s").Id("State")).Params(jen.Op("*").Id("Machine"), jen.Error()).Block(body...)
	putDoc := "// put puts the machine in state s, with its data, and returns it."
	tail := []jen.Code{jen.Return(jen.Id("m"), jen.Nil())}
	if len(m.Timers) > 0 {
		putDoc = "// put puts the machine in state s, with its data, and returns it; the timers\n// it runs must belong to s or its ancestors."
		tail = []jen.Code{
			jen.If(jen.Err().Op(":=").Id("fsmDesc").Dot("CheckTimers").Call(core().Dot("State"), jen.Id("m").Dot("timers").Index(jen.Op(":"))), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
			jen.Return(jen.Id("m"), jen.Nil()),
		}
	}
	f.Comment(putDoc)
	f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("put").Params(jen.Id("s").Id("State")).Params(jen.Op("*").Id("Machine"), jen.Error()).Block(
		append([]jen.Code{jen.Switch(jen.Id("s").Op(":=").Id("s").Assert(jen.Type())).Block(cases...)}, tail...)...)
}

// genSaved emits Save and Load, which save a machine, its running timers
// and their deadlines included, and read it back, strictly:
//
//	func (m *Machine) Save() ([]byte, error) { return fsmDesc.Save(m.State(), m.timers[:], m.lastTimer) }
//	func Load(c Config, data []byte) (*Machine, error)
func (g *goGen) genSaved() {
	f, m := g.f, g.m
	timers, last := jen.Nil(), jen.Lit(0)
	saveDoc := "Save returns the machine as JSON, for Load: its name, the fingerprint of its saved shape and its state (see docs/spec.md)."
	loadDoc := "Load returns the machine Save saved, with c's behaviour and handler, in its state; it hands out no action."
	if len(m.Timers) > 0 {
		timers, last = jen.Id("m").Dot("timers").Index(jen.Op(":")), jen.Id("m").Dot("lastTimer")
		saveDoc = "Save returns the machine as JSON, for Load: its name, the fingerprint of its " +
			"saved shape, its state and, for each running timer, its id and deadline. Save after an " +
			"event and before performing its actions, and a timer's firing is handled once, whatever " +
			"moment the process is killed (see docs/spec.md)."
		loadDoc = "Load returns the machine Save saved, with c's behaviour and handler, in its state " +
			"and with its timers running as they were (see Timers and Deadline); it hands out no action."
	}
	f.Add(paragraphs(saveDoc))
	short(f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("Save").Params().Params(jen.Index().Byte(), jen.Error()),
		jen.Return(jen.Id("fsmDesc").Dot("Save").Call(jen.Id("m").Dot("State").Call(), timers.Clone(), last.Clone())))
	lastArg := jen.Nil()
	if len(m.Timers) > 0 {
		lastArg = jen.Op("&").Id("m").Dot("lastTimer")
	}
	f.Add(paragraphs(loadDoc + " It reads strictly: unknown fields, fields in another case and fields " +
		"given twice are refused, naming them. Data saved by an earlier revision of the spec loads when " +
		"the states and fields it names still exist, or were renamed with renamed_from; a field it lacks " +
		"loads as its zero value."))
	f.Func().Id("Load").Params(jen.Id("c").Id("Config"), jen.Id("data").Index().Byte()).Params(jen.Op("*").Id("Machine"), jen.Error()).Block(
		jen.List(jen.Id("m"), jen.Err()).Op(":=").Id("fsmNew").Call(jen.Id("c"), jen.Lit(0)),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
		jen.List(jen.Id("s"), jen.Err()).Op(":=").Add(rt("LoadState")).Call(jen.Op("&").Id("fsmDesc"), jen.Id("data"), timers.Clone(), lastArg, jen.Id("UnmarshalState")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
		jen.Return(jen.Id("m").Dot("put").Call(jen.Id("s"))),
	)
}

// genHandleEvent emits the exhaustive nested switch, state then event,
// with the rules of each cell a state handles written out in its case
// (see cellBody). What a state ignores or rejects, and what it leaves to a
// "*" row, goes to otherwise:
//
//	func (m *Machine) HandleEvent(ev Event) error {
//		if m.core.Busy {
//			return m.core.Reentrant()
//		}
//		switch m.core.State {
//		case StateA:
//			switch ev := ev.(type) {
//			case *X:
//				...
//				return m.core.Finish()
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
		"HandleEvent feeds ev to the machine: the rule for the current state and ev " +
			"decides the next state, runs its effect and hands its actions to the Handler, in " +
			"order, before HandleEvent returns. A rejected event returns a *RejectedError and " +
			"changes nothing, as does a nil event a rule would read; an ignored one returns nil. " +
			"The machine keeps no reference to ev. HandleEvent must not be called from a Handler " +
			"or observer method."))
	body := []jen.Code{jen.If(core().Dot("Busy")).Block(jen.Return(core().Dot("Reentrant").Call()))}
	if len(g.m.Timers) > 0 {
		body = append(body, jen.If(jen.List(jen.Id("t"), jen.Id("ok")).Op(":=").Id("ev").Assert(jen.Op("*").Id("TimerFired")), jen.Id("ok")).Block(
			jen.Return(jen.Id("m").Dot("timerFired").Call(jen.Id("t")))))
	}
	if len(states) > 0 {
		body = append(body, jen.Switch(core().Dot("State")).Block(states...))
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
//		switch m.core.State {
//		case StateA:
//			switch ev.(type) {
//			case *Y:
//				return m.core.Reject(3)
//			}
//		}
//		if m.core.State == 0 {
//			return m.core.Unhandled(ev)
//		}
//		switch ev := ev.(type) {
//		case *Z:
//			<the "*" row for Z>
//		}
//		return m.core.Unhandled(ev)
//	}
func (g *goGen) genOtherwise() {
	var states []jen.Code
	for _, s := range g.m.States {
		var evCases []jen.Code
		for _, c := range s.Refuses {
			evCases = append(evCases, jen.Case(jen.Op("*").Id(c.Event.GoName)).Block(refusal(c.Rules[0])))
		}
		if len(evCases) > 0 {
			states = append(states, jen.Case(jen.Id(s.KindName)).Block(jen.Switch(jen.Id("ev").Assert(jen.Type())).Block(evCases...)))
		}
	}
	var body []jen.Code
	if len(states) > 0 {
		body = append(body, jen.Switch(core().Dot("State")).Block(states...))
	}
	body = append(body, g.sharedDispatch()...)
	body = append(body, jen.Return(core().Dot("Unhandled").Call(jen.Id("ev"))))
	g.f.Comment("// otherwise finishes the events the current state does not handle with rules")
	g.f.Comment("// of its own: those it ignores or rejects, then those it leaves to a composite")
	g.f.Comment("// state it is in or to a \"*\" row.")
	g.f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("otherwise").Params(jen.Id("ev").Id("Event")).Error().Block(body...)
}

// refusal is the statement that finishes an ignore or reject rule.
func refusal(r *fsm.Rule) jen.Code {
	finish := "Reject"
	if r.Kind == fsm.Ignore {
		finish = "Ignore"
	}
	return jen.Return(core().Dot(finish).Call(jen.Lit(r.Index)))
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
		out = append(out, jen.If(jen.Id("ev").Op("==").Nil()).Block(jen.Return(core().Dot("NilEvent").Call(jen.Id("ev")))))
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
		return jen.Id("m").Dot("timers").Index(jen.Lit(v.Timer.Index)).Dot("ID")
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
//	m.core.State = StateB
//	m.core.Start(7, StateA)                         // tell the observer
//	m.h.SendLLMRequest(request)                     // actions, in order
//	return m.core.Finish()
//
// A "*" rule that moves does not know which state it leaves: it keeps the
// target's storage and zeroes the rest (m.d = fsmData{...}).
func (g *goGen) ruleBody(r *fsm.Rule) []jen.Code {
	if r.Kind != fsm.Transition {
		return []jen.Code{refusal(r)}
	}
	var out []jen.Code
	from := jen.Id("from")
	if r.Shared() {
		if r.To == nil && len(r.Exits) == 0 && len(r.Entries) == 0 {
			from = core().Dot("State") // read once, and the rule stays
		} else {
			out = append(out, jen.Id("from").Op(":=").Add(core().Dot("State")))
		}
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
	if r.Shared() && r.To != nil && len(g.m.Data) > 0 {
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
		out = append(out, jen.Id("m").Dot("d").Dot(d.GoName).Op("=").Add(zeroValue(d)))
	}
	if r.To != nil && r.To != r.From {
		out = append(out, core().Dot("State").Op("=").Id(r.To.KindName))
	}
	for _, run := range r.Entries {
		out = append(out, g.runCompute(run, from)...)
	}
	out = append(out, core().Dot("Start").Call(jen.Lit(r.Index), from))
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
	return append(out, jen.Return(core().Dot("Finish").Call()))
}

// genUnmarshal emits the decoding of states, events and actions, a table
// of decoders by kind:
//
//	func UnmarshalState(data []byte) (State, error) { return fsmrt.Unmarshal(&fsmDesc, "state", data, fsmStateDecoders) }
//	var fsmStateDecoders = map[string]fsmrt.Decoder[State]{
//		"a": fsmrt.Value[A, State](&fsmDesc, "state a"),
//	}
func (g *goGen) genUnmarshal() {
	for _, ks := range kindSets {
		decoder := "Pointer"
		if ks.what == "state" {
			decoder = "Value"
		}
		var entries []jen.Code
		for _, d := range decls(g.m, ks.what) {
			dec := rt(decoder).Types(jen.Id(d.GoName), jen.Id(ks.iface)).Call(jen.Op("&").Id("fsmDesc"), jen.Lit(ks.what+" "+d.Snake))
			entries = append(entries, jen.Lit(d.Snake).Op(":").Add(dec))
			for _, old := range d.RenamedFrom {
				entries = append(entries, jen.Lit(fsm.SnakeName(old)).Op(":").Add(dec.Clone()))
			}
		}
		decoders := "fsm" + ks.iface + "Decoders"
		g.f.Comment(fmt.Sprintf("// Unmarshal%s decodes %s %s written by its MarshalJSON method.", ks.iface, article(ks.what), ks.what))
		short(g.f.Func().Id("Unmarshal"+ks.iface).Params(jen.Id("data").Index().Byte()).Params(jen.Id(ks.iface), jen.Error()),
			jen.Return(rt("Unmarshal").Call(jen.Op("&").Id("fsmDesc"), jen.Lit(ks.what), jen.Id("data"), jen.Id(decoders))))
		g.f.Comment(fmt.Sprintf("// %s decode the %ss, by kind (and by the kinds they had before).", decoders, ks.what))
		g.f.Var().Id(decoders).Op("=").Map(jen.String()).Add(rt("Decoder")).Types(jen.Id(ks.iface)).ValuesFunc(table(entries))
	}
}
