package emit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/prose"
)

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
			if ks.what == "state" {
				fields = append(fields, g.regionFields(d)...)
			}
			lead := fmt.Sprintf("%s is the %s %s", d.GoName, ks.what, d.Name)
			doc := d.Doc
			if ks.what == "state" {
				if extra := strings.TrimSpace(regionDoc(g.m.States[d.Index]) + " " + hookDoc(g.m.States[d.Index])); extra != "" {
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
			if len(fields) == 0 {
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
		g.f.Comment(fmt.Sprintf("// %s records %s %s.", a.GoName, prose.Article(a.GoName), a.GoName))
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
	doc := fmt.Sprintf("Config is what New and Restore make %s %s machine with: %s.", prose.Article(m.Name), m.Name, list(needs))
	if len(needs) == 0 {
		doc = fmt.Sprintf("Config is what New and Restore make %s %s machine with. The machine has no guards, effects, actions or initial data, so it is empty; should the spec gain them, Config gains fields and New and Restore keep their shape.", prose.Article(m.Name), m.Name)
	}
	g.f.Add(comment("", doc))
	g.f.Type().Id("Config").Struct(fields...)
}
