package fsm

import (
	"slices"

	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file resolves the examples of the rules that leave a parallel
// state from inside a region (see parleave.go), which the machine's
// build holds as the parallel state's: as an example of a rule inside a
// region (see regexamples.go), one starts in the parallel state with the
// rule's region in the leaf its "in" (or its state) names, inside the
// rule's source, or else in the source's initial leaf, and the other
// regions in the leaves its state names or else their resting ones.

// leaves reports whether rule r, of the machine's build, leaves a
// parallel state from inside a region: its guard is In(State) or tests
// one first (SourceIn), or it is a rule of a timer of a state inside a
// region (see leavingTimers).
func (h *parHook) leaves(r *Rule) bool {
	if h == nil || h.region != nil {
		return false
	}
	return sourceName(r) != "" || r.Timer != nil && slices.ContainsFunc(h.leftTimers, func(t *Timer) bool { return t == r.Timer })
}

// leavingExample resolves example ex of rule r, which leaves a parallel
// state from inside a region, in the machine's build: it starts in the
// parallel state, whose value the join writes (see leavingConfig).
func (b *builder) leavingExample(ex spec.Example, r *Rule, out *Example) *Example {
	out.Rule, out.In, out.Send, out.src = r, r.From, r.Event, &ex
	if ex.Send.Set {
		if out.Send = b.event(ex.Send); out.Send == nil {
			return nil
		}
	}
	if r.Timer != nil {
		// The join numbers the timer in the example's configuration.
		return out
	}
	var ok bool
	if out.Event, ok = b.exampleJSON(out.Name, "event", &out.Send.Decl, ex.Event); !ok {
		return nil
	}
	return out
}

// leavingConfig returns the leaf the region of the source of ex's rule,
// which leaves a parallel state from inside a region, starts the example
// in: the leaf its "in" or its state names for the region, which must
// be inside a source of the row (the rule is then that source's), or the
// source's initial leaf. It reports false, having said why, when the
// example names another leaf.
func (b *builder) leavingConfig(ex *Example) (*State, bool) {
	src := ex.Rule.Source
	reg := src.Region
	name := ex.src.In
	for _, v := range ex.src.State {
		if !regionKey(v.Name.Value, reg.Root.Name) {
			continue
		}
		leaf, _ := v.Value.(string)
		if name.Set && name.Value != leaf {
			b.errorf(v.Pos, "example %q starts in %s, but its state puts region %s in %s: give the leaf once", ex.Name, name.Value, reg.Root.Name, leaf)
			return nil, false
		}
		name = spec.String{Value: leaf, Pos: v.Pos, Set: true}
	}
	if !name.Set {
		return descend(src), true
	}
	i := slices.IndexFunc(reg.Leaves, func(s *State) bool { return s.Name == name.Value || s.Snake == name.Value })
	if i < 0 {
		b.errorf(name.Pos, "example %q starts in %s, which is not a leaf of region %s of %s, whose state %s the rule leaves it from: name a leaf of %s", ex.Name, name.Value, reg.Root.Name, reg.Parallel.Name, src.Name, src.Name)
		return nil, false
	}
	leaf := reg.Leaves[i]
	var cell *Cell
	if t := ex.Rule.Timer; t != nil {
		cell = t.Cell
	} else {
		cell = ex.Rule.From.Cell(ex.Rule.Event)
	}
	j := slices.IndexFunc(cell.Rules, func(r *Rule) bool { return r.Pos == ex.Rule.Pos && r.Source != nil && r.Source.Contains(leaf) })
	if j < 0 {
		b.errorf(name.Pos, "example %q starts in %s, which the rule does not leave %s from (it leaves from %s): name a leaf of %s", ex.Name, leaf.Name, reg.Parallel.Name, src.Name, src.Name)
		return nil, false
	}
	if leaf.Settles() && !leaf.Rests() {
		b.errorf(name.Pos, "example %q starts in %s, which region %s leaves in the step that enters it: name a leaf it rests in", ex.Name, leaf.Name, reg.Root.Name)
		return nil, false
	}
	ex.Rule = cell.Rules[j]
	return leaf, true
}
