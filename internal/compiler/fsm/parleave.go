package fsm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file resolves the rows of the states inside a region of a parallel
// state P whose target is outside P (or P itself, entered again): such a
// rule's transition domain is the compound state around P (SCXML 1.0
// §3.13, getTransitionDomain and findLCCA), so it exits every active
// state of P, all its regions innermost first and P itself, before its
// actions run and its target is entered, as a rule of P does. fsmgen
// writes it as a rule of P, guarded by In(S) for its source S and tried
// before P's own rules for the event (a region's rule preempts its
// parallel state's): the generated code takes it when S's region is in S
// and no region takes the event, which is exactly when SCXML would, as
// long as the other regions of P with a rule or a list entry for the
// event come before S's in document order and move within themselves or
// reject it (SCXML keeps the rule of the first region in document order
// and drops a later one whose exits intersect its own,
// removeConflictingTransitions; fsmgen refuses the other cases yet), and
// no state around S inside its region has one (S's leaves would take it
// there). A timer of S whose rules leave P runs as S's, its rules
// resolved as P's. The rule stays S's (Rule.Source): its label, the
// table, the diagram and the export name S.

// leaveRow is one row of a state inside a region that leaves the
// region's parallel state, for one source and one event.
type leaveRow struct {
	r   *specRegion
	src spec.String
	t   spec.Transition
}

// leaving collects the rows that leave parallel states, by parallel
// state and event, in spec order.
type leaving struct {
	rows   map[string]map[string][]leaveRow
	pars   []*spec.State
	evs    map[string][]string
	names  map[diag.Pos]string
	timers []leaveTimer
	// owns are the positions of the else branches that are the parallel
	// state's own unguarded rule or list entry (see ownBranches).
	owns map[diag.Pos]bool
}

func newLeaving() *leaving {
	return &leaving{rows: map[string]map[string][]leaveRow{}, evs: map[string][]string{}, names: map[diag.Pos]string{}, owns: map[diag.Pos]bool{}}
}

// leavesAll reports whether some of t's targets name a state outside the
// regions of every parallel state (a parallel state itself among them),
// and whether all do.
func leavesAll(t *spec.Transition, regionOf map[string]*specRegion) (some, all bool) {
	to := targets(t)
	all = len(to) > 0
	for _, n := range to {
		if regionOf[strings.TrimSuffix(n.Value, historySuffix)] == nil {
			some = true
		} else {
			all = false
		}
	}
	return some, all
}

// take records row t of the states of region r when it leaves r's
// parallel state, and reports whether it did (or refused it, named); a
// row that does not leave it is regionRow's.
func (l *leaving) take(t *spec.Transition, r *specRegion, regionOf map[string]*specRegion, diags *diag.List) bool {
	some, all := leavesAll(t, regionOf)
	if !some || r.groups != nil || r.host != nil {
		return false // regionRow's, or refused there
	}
	par := r.par.Name.Value
	switch {
	case !all || len(t.Guards) > 0:
		diags.Errorf(t.Pos, "region %s leaves parallel state %s from %s with guards: fsmgen writes a rule that leaves a parallel state from inside a region without guards only yet; write one row per source without guards, or the guarded row from %s", r.root.Name.Value, par, t.From[0].Value, par)
		return true
	case len(t.On) == 0:
		diags.Errorf(t.Pos, "region %s leaves parallel state %s from %s by an eventless rule: fsmgen does not write an eventless rule that leaves a parallel state from inside a region yet; move to a state of the region and leave %s from there on an event", r.root.Name.Value, par, t.From[0].Value, par)
		return true
	case len(t.Examples) > 0:
		diags.Errorf(t.Examples[0].Pos, "region %s leaves parallel state %s from %s, a rule fsmgen writes as one of %s's: its examples cannot start in %s yet; remove the example (the generated tests cover the rule)", r.root.Name.Value, par, t.From[0].Value, par, t.From[0].Value)
		return true
	}
	for _, from := range t.From {
		if r.finals[from.Value] {
			diags.Errorf(from.Pos, "region %s rests in its final state %s, which has no transitions of its own (SCXML 1.0 §3.7): the events it is offered go to the states around it; write the row from %s or from %s", r.root.Name.Value, from.Value, r.root.Name.Value, par)
			continue
		}
		for _, e := range t.On {
			if l.rows[par] == nil {
				l.rows[par] = map[string][]leaveRow{}
				l.pars = append(l.pars, r.par)
			}
			if l.rows[par][e.Value] == nil {
				l.evs[par] = append(l.evs[par], e.Value)
			}
			o := *t
			o.From, o.On = []spec.String{from}, []spec.String{e}
			l.rows[par][e.Value] = append(l.rows[par][e.Value], leaveRow{r: r, src: from, t: o})
		}
	}
	return true
}

