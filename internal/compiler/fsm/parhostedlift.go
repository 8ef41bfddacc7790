package fsm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file resolves the rows of a region x of a parallel state Q inside
// another region R's state (a hosted region, see parinreg.go) whose
// targets are states of R outside Q, or Q itself, or states of Q's other
// regions (at any depth, inside a parallel state inside them too), which
// SCXML leaves Q for and enters again (findLCCA takes no parallel
// state): such a row's transition domain is the compound state of R
// around Q and its target (SCXML 1.0 §3.13), so it exits Q's regions,
// innermost first and in reverse document order, Q, and the states of R
// up to that domain, before its actions run and its target is entered,
// as a rule of Q does. (Timers whose rules leave Q so are parleavetimers.go's.)
// fsmgen writes it as Q's rule in R's build, guarded by In(S) for its
// source S, as it writes a row that leaves the parallel state outside
// regions as that one's rule (see parleave.go): R's build takes it where
// no region of Q took the event, which is SCXML's choice where no state
// around S inside x has a rule or a list entry for the event (S's leaves
// would reach it first), Q has none of its own, and every other region
// of Q that takes it comes before x in document order and moves within
// itself or rejects it (SCXML takes the earlier region's transition and
// drops S's, whose exits intersect it). The rows of several states are
// tried in document order, a state inside another first. The regions of
// the parallel state around R go on as for any rule of R: a rule of R
// leaves them be.

// lift records row t of the states of hosted region r when its targets
// are states of r's host outside r's parallel state Q (or Q), and
// reports whether it did or refused it (named); false leaves the row to
// regionRow.
func (l *leaving) lift(t *spec.Transition, r *specRegion, regionOf map[string]*specRegion, diags *diag.List) bool {
	to := targets(t)
	if r.host == nil || len(t.On) == 0 || !slices.ContainsFunc(to, func(n spec.String) bool { return l.lands(n, r, regionOf) }) {
		return false
	}
	q := r.par.Name.Value
	label := rowLabel(t)
	refuse := func(why, instead string) bool {
		diags.Errorf(t.Pos, "rule %s leaves parallel state %s, inside region %s, for a state of %s: %s; fsmgen does not write that yet; %s", label, q, r.host.root.Name.Value, r.host.root.Name.Value, why, instead)
		return true
	}
	if staysBy(t) || slices.ContainsFunc(to, func(n spec.String) bool { return !l.lands(n, r, regionOf) }) {
		return refuse(fmt.Sprintf("not every branch leads to a state of %s outside %s", r.host.root.Name.Value, q), "write the other branches as a row of their own, on another event")
	}
	for _, e := range t.On {
		named := func(n spec.String) bool { return n.Value == e.Value || n.Value == "*" }
		if slices.ContainsFunc(listEntries(r.par), named) || hasRow(r.par, e.Value, l.spec) {
			return refuse(fmt.Sprintf("%s has a rule or a list entry of its own for %s", q, e.Value), fmt.Sprintf("write %s's rule for %s as guarded branches of this row's, or give the events different names", q, e.Value))
		}
		for _, from := range t.From {
			if s := stateNamed(r.root, from.Value); s != nil && slices.ContainsFunc(listEntries(s), named) {
				return refuse(fmt.Sprintf("%s has a list entry for %s", from.Value, e.Value), "drop the list entry")
			}
			for _, a := range around(r.root, from.Value) {
				if slices.ContainsFunc(listEntries(a), named) || hasRow(a, e.Value, l.spec) && !l.liftsOn(r, a.Name.Value, e.Value, regionOf) {
					return refuse(fmt.Sprintf("%s, around %s, has a rule or a list entry for %s, which the generated code would take first", a.Name.Value, from.Value, e.Value), fmt.Sprintf("drop the rule of %s for %s, or give the events different names", a.Name.Value, e.Value))
				}
			}
		}
		at := slices.Index(l.regions, r)
		for i, o := range l.regions {
			if o == r || o.par != r.par && o.within(r) == nil {
				continue // another parallel state's region
			}
			if by := regionTakes(o, e.Value, l.spec); by != "" && (i > at || o.within(r) != nil || !movesOnly(o, e.Value, l.spec)) {
				if o.par == r.par && l.liftsAll(o, e.Value, regionOf) {
					continue // it leaves Q on e too: tried in document order
				}
				return refuse(fmt.Sprintf("%s, in region %s, takes %s too, and comes after region %s or does more than move within its region", by, o.root.Name.Value, e.Value, r.root.Name.Value), fmt.Sprintf("leave %s on %s from %s, or give the events different names", q, e.Value, q))
			}
		}
	}
	for _, from := range t.From {
		if r.finals[from.Value] {
			diags.Errorf(from.Pos, "region %s rests in its final state %s, which has no transitions of its own (SCXML 1.0 §3.7): the events it is offered go to the states around it; write the row from %s or from %s", r.root.Name.Value, from.Value, r.root.Name.Value, q)
			continue
		}
		for _, e := range t.On {
			o := *t
			o.From, o.On = []spec.String{from}, []spec.String{e}
			if l.lifted[q] == nil {
				l.lifted[q] = map[string][]leaveRow{}
				l.liftPars = append(l.liftPars, r)
			}
			if l.lifted[q][e.Value] == nil {
				l.liftEvs[q] = append(l.liftEvs[q], e.Value)
			}
			l.lifted[q][e.Value] = append(l.lifted[q][e.Value], leaveRow{r: r, src: from, t: o})
		}
	}
	return true
}

