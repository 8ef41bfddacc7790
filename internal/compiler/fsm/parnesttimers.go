package fsm

import (
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file resolves the timers of a parallel state nested as a region
// of another (see parnest.go), Media in Run, whose rules stay in Media
// (an effect and actions; see parnestrules.go): a timer of Media runs
// from Media's entry, with Run's, to its exit, with Run's (SCXML 1.0
// §6.2: a delayed <send> in <onentry>, cancelled in <onexit>; XState's
// after). fsmgen writes it as a timer of the own state of one region of
// Media whose own state has no timer and is never left while Media is
// active (no row of its region enters it, or leaves it by an external
// row of its own): that state is entered and left exactly with Media,
// so its timer runs exactly as Media's would, and no other region takes
// the timer's event. A timer of Media with a target runs as Run's (see
// parnestlift.go).

// groupTimers gives each timer of the parallel states nested as regions
// to a region under it (specRegion.after), or refuses it, named.
func groupTimers(regions []*specRegion, rows []spec.Transition, diags *diag.List) {
	seen := map[*spec.State]bool{}
	for _, r := range regions {
		for _, g := range r.groups {
			if seen[g] || len(g.After) == 0 {
				continue
			}
			seen[g] = true
			i := slices.IndexFunc(regions, func(o *specRegion) bool {
				// A region that runs another nested parallel state's
				// timers is not free either: their ids would meet.
				return slices.Contains(o.groups, g) && len(o.root.After) == 0 && len(o.after) == 0 && !reentered(o, rows)
			})
			ids := map[string]*spec.After{}
			for _, a := range g.After {
				switch {
				case len(targets(&spec.Transition{Outcome: a.Outcome, Guards: a.Guards})) > 0:
					continue // the outer parallel state's (see liftTimers)
				case timerTwice(g.Name.Value, ids, a, diags):
					continue
				case i < 0:
					diags.Errorf(a.Pos, "parallel state %s, a region of parallel state %s, has a timer with no region to run in: fsmgen runs it as a timer of the own state of a region of %s that has no timer and is never left and entered again while %s is active, and each of them is; give the timer to %s", g.Name.Value, r.par.Name.Value, g.Name.Value, g.Name.Value, r.par.Name.Value)
					continue
				}
				ids[a.ID.Value] = a
				o := regions[i]
				o.after = append(o.after, a)
				if o.groupRules == nil {
					o.groupRules = map[diag.Pos]int{}
				}
				o.groupRules[a.Pos] = slices.Index(o.groups, g)
				for _, br := range a.Guards {
					o.groupRules[br.Pos] = o.groupRules[a.Pos]
				}
			}
		}
	}
}

// reentered reports whether a rule may leave and enter the own state of
// region r while its parallel state is active: a row, a timer or a done
// transition of a state inside it into it (or its history), or an
// external row of its own with a target.
func reentered(r *specRegion, rows []spec.Transition) bool {
	name := r.root.Name.Value
	if intoOwn(r.root.States, name) {
		return true
	}
	for _, t := range rows {
		own := slices.ContainsFunc(t.From, func(n spec.String) bool { return n.Value == name })
		inside := slices.ContainsFunc(t.From, func(n spec.String) bool { return r.names[n.Value] })
		for _, to := range targets(&t) {
			if inside && strings.TrimSuffix(to.Value, historySuffix) == name || own && !t.Local.Value {
				return true
			}
		}
	}
	return false
}

// intoOwn reports whether a timer or a done transition of one of the
// states, or of a state inside them, leads into the state named name (or
// its history).
func intoOwn(states []spec.State, name string) bool {
	for _, s := range states {
		var rules []spec.Transition
		for _, a := range s.After {
			rules = append(rules, spec.Transition{Outcome: a.Outcome, Guards: a.Guards})
		}
		if d := s.Done; d != nil {
			rules = append(rules, spec.Transition{Outcome: d.Outcome, Guards: d.Guards})
		}
		for _, t := range rules {
			for _, to := range targets(&t) {
				if strings.TrimSuffix(to.Value, historySuffix) == name {
					return true
				}
			}
		}
		if intoOwn(s.States, name) {
			return true
		}
	}
	return false
}
