package emit

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

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
	if len(m.Histories) > 0 {
		var names []string
		for _, s := range m.Histories {
			names = append(names, s.Name)
		}
		fields = append(fields,
			jen.Comment("// hist holds, for each composite state with a history ("+list(names)+"), the leaf"),
			jen.Comment("// the machine was in when it last left it; zero before."))
		if len(m.Memories) > 0 {
			fields = append(fields,
				jen.Comment("// After them, for each region of a parallel state a deep history holds, the"),
				jen.Comment("// leaf the region was in when the machine last left the history's state from"),
				jen.Comment("// the parallel state."))
		}
		fields = append(fields, jen.Id("hist").Index(jen.Lit(m.HistSlots())).Id("StateKind"))
	}
	if m.Deferral != nil {
		fields = append(fields,
			jen.Comment("// deferred holds copies of the events the machine deferred, oldest first."),
			jen.Id("deferred").Index().Id("Event"))
	}
	fields = append(fields, g.regionMachineField()...)
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
	if ini.Waits && ini.Regions == nil {
		newDoc += fmt.Sprintf(" Then it tests the eventless rules of %s, which waits, and takes the first whose guard holds, handing out its actions too (no observer sees that step: New returns before one can be set).", ini.Name)
	}
	if ini.Transient {
		newDoc += fmt.Sprintf(" Then it takes the eventless rules of %s, which is transient: the first whose guard holds, handing out its actions too (no observer sees that step: New returns before one can be set), so the machine starts where they lead.", ini.Name)
	}
	if ini.Waits && ini.WaitsIn() {
		newDoc += fmt.Sprintf(" Then it tests the eventless rules of the states of %s's regions that wait, and takes those whose guards hold, a microstep at a time; then those of %s, which waits, and takes the first whose guard holds, handing out their actions too (no observer sees those steps: New returns before one can be set).", ini.Name, ini.Name)
	} else if ini.Waits && ini.Regions != nil {
		newDoc += fmt.Sprintf(" Then it tests the eventless rules of %s, which waits, and takes the first whose guard holds, handing out its actions too (no observer sees that step: New returns before one can be set).", ini.Name)
	}
	if startSettles(ini) {
		newDoc += " Then it takes the eventless rules of the transient states its regions start in, a microstep at a time, handing out their actions too (no observer sees those steps: New returns before one can be set)."
	}
	if ini.WaitsIn() && !ini.Waits {
		newDoc += fmt.Sprintf(" Then it tests the eventless rules of the states of %s's regions that wait, and takes those whose guards hold, a microstep at a time, handing out their actions too (no observer sees those steps: New returns before one can be set).", ini.Name)
	}
	if len(checks) > 0 {
		newDoc += " It fails when c lacks what the machine needs."
	}
	f.Add(comment("", newDoc))
	newBody := append(storeState(ini, jen.Id("c").Dot("Initial")), g.startBody()...)
	if (ini.Waits || ini.Transient) && ini.Regions == nil {
		newBody = append(newBody, jen.If(jen.Err().Op(":=").Id("m").Dot(leaveMethod(ini)).Call(), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())))
	}
	if ini.Awaits() {
		newBody = append(newBody, jen.If(jen.Err().Op(":=").Add(waitCall(ini, jen.True())), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())))
	}
	if startSettles(ini) {
		newBody = append(newBody, jen.If(jen.Err().Op(":=").Id("m").Dot(startMethod(ini)).Call(), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())))
	}
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
		vals = append(vals, regionValues(s)...)
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
		if q := s.EndsOnEntry(); q != nil {
			msg := fmt.Sprintf("%s: cannot restore %s: the step that enters it ends every region of %s, whose done transition leaves it: the machine never rests there", m.Package, s.Name, q.Name)
			cases = append(cases, jen.Case(jen.Id(s.GoName)).Block(jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit(msg)))))
			continue
		}
		if len(s.Fields) == 0 && s.Regions == nil {
			bare = append(bare, jen.Id(s.GoName))
			continue
		}
		body := append([]jen.Code{core().Dot("State").Op("=").Id(s.KindName)}, storeState(s, jen.Id("s"))...)
		body = append(body, g.regionPut(s)...)
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
		whose := "s and its ancestors"
		if regionTimed(m) {
			whose = "s and its ancestors, and of the states its regions are in,"
		}
		restoreDoc += " The timers of " + whose + " run, numbered afresh from 1, with no deadline known: see Timers; Load restores a saved machine's timers as they were."
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
		if regionTimed(m) {
			putDoc = "// put puts the machine in state s, with its data, and returns it; the timers\n// it runs must belong to s, its ancestors or the states its regions are in."
		}
		tail = append([]jen.Code{
			jen.If(jen.Err().Op(":=").Id("fsmDesc").Dot("CheckTimers").Call(core().Dot("State"), jen.Id("m").Dot("timers").Index(jen.Op(":"))), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
		}, append(g.regionTimerChecks(), jen.Return(jen.Id("m"), jen.Nil()))...)
	}
	f.Comment(putDoc)
	f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("put").Params(jen.Id("s").Id("State")).Params(jen.Op("*").Id("Machine"), jen.Error()).Block(
		append([]jen.Code{jen.Switch(jen.Id("s").Op(":=").Id("s").Assert(jen.Type())).Block(cases...)}, tail...)...)
}