// merge writes the rows that leave each parallel state as one row of it
// per event (see above), before its own row for the event or its list
// entry, which become the last branches; rows are the spec's, regions
// every region.
func (l *leaving) merge(outer *spec.File, rows []spec.Transition, regions []*specRegion, diags *diag.List) {
	for _, p := range l.pars {
		par := p.Name.Value
		for _, e := range l.evs[par] {
			list := l.rows[par][e]
			if !l.check(p, e, list, rows, regions, diags) {
				continue
			}
			first := list[0]
			row := spec.Transition{Pos: first.t.Pos, From: []spec.String{{Value: par, Pos: first.src.Pos, Set: true}}, On: first.t.On, OnPos: first.t.OnPos}
			for _, lr := range list {
				in := spec.String{Value: "In(" + lr.src.Value + ")", Pos: lr.src.Pos, Set: true}
				l.names[in.Pos] = lr.src.Value
				row.Guards = append(row.Guards, spec.Branch{Pos: lr.t.Pos, If: in, Outcome: lr.t.Outcome})
			}
			own := ownBranches(outer, p, e)
			if len(own) == 1 && own[0].Else.Value {
				// p's own rule, unguarded, or its list entry: it stays
				// so in the table and the labels.
				l.owns[own[0].Pos] = true
			}
			row.Guards = append(row.Guards, own...)
			outer.Transitions = append(outer.Transitions, row)
		}
	}
}

// check reports whether the rows list of parallel state p for event e
// may be written as p's (see above), naming what refuses them.
func (l *leaving) check(p *spec.State, e string, list []leaveRow, rows []spec.Transition, regions []*specRegion, diags *diag.List) bool {
	ok := true
	first := list[0]
	label := func(lr leaveRow) string { return fmt.Sprintf("%s --%s--> %s", lr.src.Value, e, lr.t.To.Value) }
	for _, o := range regions {
		if o.top != p || slices.ContainsFunc(list, func(lr leaveRow) bool { return lr.r == o }) {
			continue
		}
		if o.place < first.r.place && o.groups == nil && o.host == nil && movesOnly(o, e, rows) {
			// An earlier region whose rules for e move within it or
			// reject: SCXML drops the rule that leaves where one is
			// taken, as the generated code does.
			continue
		}
		by := regionTakes(o, e, rows)
		if by == "" {
			if g := groupTakes(o.groups, e, rows); g != nil {
				by = g.Name.Value
			}
		}
		if by != "" {
			diags.Errorf(first.src.Pos, "rule %s leaves parallel state %s, and %s, in region %s of %s, has a rule or a list entry for %s too: SCXML takes the rule of the first region in document order and drops the other (SCXML 1.0 §3.13, removeConflictingTransitions), which fsmgen writes only where the other region comes first and its rules for %s move within it or reject; leave %s on %s from %s, or give the events different names", label(first), p.Name.Value, by, o.root.Name.Value, p.Name.Value, e, e, p.Name.Value, e, p.Name.Value)
			return false
		}
	}
	for _, lr := range list {
		if lr.r != first.r {
			diags.Errorf(lr.src.Pos, "rules %s and %s leave parallel state %s from two of its regions, %s and %s: SCXML takes the rule of the first region in document order and drops the other (SCXML 1.0 §3.13, removeConflictingTransitions), which fsmgen does not write yet; leave %s on %s from %s", label(first), label(lr), p.Name.Value, first.r.root.Name.Value, lr.r.root.Name.Value, p.Name.Value, e, p.Name.Value)
			return false
		}
		for _, a := range around(lr.r.root, lr.src.Value) {
			listed := slices.ContainsFunc(listEntries(a), func(n spec.String) bool { return n.Value == e || n.Value == "*" })
			if listed || hasRow(a, e, rows) {
				diags.Errorf(lr.src.Pos, "rule %s leaves parallel state %s, and %s, around %s in region %s, has a rule or a list entry for %s too, which %s would take inside the region: fsmgen does not write both yet; write %s's rule on the states inside %s instead", label(lr), p.Name.Value, a.Name.Value, lr.src.Value, lr.r.root.Name.Value, e, lr.src.Value, a.Name.Value, a.Name.Value)
				ok = false
			}
		}
		if s := stateNamed(lr.r.root, lr.src.Value); s != nil && slices.ContainsFunc(listEntries(s), func(n spec.String) bool { return n.Value == "*" }) {
			diags.Errorf(lr.src.Pos, "rule %s leaves parallel state %s, and %s resolves every other event by its \"*\" list, which fsmgen would let take %s inside the region: list the events %s ignores or rejects by name", label(lr), p.Name.Value, lr.src.Value, e, lr.src.Value)
			ok = false
		}
	}
	for _, n := range listEntries(p) {
		if n.Value == "*" || n.Value == e && slices.ContainsFunc(p.Defer, func(d spec.String) bool { return d.Value == e }) {
			diags.Errorf(n.Pos, "parallel state %s defers %s or resolves every other event by a \"*\" list, and rule %s leaves it on %s: fsmgen does not write both yet; write %s's own rule for %s as a row", p.Name.Value, e, label(first), e, p.Name.Value, e)
			ok = false
		}
	}
	return ok
}

