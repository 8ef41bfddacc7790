package emit

import (
	"slices"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

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
			switch {
			case t.State.Region != nil:
				// A timer inside a region runs while the machine is in
				// the parallel state; put checks the region's state.
				first, last = t.State.Region.Parallel, t.State.Region.Parallel
			case t.State.Composite():
				first, last = t.State.First, t.State.Last
			}
			fields := []jen.Code{kv("State", jen.Lit(t.State.Snake))}
			if t.ID != "" {
				fields = append(fields, kv("Timer", jen.Lit(t.ID)))
			}
			fields = append(fields, kv("First", jen.Id(first.KindName)), kv("Last", jen.Id(last.KindName)))
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
	if len(m.Histories) > 0 {
		var hs []jen.Code
		for _, s := range m.Histories {
			var leaves []jen.Code
			for _, l := range append(slices.Clone(m.States), m.RegionLeaves()...) {
				if s.Contains(l) {
					leaves = append(leaves, jen.Lit(l.Snake))
				}
			}
			fields := []jen.Code{kv("State", jen.Lit(s.Snake)), kv("First", jen.Id(s.First.KindName)), kv("Leaves", jen.Index().String().Values(leaves...))}
			if len(s.RenamedFrom) > 0 {
				var was []jen.Code
				for _, old := range s.RenamedFrom {
					was = append(was, jen.Lit(fsm.SnakeName(old)))
				}
				fields = append(fields, kv("Was", jen.Index().String().Values(was...)))
			}
			var renamed []jen.Code
			for _, l := range append(slices.Clone(m.States), m.RegionLeaves()...) {
				if s.Contains(l) {
					for _, old := range l.RenamedFrom {
						renamed = append(renamed, jen.Lit(fsm.SnakeName(old)).Op(":").Lit(l.Snake))
					}
				}
			}
			if len(renamed) > 0 {
				fields = append(fields, kv("LeavesWas", jen.Map(jen.String()).String().Values(renamed...)))
			}
			if restless := m.Unremembered(s); len(restless) > 0 {
				// Load refuses a saved history that names one, as data no
				// revision of this shape writes.
				var names []jen.Code
				for _, l := range restless {
					names = append(names, jen.Lit(l.Snake))
				}
				fields = append(fields, kv("Restless", jen.Index().String().Values(names...)))
			}
			hs = append(hs, jen.Values(fields...))
		}
		hs = append(hs, memoryDescs(m)...)
		more = append(more, kv("History", jen.Index().Add(rt("HistoryOf")).Types(jen.Id("StateKind")).Values(hs...)))
	}
	if m.Deferral != nil {
		more = append(more, kv("DeferLimit", jen.Lit(m.Deferral.Limit)))
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
	for _, r := range m.AllRules() {
		out = append(out, ruleValue(r))
	}
	return out
}

// renamedFields returns, for each state, event and action with fields
// renamed (renamed_from), the entry of the map from its old JSON names to
// its new ones: "state created": {"order_idd": "order_id"}; a parallel
// state's renamed regions are fields of its value.
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
			if ks.what == "state" {
				pairs = append(pairs, renamedRegions(m, d)...)
			}
			if len(pairs) > 0 {
				out = append(out, jen.Lit(ks.what+" "+d.Snake).Op(":").Values(pairs...))
			}
		}
	}
	return out
}

// renamedRegions returns, for state declaration d of a parallel state,
// the old JSON names of its renamed regions (their own states'
// renamed_from), under which its value names their states, each to its
// name now.
func renamedRegions(m *fsm.Machine, d *fsm.Decl) []jen.Code {
	var out []jen.Code
	for _, s := range m.States {
		if &s.Decl != d {
			continue
		}
		for _, r := range s.Flat {
			for _, old := range r.Root.RenamedFrom {
				out = append(out, jen.Lit(fsm.SnakeName(old)).Op(":").Lit(r.JSON))
			}
		}
	}
	return out
}

// ruleKind names the fsmrt constant of a rule's kind.
func ruleKind(k fsm.RuleKind) *jen.Statement {
	return rt([...]string{"RuleTransition", "RuleIgnore", "RuleReject", "RuleDefer"}[k])
}

// ruleValue is the table entry of a rule, its fields in order.
func ruleValue(r *fsm.Rule) jen.Code {
	d := []jen.Code{kv("Kind", ruleKind(r.Kind))}
	switch {
	case r.From == nil:
	case r.From.Region != nil:
		// A region's rule: the machine is, and stays, in the parallel state.
		d = append(d, kv("Composite", jen.Lit(r.From.Region.Parallel.Name)))
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
	if r.To != nil && r.To.Region == nil {
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