// genSaved emits Save and Load, which save a machine, its running timers
// and their deadlines included, and read it back, strictly; with timers,
// LoadWith and LoadOptions, which can re-arm the timers with this
// revision's delays:
//
//	func (m *Machine) Save() ([]byte, error) { return fsmDesc.Save(m.State(), m.timers[:], m.lastTimer) }
//	func Load(c Config, data []byte) (*Machine, error)
//	type LoadOptions = fsmrt.LoadOptions // with timers
//	func LoadWith(c Config, data []byte, o LoadOptions) (*Machine, error)
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
			"and with its timers running as they were, at the deadlines they were saved with (see " +
			"Timers and Deadline, and LoadWith to re-arm them with this revision's delays); it hands out no action."
	}
	saveCall := jen.Id("fsmDesc").Dot("Save").Call(jen.Id("m").Dot("State").Call(), timers.Clone(), last.Clone())
	if len(m.Histories) > 0 {
		saveDoc += " It saves, too, the leaf each composite state with a history remembers."
		saveCall = jen.Id("fsmDesc").Dot("SaveHistory").Call(jen.Id("m").Dot("State").Call(), timers.Clone(), last.Clone(), jen.Id("m").Dot("hist").Index(jen.Op(":")))
	}
	if m.Deferral != nil {
		f.Add(paragraphs(saveDoc + " It saves, too, the events the machine deferred, oldest first."))
		f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("Save").Params().Params(jen.Index().Byte(), jen.Error()).Block(saveDeferred(saveCall)...)
	} else {
		f.Add(paragraphs(saveDoc))
		short(f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id("Save").Params().Params(jen.Index().Byte(), jen.Error()),
			jen.Return(saveCall))
	}
	lastArg := jen.Nil()
	if len(m.Timers) > 0 {
		lastArg = jen.Op("&").Id("m").Dot("lastTimer")
	}
	f.Add(paragraphs(loadDoc + " It reads strictly: unknown fields, fields in another case and fields " +
		"given twice are refused, naming them. Data saved by an earlier revision of the spec loads when " +
		"the states and fields it names still exist, or were renamed with renamed_from; a field it lacks " +
		"loads as its zero value."))
	loadCall := jen.List(jen.Id("s"), jen.Err()).Op(":=").Add(rt("LoadState")).Call(jen.Op("&").Id("fsmDesc"), jen.Id("data"), timers.Clone(), lastArg, jen.Id("UnmarshalState"))
	if len(m.Histories) > 0 {
		loadCall = jen.List(jen.Id("s"), jen.Err()).Op(":=").Add(rt("LoadStateHistory")).Call(jen.Op("&").Id("fsmDesc"), jen.Id("data"), timers.Clone(), lastArg.Clone(), jen.Id("m").Dot("hist").Index(jen.Op(":")), jen.Id("UnmarshalState"))
	}
	load := []jen.Code{
		jen.List(jen.Id("m"), jen.Err()).Op(":=").Id("fsmNew").Call(jen.Id("c"), jen.Lit(0)),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
		loadCall,
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
	}
	if m.Deferral != nil {
		of := jen.Id("s").Dot("Kind").Call()
		if m.ConfigDefers() {
			of = jen.Id("s") // with its regions' leaves
		}
		load = append(load, jen.If(jen.Err().Op(":=").Id("m").Dot("loadDeferred").Call(jen.Id("data"), of), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())))
	}
	if len(m.Timers) == 0 {
		f.Func().Id("Load").Params(jen.Id("c").Id("Config"), jen.Id("data").Index().Byte()).Params(jen.Op("*").Id("Machine"), jen.Error()).Block(
			append(load, jen.Return(jen.Id("m").Dot("put").Call(jen.Id("s"))))...)
		return
	}
	short(f.Func().Id("Load").Params(jen.Id("c").Id("Config"), jen.Id("data").Index().Byte()).Params(jen.Op("*").Id("Machine"), jen.Error()),
		jen.Return(jen.Id("LoadWith").Call(jen.Id("c"), jen.Id("data"), jen.Id("LoadOptions").Values())))
	f.Add(paragraphs("LoadOptions says how LoadWith makes a machine of saved data; the zero value loads it as it " +
		"was saved, as Load does. With Rearm, each running timer takes the delay this revision gives its " +
		"state, and its deadline moves to the time it started plus that delay: for machines saved before " +
		"a timer's delay changed (see fsmrt.LoadOptions)."))
	f.Type().Id("LoadOptions").Op("=").Add(rt("LoadOptions"))
	f.Add(paragraphs("LoadWith is Load, told by o what to do with the saved machine: see LoadOptions."))
	f.Func().Id("LoadWith").Params(jen.Id("c").Id("Config"), jen.Id("data").Index().Byte(), jen.Id("o").Id("LoadOptions")).Params(jen.Op("*").Id("Machine"), jen.Error()).Block(
		append(load,
			jen.If(jen.List(jen.Id("m"), jen.Err()).Op("=").Id("m").Dot("put").Call(jen.Id("s")), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
			jen.If(jen.Id("o").Dot("Rearm")).Block(jen.Id("m").Dot("rearmTimers").Call()),
			jen.Return(jen.Id("m"), jen.Nil()))...)
}