// around returns the states of region root around the state named s,
// outermost first, the root included; nil when s is not inside it.
func around(root *spec.State, s string) []*spec.State {
	if root.Name.Value == s {
		return []*spec.State{}
	}
	for i := range root.States {
		if in := around(&root.States[i], s); in != nil {
			return append([]*spec.State{root}, in...)
		}
	}
	return nil
}

// stateNamed returns the state named n inside s, s included.
func stateNamed(s *spec.State, n string) *spec.State {
	var out *spec.State
	walkStates(s, func(x *spec.State) {
		if x.Name.Value == n {
			out = x
		}
	})
	return out
}

// ownBranches takes parallel state p's own rule for event e out of the
// spec's rows and p's lists, and returns it as the last branches of the
// row that leaves p (see merge): its branches, or its outcome as the
// else branch; its ignore or reject list entry as an else branch. None
// when p has neither: the event then goes where p's would.
func ownBranches(outer *spec.File, p *spec.State, e string) []spec.Branch {
	par := p.Name.Value
	var out []spec.Branch
	var kept []spec.Transition
	for _, t := range outer.Transitions {
		fi := slices.IndexFunc(t.From, func(n spec.String) bool { return n.Value == par })
		ei := slices.IndexFunc(t.On, func(n spec.String) bool { return n.Value == e })
		if fi < 0 || ei < 0 || out != nil {
			kept = append(kept, t)
			continue
		}
		if len(t.Guards) > 0 {
			out = t.Guards
		} else {
			out = []spec.Branch{{Pos: t.Pos, Else: spec.Bool{Value: true, Pos: t.Pos, Set: true}, Outcome: t.Outcome}}
		}
		if len(t.From) > 1 {
			o := t
			o.From = slices.Delete(slices.Clone(t.From), fi, fi+1)
			kept = append(kept, o)
		}
		if len(t.On) > 1 {
			o := t
			o.From = []spec.String{t.From[fi]}
			o.On = slices.Delete(slices.Clone(t.On), ei, ei+1)
			kept = append(kept, o)
		}
	}
	outer.Transitions = kept
	if out != nil {
		return out
	}
	for i := range outer.States {
		s := unlist(&outer.States[i], par, e)
		if s == nil {
			continue
		}
		if s.Ignore.Set {
			return []spec.Branch{{Pos: s.Ignore.Pos, Else: spec.Bool{Value: true, Pos: s.Ignore.Pos, Set: true}, Outcome: *s}}
		}
		return []spec.Branch{{Pos: s.Reject.Pos, Else: spec.Bool{Value: true, Pos: s.Reject.Pos, Set: true}, Outcome: *s}}
	}
	return nil
}

