package fsm

import (
	"slices"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
)

// This file resolves a transient state that is the initial state of a
// region (see Transient states inside regions in docs/spec.md): entering
// the parallel state enters every region through its initial state, and
// the eventless rules of the regions then in a transient state follow in
// the same step, as one microstep, until none is (SCXML 1.0 §3.13: the
// microstep that enters a <parallel> is followed by
// selectEventlessTransitions before the next event; XState v5's always
// on a region's initial state).

// settleEntry continues way rw, whose rules enter parallel state p =
// rw.way.To anew with its regions in rw.after, through the eventless
// rules of the regions then in transient states and the done transitions
// of the composite states whose final states they are in (settle), and
// the done transition of p when every region is final, in the same step:
// one way per branch of their guards. rw alone when every region rests
// where it was entered.
func (m *Machine) settleEntry(rw regionWay) []regionWay {
	w, p := rw.way, rw.way.To
	if p == nil || p.Regions == nil || rw.after == nil || w.head != nil && !reenters(rw) {
		return []regionWay{rw}
	}
	if !enters(w, p) {
		return m.settleKept(rw)
	}
	var queue []*Region
	restless := p.Waits // its own eventless rules, once the regions settled
	for _, reg := range p.Flat {
		// The regions of the parallel states inside regions entered with
		// p too (nil when not).
		if s := rw.after[reg.Index]; s != nil && (s.Settles() || s.Eventless()) {
			restless = true
			if !s.Eventless() {
				queue = append(queue, reg)
			}
		}
	}
	if !restless && !p.completes(rw.after) {
		// (A deep history that resumes every region final completes p
		// in that step: see deepdone.go.)
		return []regionWay{rw}
	}
	cw := *w
	cw.Tests, cw.Rules = slices.Clip(w.Tests), slices.Clip(w.Rules)
	cw.head, cw.entered = w, slices.Clone(rw.after)
	// What w did in the regions of another parallel state (the done
	// transition of one left for p, and the eventless rules after it) is
	// head's: the rules after it are p's regions' alone.
	cw.moved, cw.micro, cw.groups, cw.Final, cw.after = nil, 0, nil, nil, 0
	return m.settle(p, &cw, rw.after, queue)
}

// settleAll is settleEntry for the search of paths, from a machine that
// remembers hist: each way settled, resolved with the memory after it
// (see resolveSettled), and settled again when it left its parallel state
// by the done transition and entered a parallel state anew (see
// reenters), with the memory after each.
func (m *Machine) settleAll(rw regionWay, hist []*State) ([]regionWay, [][]*State) {
	return m.settleFrom(rw, hist, len(m.States))
}

// settleFrom is settleAll, entering parallel states anew at most depth
// times more: a step that would go on doing so is an eventless loop, which
// the build refuses (eventlessLoops) before the search takes it.
func (m *Machine) settleFrom(rw regionWay, hist []*State, depth int) ([]regionWay, [][]*State) {
	var ways []regionWay
	var mems [][]*State
	for _, s := range m.settleEntry(rw) {
		if s.way == rw.way && rw.way.head != nil {
			// Entered anew, nothing to settle: resolved already.
			ways, mems = append(ways, s), append(mems, hist)
			continue
		}
		s, mem := m.resolveSettled(s, hist)
		if reenters(s) && depth > 0 {
			ws, ms := m.settleFrom(s, mem, depth-1)
			ways, mems = append(ways, ws...), append(mems, ms...)
			continue
		}
		ways, mems = append(ways, s), append(mems, mem)
	}
	return ways, mems
}

// settleFresh is settleAll for a way the generated tests take from a
// machine made by Restore, which remembers nothing: the histories its
// ways go into enter their defaults.
func (m *Machine) settleFresh(rw regionWay) []regionWay {
	return m.freshFrom(rw, len(m.States))
}

// freshFrom is settleFresh, entering parallel states anew at most depth
// times more (see settleFrom).
func (m *Machine) freshFrom(rw regionWay, depth int) []regionWay {
	var ways []regionWay
	for _, s := range m.settleEntry(rw) {
		if s.way != rw.way && reenters(s) && depth > 0 {
			ways = append(ways, m.freshFrom(s, depth-1)...)
			continue
		}
		ways = append(ways, s)
	}
	return ways
}