// lands reports whether target n of a row of hosted region r names a
// state of r's host outside r (a state of another region of r's
// parallel state Q, or inside a parallel state inside one, too), which
// the row leaves Q for (and enters Q again for a state inside it).
func (l *leaving) lands(n spec.String, r *specRegion, regionOf map[string]*specRegion) bool {
	o := regionOf[strings.TrimSuffix(n.Value, historySuffix)]
	return o != nil && (o == r.host || o != r && o.within(r) == nil && o.within(r.host) != nil)
}

// liftsOn reports whether every row of state src of hosted region r for
// event e leads to states of r's host outside r's parallel state by
// every branch (lift writes it as that parallel state's rule).
func (l *leaving) liftsOn(r *specRegion, src, e string, regionOf map[string]*specRegion) bool {
	return l.rowsAll(src, e, func(t *spec.Transition) bool {
		to := targets(t)
		return !staysBy(t) && len(to) > 0 && !slices.ContainsFunc(to, func(n spec.String) bool { return !l.lands(n, r, regionOf) })
	})
}

// rowsAll reports whether every row of the spec from state src for
// event e is one ok accepts.
func (l *leaving) rowsAll(src, e string, ok func(*spec.Transition) bool) bool {
	for _, t := range l.spec {
		if slices.ContainsFunc(t.From, func(n spec.String) bool { return n.Value == src }) && slices.ContainsFunc(t.On, func(n spec.String) bool { return n.Value == e }) && !ok(&t) {
			return false
		}
	}
	return true
}

// liftsAll reports whether every rule of hosted region o for event e is
// a row that liftsOn, and o has no list entry for it.
func (l *leaving) liftsAll(o *specRegion, e string, regionOf map[string]*specRegion) bool {
	if regionTakes(o, e, nil) != "" {
		return false
	}
	for n := range o.names {
		if !l.liftsOn(o, n, e, regionOf) {
			return false
		}
	}
	return true
}

// liftRows writes the rows lift recorded as rows of their parallel
// states in their hosts' builds (rows), one per parallel state and
// event: the branches of the rows of its regions in document order, a
// state inside another before it (SCXML tries a state's transitions
// before its ancestors').
func (l *leaving) liftRows(rows map[*specRegion][]spec.Transition, ents *entering, diags *diag.List) {
	for _, r := range l.liftPars {
		q := r.par.Name.Value
		for _, e := range l.liftEvs[q] {
			list := l.lifted[q][e]
			slices.SortStableFunc(list, func(a, b leaveRow) int {
				if a.r == b.r {
					return len(around(b.r.root, b.src.Value)) - len(around(a.r.root, a.src.Value))
				}
				return slices.Index(l.regions, a.r) - slices.Index(l.regions, b.r)
			})
			first := list[0]
			row := spec.Transition{Pos: first.t.Pos, From: []spec.String{{Value: q, Pos: first.src.Pos, Set: true}}, On: first.t.On, OnPos: first.t.OnPos}
			for _, lr := range list {
				row.Guards = append(row.Guards, l.branches(lr)...)
			}
			if ents.inward(&row, r.host, diags) {
				continue // into a parallel state inside a state of the host, refused (see parinward.go)
			}
			rows[r.host] = append(rows[r.host], row)
		}
	}
}

// liftedSources names each rule of the regions' builds that lift wrote
// after its source (Rule.Source), as leavingRules names the machine's:
// an else branch of its guards (elses) as such.
func liftedSources(m *Machine, elses map[diag.Pos]bool) {
	for _, r := range m.RegionRules() {
		switch {
		case r.SourceIn != nil:
			r.Source = r.SourceIn.In
		case r.Guard != nil && r.Guard.source:
			r.Source = r.Guard.In
			r.Else = elses[r.Pos]
		default:
			continue
		}
		from, guard := r.From, r.Guard
		r.From, r.Guard = r.Source, r.ShownGuard()
		r.Label = RuleLabel(r)
		r.From, r.Guard = from, guard
	}
}