// unlist removes event e from the ignore and reject lists of the state
// named par among s and the states inside it, and returns the outcome
// that says what the list did; nil when neither lists e.
func unlist(s *spec.State, par, e string) *spec.Outcome {
	if s.Name.Value != par {
		for i := range s.States {
			if o := unlist(&s.States[i], par, e); o != nil {
				return o
			}
		}
		return nil
	}
	for i, n := range s.Ignore {
		if n.Value == e {
			s.Ignore = slices.Delete(slices.Clone(s.Ignore), i, i+1)
			return &spec.Outcome{Ignore: spec.Bool{Value: true, Pos: n.Pos, Set: true}}
		}
	}
	for i, n := range s.Reject {
		if n.Value == e {
			s.Reject = slices.Delete(slices.Clone(s.Reject), i, i+1)
			return &spec.Outcome{Reject: spec.String{Value: fmt.Sprintf("%s is not accepted in state %s", e, par), Pos: n.Pos, Set: true}}
		}
	}
	return nil
}

// leavingRules resolves the In(State) guards of the rules that leave a
// parallel state from inside one of its regions (ins, made by the
// machine's build; inRegion are the states inside regions by name), and
// names each rule after its source (Rule.Source).
func leavingRules(m *Machine, ins []*Func, inRegion map[string]*State, owns map[diag.Pos]bool) {
	if len(ins) == 0 {
		return
	}
	for _, r := range m.Rules {
		if owns[r.Pos] && r.Else {
			// The parallel state's own rule after those that leave it:
			// written unguarded, as the spec does.
			r.Else = false
			r.Listed = r.Kind != Transition
			r.Label = RuleLabel(r)
		}
	}
	for _, fn := range ins {
		fn.In = inRegion[fn.InName]
	}
	for _, r := range m.Rules {
		if r.Guard == nil || !slices.Contains(ins, r.Guard) {
			continue
		}
		r.Source = r.Guard.In
		from, guard := r.From, r.Guard
		r.From, r.Guard = r.Source, nil
		r.Label = RuleLabel(r)
		r.From, r.Guard = from, guard
	}
}

// leaveTest reports whether test t asks the In(State) guard of a rule
// that leaves a parallel state from inside a region (see above), which
// the configuration answers: no choice of the generated tests.
func leaveTest(t Test) bool { return t.Guard != nil && t.Guard.In != nil }

// inAgrees reports whether configuration cfg answers the In(State)
// guards way w of a parallel state's own rules tests as w does, and
// drops those tests from w.
func inAgrees(w *Way, cfg []*State) bool {
	var kept []Test
	for _, t := range w.Tests {
		if !leaveTest(t) {
			kept = append(kept, t)
			continue
		}
		if inHolds(t.Guard.In, w.From, cfg) != t.Holds {
			return false
		}
	}
	w.Tests = kept
	return true
}

// inConfig returns cfg, a configuration of parallel state p in which no
// region takes the event of way w, changed so that it answers the
// In(State) guards w tests as w does (see inAgrees); nil when no
// configuration does.
func (m *Machine) inConfig(p *State, w *Way, cfg []*State) []*State {
	if !slices.ContainsFunc(w.Tests, leaveTest) {
		return cfg
	}
	out := slices.Clone(cfg)
	for _, reg := range p.Regions {
		fits := func(l *State) bool {
			if c := l.Cell(w.Event); c != nil && !c.Out() || l.Regions != nil || l.Settles() {
				return false
			}
			for _, t := range w.Tests {
				if leaveTest(t) && t.Guard.In.Region == reg && t.Guard.In.Contains(l) != t.Holds {
					return false
				}
			}
			return true
		}
		if fits(out[reg.Index]) {
			continue
		}
		i := slices.IndexFunc(reg.Leaves, func(l *State) bool { return fits(l) && !l.Final })
		if i < 0 {
			i = slices.IndexFunc(reg.Leaves, fits)
		}
		if i < 0 {
			return nil
		}
		m.place(out, reg, reg.Leaves[i])
	}
	if p.completes(out) || !inAgrees(w, out) {
		return nil
	}
	return out
}

