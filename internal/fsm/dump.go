package fsm

import (
	"fmt"
	"io"
	"strings"
)

// Dump writes a readable listing of the machine: states, events, actions,
// every rule with its carry-overs, and each guard's and effect's
// parameters. It is a debugging aid (fsmgen debug SPEC).
func Dump(w io.Writer, m *Machine) {
	fmt.Fprintf(w, "machine %s (package %s, spec %s)\n", m.Name, m.Package, m.SpecFile)
	if m.Behavior != "" {
		fmt.Fprintf(w, "behavior %s (called directly)\n", m.Behavior)
	}
	for _, imp := range m.Imports {
		fmt.Fprintf(w, "import %s %q\n", imp.Alias, imp.Path)
	}
	decl := func(kind string, d *Decl, flags string) {
		fmt.Fprintf(w, "%s %s (Go %s, kind %s)%s\n", kind, d.Name, d.GoName, d.Snake, flags)
		for _, f := range d.Fields {
			fmt.Fprintf(w, "  field %s %s (Go %s, JSON %s)\n", f.Name, f.Type, f.GoName, f.JSONName)
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
	}
	for _, e := range m.Events {
		decl("event", &e.Decl, "")
	}
	for _, a := range m.Actions {
		decl("action", &a.Decl, "")
	}
	for _, r := range m.Rules {
		fmt.Fprintf(w, "rule %d %s\n", r.Index, RuleLabel(r))
		for _, a := range r.ToInit {
			fmt.Fprintf(w, "  %s.%s = %s\n", r.To.Name, a.Field.Name, sourceName(r, a))
		}
		for _, a := range r.ActInit {
			fmt.Fprintf(w, "  %s.%s = %s\n", r.Action.Name, a.Field.Name, sourceName(r, a))
		}
	}
	for _, fns := range [][]*Func{m.Guards, m.Effects} {
		for _, fn := range fns {
			fmt.Fprintf(w, "%s %s (Go %s): %s\n", kindWord(fn.Kind), fn.Name, fn.GoName, describe(fn.Sig))
		}
	}
}

func sourceName(r *Rule, a Assign) string {
	if a.Source == FromEvent {
		return r.Event.Name + "." + a.Src.Name
	}
	return r.From.Name + "." + a.Src.Name
}

// RuleLabel describes a rule on one line, e.g.
// "CallingLlm --LlmError [canRetry]--> Error / ScheduleRetry".
func RuleLabel(r *Rule) string {
	var b strings.Builder
	b.WriteString(r.From.Name)
	b.WriteString(" --")
	if r.Event != nil {
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
	}
	b.WriteString(r.To.Name)
	if r.Effect != nil {
		b.WriteString(" {" + r.Effect.Name + "}")
	}
	if r.Action != nil {
		b.WriteString(" / " + r.Action.Name)
	}
	return b.String()
}