// reenters reports whether way rw, whose rules settled the regions of
// the parallel state its head entered (see Way.head), ended with that
// parallel state's done transition and entered a parallel state anew in
// the same step (through a state that waits outside, say): that entry
// settles its regions as any does, the whole way before it the head.
func reenters(rw regionWay) bool {
	w := rw.way
	return w.head != nil && w.Final != nil && w.To != nil && w.To.Regions != nil && rw.after != nil && enters(w, w.To)
}

// settleWay is settleEntry for a way the generated tests take from a
// machine made by Restore in configuration cfg of w.From (nil when
// w.From is no parallel state): its ways, each with its trace.
func (m *Machine) settleWay(w *Way, cfg []*State) []*Way {
	if w.To == nil || w.To.Regions == nil || !enters(w, w.To) && !m.keepsWaiting(w) {
		return []*Way{w}
	}
	after := w.Config // kept (see keepsWaiting)
	if enters(w, w.To) {
		after = m.enteredConfig(w)
	}
	if w.Resumed != nil {
		after = slices.Clone(w.Resumed)
	}
	var out []*Way
	for _, rw := range m.settleFresh(regionWay{way: w, after: after}) {
		if rw.way != w {
			rw.way.Trace = m.trace(rw.way, w.From, cfg)
		}
		out = append(out, rw.way)
	}
	return out
}

// stepEntered is step for a way with a head (see Way.head): the head's
// trace, then the regions' rules from the leaves they were entered in.
func (m *Machine) stepEntered(w *Way, before timerRun) (Trace, timerRun) {
	tr, run := m.step(w.head, before)
	rest := Way{From: w.head.To, Event: w.Event, Rules: w.Rules[len(w.head.Rules):], To: w.To, Config: w.entered, Regional: true,
		Final: w.Final, after: w.after, moved: w.moved, groups: w.groups}
	more, run := m.step(&rest, run)
	tr.Actions = append(slices.Clip(tr.Actions), more.Actions...)
	tr.Effects = append(slices.Clip(tr.Effects), more.Effects...)
	return tr, run
}

// restingConfig returns the leaves the regions enter first, but for a
// region whose initial leaf it never rests in its Resting leaf: a
// configuration Restore takes, from which the generated tests start.
// The regions of a parallel state inside a region's state hold a leaf
// only while that region is in it (see initialConfig).
func restingConfig(m *Machine) []*State {
	cfg := make([]*State, len(m.Regions))
	for _, reg := range m.Regions {
		// Hosts come before the regions they hold (document order).
		if reg.Host == nil || cfg[reg.Host.Index] == reg.Within {
			cfg[reg.Index] = reg.Resting()
		}
	}
	return cfg
}

// Resting returns the leaf of region reg a machine restored in its
// parallel state puts it in by default: its initial leaf, or, when the
// region never rests there (a transient state), its first leaf it rests
// in, not final when it has one.
func (reg *Region) Resting() *State {
	if !reg.Initial.Settles() {
		return reg.Initial
	}
	i := slices.IndexFunc(reg.Leaves, func(s *State) bool { return !s.Settles() && !s.Final })
	if i < 0 {
		i = slices.IndexFunc(reg.Leaves, func(s *State) bool { return !s.Settles() })
	}
	if i < 0 {
		return reg.Initial
	}
	return reg.Leaves[i]
}

// restlessHistory refuses a rule into a history inside a region that the
// step entering the parallel state may take: an eventless rule of a
// region's transient initial state, of a transient state a rule from
// outside the parallel state enters it through (Run.Into), or of a state
// either leads to in that step (a transient state, or a final state a done
// transition leaves). Which of the history's variants fires depends on
// what the history remembers as the parallel state is entered, which the
// witness paths do not follow through that step yet. It reports whether
// it refused one.
func restlessHistory(m *Machine, diags *diag.List) bool {
	refused := false
	for _, reg := range m.Regions {
		par := reg.Parallel // the parallel state whose entry enters reg
		if reg.Within != nil {
			par = reg.Within
		}
		seen := map[*State]bool{}
		var walk func(s *State, how string)
		walk = func(s *State, how string) {
			if s == nil || !s.Settles() || seen[s] {
				return
			}
			seen[s] = true
			for _, r := range s.Choice.Rules {
				if r.History != nil {
					refused = true
					diags.Errorf(r.Pos, "region %s of parallel state %s %s, and rule %s, which entering %s may take in that step, leads into the history of %s: fsmgen does not resume a history in the step that enters its parallel state yet; target a state of %s instead, or make another state of %s initial", reg.Root.Name, par.Name, how, r.Label, par.Name, r.History.Name, r.History.Name, reg.Root.Name)
					continue
				}
				walk(r.To, how)
			}
		}
		walk(reg.Initial, "starts in transient state "+reg.Initial.Name)
		for _, r := range m.Rules {
			for _, run := range r.Entries {
				if l := run.IntoLeaf(reg); l != nil {
					walk(l, "is entered through transient state "+l.Name+" by rule "+r.Label)
				}
			}
		}
	}
	return refused
}