// leaveTimer is a timer of a state inside a region whose rules leave the
// region's parallel state.
type leaveTimer struct {
	par   string
	src   string
	after *spec.After
}

// timer records timer t of a state inside region r (its rules as a row,
// see checkRegion) when its rules leave r's parallel state, and reports
// whether it did (or refused it, named). The region's build runs the
// timer, from its state's entry to its exit, with a stand-in rule;
// the machine's build resolves its rules as the parallel state's, which
// join gives the timer (see leavingTimers).
func (l *leaving) timer(t *spec.Transition, r *specRegion, regionOf map[string]*specRegion, lifts *lifts, diags *diag.List) bool {
	some, _ := leavesAll(t, regionOf)
	if !some || r.groups != nil || r.host != nil {
		return false // regionRow's, or refused there
	}
	for _, to := range targets(t) {
		if regionOf[strings.TrimSuffix(to.Value, historySuffix)] != nil {
			diags.Errorf(to.Pos, "a timer of %s, in region %s, leaves parallel state %s by one branch and moves to %s inside it by another: fsmgen does not write both in one timer yet; give the branches targets outside %s, or give %s two timers", t.From[0].Value, r.root.Name.Value, r.par.Name.Value, to.Value, r.par.Name.Value, t.From[0].Value)
			return true
		}
	}
	exs := slices.Clone(t.Examples)
	for _, br := range t.Guards {
		exs = append(exs, br.Examples...)
	}
	if len(exs) > 0 {
		diags.Errorf(exs[0].Pos, "a timer of %s, in region %s, leaves parallel state %s, a rule fsmgen writes as one of %s's: its examples cannot start in %s yet; remove the example (the generated tests cover the rule)", t.From[0].Value, r.root.Name.Value, r.par.Name.Value, r.par.Name.Value, t.From[0].Value)
		return true
	}
	s := stateNamed(r.root, t.From[0].Value)
	i := slices.IndexFunc(s.After, func(a *spec.After) bool { return a.Pos == t.Pos })
	if i < 0 {
		return false
	}
	a := s.After[i]
	lifts.standIns[a] = &spec.After{Pos: a.Pos, ID: a.ID, Delay: a.Delay, Outcome: spec.Outcome{To: spec.String{Value: s.Name.Value, Pos: a.Pos, Set: true}}}
	l.timers = append(l.timers, leaveTimer{par: r.par.Name.Value, src: s.Name.Value, after: a})
	return true
}

// leavingTimers resolves, in the machine's build, the rules of the timers
// of states inside regions that leave their parallel state (see timer),
// each as a rule of the parallel state fired by a timer of its own, which
// join swaps for the timer the region's build runs.
func (b *builder) leavingTimers() {
	if b.par == nil || b.par.inRegion() {
		return
	}
	for _, lt := range b.par.leaveTimers {
		p := b.states[lt.par]
		if p == nil || b.m.TimerFired == nil {
			continue
		}
		row := &spec.Transition{Pos: lt.after.Pos, Outcome: lt.after.Outcome, Guards: lt.after.Guards}
		if len(lt.after.Guards) > 0 && lt.after.Says() {
			continue // the region's build says so
		}
		rules := b.rowRules(row, p, b.m.TimerFired)
		if rules == nil {
			continue
		}
		t := &Timer{State: p, ID: lt.after.ID.Value, Pos: lt.after.Pos, DelayText: lt.after.Delay.Value}
		for _, r := range rules {
			r.Timer = t
			for _, v := range r.Variants {
				v.Timer = t
			}
			if r.Kind == Reject {
				b.errorf(r.Pos, "a timer's rule cannot reject: nobody sent its event to be told; ignore it, or move")
			}
		}
		t.Cell = &Cell{State: p, Event: b.m.TimerFired, Rules: rules}
		b.par.leftTimers = append(b.par.leftTimers, t)
	}
}

