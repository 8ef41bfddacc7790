package fsm

import (
	"fmt"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
)

// This file refuses, named, what fsmgen does not write yet of the rules
// a region takes beside another region's rule that leaves their parallel
// state (see combine and Way.beside): SCXML 1.0 §3.13 runs the content
// of such a rule without a target after the exits of the step, where the
// generated code has let go of the parallel state's fields and timers.

// besideFields reports each rule without a target of a region of a
// parallel state p that may run beside a rule of another region that
// leaves p on its event (Rule.Mixed, kept by its region) and reads or
// writes fields, or hands out a timer's id.
func besideFields(m *Machine, diags *diag.List) {
	for _, p := range m.States {
		if p.Regions == nil {
			continue
		}
		leaving := map[*Event][]*Rule{} // p's rules that leave it from a region
		for _, r := range m.Rules {
			if r.From == p && r.Mixed && r.Source != nil && r.Source.Region != nil {
				leaving[r.Event] = append(leaving[r.Event], r)
			}
		}
		for _, reg := range p.Regions {
			for _, r := range reg.Rules {
				if r.Kind != Transition || r.To != nil || r.Leaves != nil {
					continue
				}
				var by *Rule
				for _, l := range leaving[r.Event] {
					if l.Source.Region != reg && by == nil {
						by = l
					}
				}
				if by == nil {
					continue
				}
				if what := fieldWork(r); what != "" {
					diags.Errorf(r.Pos, "rule %s, in region %s, %s, and rule %s leaves parallel state %s from region %s: SCXML runs a rule without a target beside the rule that leaves, after %s's exits (SCXML 1.0 §3.13), where fsmgen has let go of %s's fields and timers, and does not keep them for it yet; hand out only the event's fields and constants there, give the rule a target, or give the events different names", r.Label, reg.Root.Name, what, by.Label, p.Name, by.Source.Region.Root.Name, p.Name, p.Name)
				}
			}
		}
	}
}

// fieldWork says what rule r does with fields or timers that a rule
// beside one that leaves its parallel state cannot (see besideFields):
// "" when nothing.
func fieldWork(r *Rule) string {
	var out []string
	if r.Effect != nil {
		out = append(out, "runs effect "+r.Effect.Name)
	}
	if len(r.Stores) > 0 || len(r.Clears) > 0 {
		out = append(out, "sets fields")
	}
	for _, e := range r.Actions {
		for i, v := range e.Args {
			switch v.Source {
			case FromData, FromResult:
				out = append(out, fmt.Sprintf("hands out a field in action %s (%s)", e.Action.Name, e.Action.Fields[i].Name))
			case FromTimer:
				out = append(out, fmt.Sprintf("hands out a timer's id in action %s (%s)", e.Action.Name, e.Action.Fields[i].Name))
			}
		}
	}
	return strings.Join(out, ", ")
}
