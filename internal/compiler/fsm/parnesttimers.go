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
// the timer's event.

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
				return slices.Contains(o.groups, g) && len(o.root.After) == 0 && !reentered(o, rows)
			})
			for _, a := range g.After {
				to := targets(&spec.Transition{Outcome: a.Outcome, Guards: a.Guards})
				switch {
				case len(to) > 0:
					diags.Errorf(to[0].Pos, "parallel state %s, a region of parallel state %s, has a timer that moves to %s: fsmgen gives a nested parallel state timers whose rules stay in it only yet (an effect and actions, without to); give the timer to %s", g.Name.Value, r.par.Name.Value, to[0].Value, r.par.Name.Value)
					continue
				case i < 0:
					diags.Errorf(a.Pos, "parallel state %s, a region of parallel state %s, has a timer with no region to run in: fsmgen runs it as a timer of the own state of a region of %s that has no timer and is never left and entered again while %s is active, and each of them is; give the timer to %s", g.Name.Value, r.par.Name.Value, g.Name.Value, g.Name.Value, r.par.Name.Value)
					continue
				}
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

// reentered reports whether a row may leave and enter the own state of
// region r while its parallel state is active: a row into it (or its
// history), or an external row of its own with a target.
func reentered(r *specRegion, rows []spec.Transition) bool {
	name := r.root.Name.Value
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
