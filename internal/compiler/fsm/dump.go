package fsm

import (
	"fmt"
	"io"
	"strings"
)

// Dump writes a readable listing of the machine, everything the emitters
// read: states with their storage, events, actions, the signature of every
// guard and effect, each state's cells, and every rule with the values it
// passes, stores, clears and emits. It is a debugging aid (fsmgen debug
// SPEC); positions are the spec's.
func Dump(w io.Writer, m *Machine) {
	fmt.Fprintf(w, "machine %s (package %s, spec %s)\n", m.Name, m.Package, m.SpecFile)
	for _, imp := range m.Imports {
		fmt.Fprintf(w, "import %s %q\n", imp.Alias, imp.Path)
	}
	fmt.Fprintln(w, "storage:")
	for _, d := range m.Data {
		var owners []string
		for _, s := range d.States {
			owners = append(owners, s.Name)
		}
		fmt.Fprintf(w, "  %s %s (field %s of %s)\n", d.GoName, d.Type, d.Name, strings.Join(owners, ", "))
	}
	decl := func(kind string, d *Decl, flags string) {
		fmt.Fprintf(w, "%s %s (Go %s, kind %s, JSON %q) at %s%s\n", kind, d.Name, d.GoName, d.KindName, d.Snake, d.Pos, flags)
		for _, f := range d.Fields {
			store := ""
			if f.Data != nil {
				store = ", stored in " + f.Data.GoName
			}
			fmt.Fprintf(w, "  field %s %s (Go %s, JSON %s%s)\n", f.Name, f.Type, f.GoName, f.JSONName, store)
		}
	}
	for _, s := range m.States {
		var flags []string
		for _, f := range []struct {
			on   bool
			name string
		}{{s.Initial, "initial"}, {s.Terminal, "terminal"}, {s.Transient, "transient"}} {
			if f.on {
				flags = append(flags, f.name)
			}
		}
		extra := ""
		if len(flags) > 0 {
			extra = " [" + strings.Join(flags, ", ") + "]"
		}
		decl("state", &s.Decl, extra)
		cells := func(what string, cs []*Cell) {
			if len(cs) == 0 {
				return
			}
			var names []string
			for _, c := range cs {
				names = append(names, c.Event.Name)
			}
			fmt.Fprintf(w, "  %s: %s\n", what, strings.Join(names, ", "))
		}
		cells("handles", s.Handles)
		cells("refuses", s.Refuses)
		if len(s.Inherited) > 0 {
			var names []string
			for _, c := range s.Inherited {
				names = append(names, c.Event.Name+" to "+c.Owner.String())
			}
			fmt.Fprintf(w, "  leaves %s\n", strings.Join(names, ", "))
		}
	}
	for _, e := range m.Events {
		decl("event", &e.Decl, "")
	}
	for _, a := range m.Actions {
		flags := ""
		if a.Pure {
			flags = " pure"
		}
		decl("action", &a.Decl, flags)
	}
	for _, fns := range [][]*Func{m.Guards, m.Effects} {
		for _, fn := range fns {
			fmt.Fprintf(w, "%s %s (Go %s) at %s: %s\n", kindWord(fn.Kind), fn.Name, fn.GoName, fn.Pos, Signature(fn))
		}
	}
	for _, r := range m.AllRules() {
		fmt.Fprintf(w, "rule %d at %s: %s\n", r.Index, r.Pos, r.Label)
		if r.Guard != nil {
			fmt.Fprintf(w, "  guard %s(%s)\n", r.Guard.Name, values(r.GuardArgs))
		}
		for _, c := range r.Captures {
			fmt.Fprintf(w, "  capture %s = %s\n", c.Local, c.Data.GoName)
		}
		if r.Effect != nil {
			fmt.Fprintf(w, "  effect %s(%s)\n", r.Effect.Name, values(r.EffectArgs))
		}
		for _, st := range r.Stores {
			fmt.Fprintf(w, "  store %s = %s\n", st.Data.GoName, value(st.Value))
		}
		for _, d := range r.Clears {
			fmt.Fprintf(w, "  clear %s\n", d.GoName)
		}
		for _, run := range r.Exits {
			dumpRun(w, run)
		}
		// A region's rule moves within its region, whose states all have
		// the parallel state's fields: it clears nothing.
		if (len(r.Keeps) > 0 || r.Shared() && r.To != nil) && (r.From == nil || r.From.Region == nil) {
			var keeps []string
			for _, d := range r.Keeps {
				keeps = append(keeps, d.GoName)
			}
			fmt.Fprintf(w, "  clear all storage but [%s]\n", strings.Join(keeps, ", "))
		}
		for _, e := range r.Actions {
			fmt.Fprintf(w, "  emit %s(%s)\n", e.Action.Name, values(e.Args))
		}
		for _, run := range r.Entries {
			dumpRun(w, run)
		}
	}
	dumpWays(w, m)
}

// dumpWays lists the ways through the cells that the generated tests take.
func dumpWays(w io.Writer, m *Machine) {
	for _, way := range m.Ways {
		var tests, rules []string
		for _, t := range way.Tests {
			tests = append(tests, t.String())
		}
		for _, r := range way.Rules {
			rules = append(rules, fmt.Sprint(r.Index))
		}
		fmt.Fprintf(w, "way %s × %s [%s]: rules %s, to %s\n", way.From.Name, way.Event.Name, strings.Join(tests, " "), strings.Join(rules, ", "), way.To.Name)
	}
}

