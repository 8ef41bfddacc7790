package fsm

import (
	"slices"
	"strings"
)

// This file points the rules that enter a state inside a region from
// outside its parallel state (see parenter.go) at their targets once
// the regions are joined into the machine: the entry of the parallel
// state goes down to the target (Run.Into), and a rule into a history
// there gets its variants.

// enterInside points each rule of machine m whose target was inside a
// region (see entering) at that target, and its parallel state's entry
// at the leaf the region is entered through (Run.Into). A rule into the
// history of a state inside a region gets a variant for each leaf the
// history may resume (see historyVariants), numbered right after it, as
// the variants of the machine's own rules into a history are; the rules
// after them, the regions' included, are numbered on.
func enterInside(m *Machine, e *entering, inRegion map[string]*State) {
	if e == nil || len(e.targets) == 0 {
		return
	}
	added := 0
	var rules []*Rule
	for _, r := range m.Rules {
		rules = append(rules, r)
		name, ok := e.targets[r.Pos]
		if !ok || r.To == nil || r.To.Regions == nil {
			continue
		}
		name, hist := strings.CutSuffix(name, historySuffix)
		a := inRegion[name]
		if a == nil || a.Region == nil || a.Region.Top() != r.To {
			continue
		}
		vs := pointInto(r, a, hist)
		rules = append(rules, vs...)
		added += len(vs)
	}
	if added == 0 {
		return
	}
	m.Rules = rules
	for i, r := range m.Rules {
		r.Index = i
	}
	for _, r := range m.RegionRules() {
		r.Index += added
	}
}

// pointInto points rule r, into parallel state r.To, at state a inside
// one of its regions (or a's history when hist is set): its entry at
// the leaf the region is entered through (Run.Into), and for a history
// a variant for each state it may resume (see regionResumes), each
// entering the region through that state, which it returns.
func pointInto(r *Rule, a *State, hist bool) []*Rule {
	into(r, descend(a))
	r.Target = a
	var out []*Rule
	if hist {
		r.History = a
		for _, c := range regionResumes(a) {
			v := *r
			v.Variants, v.Target, v.Resume = nil, c, c
			v.Entries = slices.Clone(r.Entries)
			into(&v, descend(c))
			intoResume(&v)
			v.Actions = nil
			for _, x := range r.Actions {
				v.Actions = append(v.Actions, &Emit{Action: x.Action})
			}
			v.Label = sourceLabel(&v)
			r.Variants = append(r.Variants, &v)
			out = append(out, &v)
		}
	}
	r.Label = sourceLabel(r)
	return out
}

// intoResume marks the entry of parallel state r.To that variant r of a
// rule into a deep history runs, when the leaf it enters its region
// through is a parallel state inside the region: its regions resume
// what the history remembers of them (Run.IntoResume).
func intoResume(r *Rule) {
	if r.History == nil || r.History.History != HistoryDeep {
		return
	}
	for i, run := range r.Entries {
		if run.Entry && run.State == r.To && run.Into != nil && run.Into.Regions != nil {
			cp := *run
			cp.IntoResume = r.History
			r.Entries[i] = &cp
		}
	}
}

// into points the entry of parallel state r.To that rule r runs at leaf
// l, the leaf its region is entered through: a copy of the entry, which
// r's variants share until then.
func into(r *Rule, l *State) {
	for i, run := range r.Entries {
		if run.Entry && run.State == r.To {
			cp := *run
			cp.Into = l
			r.Entries[i] = &cp
		}
	}
}

// regionResumes returns the states the history of state s, inside a
// region, may resume other than its default (its initial child, down to
// a leaf): its other children (shallow) or leaves (deep) the history may
// remember, as remembered says: not a transient state, but a final state
// whose done transition leaves s (resumed, the done transition follows in
// that step).
func regionResumes(s *State) []*State {
	def := descend(s)
	var out []*State
	if s.History == HistoryShallow {
		for _, c := range s.Children {
			if c != s.InitialChild && resumable(s, descend(c)) {
				out = append(out, c)
			}
		}
		return out
	}
	for _, l := range s.Region.Leaves {
		if s.Contains(l) && l != def && resumable(s, l) {
			out = append(out, l)
		}
	}
	return out
}

// resumable reports whether the history of s may remember leaf l (see
// remembered, which the builds ask of their own states, and which reads
// the done transitions from the spec).
func resumable(s, l *State) bool {
	return mayRemember(s, l, func() bool {
		if l.Completes != nil && l.Completes.Completion != nil {
			return leavesBy(s, l.Completes.Completion.Rules)
		}
		// Its eventless rules: a transient state's, or a final state's
		// composite state's done transition. A branch that leaves the
		// parallel state (Rule.Leaves) leaves s too, and the region's
		// build made its variant (see remembered).
		if l.Choice == nil {
			return false
		}
		return leavesBy(s, l.Choice.Rules) || slices.ContainsFunc(l.Choice.Rules, func(r *Rule) bool { return r.Leaves != nil })
	})
}
