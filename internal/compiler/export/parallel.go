package export

import (
	"slices"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// This file checks the parallel states a target would run otherwise than
// fsmgen. fsmgen offers an event to the regions of a parallel state in
// document order, takes the rules of every region that has one as one
// step, and leaves the event to the parallel state's own rules (and those
// around it) only when no region has a rule for it (docs/spec.md,
// "Parallel states"). XState v5 selects alike (transitionParallelNode: a
// parallel node's own transitions only when no region has one), and so
// does SCXML as long as the transitions selected conflict (§3.13,
// removeConflictingTransitions: of two transitions whose exit sets
// intersect, the one whose source is a descendant wins). Two cases differ:
//
//   - A region that rejects the event refuses it for the whole machine in
//     fsmgen: nothing changes, and the regions after it test no guard. In
//     both targets a rejection is a transition that does nothing, which
//     leaves the other regions' transitions to run: refused in both when
//     another region may take the event with a transition. (Beside
//     regions that only ignore or reject, the targets also change
//     nothing; they may ask those regions' guards, which are pure.)
//   - In SCXML a region with no rule for the event offers it to the
//     parallel state (selectTransitions walks each atomic state's
//     ancestors), and a transition without a target exits nothing, so it
//     conflicts with no other: a region's ignore beside the parallel
//     state's transition, or the parallel state's targetless transition
//     beside a region's rule, run both. Refused in SCXML.

// outcomes are what the states of one region can do with an event, over
// all of them and whatever their guards answer.
type outcomes struct {
	leave      bool       // a state has no rule for it, or its guards may all fail: the event goes to the parallel state
	take       bool       // a state has a rule for it
	acts       bool       // a rule is a transition (it moves, or runs something)
	targetless bool       // a rule has no target: an ignore, a rejection, or a transition that stays
	reject     *fsm.Rule  // a rule that rejects, the first
	nested     *fsm.State // when every targetless rule is that of a parallel state nested as a region the region holds (see fsm.Rule.Group), that state, whose rule SCXML runs as its own
}

// regionOutcomes returns what the leaves of reg can do with e.
func regionOutcomes(reg *fsm.Region, e *fsm.Event) outcomes {
	var o outcomes
	for _, s := range reg.Leaves {
		c := s.Cell(e)
		decided := false
		for ; c != nil && !c.Out() && !decided; c = c.Fallback {
			for _, r := range c.Rules {
				o.take = true
				stays := true
				switch {
				case r.Leaves != nil:
					// A branch that leaves the parallel state: in the
					// targets, the transition of the region's state.
					o.acts, stays = true, false
				case r.Kind == fsm.Transition:
					o.acts = true
					stays = r.Target == nil && r.History == nil
				case r.Kind == fsm.Reject:
					if o.reject == nil {
						o.reject = r
					}
				}
				if stays {
					if r.Group != nil && (!o.targetless || o.nested != nil) {
						o.nested = r.Group
					} else {
						o.nested = nil // one of the region's own
					}
					o.targetless = true
				}
				if r.Guard == nil {
					decided = true
					break
				}
			}
		}
		o.leave = o.leave || !decided
	}
	return o
}

// regionRejects refuses a rejection in one region of a parallel state
// when another region may take the same event: fsmgen refuses the event
// for the whole machine, the target would run the other region's rule.
func regionRejects(c *chart, p *problems, target string) {
	for _, par := range c.m.States {
		// The regions of the parallel states inside its regions too: a
		// rejection there refuses the event for the whole machine as well.
		regs := par.Flat
		for _, e := range c.m.Events {
			var outs []outcomes
			for _, reg := range regs {
				outs = append(outs, regionOutcomes(reg, e))
			}
			for i, o := range outs {
				if o.reject == nil {
					continue
				}
				for j, other := range outs {
					if j == i || !other.acts {
						continue
					}
					p.refuse(o.reject.Pos, "region %s of %s rejects %s while region %s may take it: fsmgen then refuses %s for the whole machine (nothing changes, and the regions after %s test no guard), but in %s a rejection is a transition that does nothing and %s's transition still runs: ignore %s in %s instead, or handle it there", regs[i].Root.Name, par.Name, e.Name, regs[j].Root.Name, e.Name, regs[i].Root.Name, target, regs[j].Root.Name, e.Name, o.reject.From.Name)
					break
				}
			}
		}
	}
}

// scxmlParallel refuses what SCXML's selection of transitions runs
// otherwise in a parallel state: a rule of the parallel state (or around
// it) that acts, beside regions of which one leaves the event to it and
// another takes it with a rule that does not conflict with it.
//
// It checks the parallel states inside regions too (see parallels), each
// with the regions inside it.
func scxmlParallel(c *chart, p *problems) {
	for _, par := range parallels(c.m) {
		if g := c.m.Groups(); par.Completion != nil && slices.ContainsFunc(g, func(g *fsm.State) bool { return g.Regions[0].Parallel == par }) {
			// SCXML 1.0 §3.13 enterStates raises done.state of a final
			// state's parent and, when it is parallel, grandparent only.
			p.refuse(par.Completion.Rules[0].Pos, "%s's done transition waits for every region, those of the parallel states nested in it too (as XState's onDone does), but SCXML raises done.state.%s only when a final state of one of its own regions is entered last (SCXML 1.0 §3.13, enterStates looks up to a final state's grandparent), not one of a nested parallel state's: make the regions of the parallel states nested in %s its own regions", par.Name, par.Name, par.Name)
		}
		for _, g := range par.Nested() {
			if g.Completion != nil && slices.ContainsFunc(g.Regions, func(reg *fsm.Region) bool { return reg.Group != g }) {
				// As above, for a parallel state nested in par.
				p.refuse(g.Completion.Rules[0].Pos, "%s's done transition waits for every region, those of the parallel states nested in it too (as XState's onDone does), but SCXML raises done.state.%s only when a final state of one of its own regions is entered last (SCXML 1.0 §3.13, enterStates looks up to a final state's grandparent), not one of a nested parallel state's: make the regions of the parallel states nested in %s its own regions", g.Name, g.Name, g.Name)
			}
		}
		for _, e := range c.m.Events {
			above, targetless := acting(par.Cell(e))
			if above == nil {
				continue
			}
			var outs []outcomes
			regs := regionsIn(c.m, par)
			for _, reg := range regs {
				o := regionOutcomes(reg, e)
				o.leave = o.leave && !groupTakes(c.m, reg, e)
				if leavesFrom(par.Cell(e), reg) {
					// A row of reg's that leaves par, written as par's
					// rule: in SCXML the transition of its source.
					o.take, o.acts = true, true
				}
				outs = append(outs, o)
			}
			if r1, r2 := scxmlConflict(regs, outs, targetless); r1 != nil {
				what := "a rule without a target (an ignore, a rejection or a row without to)"
				taker := "region " + r2.Root.Name
				if targetless {
					what = "a rule"
				} else if g := outs[slices.Index(regs, r2)].nested; g != nil {
					// The targetless rule is that of the nested parallel
					// state around r2, which r2 holds.
					taker = g.Name
				}
				p.refuse(above.Pos, "%s's rule %s would also run in SCXML when %s takes %s with %s: SCXML offers %s to %s through region %s, which leaves it, and keeps both transitions because their exits do not intersect (SCXML 1.0 §3.13, removeConflictingTransitions), whereas fsmgen runs only the regions' rules: give %s a rule for %s in the states of %s that leave it, or move this rule into the regions", par.Name, above.Label, taker, e.Name, what, e.Name, par.Name, r1.Root.Name, r1.Root.Name, e.Name, r1.Root.Name)
			}
		}
	}
}

// groupTakes reports whether a parallel state nested as a region that
// holds reg has a rule for e that no guard refuses (fsmgen gives it to
// one of its regions, see fsm.Rule.Group): SCXML offers the event reg
// leaves to that state first (§3.13, selectTransitions walks each atomic
// state's ancestors), so reg never leaves it to the parallel state
// around.
func groupTakes(m *fsm.Machine, reg *fsm.Region, e *fsm.Event) bool {
	return slices.ContainsFunc(m.AllRules(), func(r *fsm.Rule) bool {
		return r.Group != nil && r.Event == e && r.Guard == nil && slices.Contains(reg.Groups, r.Group)
	})
}

// leavesFrom reports whether a rule of chain c, a parallel state's, is
// a row of a state inside region reg that leaves it (fsm.Rule.Source).
func leavesFrom(c *fsm.Cell, reg *fsm.Region) bool {
	for ; c != nil; c = c.Fallback {
		if slices.ContainsFunc(c.Rules, func(r *fsm.Rule) bool { return r.Source != nil && r.Source.Region == reg }) {
			return true
		}
	}
	return false
}

// scxmlConflict returns two regions of par, one that may leave the event
// to it and one that may take it with a rule SCXML keeps beside the rule
// of par that acts (any rule when that one is targetless, else a
// targetless one); nil when none.
func scxmlConflict(regs []*fsm.Region, outs []outcomes, targetless bool) (leaves, takes *fsm.Region) {
	for i, o := range outs {
		if !o.leave {
			continue
		}
		for j, other := range outs {
			if j != i && other.take && (targetless || other.targetless) {
				return regs[i], regs[j]
			}
		}
	}
	return nil, nil
}

// acting returns the first rule of a chain of cells that is a transition
// (one that may run something), and whether some transition of the chain
// has no target; nil when every rule ignores or rejects. The rules of a
// parallel state nested as a region that the chain holds are its own,
// which scxmlGroupRules checks, and those that leave it from inside a
// region their sources' (fsm.Rule.Source), which SCXML offers the event
// to only where the source is active.
func acting(c *fsm.Cell) (first *fsm.Rule, targetless bool) {
	for ; c != nil; c = c.Fallback {
		for _, r := range c.Rules {
			if r.Kind != fsm.Transition || r.Group != nil || r.Source != nil {
				continue // (a rule that leaves from inside a region is its source's)
			}
			if first == nil {
				first = r
			}
			targetless = targetless || r.Target == nil && r.History == nil
		}
	}
	return first, targetless
}

// rootRule checks a rule that moves into the root of a region (the
// region's own state, a child of the parallel state), or from it into
// one of its states. fsmgen leaves and enters the root and what is
// inside it, as UML does (the transition's domain is the region).
// Neither target confines such a transition to the region: XState's
// domain is the parallel state (findLCCA), whose every region it leaves
// and enters again, and SCXML's the compound state around the parallel
// state (Appendix D, findLCCA skips <parallel>), which it leaves too.
//
// A rule from the root into one of its states, external, differs from a
// local one only by the root's own exit and entry, and by the root's
// history, which a local transition does not record (SCXML 1.0 §3.13,
// exitStates records the histories of the states it exits): it is
// written local (XState without reenter, SCXML's type="internal", whose
// domain is the root) when the root has none of them, and refused when
// it has. A rule into the root is refused, and so is one from the root
// into its own history, which leaves the root and remembers its leaf
// (neither target can confine it to the region, and written local it
// would not leave the root); a rule from outside the parallel state into
// the root enters every region, as SCXML does. It reports whether to
// write the rule local.
func rootRule(r *fsm.Rule, p *problems, target string) bool {
	if r.Kind != fsm.Transition || r.Target == nil {
		return false
	}
	if h := r.History; h != nil {
		if s := r.From; s == h && s.Region != nil && s.Region.Root == s {
			p.refuse(r.Pos, "rule %s leaves %s, the root of a region of %s, for its own history: %s would leave and enter every region of %s (a transition's domain there is the parallel state or the state around it), and written local would not leave %s nor remember its leaf; fsmgen leaves and enters %s only: lead the row to a state of %s with local: true (which keeps what the history remembers), or drop it", r.Label, s.Name, s.Region.Parallel.Name, target, s.Region.Parallel.Name, s.Name, s.Name, s.Name)
		}
		return false
	}
	if t := r.Target; t.Region != nil && t.Region.Root == t && !r.EntersInside() {
		p.refuse(r.Pos, "rule %s moves into %s, the root of a region of %s: %s would leave and enter every region of %s (a transition's domain there is the parallel state or the state around it), fsmgen only %s: move to the state %s starts in (%s) instead", r.Label, t.Name, t.Region.Parallel.Name, target, t.Region.Parallel.Name, t.Name, t.Name, t.Region.Initial.Name)
		return false
	}
	s := r.From
	if s == nil || s.Region == nil || s.Region.Root != s || r.Local || !s.Contains(r.Target) {
		return false
	}
	if s.Entry != nil || s.Exit != nil {
		p.refuse(r.Pos, "rule %s leaves and enters %s, the root of a region of %s: %s would leave and enter every region of %s (a transition's domain there is the parallel state or the state around it), fsmgen only %s: make the row local (local: true), or move %s's entry and exit to its states", r.Label, s.Name, s.Region.Parallel.Name, target, s.Region.Parallel.Name, s.Name, s.Name)
		return false
	}
	if s.History != fsm.HistoryNone {
		p.refuse(r.Pos, "rule %s leaves and enters %s, the root of a region of %s, whose history remembers the leaf it leaves: %s would leave and enter every region of %s (a transition's domain there is the parallel state or the state around it), and written local would not leave %s nor remember its leaf; fsmgen leaves and enters %s only: make the row local (local: true), which keeps what the history remembers", r.Label, s.Name, s.Region.Parallel.Name, target, s.Region.Parallel.Name, s.Name, s.Name)
		return false
	}
	return true
}

// parallels returns the machine's parallel states, then those inside
// regions (see fsm.Region.Host), in document order.
func parallels(m *fsm.Machine) []*fsm.State {
	var out []*fsm.State
	for _, s := range m.States {
		if s.Regions != nil {
			out = append(out, s)
		}
	}
	for _, reg := range m.Regions {
		if reg.Within != nil && !slices.Contains(out, reg.Within) {
			out = append(out, reg.Within)
		}
	}
	return out
}

// regionsIn returns the regions an event reaches parallel state s
// through: for a parallel state of the machine, its regions and those of
// the parallel states inside them; for one inside a region, those of its
// own and of the parallel states inside them.
func regionsIn(m *fsm.Machine, s *fsm.State) []*fsm.Region {
	if s.Region == nil {
		return s.Flat
	}
	var out []*fsm.Region
	for _, reg := range m.Regions {
		if reg.Within == s || slices.Contains(out, reg.Host) {
			out = append(out, reg)
		}
	}
	return out
}

// scxmlGroupRules refuses a rule of a parallel state nested as a region
// (Media, see docs/spec.md) where SCXML would run it and fsmgen, as
// XState, does not: fsmgen takes Media's rule only when no region of
// Media takes the event, but SCXML offers the event to Media through
// Media's other regions, which leave it, and keeps Media's transition
// beside a region's whose exits do not intersect its own (SCXML 1.0
// §3.13, removeConflictingTransitions): a targetless rule of Media that
// acts or asks a guard beside any rule of a region, a rule of Media with
// a target beside a region's targetless rule.
func scxmlGroupRules(c *chart, p *problems) {
	for _, r := range c.m.AllRules() {
		if r.Group == nil || r.Listed || r.Event == nil || r.Kind != fsm.Transition && r.Guard == nil {
			continue
		}
		for _, s := range groupLeaves(c.m, r.Group) {
			cell := s.Cell(r.Event)
			if cell == nil || cell.Out() || cell.Rules[0].Group != nil || r.Target != nil && !slices.ContainsFunc(cell.Rules, (*fsm.Rule).Stays) {
				continue
			}
			p.refuse(r.Pos, "%s's rule %s would also run in SCXML when %s takes %s: SCXML offers %s to %s through its other regions, which leave it, and keeps both transitions because their exits do not intersect (SCXML 1.0 §3.13, removeConflictingTransitions), whereas fsmgen, as XState, runs only the region's rule: write the rule on the states of %s's regions that leave %s instead", r.Group.Name, r.Label, s.Name, r.Event.Name, r.Event.Name, r.Group.Name, r.Group.Name, r.Event.Name)
			break
		}
	}
}

// groupLeaves returns the leaves of the regions of g, a parallel state
// nested as a region.
func groupLeaves(m *fsm.Machine, g *fsm.State) []*fsm.State {
	var out []*fsm.State
	for _, reg := range m.Regions {
		if slices.Contains(reg.Groups, g) {
			out = append(out, reg.Leaves...)
		}
	}
	return out
}

// waitOrder refuses, for XState, a state that waits inside a region after
// another region, in document order, with a transient state or a state
// that waits: XState v5 selects the eventless transitions (always) of the
// atomic states in the order it entered them, not in document order as
// SCXML 1.0 §3.13 (selectEventlessTransitions) and fsmgen do, so where
// the earlier region entered its state last it asks their guards, and
// takes their transitions, the other way round.
func waitOrder(c *chart, p *problems) {
	for _, par := range c.m.States {
		var first *fsm.State // a transient state or a state that waits, in an earlier region
		for _, reg := range par.Flat {
			for _, s := range reg.Leaves {
				if s.Waits && first != nil {
					p.refuse(s.Pos, "state %s waits inside region %s of %s, after region %s, whose state %s has eventless transitions too: XState v5 tests the always of the states in the order it entered them, not in document order as SCXML (and fsmgen) do, so when %s is entered while %s waits it would ask their guards and take their transitions in the other order: keep the states with eventless transitions of %s to one region, or export to SCXML", s.Name, reg.Root.Name, par.Name, first.Region.Root.Name, first.Name, first.Name, s.Name, par.Name)
				}
			}
			if first == nil {
				if i := slices.IndexFunc(reg.Leaves, (*fsm.State).Eventless); i >= 0 {
					first = reg.Leaves[i]
				}
			}
		}
	}
}
