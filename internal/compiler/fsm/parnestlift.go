package fsm

import (
	"slices"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file resolves the rules of a parallel state nested as a region of
// another (Media in Run, see parnest.go) that a region's own state cannot
// hold (see parnestrules.go): those with a target, and those for an
// event that states of several of Media's regions take. Media's rule for
// an event is taken when no region of Media takes it (XState's parallel
// node falls back to its own transitions only when no region has one).
// A rule with a target leaves Run: its source is Media, whose parent Run
// is parallel, so its transition domain is the compound state around Run
// (SCXML 1.0 §3.13, getTransitionDomain and findLCCA), which it exits
// entirely before it enters the target, as a rule of Run does. fsmgen
// writes such a rule as a row of Run, for the events no region of Run
// outside Media takes and that neither Run nor a parallel state around
// Media has a rule or a list for: Run's rule is taken when no region of
// Run takes the event, which is then when no region of Media does, and
// no other rule of the step runs beside it. The rule stays Media's
// (Rule.Group): its labels, the table, the diagram and the export name
// Media. A timer of Media with a target runs as a timer of Run: it starts
// and stops with Run, as Media's would, and nothing else takes its event.

// lifter checks the events of row t of g, a parallel state nested as a
// region of parallel state par, that groupRule writes from par.
type lifter struct {
	g, par *spec.State
	t      *spec.Transition
	// why says why the row cannot stay with a region's own state, for
	// the messages.
	why string
	// around are the parallel states nested in par around g; outside
	// are the regions of par outside g.
	around  []*spec.State
	outside []*specRegion
	rows    []spec.Transition
}

// liftOf returns the lifter of row t of g (first is the specRegion of
// g's first region).
func liftOf(g *spec.State, first *specRegion, t *spec.Transition, regions []*specRegion, rows []spec.Transition) *lifter {
	l := &lifter{g: g, par: first.par, t: t, rows: rows, why: "that states of several of its regions take"}
	if to := targets(t); len(to) > 0 {
		l.why = "into " + to[0].Value
	}
	l.around = first.groups[:slices.Index(first.groups, g)]
	for _, o := range regions {
		if o.par == first.par && !slices.Contains(o.groups, g) {
			l.outside = append(l.outside, o)
		}
	}
	return l
}

// check reports whether par may take g's rule for e (see above); it
// reports why not when it may not. An entry of par's lists for e, which
// g's rule preempts, it records in unlisted when the rule decides every
// time (no guards, or an else): par's list never sees e then.
func (l *lifter) check(e spec.String, lifts *lifts, diags *diag.List) bool {
	for _, o := range l.outside {
		if by := regionTakes(o, e.Value, l.rows); by != "" {
			diags.Errorf(e.Pos, "parallel state %s has a rule for %s %s, which fsmgen runs as a rule of %s, taken when no region of %s takes %s; but %s, in region %s of %s, takes %s too, and fsmgen runs such a rule of %s only where no other region of %s takes the event yet: write the rule from %s, or on the states of %s's regions", l.g.Name.Value, e.Value, l.why, l.par.Name.Value, l.par.Name.Value, e.Value, by, o.root.Name.Value, l.par.Name.Value, e.Value, l.g.Name.Value, l.par.Name.Value, l.par.Name.Value, l.g.Name.Value)
			return false
		}
	}
	listed := slices.ContainsFunc(listEntries(l.par), func(n spec.String) bool { return n.Value == e.Value })
	decides := len(l.t.Guards) == 0 || slices.ContainsFunc(l.t.Guards, func(br spec.Branch) bool { return br.Else.Value })
	for _, a := range append([]*spec.State{l.par}, l.around...) {
		taken := groupTakes([]*spec.State{a}, e.Value, l.rows) != nil
		if a == l.par && listed && decides {
			taken = hasRow(a, e.Value, l.rows)
		}
		switch {
		case !taken:
			continue
		case a == l.par && listed && !hasRow(a, e.Value, l.rows):
			// Only its list, which an else would let the rule preempt.
			diags.Errorf(e.Pos, "parallel state %s has a rule for %s %s, which fsmgen runs as a rule of %s, and %s lists %s too, which %s's rule preempts: fsmgen writes such a rule before a list of %s's when the rule has no guards or an else only yet; give %s's rule an else, or remove %s from the list", l.g.Name.Value, e.Value, l.why, l.par.Name.Value, a.Name.Value, e.Value, l.g.Name.Value, l.par.Name.Value, l.g.Name.Value, e.Value)
		default:
			diags.Errorf(e.Pos, "parallel state %s has a rule for %s %s, which fsmgen runs as a rule of %s, and %s has a rule or a list for %s too, which %s's rule would preempt: fsmgen does not write both yet; remove one of them", l.g.Name.Value, e.Value, l.why, l.par.Name.Value, a.Name.Value, e.Value, l.g.Name.Value)
		}
		return false
	}
	if listed {
		lifts.unlisted[l.par.Name.Value] = append(lifts.unlisted[l.par.Name.Value], e.Value)
	}
	return true
}

// lifts are what the rows and timers of the parallel states nested as
// regions that their parallel states hold (see above) change in those
// states, by name: the timers they run, and the events their lists no
// longer see.
type lifts struct {
	after    map[string][]*spec.After
	unlisted map[string][]string
	// standIns are, for the timers of states inside regions that leave
	// their parallel state, the timers the regions' builds run instead
	// (see parleave.go).
	standIns map[*spec.After]*spec.After
	// dones are, for the done transitions of states inside regions that
	// target states inside a parallel state inside the region (see
	// inwardDones), what the region's build reads instead.
	dones map[*spec.Done]*spec.Done
}

func newLifts() *lifts {
	return &lifts{after: map[string][]*spec.After{}, unlisted: map[string][]string{}, standIns: map[*spec.After]*spec.After{}, dones: map[*spec.Done]*spec.Done{}}
}

// timers moves the timers with a target of the parallel states nested
// as regions to the parallel state they are regions of (see above), and
// records them in the specRegion of the first region of their state
// (specRegion.lifted).
func (ls *lifts) timers(regions []*specRegion, diags *diag.List) {
	seen := map[*spec.State]bool{}
	for _, r := range regions {
		for gi, g := range r.groups {
			if seen[g] {
				continue
			}
			seen[g] = true
			for _, a := range g.After {
				if len(targets(&spec.Transition{Outcome: a.Outcome, Guards: a.Guards})) == 0 {
					continue
				}
				// Its id names it among the outer one's timers now.
				have := slices.Concat(r.par.After, ls.after[r.par.Name.Value])
				if i := slices.IndexFunc(have, func(o *spec.After) bool { return o.ID.Value == a.ID.Value }); i >= 0 {
					if a.ID.Set {
						diags.Errorf(a.ID.Pos, "parallel state %s's timer %s has a target, so it runs as a timer of %s, which has a timer with id %s too (at line %d): give one of them an id of its own, which names it in saved machines", g.Name.Value, a.ID.Value, r.par.Name.Value, a.ID.Value, have[i].Pos.Line)
					} else {
						diags.Errorf(a.Pos, "parallel state %s's timer has a target, so it runs as a timer of %s, which has a timer without an id too (at line %d): give one of them an id, which names it in saved machines", g.Name.Value, r.par.Name.Value, have[i].Pos.Line)
					}
					continue
				}
				ls.after[r.par.Name.Value] = append(ls.after[r.par.Name.Value], a)
				r.lift(a.Pos, gi)
				for _, br := range a.Guards {
					r.lift(br.Pos, gi)
				}
			}
		}
	}
}

// lift records that the rule or timer at pos, of r's group gi, is its
// parallel state's (see above).
func (r *specRegion) lift(pos diag.Pos, gi int) {
	if r.lifted == nil {
		r.lifted = map[diag.Pos]int{}
	}
	r.lifted[pos] = gi
}

// apply returns list, states freshly copied (see leafParallels), with
// what ls changes in each by name.
func (ls *lifts) apply(list []spec.State) []spec.State {
	for i := range list {
		s := &list[i]
		if a := ls.after[s.Name.Value]; a != nil {
			s.After = slices.Concat(s.After, a)
		}
		if slices.ContainsFunc(s.After, func(a *spec.After) bool { return ls.standIns[a] != nil }) {
			s.After = slices.Clone(s.After)
			for i, a := range s.After {
				if o := ls.standIns[a]; o != nil {
					s.After[i] = o
				}
			}
		}
		if d := ls.dones[s.Done]; d != nil {
			s.Done = d
		}
		if drop := ls.unlisted[s.Name.Value]; drop != nil {
			gone := func(n spec.String) bool { return slices.Contains(drop, n.Value) }
			s.Ignore = slices.DeleteFunc(slices.Clone(s.Ignore), gone)
			s.Reject = slices.DeleteFunc(slices.Clone(s.Reject), gone)
			s.Defer = slices.DeleteFunc(slices.Clone(s.Defer), gone)
		}
		if !s.Parallel.Value {
			s.States = ls.apply(s.States)
		}
	}
	return list
}

// liftedGroups names, on the rules and timers of m that come from a
// parallel state nested as a region (see above), that state, as their
// Group (made gives each specRegion's Region).
func liftedGroups(m *Machine, regions []*specRegion, made map[*specRegion]*Region) {
	by := map[diag.Pos]*State{}
	for _, sr := range regions {
		for pos, gi := range sr.lifted {
			by[pos] = made[sr].Groups[gi]
		}
	}
	if len(by) == 0 {
		return
	}
	for _, r := range m.AllRules() {
		if g := by[r.Pos]; g != nil && r.Group == nil {
			r.Group = g
			relabel(r)
		}
	}
	for _, t := range m.Timers {
		if g := by[t.Pos]; g != nil {
			t.Group = g
		}
	}
}
