package fsm

import (
	"slices"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file resolves a parallel state nested in another: a parallel state
// that is a region's own state (SCXML 1.0 §3.4: a <parallel>'s children
// may be <parallel>; XState's type: "parallel" anywhere), at any depth.
// It is active exactly while the outer one is, so its regions are regions
// of the outer parallel state, grouped under it (Region.Groups): they take
// their places among the outer one's regions in document order, their
// leaves are fields of the outer parallel state's value, and they are
// dispatched, entered and left as its other regions are, which is SCXML's
// order (§3.13: transitions are selected from the atomic states in
// document order; enterStates and exitStates sort by document order). A
// parallel state deeper in a region, which a rule of the region enters
// and leaves, is refused: its regions would be active only while their
// parallel state is.

// groupOf checks inner, a parallel state nested in parallel state outer
// right under parallel state parent (outer, or a parallel state nested in
// it), whose regions become outer's; it reports whether they do (the
// refusals below are errors that stop the build; a parallel state of
// fewer than two regions has none to give). Such a
// state groups its regions and nothing more: what would make it more than
// a name in the chart, its entry and exit, its lists, rules and timers
// (see parnestlists.go, parnestrules.go, parnesttimers.go), is refused,
// naming it.
func groupOf(outer, parent, inner *spec.State, diags *diag.List) bool {
	refuse := func(pos diag.Pos, has, instead string) {
		diags.Errorf(pos, "parallel state %s, a region of parallel state %s, has %s: fsmgen nests a parallel state as a group of regions, with an entry, an exit, lists of events, rules, timers and a done transition, only yet, active exactly while %s is; %s", inner.Name.Value, parent.Name.Value, has, outer.Name.Value, instead)
	}
	switch {
	case len(inner.States) < 2:
		tooFewRegions(inner, diags)
		return false
	case inner.Initial.Set:
		diags.Errorf(inner.Initial.Pos, "region %s of parallel state %s is marked initial: the regions of a parallel state are all entered with it; remove initial", inner.Name.Value, parent.Name.Value)
	case inner.History.Set:
		refuse(inner.History.Pos, "a history", "remove the history")
	case inner.Final.Set:
		refuse(inner.Final.Pos, "final", "remove final")
	case inner.Terminal.Set || inner.Transient.Set:
		refuse(inner.Name.Pos, "terminal or transient", "remove it")
	case len(inner.Fields) > 0:
		refuse(inner.Fields[0].Name.Pos, "fields", "give the fields to "+outer.Name.Value)
	}
	return true
}

// groupRow refuses a row to group, a parallel state that groups regions
// of outer (see groupOf): it is entered and left with outer (its own rows
// are groupRule's). It reports whether it refused the row.
func groupRow(t *spec.Transition, groups map[string]*specRegion, diags *diag.List) bool {
	refused := false
	for _, to := range targets(t) {
		if r := groups[to.Value]; r != nil {
			refused = true
			diags.Errorf(to.Pos, "parallel state %s groups regions of parallel state %s and is entered with it: target %s instead", to.Value, r.par.Name.Value, r.par.Name.Value)
		}
	}
	return refused
}

// groupState returns the state of group, a parallel state nested as a
// region of parallel state p (the outer one, or one nested in it), made
// once (its regions are added by the
// caller). It is in none of the machine's lists: it has no kind, no rules
// and no value of its own.
func groupState(group *spec.State, p *State, outer, inRegion map[string]*State, diags *diag.List) *State {
	if g := inRegion[group.Name.Value]; g != nil && g.Region == nil && g.Pos == group.Name.Pos {
		return g // made for a region before
	}
	name := group.Name.Value
	if o := outer[name]; o != nil {
		diags.Errorf(group.Name.Pos, "state %s is declared twice (also at %s): state names are unique across the whole machine", name, o.Pos)
	}
	if o := inRegion[name]; o != nil {
		diags.Errorf(group.Name.Pos, "state %s is declared twice (also at %s): state names are unique across the whole machine", name, o.Pos)
	}
	g := &State{Decl: Decl{Name: name, GoName: GoName(name), Snake: SnakeName(name), Doc: group.Doc.Value, Pos: group.Name.Pos}, Parent: p, Depth: p.Depth + 1}
	inRegion[name] = g
	return g
}

// Groups returns the parallel states nested as regions of others (see
// Region.Group), in document order.
func (m *Machine) Groups() []*State {
	var out []*State
	for _, reg := range m.Regions {
		for _, g := range reg.Groups {
			if g.Regions[0] == reg {
				out = append(out, g)
			}
		}
	}
	return out
}

// groupHooks gives each parallel state nested as a region (see groupOf)
// its entry and exit, whose effects read and set the outer parallel
// state's fields (see groupRun): the entry runs
// after the entries of the parallel states around it, before its first
// region's states are entered (a run in that region's Start), the exit
// after its first region's states are left, before the exits of those
// around it (see GroupExits), as SCXML 1.0 §3.13 orders them by document
// order (entryOrder, and exitOrder its reverse).
func groupHooks(m *Machine, regions []*specRegion, diags *diag.List) {
	for i, sr := range regions {
		reg := m.Regions[i]
		var start []*Run
		for j, g := range reg.Groups {
			if g.Regions[0] != reg {
				continue
			}
			g.Entry = groupHook(m, g, sr.groups[j].Entry, "entry", diags)
			g.Exit = groupHook(m, g, sr.groups[j].Exit, "exit", diags)
			if g.Exit != nil {
				g.Leave = groupRun(g, reg.Parallel, false, diags)
			}
			if g.Entry == nil {
				continue
			}
			start = append(start, groupRun(g, reg.Parallel, true, diags))
		}
		if len(start) > 0 {
			reg.Start = append(start, reg.Start...)
			if sr.resumed || len(sr.entered) > 0 {
				// A deep history resumes the region down to a leaf, a
				// rule into a state inside it enters it so (see
				// parenter.go): entering it enters the groups first too.
				for _, l := range reg.Leaves {
					l.Enter = append(slices.Clone(start), l.Enter...)
				}
			}
		}
	}
}

// groupHook resolves the entry or exit h of group g against m's actions
// and effects.
func groupHook(m *Machine, g *State, h *spec.Hook, what string, diags *diag.List) *Hook {
	if h == nil || len(h.Actions) == 0 && !h.Effect.Set {
		return nil
	}
	out := &Hook{Pos: h.Pos}
	if h.Effect.Set {
		i := slices.IndexFunc(m.Effects, func(fn *Func) bool { return fn.Name == h.Effect.Value })
		if i < 0 {
			diags.Errorf(h.Effect.Pos, "unknown effect %q: declare it under effects (the %s of parallel state %s runs it)", h.Effect.Value, what, g.Name)
		} else {
			out.Effect = m.Effects[i]
			out.Effect.Hooks = append(out.Effect.Hooks, g)
		}
	}
	for _, n := range h.Actions {
		i := slices.IndexFunc(m.Actions, func(a *Action) bool { return a.Name == n.Value && !a.Builtin })
		if i < 0 {
			diags.Errorf(n.Pos, "unknown action %q in the %s of parallel state %s: declare it under actions", n.Value, what, g.Name)
			continue
		}
		out.Actions = append(out.Actions, m.Actions[i])
	}
	if len(out.Actions) == 0 && out.Effect == nil {
		return nil
	}
	return out
}

// groupRun resolves the entry (or exit) of group g, a parallel state
// nested as a region of parallel state p, as the entries and exits of the
// states inside p's regions are: its effect reads p's fields and sets
// them, and its actions take their fields from the effect's results or
// from p's fields.
func groupRun(g, p *State, entry bool, diags *diag.List) *Run {
	run := &Run{State: g, Entry: entry}
	h := run.Hook()
	what := "exit"
	if entry {
		what = "entry"
	}
	results := map[string]*Field{}
	placed := map[*Field]bool{}
	if fn := h.Effect; fn != nil {
		for _, rd := range fn.Reads {
			f := p.Field(rd.Name)
			switch {
			case f == nil:
				diags.Errorf(h.Pos, "effect %s runs on %s of state %s and reads %s, but the state has no field %s: a parallel state nested as a region of %s reads %s's fields", fn.Name, what, g.Name, rd.Name, rd.Name, p.Name, p.Name)
				run.EffectArgs = append(run.EffectArgs, Value{})
			case f.Type != rd.Type:
				diags.Errorf(h.Pos, "effect %s reads %s as %s, but %s's %s is %s: declare the same type in both places", fn.Name, rd.Name, rd.Type, p.Name, f.Name, f.Type)
				run.EffectArgs = append(run.EffectArgs, Value{})
			default:
				run.EffectArgs = append(run.EffectArgs, Value{Source: FromData, Data: f.Data})
			}
		}
		for _, set := range fn.Sets {
			results[set.Name] = set
			run.Results = append(run.Results, set.Param)
			f := p.Field(set.Name)
			if f == nil {
				continue
			}
			placed[set] = true
			if f.Type != set.Type {
				diags.Errorf(h.Pos, "effect %s sets %s as %s, but %s's %s is %s: make the types agree", fn.Name, set.Name, set.Type, p.Name, f.Name, f.Type)
				continue
			}
			run.Stores = append(run.Stores, Store{Data: f.Data, Value: Value{Source: FromResult, Result: set, Local: set.Param}})
		}
	}
	for _, a := range h.Actions {
		e := &Emit{Action: a}
		for _, af := range a.Fields {
			if set := results[af.Name]; set != nil && set.Type == af.Type {
				placed[set] = true
				e.Args = append(e.Args, Value{Source: FromResult, Result: set, Local: set.Param})
				continue
			}
			f := p.Field(af.Name)
			if f == nil || f.Type != af.Type {
				diags.Errorf(h.Pos, "field %s of action %s is not filled on %s of state %s: neither its effect nor %s gives %s %s; give %s the field, or the %s an effect that sets it", af.Name, a.Name, what, g.Name, p.Name, af.Name, af.Type, p.Name, what)
				e.Args = append(e.Args, Value{})
				continue
			}
			e.Args = append(e.Args, Value{Source: FromData, Data: f.Data})
		}
		run.Actions = append(run.Actions, e)
	}
	if h.Effect != nil {
		for _, set := range h.Effect.Sets {
			if !placed[set] {
				diags.Errorf(h.Pos, "effect %s sets %s, but nothing on %s of state %s takes it: neither the fields of %s nor the %s's actions have %s %s", h.Effect.Name, set.Name, what, g.Name, p.Name, what, set.Name, set.Type)
			}
		}
	}
	return run
}

// GroupExits returns the exits of the parallel states nested as regions
// that region reg is the first of, innermost first: each runs once its
// regions are left (in reverse document order, reg last).
func (reg *Region) GroupExits() []*State {
	var out []*State
	for i := len(reg.Groups) - 1; i >= 0; i-- {
		if g := reg.Groups[i]; g.Regions[0] == reg && g.Exit != nil {
			out = append(out, g)
		}
	}
	return out
}

// Child returns the state right under parallel state s (the outer one, or
// one nested in it) that holds region reg of s: reg's own state, or the
// parallel state nested in s that reg is a region of.
func (s *State) Child(reg *Region) *State {
	for _, g := range reg.Groups {
		if g.Parent == s {
			return g
		}
	}
	return reg.Root
}

// groupUses records the actions the entries and exits of the parallel
// states nested as regions emit, which the machine must not report unused.
func groupUses(regions []*specRegion, used map[string]bool) {
	for _, sr := range regions {
		for _, g := range sr.groups {
			for _, h := range []*spec.Hook{g.Entry, g.Exit} {
				if h != nil {
					for _, a := range h.Actions {
						used["action "+a.Value] = true
					}
				}
			}
		}
	}
}

// nestedRegion is a region of a parallel state, possibly inside parallel
// states nested in it (groups, outermost first).
type nestedRegion struct {
	root   *spec.State
	groups []*spec.State
}

// nestedRegions returns the regions of parallel state outer found under
// parallel state p (outer, or a parallel state nested in it, inside
// groups), in document order: p's states, and the regions of those that
// are parallel in turn, at any depth (SCXML 1.0 §3.4).
func nestedRegions(outer, p *spec.State, groups []*spec.State, diags *diag.List) []nestedRegion {
	var out []nestedRegion
	for j := range p.States {
		s := &p.States[j]
		if !s.Parallel.Value {
			out = append(out, nestedRegion{root: s, groups: groups})
			continue
		}
		// A parallel state right under p: its regions are regions of
		// outer, grouped under it (see groupOf).
		if groupOf(outer, p, s, diags) {
			out = append(out, nestedRegions(outer, s, append(slices.Clone(groups), s), diags)...)
		}
	}
	return out
}
