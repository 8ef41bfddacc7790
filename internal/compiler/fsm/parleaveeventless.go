package fsm

import (
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file resolves the eventless rows of the transient states inside a
// region of a parallel state P whose targets leave P (see parleave.go).
// The region's build keeps the row, each branch that leaves a stand-in
// that takes nothing in the region (an ignore, Rule.Leaves once joined);
// the machine's build resolves those branches as P's rules, without an
// event. After each microstep, SCXML 1.0 §3.13 (selectEventlessTransitions)
// takes the first enabled eventless transition of every active atomic
// state in document order, and removeConflictingTransitions keeps, of
// two whose exit sets intersect, the earlier: a branch that leaves P
// exits every state of P, so it is taken when no region before its own
// takes an eventless transition in that microstep, and drops those of
// the regions after it; otherwise it is dropped, and its state, still
// active, tries its guards again in the next microstep.

// eventless records eventless row t of a transient state of region r (or
// of several) that leaves r's parallel state by some or all of its
// branches, and turns those branches into stand-ins (see mixed).
func (l *leaving) eventless(t *spec.Transition, r *specRegion, regionOf map[string]*specRegion) {
	if len(t.Guards) == 0 {
		o := *t
		for _, src := range sources(t, r) {
			// A row from several states: the parallel state's rule for
			// each, which passRules points each state's stand-in to.
			l.quiet = append(l.quiet, leaveRow{r: r, src: src, t: o})
		}
		t.Outcome = spec.Outcome{Ignore: spec.Bool{Value: true, Pos: t.Pos, Set: true}}
		l.passes[t.Pos] = true
		return
	}
	leave := map[diag.Pos]bool{}
	for _, br := range t.Guards {
		if br.To.Set && regionOf[strings.TrimSuffix(br.To.Value, historySuffix)] == nil {
			leave[br.Pos] = true
		}
	}
	for _, src := range sources(t, r) {
		o := *t
		o.Guards = slices.Clone(t.Guards)
		l.quiet = append(l.quiet, leaveRow{r: r, src: src, t: o, leave: leave})
	}
	l.mixed(t, leave)
}

// sources returns the states of region r whose rules eventless row t
// gives: its sources, a composite state's standing for the states inside
// it that wait on its row, those neither composite nor transient (see
// compositeWaits), each with the parallel state's rule of its own for a
// branch that leaves it.
func sources(t *spec.Transition, r *specRegion) []spec.String {
	var out []spec.String
	for _, from := range t.From {
		c := stateNamed(r.root, from.Value)
		if c == nil || len(c.States) == 0 || c.Parallel.Value {
			out = append(out, from)
			continue
		}
		walkStates(c, func(s *spec.State) {
			if s != c && (len(s.States) == 0 || s.Parallel.Value) && !s.Transient.Value && !slices.ContainsFunc(out, func(o spec.String) bool { return o.Value == s.Name.Value }) {
				out = append(out, spec.String{Value: s.Name.Value, Pos: from.Pos, Set: true})
			}
		})
	}
	return out
}

// leavingEventless resolves, in the machine's build, the branches of the
// eventless rows that leave their parallel state p (see eventless) as p's
// rules without an event, one cell per row, which the join points the
// region's stand-ins to (passRules).
func (b *builder) leavingEventless() {
	if b.par == nil || b.par.inRegion() {
		return
	}
	for _, lr := range b.par.quiet {
		p := b.states[lr.r.par.Name.Value]
		if p == nil {
			continue
		}
		var rules []*Rule
		if lr.leave == nil {
			if r := b.outcome(&lr.t.Outcome, lr.t.Pos, p, nil); r != nil {
				rules = append(rules, r)
			}
		} else {
			rules = b.leavingBranches(lr.t.Guards, lr.leave, p, nil)
		}
		if len(rules) > 0 {
			b.par.quietCells = append(b.par.quietCells, &Cell{State: p, Rules: rules})
		}
	}
}

// quietRefusals refuses, named, the eventless rules and the done
// transitions of the states inside regions that leave their parallel
// state p (Rule.Leaves) in the shapes fsmgen does not write yet (see
// quietShape): p inside a region, and a history its exits record that
// would remember a region in a state it never rests in; but for a state
// that waits, p's regions holding a parallel state; and a rule that enters
// p again while a done event may wait (see doneWaiting). It reports
// whether it refused one.
func quietRefusals(m *Machine, diags *diag.List) bool {
	refused := false
	seen := map[*Rule]bool{}
	for _, reg := range m.Regions {
		for _, s := range reg.Leaves {
			if !s.Settles() && !s.Waits {
				continue
			}
			for c := s.Choice; c != nil && !c.Out(); c = c.Fallback {
				for _, r := range c.Rules {
					if r.Leaves == nil || seen[r.Leaves] {
						continue
					}
					seen[r.Leaves] = true
					why := quietShape(reg, r.Leaves, recallable(reg, s) && restful(reg.Parallel, reg))
					if why == "" && !s.Waits && len(reg.Parallel.Flat) != len(reg.Parallel.Regions) {
						// (A state that waits leaves beside them.)
						why = "a region of " + reg.Parallel.Name + " holds a parallel state"
					}
					if d := doneWaiting(reg, r.Leaves); why == "" && d != nil {
						why = "it enters " + reg.Parallel.Name + " again while the done event of " + d.Name + " may wait in that step, which SCXML and XState would then take in the " + reg.Parallel.Name + " just entered"
					}
					switch {
					case why == "":
					case s.Completes != nil:
						// A done transition's (see parleavedone.go).
						refused = true
						diags.Errorf(r.Pos, "the done transition of %s, in region %s, leaves parallel state %s for %s, and %s: fsmgen does not write such a done transition there yet; move to a state of region %s and leave %s from there on an event", s.Completes.Name, reg.Root.Name, reg.Parallel.Name, r.Leaves.Target.Name, why, reg.Root.Name, reg.Parallel.Name)
					default:
						refused = true
						kind := "transient state"
						if s.Waits {
							kind = "state"
						}
						diags.Errorf(r.Pos, "rule %s leaves parallel state %s from %s %s by an eventless rule, and %s: fsmgen does not write such a rule there yet; move to a state of region %s and leave %s from there on an event", r.Label, reg.Parallel.Name, kind, s.Name, why, reg.Root.Name, reg.Parallel.Name)
					}
				}
			}
		}
	}
	return refused
}

// doneWaiting returns, for rule r of the parallel state p of region reg
// that stands for an eventless rule or a done transition of a state of reg
// (Rule.Leaves), when r enters p again (its target is p or inside it), a
// composite state of another region of p, or a parallel state nested in
// p that does not hold reg, whose done event may wait in the step that
// takes r, and which r enters again: the done events are taken after the
// eventless rules (SCXML 1.0 §3.13), and SCXML and XState take one in the
// p just entered, where its state is active again though not done, while
// fsmgen drops the done events of the states a rule leaves. Nil
// otherwise.
func doneWaiting(reg *Region, r *Rule) *State {
	p := reg.Parallel
	if r.To == nil || !p.Contains(r.To) {
		return nil
	}
	for _, o := range p.Flat {
		if o == reg {
			continue
		}
		// The leaf o is entered in, where the composite state is active
		// again (any, where a history resumes it).
		leaf, resumed := o.Initial, false
		for _, run := range r.Entries {
			if l := run.IntoLeaf(o); l != nil {
				leaf = l
			}
			resumed = resumed || run.Resume != nil || run.IntoResume != nil
		}
		for _, l := range o.Leaves {
			if c := l.Completes; c != nil && (resumed || c.Contains(leaf)) {
				return c
			}
		}
	}
	for _, g := range p.Nested() {
		if g.Completion != nil && !slices.Contains(g.Regions, reg) {
			return g
		}
	}
	return nil
}

// restful reports whether every region of parallel state p but src (the
// region of a state that waits or a transient state whose eventless rule
// leaves p) rests when
// that rule is taken: a region before src in document order in a
// transient state takes its rule first in that microstep, which drops
// the rule that leaves (SCXML 1.0 §3.13, removeConflictingTransitions),
// so it may hold transient states; a region after src may not, nor any
// region a final state whose done transition follows (its done event
// would wait), nor p a parallel state inside a region or nested in it.
// A history then remembers states the regions rest in.
func restful(p *State, src *Region) bool {
	if len(p.Flat) != len(p.Regions) {
		return false
	}
	for _, o := range p.Regions {
		if o == src {
			continue // in the state whose rule leaves
		}
		for _, l := range o.Leaves {
			if l.Settles() && (l.Completes != nil || o.Index > src.Index) {
				return false
			}
		}
	}
	return true
}

// recallable reports whether a deep history may remember leaf s of
// region reg when its eventless rule (or its composite state's done
// transition) leaves reg's parallel state: a state that waits, which the
// region rests in; a transient state or a final state too (see Recalls),
// but for one inside a composite state of the region that keeps a
// history, which quietShape then checks as where the regions may not
// rest (heldShape: the region's rules into that history resume such a
// state when its own rules leave the history's state), under no deep
// history.
func recallable(reg *Region, s *State) bool {
	if s.Waits {
		return true
	}
	return s.Settles() && !slices.ContainsFunc(reg.Composites, func(c *State) bool { return c.History != HistoryNone && c.Contains(s) })
}

// quietShape says why eventless rule r of a transient state of region
// reg, or a done transition of a composite state inside it, which leaves
// reg's parallel state p, is in a shape fsmgen does not write yet; ""
// when it writes it. rests says that every region rests where the rule
// is taken (see restful): no history then remembers a state a region
// never rests in.
func quietShape(reg *Region, r *Rule, rests bool) string {
	p := reg.Parallel
	if reg.Host != nil || p.Region != nil {
		return p.Name + " is inside a region of another parallel state"
	}
	if rests {
		// Every region rests where the rule is taken: a history
		// remembers states the regions rest in, as when a rule on an
		// event leaves p.
		return ""
	}
	// The rule leaves a region in a state it never rests in (r's source,
	// and other regions' where their done events wait): a history its
	// exits record would remember it (see builder.remembers, which
	// refuses this outside regions).
	if p.History == HistoryDeep {
		return p.Name + " keeps a deep history, which would remember the region in a state it never rests in"
	}
	for _, rem := range r.Remembers {
		if rem.State.History == HistoryDeep {
			return rem.State.Name + ", which the rule leaves, keeps a deep history, which would remember the region in a state it never rests in"
		}
	}
	return heldShape(p)
}

// heldShape says why a rule that leaves parallel state p while one of its
// regions is in a state it never rests in is in a shape fsmgen does not
// write yet: a composite state inside a region that keeps a history,
// which would remember such a state, and whose region's rules into the
// history do not resume it (see resumable: a transient or final state
// whose own rules leave the history's state is resumed); "" when none
// does.
func heldShape(p *State) string {
	for _, o := range p.Flat {
		for _, c := range o.Composites {
			if c.History == HistoryNone {
				continue
			}
			if i := slices.IndexFunc(o.Leaves, func(l *State) bool { return l.Settles() && c.Contains(l) && !recalled(c, l) }); i >= 0 {
				return c.Name + ", in region " + o.Root.Name + ", keeps a history, which would remember " + o.Leaves[i].Name + ", a state the region never rests in"
			}
		}
		// A history around a parallel state inside region o, or its
		// own, remembers the leaves of its regions, and resumes none the
		// regions never rest in (see the hosted refusals).
		around := slices.DeleteFunc(slices.Clone(o.Leaves), func(l *State) bool { return l.Regions == nil })
		for _, c := range append(around, o.Composites...) {
			for _, in := range p.Flat {
				if c.History == HistoryNone || !hostedIn(in, c) {
					continue
				}
				if i := slices.IndexFunc(in.Leaves, (*State).Settles); i >= 0 {
					return c.Name + ", in region " + o.Root.Name + ", keeps a history, which would remember " + in.Leaves[i].Name + ", a state region " + in.Root.Name + " never rests in"
				}
			}
		}
	}
	return ""
}

// hostedIn reports whether region reg is a region of a parallel state
// inside another region's state that is c or inside c, at any depth.
func hostedIn(reg *Region, c *State) bool {
	for h := reg; h.Host != nil; h = h.Host {
		if c.Contains(h.Within) {
			return true
		}
	}
	return false
}

// recalled reports whether the history of composite state c, inside a
// region, remembers leaf l when the region is left in l, resuming it as a
// region's rule into the history does: a shallow history remembers the
// child of c that holds l, which is l only when l is c's child.
func recalled(c, l *State) bool {
	if c.History == HistoryShallow && l.Parent != c {
		return true
	}
	return resumable(c, l)
}
