package fsm

import (
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file resolves the done transition of a parallel state nested as a
// region of another (Media in Run, see parnest.go). Media completes once
// every region of Media is in a final state: SCXML 1.0 §3.4 and §3.13
// raise done.state.Media then, and XState v5 takes Media's onDone. Media
// is active exactly while Run is, so its done transition, whose source is
// Media and whose parent Run is parallel, leaves Run (SCXML's transition
// domain skips <parallel>, see parnestlift.go): fsmgen writes it as
// eventless rules of Run (Rule.Done is Run, Rule.Group Media), which the
// generated code takes in the step that puts the last region of Media in
// a final state, before Run's own done transition (Media's done event is
// raised first: XState raises the done events of the parallel states
// from the final state up, SCXML in document order of the final states
// entered).
//
// When it always leaves Run (no guards, or an else), the machine never
// rests with every region of Media final, and Run's done transition, or
// that of a parallel state nested in Run around Media, could never be
// taken: both are refused. When its guards end without else and none
// holds, the done event is dropped and Media's regions rest final; only a
// step that ends one of them again raises it, and Run's done event,
// raised in the same step, is taken next. Refused, named: such guards
// beside another nested one's done transition (their done events may be
// raised in one step, which fsmgen does not order yet); a done transition
// beside a parallel state inside a state of one of Run's regions
// (likewise), or under a deep history of or around Run (which would
// remember Media's regions final, and resuming them raises its done event
// again); and a target that enters Run again while another done event may
// wait in the same step.

// groupDones checks the done transitions of the parallel states nested as
// regions, records them by the parallel state they are regions of
// (hook.groupDones) and their positions in the first region of each
// (specRegion.lifted, see liftedGroups).
func groupDones(states []spec.State, regions []*specRegion, hook *parHook, diags *diag.List) {
	seen := map[*spec.State]bool{}
	for _, first := range regions {
		for gi, g := range first.groups {
			if seen[g] {
				continue
			}
			seen[g] = true
			if g.Done == nil || !groupDone(states, g, first, gi, regions, diags) {
				continue
			}
			if hook.groupDones == nil {
				hook.groupDones = map[string][]*spec.State{}
			}
			hook.groupDones[first.par.Name.Value] = append(hook.groupDones[first.par.Name.Value], g)
			first.lift(g.Done.Pos, gi)
			for _, br := range g.Done.Guards {
				first.lift(br.Pos, gi)
			}
		}
	}
}

// groupDone checks the done transition of g, the parallel state nested
// as a region of first.par whose first region is first (g is
// first.groups[gi]); it reports whether it is one fsmgen writes.
func groupDone(states []spec.State, g *spec.State, first *specRegion, gi int, regions []*specRegion, diags *diag.List) bool {
	d, par := g.Done, first.par
	ok := true
	for _, r := range regions {
		if slices.Contains(r.groups, g) && len(r.finals) == 0 {
			diags.Errorf(r.root.Name.Pos, "region %s of parallel state %s has no final state, so %s's done transition can never be taken: mark the state the region ends in \"final: true\"", r.root.Name.Value, g.Name.Value, g.Name.Value)
			ok = false
		}
	}
	switch {
	case len(d.Guards) > 0 && d.Says():
		diags.Errorf(d.Pos, "a done transition with guards keeps to, effect, action, set, with, ignore and reject inside its branches")
		return false
	case !leaves(d):
		diags.Errorf(d.Pos, "the done transition of parallel state %s must leave its final states and %s: give it \"to\" (in every branch)", g.Name.Value, g.Name.Value)
		return false
	case first.resumed:
		diags.Errorf(d.Pos, "the done transition of parallel state %s, a region of parallel state %s, may leave every region of %s final under a deep history of or around %s, which would remember them so, and resuming them raises %s's done event again: fsmgen does not write that yet; remove the deep history, or give %s the done transition", g.Name.Value, par.Name.Value, g.Name.Value, par.Name.Value, g.Name.Value, par.Name.Value)
		return false
	}
	if i := slices.IndexFunc(regions, func(r *specRegion) bool { return r.host != nil && r.top == par }); i >= 0 {
		diags.Errorf(d.Pos, "parallel state %s, a region of parallel state %s, has a done transition, and parallel state %s is inside a state of region %s of %s: fsmgen does not order their done events yet; give %s the done transition, or move %s out of the region", g.Name.Value, par.Name.Value, regions[i].par.Name.Value, regions[i].host.root.Name.Value, par.Name.Value, par.Name.Value, regions[i].par.Name.Value)
		return false
	}
	if r, c := doneBeside(g, par, regions); c != nil {
		diags.Errorf(d.Pos, "parallel state %s, a region of parallel state %s, has a done transition, and composite state %s, in region %s of %s, has one too: one event may end both, and SCXML takes their done events in the order it raises them (SCXML 1.0 §3.13: as their final states are entered), which fsmgen does not follow yet; give %s the done transition, or remove %s's", g.Name.Value, par.Name.Value, c.Name.Value, r.root.Name.Value, par.Name.Value, par.Name.Value, c.Name.Value)
		return false
	}
	around := append([]*spec.State{par}, first.groups[:gi]...)
	for _, a := range around {
		if a.Done != nil && !mayRefuse(d) {
			diags.Errorf(d.Pos, "parallel state %s, a region of parallel state %s, has a done transition, and so has %s around it: %s's always leaves %s in the step that makes the last of its regions final, so %s's, which waits for %s's regions too, could never be taken; give %s's guards no else, or remove one of them", g.Name.Value, par.Name.Value, a.Name.Value, g.Name.Value, par.Name.Value, a.Name.Value, g.Name.Value, g.Name.Value)
			return false
		}
	}
	for _, r := range regions {
		i := slices.IndexFunc(r.groups, func(o *spec.State) bool { return o != g && o.Done != nil && !slices.Contains(around, o) })
		if r.par == par && i >= 0 && !slices.Contains(r.groups, g) && (mayRefuse(d) || mayRefuse(r.groups[i].Done)) {
			diags.Errorf(d.Pos, "parallel state %s, a region of parallel state %s, has a done transition, and so has %s, another parallel state nested in %s, and the guards of one of them end without else: their done events may be raised in one step, which fsmgen does not order yet; give both an else, or give %s the done transition", g.Name.Value, par.Name.Value, r.groups[i].Name.Value, par.Name.Value, par.Name.Value)
			return false
		}
	}
	other := slices.ContainsFunc(around, func(a *spec.State) bool { return a.Done != nil }) || slices.ContainsFunc(regions, func(r *specRegion) bool {
		return r.par == par && slices.ContainsFunc(r.groups, func(o *spec.State) bool { return o != g && o.Done != nil })
	})
	for _, to := range targets(&spec.Transition{Outcome: d.Outcome, Guards: d.Guards}) {
		name := strings.TrimSuffix(to.Value, historySuffix)
		switch {
		case slices.ContainsFunc(regions, func(o *specRegion) bool { return o.par == par && o.names[name] }):
			diags.Errorf(to.Pos, "the done transition of parallel state %s, a region of parallel state %s, targets %s, inside %s: it would leave %s and enter it again with %s, which fsmgen does not write yet; target %s itself, which enters every region at its initial state, or a state outside it", g.Name.Value, par.Name.Value, to.Value, par.Name.Value, par.Name.Value, to.Value, par.Name.Value)
			ok = false
		case other && enclosing(states, name, par):
			diags.Errorf(to.Pos, "the done transition of parallel state %s, a region of parallel state %s, enters %s again through %s, while the done event of %s or of another parallel state nested in it may wait in the same step, which SCXML and XState would then take in the %s just entered: fsmgen does not write that; target a state outside %s", g.Name.Value, par.Name.Value, par.Name.Value, to.Value, par.Name.Value, par.Name.Value, par.Name.Value)
			ok = false
		}
	}
	return ok
}

// doneBeside returns a region of par outside g, and a composite state
// inside it with a done transition, if any: an event that ends both
// raises their done events in the order their final states are entered
// (g's first when the region is after g's, and a done transition's
// target may raise another behind g's), while fsmgen takes the done
// transitions inside the regions first.
func doneBeside(g, par *spec.State, regions []*specRegion) (*specRegion, *spec.State) {
	var inner func(s *spec.State) *spec.State
	inner = func(s *spec.State) *spec.State {
		for i := range s.States {
			c := &s.States[i]
			if c.Done != nil && len(c.States) > 0 && !c.Parallel.Value {
				return c
			}
			if x := inner(c); x != nil {
				return x
			}
		}
		return nil
	}
	for _, r := range regions {
		if r.par != par || slices.Contains(r.groups, g) {
			continue
		}
		if c := inner(r.root); c != nil {
			return r, c
		}
	}
	return nil, nil
}

// enclosing reports whether the state named outer, in list, is inner or
// holds it, so that entering it may enter inner.
func enclosing(list []spec.State, outer string, inner *spec.State) bool {
	for i := range list {
		s := &list[i]
		if s.Name.Value == outer {
			return s == inner || holds(s.States, inner)
		}
		if enclosing(s.States, outer, inner) {
			return true
		}
	}
	return false
}

// groupDoneRows makes the done transitions of the parallel states nested
// as regions of parallel state s (see above): eventless rules of s, which
// leave s as its own done transition's do, each group's apart.
func (b *builder) groupDoneRows(s *State) {
	for _, g := range b.par.groupDones[s.Name] {
		d := g.Done
		rules := b.rowRules(&spec.Transition{Pos: d.Pos, Outcome: d.Outcome, Guards: d.Guards}, s, nil)
		completes(rules, s)
		if rules != nil {
			b.groupDone = append(b.groupDone, groupPending{state: s, group: g.Name.Value, rules: rules})
		}
	}
}

// groupPending are the rules of the done transition of a parallel state
// nested as a region of parallel state state (see groupDoneRows), until
// they are numbered.
type groupPending struct {
	state *State
	group string // the nested parallel state's name
	rules []*Rule
}

// groupCompletions gives each parallel state nested as a region that has
// a done transition its Completion (see groupDoneRows), once liftedGroups
// named it on the rules.
func groupCompletions(m *Machine) {
	for _, s := range m.States {
		for _, c := range s.groupDone {
			c.Rules[0].Group.Completion = c
		}
	}
}

// DoneIn returns the first state whose done transition configuration
// cfg (the leaves of the regions of parallel state p) keeps the machine
// from resting in: a parallel state nested as a region of p with a done
// transition that always leaves (DoneOrder) whose regions are all final,
// or p when it completes; nil when none.
func (p *State) DoneIn(cfg []*State) *State {
	if cfg == nil {
		return nil
	}
	for _, q := range p.DoneOrder() {
		if allFinal(q, cfg) && (q == p || !q.RestsFinal()) {
			return q
		}
	}
	return nil
}

// DoneOrder returns p and the parallel states nested as its regions that
// have a done transition, in the order their done events are raised when
// one step completes several: a nested one before those around it
// (XState raises them from the final state up), siblings in document
// order, p last.
func (p *State) DoneOrder() []*State {
	var out []*State
	var visit func(s *State)
	visit = func(s *State) {
		for _, g := range p.Nested() {
			if g.Parent == s {
				visit(g)
			}
		}
		if s.Completion != nil {
			out = append(out, s)
		}
	}
	visit(p)
	return out
}

// raisedDone returns the states of DoneOrder whose done events a step of
// p's regions from configuration before to after raises: those whose
// regions are all final after it, but for one whose guards may all fail
// that rested so before (its done event is raised only by the step that
// ends the last of its regions), and p itself where no rule of the step
// entered a final state of its regions again (entered; SCXML 1.0 §3.13
// raises a done event on entering a final state).
func (p *State) raisedDone(before, after []*State, entered bool) []*State {
	var out []*State
	for _, q := range p.DoneOrder() {
		if allFinal(q, after) && (q == p && entered || !q.RestsFinal() || before == nil || !allFinal(q, before)) {
			out = append(out, q)
		}
	}
	return out
}

// NextDone returns, for a parallel state q nested as a region of p whose
// done transition's guards may all fail, the state whose done event the
// step that raised q's raised next: the innermost around q with a done
// transition (a parallel state nested in p, or p); nil when none has one.
func (p *State) NextDone(q *State) *State {
	order := p.DoneOrder()
	i := slices.Index(order, q)
	if i < 0 {
		return nil // not nested in p
	}
	for _, a := range order[i+1:] {
		if a.Contains(q) {
			return a
		}
	}
	return nil
}

// allFinal reports whether every region of s is in a final leaf in cfg.
func allFinal(s *State, cfg []*State) bool {
	for _, reg := range s.Regions {
		if !slices.Contains(reg.Finals, cfg[reg.Index]) {
			return false
		}
	}
	return true
}

// Completions returns the states with done transitions that region
// reg's steps may complete, innermost first: the parallel states nested
// as regions that hold reg, then its parallel state.
func (reg *Region) Completions() []*State {
	var out []*State
	for i := len(reg.Groups) - 1; i >= 0; i-- {
		if g := reg.Groups[i]; g.Completion != nil {
			out = append(out, g)
		}
	}
	if reg.Parallel.Completion != nil {
		out = append(out, reg.Parallel)
	}
	return out
}

// Nested returns the parallel states nested as regions of parallel state
// s, at any depth, in document order (see Region.Groups).
func (s *State) Nested() []*State {
	var out []*State
	for _, reg := range s.Regions {
		for _, g := range reg.Groups {
			if g.Regions[0] == reg {
				out = append(out, g)
			}
		}
	}
	return out
}

// doneEntersAgain refuses the done transition of a parallel state g
// nested as a region of parallel state p that leads into a transient
// state or a state that waits whose eventless rules may enter p again in
// the same step, while the done event of p, or of another parallel state
// nested in it, may wait in that step: SCXML and XState would then take it
// in the p just entered. groupDone refuses the done transition that
// targets p, or a state around it, so; this is the same through eventless
// rules, which the spec's regions do not see.
func (b *builder) doneEntersAgain() {
	for _, d := range b.groupDone {
		p := d.state
		if p.Completion == nil && len(p.groupDone) < 2 {
			continue // no other done event may wait
		}
		for _, r := range d.rules {
			if t := r.To; t != nil && eventlessInto(t, p, map[*State]bool{}) {
				b.errorf(r.Pos, "the done transition of parallel state %s, a region of parallel state %s, enters %s again through %s, whose eventless rules may lead into %s, while the done event of %s or of another parallel state nested in it may wait in the same step, which SCXML and XState would then take in the %s just entered: fsmgen does not write that; target a state outside %s whose eventless rules do not lead back into it", d.group, p.Name, p.Name, t.Name, p.Name, p.Name, p.Name, p.Name)
			}
		}
	}
}

// eventlessInto reports whether the eventless rules of t, a transient
// state or one that waits, may lead into parallel state p or a state
// inside it, through the eventless rules of the states they lead to
// (seen: the states followed).
func eventlessInto(t, p *State, seen map[*State]bool) bool {
	if seen[t] || t.Choice == nil || !t.Transient && !t.Waits {
		return false
	}
	seen[t] = true
	for _, r := range t.Choice.Rules {
		if r.To != nil && (r.To == p || p.Contains(r.To) || eventlessInto(r.To, p, seen)) {
			return true
		}
	}
	return false
}