// eventlessIntoHistory refuses an eventless rule of a state inside a
// region (a transient state's, or one that waits), or a done transition
// of a composite state inside the region, into a history inside the
// region that may enter a state that waits (the default or a variant),
// whose eventless rules are then tested in the step: the witness paths
// do not test them after such a rule yet. (One whose variant resumes a
// state the step leaves again, a transient state or a final state whose
// done transition follows, or the region's final state, after which its
// parallel state's done transition may follow, is written:
// continueRegion settles the step anew, the rule fired as its variant.)
// It reports whether it refused one.
func eventlessIntoHistory(m *Machine, diags *diag.List) bool {
	refused := false
	for _, r := range m.AllRules() {
		if r.Event != nil || r.Timer != nil || r.History == nil || r.Resume != nil || r.From == nil || r.From.Region == nil {
			continue
		}
		reg, kind, after := r.From.Region, "eventless rule", "an eventless rule's"
		if r.Done != nil {
			kind, after = "done transition", "a done transition's"
		}
		all := append([]*Rule{r}, r.Variants...) // the default and the variants
		if j := slices.IndexFunc(all, entersWaiting); j >= 0 {
			refused = true
			to := all[j].To
			diags.Errorf(r.Pos, "region %s of parallel state %s has %s %s into the history of %s, which may enter state %s, whose eventless rules are then tested in the same step: fsmgen does not test them after %s history yet; lead the rule to a state of %s instead, or give %s no history", reg.Root.Name, reg.Parallel.Name, kind, r.Label, r.History.Name, to.Name, after, r.History.Name, r.History.Name)
		}
	}
	return refused
}

// entersWaiting reports whether rule r (a history's default or
// variant) enters a state that waits.
func entersWaiting(r *Rule) bool { return r.To != nil && r.To.Waits }

// restsIn returns the leaves the regions of w.To rest in after way w
// whose rules settled them after entering it (see Way.head): the leaves
// they were entered in, moved by the regions' rules. Otherwise the
// leaves a deep history resumed (Way.Resumed).
func (w *Way) restsIn() []*State {
	if w.head == nil {
		return w.Resumed
	}
	if w.Final != nil {
		// The parallel state's done transition left it, and the step
		// entered it anew (through a state that waits outside, say):
		// its regions are where that entered them, not said here.
		return nil
	}
	cfg := slices.Clone(w.entered)
	for i, r := range w.Rules[len(w.head.Rules):] {
		if i < len(w.moved) && r.To != nil {
			cfg[w.moved[i].Index] = r.To
		}
	}
	return cfg
}

// keepsWaiting reports whether way w, of parallel state p's own rules
// (or those of a state around it, or a "*" row's), keeps the machine in
// p, whose regions have states that wait: a rule without a target, an
// ignore, a timer's; the regions' eventless rules are then tested, as
// after every step (see settleKept). A rejection or a deferral changes
// nothing, and tests nothing; nor does a TimerFired of no running timer
// (m.Stale), which the generated code drops before any rule.
func (m *Machine) keepsWaiting(w *Way) bool {
	p := w.To
	if p == nil || !p.Awaits() || w.Regional || w.head != nil || w.From != p || len(w.Rules) == 0 || w.Config == nil {
		return false
	}
	last := w.Rules[len(w.Rules)-1]
	return last != m.Stale && (last.Kind == Transition || last.Kind == Ignore)
}

// settleKept continues way rw, which keeps the machine in parallel state
// p (see keepsWaiting), through the eventless rules of its regions: one
// way per branch their guards take, as after the regions' own rules.
func (m *Machine) settleKept(rw regionWay) []regionWay {
	w := rw.way
	if !m.keepsWaiting(w) {
		return []regionWay{rw}
	}
	cw := *w
	cw.Tests, cw.Rules = slices.Clip(w.Tests), slices.Clip(w.Rules)
	cw.head, cw.entered = w, slices.Clone(rw.after)
	cw.moved, cw.micro, cw.groups, cw.Final, cw.after = nil, 0, nil, nil, 0
	return m.settle(w.To, &cw, rw.after, nil)
}
