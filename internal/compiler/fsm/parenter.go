package fsm

import (
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file resolves a rule of a state outside a parallel state P whose
// target is a state A inside one of P's regions (a row, a branch, a
// timer's or a done transition's). SCXML 1.0 §3.13 enters such a target
// with its ancestors (addAncestorStatesToEnter): P, then every region of
// P in document order, A's region through A's ancestors inside it down
// to A (and A's initial states, addDescendantStatesToEnter, when A is
// composite), the other regions through their initial states, as when P
// is the target; XState v5 does the same.
//
// The machine around the regions sees a rule into P, which leaves and
// enters what a rule into P does; P's entry then enters A's region
// through the leaf A is entered down to (Run.Into), whose entries the
// region's build resolves (State.Enter), instead of the region's initial
// leaf. The rule's Target is A: its label, the table, the diagram, the
// exports and fsmgen diff name A.

// entering records the rules whose targets are inside regions.
type entering struct {
	regionOf map[string]*specRegion
	states   map[string]*spec.State
	// targets are, by the position of the rule (its row's, its branch's,
	// its timer's or its done transition's), the states inside regions
	// they target.
	targets map[diag.Pos]string
	// inwards are, by the position of the rule, the states inside
	// parallel states inside a region's states that rules of that region
	// target (see inward).
	inwards map[diag.Pos]string
}

// newEntering makes the record for the regions of a spec's parallel
// states.
func newEntering(f *spec.File, regions []*specRegion) *entering {
	e := &entering{regionOf: map[string]*specRegion{}, states: map[string]*spec.State{}, targets: map[diag.Pos]string{}, inwards: map[diag.Pos]string{}}
	for _, r := range regions {
		for n := range r.names {
			e.regionOf[n] = r
		}
	}
	var walk func(list []spec.State)
	walk = func(list []spec.State) {
		for i := range list {
			e.states[list[i].Name.Value] = &list[i]
			walk(list[i].States)
		}
	}
	walk(f.States)
	return e
}

// row rewrites the targets of row t, a row of states outside the regions,
// that name states inside regions: each targets the parallel state, and
// the rule is recorded. It reports whether some target was refused.
func (e *entering) row(t *spec.Transition, diags *diag.List) bool {
	bad := false
	eachOutcome(t, func(o *spec.Outcome, pos diag.Pos) {
		if !e.outcome(o, pos, diags) {
			bad = true
		}
	})
	return bad
}

// eachOutcome calls f on the outcome of row t and on each of its
// branches', with the position of the rule each makes; t's branches are
// copied first, so that f may rewrite them.
func eachOutcome(t *spec.Transition, f func(o *spec.Outcome, pos diag.Pos)) {
	f(&t.Outcome, t.Pos)
	if len(t.Guards) > 0 {
		t.Guards = slices.Clone(t.Guards)
		for i := range t.Guards {
			f(&t.Guards[i].Outcome, t.Guards[i].Pos)
		}
	}
}

// rewrite rewrites, as row does, the timers and done transitions of the
// states outside the regions (list holds copies of the spec's states:
// the rewritten timers and done transitions are copies too).
func (e *entering) rewrite(list []spec.State, diags *diag.List) {
	for i := range list {
		s := &list[i]
		if e.regionOf[s.Name.Value] != nil {
			continue
		}
		for j, a := range s.After {
			cp := *a
			t := spec.Transition{Pos: cp.Pos, Outcome: cp.Outcome, Guards: cp.Guards}
			if !e.inside(&t) {
				continue
			}
			e.row(&t, diags)
			cp.Outcome, cp.Guards = t.Outcome, t.Guards
			s.After = slices.Clone(s.After)
			s.After[j] = &cp
		}
		if d := s.Done; d != nil {
			t := spec.Transition{Pos: d.Pos, Outcome: d.Outcome, Guards: d.Guards}
			if e.inside(&t) {
				e.row(&t, diags)
				cp := *d
				cp.Outcome, cp.Guards = t.Outcome, t.Guards
				s.Done = &cp
			}
		}
		if !s.Parallel.Value {
			s.States = slices.Clone(s.States)
			e.rewrite(s.States, diags)
		}
	}
}

// inside reports whether row t targets a state inside a region.
func (e *entering) inside(t *spec.Transition) bool {
	return slices.ContainsFunc(targets(t), func(to spec.String) bool {
		return e.regionOf[strings.TrimSuffix(to.Value, historySuffix)] != nil
	})
}

// outcome rewrites one outcome's target, at pos, when it names a state
// inside a region, reporting whether it is refused.
func (e *entering) outcome(o *spec.Outcome, pos diag.Pos, diags *diag.List) bool {
	name := strings.TrimSuffix(o.To.Value, historySuffix)
	r := e.regionOf[name]
	if !o.To.Set || r == nil {
		return true
	}
	if why := e.refusal(o.To, r, r.top.Name.Value, false); why != "" {
		diags.Errorf(o.To.Pos, "a transition from outside parallel state %s cannot target %s%s", r.top.Name.Value, o.To.Value, why)
		return false
	}
	e.targets[pos] = o.To.Value // (a history's name kept: see enterInside)
	enteredThrough(r, name)
	o.To = spec.String{Value: r.top.Name.Value, Pos: o.To.Pos, Set: true}
	return true
}

// enteredThrough records that region r is entered through state name:
// and for a region of a parallel state inside another region's state,
// that region through the parallel state, and so on out.
func enteredThrough(r *specRegion, name string) {
	for x := r; x != nil; name, x = x.par.Name.Value, x.host {
		if !slices.Contains(x.entered, name) {
			x.entered = append(x.entered, name)
		}
	}
}

// within returns the region of the parallel state inside one of region
// o's states that holds region r: r itself when o is its host, or the
// region of that parallel state around r's host, and so on out; nil when
// r is not inside o.
func (r *specRegion) within(o *specRegion) *specRegion {
	for x := r; x.host != nil; x = x.host {
		if x.host == o {
			return x
		}
	}
	return nil
}

// outermost returns the region of the parallel state outside regions
// that holds region r: r itself, or for a region of a parallel state
// inside another region's state, that region, and so on out.
func (r *specRegion) outermost() *specRegion {
	for r.host != nil {
		r = r.host
	}
	return r
}

// refusal says why fsmgen does not enter target to, inside region r,
// from outside parallel state p (r's outermost parallel state, or a
// parallel state inside a region's state around r, whose region's rule
// does not resume a parallel state through a deep history: inward), and
// what to do, as the rest of a message that names them; "" when it does.
func (e *entering) refusal(to spec.String, r *specRegion, p string, inward bool) string {
	var leaves []*spec.State
	if name, ok := strings.CutSuffix(to.Value, historySuffix); ok {
		h := e.states[name]
		if h.History.Value == "" {
			return ": state " + name + " has no history to enter; add \"history: shallow\" or \"history: deep\" to " + name
		}
		if h.Parallel.Value && !inward {
			return ": that is the history of parallel state " + name + " inside region " + r.root.Name.Value + ", whose regions' leaves fsmgen does not resume from outside " + p + " yet; target " + name + " itself, or lead a rule of region " + r.root.Name.Value + " into the history"
		}
		leaves = e.resumedLeaves(h)
	} else {
		leaves = []*spec.State{e.descend(e.states[to.Value])}
	}
	deep := inward && strings.HasSuffix(to.Value, historySuffix) && e.states[strings.TrimSuffix(to.Value, historySuffix)].History.Value == "deep"
	for _, leaf := range leaves {
		if why := e.leafRefusal(leaf, r, p, deep, inward); why != "" {
			return why
		}
	}
	return ""
}

// leafRefusal says why fsmgen does not enter leaf, inside region r of
// parallel state p, from outside p (through a deep history it does not
// resume a parallel state inside the region from when deep is set); ""
// when it does. A shallow history that resumes a parallel state inside
// the region enters it anew, through its regions' initial states (SCXML
// 1.0 §3.10: the remembered child's default entry), as a rule that
// targets it does; a deep one resumes its regions' leaves, from outside
// P (see Run.IntoResume), not yet by a rule of the region around it
// (inward). A final state whose composite state's done transition may
// rest (guards without else) is entered so from outside P, the step
// testing the done transition once (emit's raiseDone), not yet by a rule
// of the region around a parallel state inside it (inward).
func (e *entering) leafRefusal(leaf *spec.State, r *specRegion, p string, deep, inward bool) string {
	if leaf.Parallel.Value && deep {
		return ": the deep history may resume parallel state " + leaf.Name.Value + " inside region " + r.root.Name.Value + ", whose regions' leaves fsmgen does not resume from outside " + p + " yet; target " + leaf.Name.Value + " itself, make the history shallow, or target " + p
	}
	if c := e.restingDone(leaf); c != nil && inward {
		return ": it is entered down to final state " + leaf.Name.Value + ", whose composite state " + c.Name.Value + " has a done transition whose guards end without an else, and fsmgen does not yet test them in the step in which a rule of the region around " + p + " enters " + p + " down to it; target another state of " + c.Name.Value + ", or end the guards with else"
	}
	return ""
}

// restingDone returns the composite state inside a region whose final
// child is leaf and whose done transition's guards end without an else
// (the region may rest in leaf); nil when there is none.
func (e *entering) restingDone(leaf *spec.State) *spec.State {
	if !leaf.Final.Value {
		return nil
	}
	for _, c := range e.states {
		if d := c.Done; d != nil && !c.Parallel.Value && len(d.Guards) > 0 && !slices.ContainsFunc(d.Guards, func(b spec.Branch) bool { return b.Else.Value }) &&
			slices.ContainsFunc(c.States, func(s spec.State) bool { return s.Name.Value == leaf.Name.Value }) {
			return c
		}
	}
	return nil
}

// resumedLeaves returns the leaves a rule into the history of state h, inside
// a region, may enter: h's initial leaf, and the leaves it resumes, those
// of h's other children (a shallow history) or h's other leaves (a deep
// one), but transient states, which are never remembered (see
// remembered).
func (e *entering) resumedLeaves(h *spec.State) []*spec.State {
	out := []*spec.State{e.descend(h)}
	add := func(l *spec.State) {
		if !slices.Contains(out, l) && !l.Transient.Value {
			out = append(out, l)
		}
	}
	if h.History.Value == "shallow" {
		for i := range h.States {
			add(e.descend(&h.States[i]))
		}
		return out
	}
	walkStates(h, func(s *spec.State) {
		if s != h && (len(s.States) == 0 || s.Parallel.Value) {
			add(s)
		}
	})
	return out
}

// descend returns the leaf state s is entered down to, through its
// initial children; a parallel state inside a region is a leaf here.
func (e *entering) descend(s *spec.State) *spec.State {
	for s != nil && len(s.States) > 0 && !s.Parallel.Value {
		i := slices.IndexFunc(s.States, func(c spec.State) bool { return c.Initial.Value })
		if i < 0 {
			return s
		}
		s = &s.States[i]
	}
	return s
}

// enteredStarts returns, in a region's build, the leaves that rules
// from outside the parallel state enter the region through (besides its
// initial state): the region reaches them, and what they reach.
func (b *builder) enteredStarts() []*State {
	if !b.par.inRegion() {
		return nil
	}
	var out []*State
	for _, n := range b.par.region.entered {
		if s := descend(b.states[n]); s != nil && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// Entered returns, for the entry of a parallel state that a rule into a
// state inside one of its regions runs (Run.Into), the leaves its
// regions are entered in, by Region.Index: Into for its region, nil for
// the others (entered through their initial leaves); nil for other runs.
func (m *Machine) Entered(run *Run) []*State {
	if run == nil || run.Into == nil {
		return nil
	}
	out := make([]*State, len(m.Regions))
	for _, reg := range m.Regions {
		out[reg.Index] = run.IntoLeaf(reg)
	}
	return out
}

// IntoLeaf returns, for the entry of a parallel state that a rule into a
// state inside one of its regions runs (Run.Into), the leaf that region
// reg is entered in: Into for Into's region; for a region that holds the
// parallel state around Into's region (Region.Within), that parallel
// state, and so on out; nil for the others (entered through their initial
// leaves) and for other runs.
func (run *Run) IntoLeaf(reg *Region) *State {
	if run == nil || run.Into == nil {
		return nil
	}
	leaf := run.Into
	for r := run.Into.Region; r != nil; leaf, r = r.Within, r.Host {
		if r == reg {
			return leaf
		}
	}
	return nil
}

// Top returns the parallel state of the machine around region reg: its
// own, or for a region of a parallel state inside another region's
// state, the outermost one's.
func (reg *Region) Top() *State {
	for reg.Host != nil {
		reg = reg.Host
	}
	return reg.Parallel
}

// enteredConfig returns the leaves of the regions after way w, which
// enters parallel state w.To anew: the initial configuration, but for a
// region a rule of w enters through a state inside it.
func (m *Machine) enteredConfig(w *Way) []*State {
	cfg := initialConfig(m)
	var into *Run
	for _, r := range w.Rules {
		for _, run := range r.Entries {
			if run.State == w.To {
				// The last rule that enters w.To decides: one into a
				// state inside it (Run.Into), or through its regions'
				// initial states (a done transition that leads back
				// into it, say, after a rule into a state inside it).
				into = nil
				if run.Into != nil {
					into = run
				}
			}
		}
	}
	// The regions of the parallel states inside the regions, entered
	// through their initial leaves where their hosts are entered.
	for _, reg := range w.To.Flat {
		if reg.Host != nil {
			cfg[reg.Index] = nil
		}
		if l := into.IntoLeaf(reg); l != nil {
			cfg[reg.Index] = l
		}
	}
	w.To.settleHosts(cfg)
	return cfg
}

// EntersInside reports whether rule r, of a state outside a parallel
// state, targets a state inside one of its regions (see Run.Into): it
// enters the parallel state and every region, as SCXML does. So does a
// rule of a region into a state inside a parallel state inside one of
// the region's states (see inward): r.To is that parallel state.
func (r *Rule) EntersInside() bool {
	return slices.ContainsFunc(r.Entries, func(run *Run) bool { return run.Into != nil })
}

// enteredOverwrites refuses, as overwrites does for entering a parallel
// state through its regions' initial states, two entries of different
// regions that a rule into a state inside a region runs and that set one
// field, the later not reading it.
func enteredOverwrites(m *Machine, diags *diag.List) {
	for _, r := range m.Rules {
		for _, run := range r.Entries {
			if run.Into == nil {
				continue
			}
			p := run.State
			var list []writer
			for _, reg := range p.Regions {
				runs := reg.Start
				if l := run.IntoLeaf(reg); l != nil {
					runs = l.Enter
				}
				for i, x := range runs {
					if len(x.Stores) > 0 {
						list = append(list, writer{reg, r, x, x.State.hookPos(true, r.Pos), [3]int{2, reg.Index, i}, x.Stores})
					}
					if hosting(x) {
						list = append(list, hostedWriters(x.State, true, r)...)
					}
				}
			}
			clash(p, list, "rule "+r.Label+", which enters "+p.Name, diags)
		}
	}
}

// across rewrites, as row does, the targets of row t of the states of
// region r that name states inside another region of r's parallel state
// P: SCXML 1.0 §3.13 leaves P from the row's source (the transition's
// domain is the compound state around P, findLCCA), then enters P again
// through the target, so the row leaves P for P itself (see
// parleave.go), entering the target's region through the target. It
// reports whether some target was refused.
func (e *entering) across(t *spec.Transition, r *specRegion, diags *diag.List) bool {
	if r.host != nil {
		return false // regionRow's
	}
	bad := false
	one := func(o *spec.Outcome, pos diag.Pos) {
		name := strings.TrimSuffix(o.To.Value, historySuffix)
		other := e.regionOf[name]
		if !o.To.Set || other == nil || other.outermost() == r || other.top != r.par {
			return
		}
		if why := e.refusal(o.To, other, r.par.Name.Value, false); why != "" {
			diags.Errorf(o.To.Pos, "region %s cannot move to %s, in region %s of the same parallel state %s, which it would leave and enter again%s", r.root.Name.Value, o.To.Value, other.root.Name.Value, r.par.Name.Value, why)
			bad = true
			return
		}
		e.targets[pos] = o.To.Value // (a history's name kept: see enterInside)
		enteredThrough(other, name)
		o.To = spec.String{Value: r.par.Name.Value, Pos: o.To.Pos, Set: true}
	}
	eachOutcome(t, one)
	return bad
}

// into returns, in the build of the machine around the regions, the
// state inside a region that the rule at pos targets (see entering), and
// in a region's build, the state inside a parallel state inside one of
// its states (see inward); "" for other rules and builds.
func (h *parHook) into(pos diag.Pos) string {
	switch {
	case h == nil || h.entering == nil:
		return ""
	case h.region != nil:
		return h.entering.inwards[pos]
	}
	return h.entering.targets[pos]
}

// targetName names the rule's target in its label as the spec does: the
// state inside a region it targets (which the machine's build holds as
// a rule into the parallel state), else its Target.
func (r *Rule) targetName() string {
	if r.into != "" {
		return r.into
	}
	return r.Target.Name
}

// regionFieldClash reports a region of a parallel state of machine m
// whose Go name is that of a field of the parallel state: the value of
// the parallel state holds both as struct fields (On{Level: StateQuiet,
// Level: 3}), which would not compile. Each place is reported.
func regionFieldClash(m *Machine, diags *diag.List) {
	for _, p := range m.States {
		for _, reg := range p.Flat {
			for _, f := range p.Fields {
				if f.GoName != reg.Field {
					continue
				}
				for _, pos := range []diag.Pos{reg.Root.Pos, f.Pos} {
					diags.Errorf(pos, "field %s of %s and its region %s are both %s in Go: rename one or give one a go_name", f.Name, p.Name, reg.Root.Name, f.GoName)
				}
			}
		}
	}
}
