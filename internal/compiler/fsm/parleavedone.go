package fsm

import (
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file resolves the done transitions of the composite states inside
// a region of a parallel state P whose targets leave P. The done event of
// such a state S is raised as its final state F is entered, and taken as
// a microstep of its own (SCXML 1.0 §3.13, done.state.ID in the internal
// queue); the transition's domain is the compound state around P, so it
// exits every active state of P, all its regions innermost first and P
// itself, before its actions run and its target is entered, as a rule of
// P does; one into another region of P leaves P and enters it again,
// that region through the target. As for an eventless row that leaves P
// from a transient state (parleaveeventless.go), the region's build
// keeps the done transition, each branch that leaves a stand-in that
// takes nothing in the region (an ignore, Rule.Leaves once joined), and
// the machine's build resolves those branches as P's rules without an
// event, one set per final state of S: the generated code takes them
// where the region's done transition would have been taken (settle). The
// done events of the other regions that wait then are dropped with the
// states that raised them (SCXML 1.0 §3.13: an event no active state
// takes is discarded).

// dones records the done transitions of the composite states inside
// region r whose targets, by some or all of their branches, leave r's
// parallel state P, and puts their stand-ins in r.dones; a target in
// another region of P leaves P and enters it again through the target,
// as a row's does (entering.across). It refuses, named, those of the
// regions of parallel states nested as regions or inside regions, and a
// target in another region there.
func (l *leaving) dones(r *specRegion, regionOf map[string]*specRegion, ents *entering, diags *diag.List) {
	walkStates(r.root, func(s *spec.State) {
		if s.Done == nil || s == r.root || s.Parallel.Value {
			return
		}
		d := s.Done
		t := spec.Transition{Pos: d.Pos, Outcome: d.Outcome, Guards: slices.Clone(d.Guards)}
		if ents.across(&t, r, diags) {
			return // refused, named
		}
		var out []spec.String
		for _, to := range targets(&t) {
			o := regionOf[strings.TrimSuffix(to.Value, historySuffix)]
			switch {
			case o == nil:
				out = append(out, to)
			case regionOf[s.Name.Value] == r && o != r && o.within(r) == nil:
				diags.Errorf(to.Pos, "the done transition of %s, in region %s, targets %s in region %s: it would leave a parallel state around %s (SCXML 1.0 §3.13), which fsmgen does not write for a done transition yet (a row does); move to a state of region %s (or inside a parallel state in it), and let an event take the rest", s.Name.Value, r.root.Name.Value, to.Value, o.root.Name.Value, r.root.Name.Value, r.root.Name.Value)
				return
			}
		}
		if len(out) == 0 {
			return
		}
		if r.host != nil {
			diags.Errorf(out[0].Pos, "the done transition of %s, in region %s, leaves parallel state %s for %s: fsmgen writes a done transition that leaves a parallel state from inside a region only for the regions of a parallel state outside regions, or nested as one of its regions, yet; move to a state of the region that leaves %s on an event, or end the region in a final state and give %s the done transition", s.Name.Value, r.root.Name.Value, r.par.Name.Value, out[0].Value, r.par.Name.Value, r.par.Name.Value)
			return
		}
		var leave map[diag.Pos]bool
		if len(t.Guards) > 0 {
			leave = map[diag.Pos]bool{}
			for _, br := range t.Guards {
				if br.To.Set && regionOf[strings.TrimSuffix(br.To.Value, historySuffix)] == nil {
					leave[br.Pos] = true
				}
			}
		}
		for _, f := range s.States {
			if f.Final.Value {
				o := t
				o.From = []spec.String{f.Name}
				l.quiet = append(l.quiet, leaveRow{r: r, src: f.Name, t: o, leave: leave})
			}
		}
		stand := t
		stand.Guards = slices.Clone(t.Guards)
		l.standIn(&stand, leave)
		cp := *d
		cp.Outcome, cp.Guards = stand.Outcome, stand.Guards
		if r.dones == nil {
			r.dones = map[string]*spec.Done{}
		}
		r.dones[s.Name.Value] = &cp
	})
}

// standInDones gives the states in list (copies of the spec's, as are
// their children) the stand-ins of their done transitions in dones (see
// leaving.dones).
func standInDones(list []spec.State, dones map[string]*spec.Done) {
	if len(dones) == 0 {
		return
	}
	for i := range list {
		if d := dones[list[i].Name.Value]; d != nil {
			list[i].Done = d
		}
		standInDones(list[i].States, dones)
	}
}