// String writes a guard's test as the generated tests script it:
// "canRetry" when it holds, "!canRetry" when it does not.
func (t Test) String() string {
	if t.Holds {
		return t.Guard.Name
	}
	return "!" + t.Guard.Name
}

// Signature describes a guard's or effect's Go signature in spec terms:
// "(retries int, error chat.LLMError) bool".
func Signature(fn *Func) string {
	var in, out []string
	for _, f := range fn.Reads {
		in = append(in, f.Param+" "+f.Type)
	}
	for _, f := range fn.Sets {
		out = append(out, f.Name+" "+f.Type)
	}
	sig := "(" + strings.Join(in, ", ") + ")"
	switch {
	case fn.Kind == Guard:
		return sig + " bool"
	case len(out) == 1:
		return sig + " " + out[0]
	}
	return sig + " (" + strings.Join(out, ", ") + ")"
}

func values(vs []Value) string {
	var out []string
	for _, v := range vs {
		out = append(out, value(v))
	}
	return strings.Join(out, ", ")
}

func value(v Value) string {
	switch v.Source {
	case FromEvent:
		return "event." + v.Field.Name
	case FromResult:
		if v.Local != "" {
			return "result." + v.Local
		}
		return "result." + v.Result.Name
	case FromTimer:
		return "timer of " + v.Timer.State.Name
	case FromConst:
		if v.Const != nil {
			if v.Const.Duration {
				return v.Const.Text
			}
			return v.Const.Go
		}
		return v.Timer.DelayText
	}
	if v.Local != "" {
		return v.Local
	}
	if v.Data == nil {
		return "?"
	}
	return "storage." + v.Data.GoName
}

// sourceLabel is RuleLabel naming rule r's Source, where it has one (a
// rule of a parallel state that a state inside its regions wrote), as
// its source.
func sourceLabel(r *Rule) string {
	if r.Source == nil {
		return RuleLabel(r)
	}
	from := r.From
	r.From = r.Source
	defer func() { r.From = from }()
	return RuleLabel(r)
}

// RuleLabel describes a rule on one line, e.g.
// "CallingLlm --LlmError [canRetry]--> Error {scheduleRetry} / ScheduleRetry":
// between braces its effect, the constants it sets (retries=0) and where
// it takes what its with: names (remote=event.remote).
func RuleLabel(r *Rule) string {
	var b strings.Builder
	if r.Done != nil {
		b.WriteString(r.Done.Name + " --done")
		if finals := r.Done.finals(); len(finals) > 1 {
			b.WriteString(" (" + r.From.Name + ")")
		}
	} else {
		b.WriteString(r.From.String())
		b.WriteString(" --")
	}
	switch {
	case r.Timer != nil:
		b.WriteString(r.Timer.Label())
	case r.Event != nil:
		b.WriteString(r.Event.Name)
	}
	switch {
	case r.Guard != nil:
		b.WriteString(" [" + r.Guard.Name + "]")
	case r.Else:
		b.WriteString(" [else]")
	}
	b.WriteString("--> ")
	switch r.Kind {
	case Ignore:
		b.WriteString("ignored")
		return b.String()
	case Reject:
		b.WriteString("rejected: " + strings.Join(strings.Fields(r.Reason), " "))
		return b.String()
	case Defer:
		b.WriteString("deferred")
		return b.String()
	}
	switch {
	case r.History != nil:
		b.WriteString(r.History.Name + historySuffix)
		if r.Resume != nil {
			b.WriteString(" (was in " + r.Resume.Name + ")")
		}
	case r.Target == nil:
		b.WriteString("(stays)")
	default:
		b.WriteString(r.targetName())
	}
	if r.Local {
		b.WriteString(" (local)")
	}
	var does []string
	if r.Effect != nil {
		does = append(does, r.Effect.Name)
	}
	for _, c := range r.Consts {
		does = append(does, c.String())
	}
	for _, w := range r.With {
		does = append(does, w.String())
	}
	if len(does) > 0 {
		b.WriteString(" {" + strings.Join(does, ", ") + "}")
	}
	if len(r.Actions) > 0 {
		var acts []string
		for _, e := range r.Actions {
			acts = append(acts, e.Action.Name)
		}
		b.WriteString(" / " + strings.Join(acts, ", "))
	}
	return b.String()
}

// dumpRun writes one entry or exit of a rule.
func dumpRun(w io.Writer, run *Run) {
	what := "exit"
	if run.Entry {
		what = "entry"
	}
	when := ""
	if run.When != nil {
		when = " when in " + run.When.Name
	}
	if run.Into != nil {
		when = " into " + run.Into.Name // see parenter.go
	}
	fmt.Fprintf(w, "  %s %s%s\n", what, run.State.Name, when)
	if h := run.Hook(); h != nil && h.Effect != nil {
		fmt.Fprintf(w, "    effect %s(%s) -> %s\n", h.Effect.Name, values(run.EffectArgs), strings.Join(run.Results, ", "))
	}
	for _, st := range run.Stores {
		fmt.Fprintf(w, "    store %s = %s\n", st.Data.GoName, value(st.Value))
	}
	for _, d := range run.Delays {
		fmt.Fprintf(w, "    delay %s(%s) -> %s\n", d.Timer.DelayFunc.Name, values(d.Args), d.Local)
	}
	for _, e := range run.Actions {
		fmt.Fprintf(w, "    emit %s(%s)\n", e.Action.Name, values(e.Args))
	}
}