// swapTimers gives each timer of a state inside region reg's build
// (sr's) that leaves its parallel state the rules the machine's build
// resolved for it (leftTimers), named after their source, and reports
// the stand-in rules of the region's build, which the machine drops.
func swapTimers(reg *Region, sub *Machine, left []*Timer) map[*Rule]bool {
	drop := map[*Rule]bool{}
	for _, t := range sub.Timers {
		i := slices.IndexFunc(left, func(o *Timer) bool { return o.Pos == t.Pos })
		if i < 0 {
			continue
		}
		for _, r := range t.Cell.Rules {
			drop[r] = true
			for _, v := range r.Variants {
				drop[v] = true
			}
		}
		t.Cell.Rules = left[i].Cell.Rules
		for _, r := range t.Cell.Rules {
			for _, v := range append([]*Rule{r}, r.Variants...) {
				v.Timer, v.Source = t, t.State
				from := v.From
				v.From = t.State
				v.Label = RuleLabel(v)
				v.From = from
			}
		}
	}
	return drop
}

// sources returns, by parallel state and event, the states whose rules
// leave the parallel state (see parHook.sources).
func (l *leaving) sources() map[string]map[string][]string {
	out := map[string]map[string][]string{}
	for par, byEvent := range l.rows {
		out[par] = map[string][]string{}
		for e, list := range byEvent {
			for _, lr := range list {
				out[par][e] = append(out[par][e], lr.src.Value)
			}
		}
	}
	return out
}

// leavesFrom reports whether leaf s of a region of parallel state par,
// or a state around it, has a rule for event e that leaves par (see
// above).
func (h *parHook) leavesFrom(par, e string, s *State) bool {
	for _, a := range s.Path() {
		if slices.Contains(h.sources[par][e], a.Name) {
			return true
		}
	}
	return false
}

// doneLeaves refuses, named, the done transitions of the composite states
// inside region r that lead outside every region: fsmgen does not write a
// done transition that leaves a parallel state yet.
func doneLeaves(r *specRegion, regionOf map[string]*specRegion, diags *diag.List) {
	walkStates(r.root, func(s *spec.State) {
		if s.Done == nil || s == r.root || s.Parallel.Value {
			return
		}
		for _, to := range targets(&spec.Transition{Outcome: s.Done.Outcome, Guards: s.Done.Guards}) {
			if regionOf[strings.TrimSuffix(to.Value, historySuffix)] == nil {
				diags.Errorf(to.Pos, "the done transition of %s, in region %s, leaves parallel state %s for %s: fsmgen does not write a done transition that leaves a parallel state from inside a region yet (a row does); move to a state of the region that leaves %s on an event, or end the region in a final state and give %s the done transition", s.Name.Value, r.root.Name.Value, r.par.Name.Value, to.Value, r.par.Name.Value, r.par.Name.Value)
				return
			}
		}
	})
}

// movesOnly reports whether every rule and list entry of the states of
// region o for event e (rows are the spec's) moves within the region or
// rejects e: none ignores, defers, or stays without a target, which
// SCXML would run beside a rule that leaves the parallel state.
func movesOnly(o *specRegion, e string, rows []spec.Transition) bool {
	ok := true
	walkStates(o.root, func(s *spec.State) {
		for _, n := range slices.Concat(s.Ignore, s.Defer) {
			if n.Value == e || n.Value == "*" {
				ok = false
			}
		}
	})
	moves := func(out spec.Outcome) bool { return out.To.Set || out.Reject.Set }
	for _, t := range rows {
		if !slices.ContainsFunc(t.On, func(n spec.String) bool { return n.Value == e }) || !slices.ContainsFunc(t.From, func(n spec.String) bool { return o.names[n.Value] }) {
			continue
		}
		if len(t.Guards) == 0 {
			ok = ok && moves(t.Outcome)
		}
		for _, br := range t.Guards {
			ok = ok && moves(br.Outcome)
		}
	}
	return ok
}
