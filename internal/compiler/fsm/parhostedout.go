package fsm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file resolves the rows that leave the machine's parallel state P
// from a region x of a parallel state Q inside another region R of P,
// below R's own state (a hosted region, see parinreg.go). Such a row's
// transition domain is the compound state around P, as for a row of P's
// own regions (see parleave.go): it exits every active state of P, x's
// and Q's among them, innermost first, then P. fsmgen writes it as P's
// rule, guarded by In(S) for its source S, as it does theirs, where that
// is SCXML's choice (SCXML 1.0 §3.13): no state around S up to R's own
// state (Q and the states of R around it among them) has a rule or a
// list entry for the event, which S's leaves would reach first and which
// the generated code would take in R; x's other states leave P on it or
// do not take it; and every other region of P that takes it comes before
// R in document order and moves within itself or rejects it, or leaves P
// on it too. The rows are then tried in document order, the first whose
// source is active and whose guard holds taken, as SCXML takes the first
// region's and drops the later ones'.

// takeHosted records row t of the states of hosted region r, some of
// whose targets leave r.top, and reports whether it did or refused it
// (named); false leaves the row to regionRow, which refuses a target
// that leaves r's parallel state only.
func (l *leaving) takeHosted(t *spec.Transition, r *specRegion, regionOf map[string]*specRegion, diags *diag.List) bool {
	top := r.top.Name.Value
	label := rowLabel(t)
	refuse := func(why, instead string) bool {
		diags.Errorf(t.Pos, "rule %s leaves parallel state %s from region %s of parallel state %s, inside region %s: %s; fsmgen does not write that for a parallel state inside a region's state yet; %s", label, top, r.root.Name.Value, r.par.Name.Value, r.outermost().root.Name.Value, why, instead)
		return true
	}
	_, all := leavesAll(t, regionOf)
	switch {
	case len(t.On) == 0:
		return false // refused by regionRow
	case !all || staysBy(t):
		return refuse("not every branch leaves "+top, "write the branches that leave as a row of their own, on another event")
	}
	for _, e := range t.On {
		if l.keeps(top, []spec.String{e}) {
			return refuse(fmt.Sprintf("a region of %s outside %s keeps its own rule for %s that leaves %s (a rule of another region comes after it, or beside it)", top, r.par.Name.Value, e.Value, top), "give the events different names")
		}
		for _, from := range t.From {
			if by := l.aroundHosted(r, from.Value, e.Value, regionOf); by != "" {
				return refuse(fmt.Sprintf("%s, around %s, has a rule or a list entry for %s, which the generated code would take first", by, from.Value, e.Value), fmt.Sprintf("drop the rule of %s for %s, or give the events different names", by, e.Value))
			}
		}
		if by := l.besideHosted(r, e.Value, regionOf); by != "" {
			return refuse(by, "leave "+top+" on "+e.Value+" from "+top+", or give the events different names")
		}
	}
	for _, from := range t.From {
		if r.finals[from.Value] {
			diags.Errorf(from.Pos, "region %s rests in its final state %s, which has no transitions of its own (SCXML 1.0 §3.7): the events it is offered go to the states around it; write the row from %s or from %s", r.root.Name.Value, from.Value, r.root.Name.Value, r.par.Name.Value)
			continue
		}
		for _, e := range t.On {
			o := *t
			o.From, o.On = []spec.String{from}, []spec.String{e}
			l.record(r.top, e.Value, leaveRow{r: r, src: from, t: o})
		}
	}
	return true
}

// aroundHosted returns the state that has a rule or a list entry for
// event e among src's list and the states around src, up to its
// outermost host region's own state; "" when none has.
func (l *leaving) aroundHosted(r *specRegion, src, e string, regionOf map[string]*specRegion) string {
	named := func(n spec.String) bool { return n.Value == e || n.Value == "*" }
	takes := func(s *spec.State) bool { return slices.ContainsFunc(listEntries(s), named) || hasRow(s, e, l.spec) }
	if s := stateNamed(r.root, src); s != nil && slices.ContainsFunc(listEntries(s), named) {
		return src
	}
	leaves := func(t *spec.Transition) bool {
		_, all := leavesAll(t, regionOf)
		return all && !staysBy(t)
	}
	for _, a := range around(r.root, src) {
		// A state of r around src whose rows for e all leave too: tried
		// after src's (see merge).
		if slices.ContainsFunc(listEntries(a), named) || hasRow(a, e, l.spec) && !l.rowsAll(a.Name.Value, e, leaves) {
			return a.Name.Value
		}
	}
	for q := r; q.host != nil; q = q.host {
		// The parallel state q is a region of, and the states around it
		// in its host.
		for _, a := range slices.Backward(append(around(q.host.root, q.par.Name.Value), q.par)) {
			if takes(a) {
				return a.Name.Value
			}
		}
	}
	return ""
}

// besideHosted says which region of r.top other than those around r
// takes event e where a row of hosted region r leaves r.top on it and
// the generated code would not choose as SCXML does (see above); ""
// when none does.
func (l *leaving) besideHosted(r *specRegion, e string, regionOf map[string]*specRegion) string {
	at := slices.Index(l.regions, r.outermost())
	for _, o := range l.regions {
		if o.top != r.top || o == r || r.within(o) != nil {
			continue // r itself, or a region around it
		}
		by := regionTakes(o, e, l.spec)
		switch {
		case by == "":
			continue
		case o.within(r) != nil:
			return fmt.Sprintf("%s, in region %s of parallel state %s inside a state of %s, takes %s too", by, o.root.Name.Value, o.par.Name.Value, r.root.Name.Value, e)
		case o.host != nil:
			// Another region of a parallel state inside a region's
			// state (check refuses those that take e but leave).
			if st := stayer(o, e, l.spec, regionOf); st != "" {
				return fmt.Sprintf("%s, in region %s of parallel state %s, takes %s without leaving %s", st, o.root.Name.Value, o.par.Name.Value, e, r.top.Name.Value)
			}
		case slices.Index(l.regions, o) < at && movesOnly(o, e, l.spec):
		case !staysOn(o, e, l.spec, regionOf) && !l.kept[r.top.Name.Value][e]:
			// It leaves on e too: the rows are tried in document order.
		default:
			return fmt.Sprintf("%s, in region %s, takes %s too, and comes after region %s or does more than move within its region", by, o.root.Name.Value, e, r.outermost().root.Name.Value)
		}
	}
	if !staysOn(r, e, l.spec, regionOf) {
		return ""
	}
	// Another state of r takes e in r, and the generated code would take
	// its rule before a rule of an earlier region that leaves.
	for _, o := range l.regions[:slices.Index(l.regions, r)] {
		if o.top == r.top && r.within(o) == nil && slices.ContainsFunc(l.spec, func(t spec.Transition) bool {
			some, _ := leavesAll(&t, regionOf)
			return some && slices.ContainsFunc(t.On, func(n spec.String) bool { return n.Value == e }) && slices.ContainsFunc(t.From, func(n spec.String) bool { return o.names[n.Value] })
		}) {
			return fmt.Sprintf("another state of region %s takes %s without leaving %s, and region %s, before it, leaves %s on it", r.root.Name.Value, e, r.top.Name.Value, o.root.Name.Value, r.top.Name.Value)
		}
	}
	return ""
}

// record adds row lr, which leaves parallel state p on event e.
func (l *leaving) record(p *spec.State, e string, lr leaveRow) {
	par := p.Name.Value
	if l.rows[par] == nil {
		l.rows[par] = map[string][]leaveRow{}
		l.pars = append(l.pars, p)
	}
	if l.rows[par][e] == nil {
		l.evs[par] = append(l.evs[par], e)
	}
	l.rows[par][e] = append(l.rows[par][e], lr)
}

// rowLabel names row t for a message as its first source, its events as
// the spec lists them and its targets say: "Saved --Quit--> Off".
func rowLabel(t *spec.Transition) string {
	var on []string
	for _, e := range t.On {
		on = append(on, e.Value)
	}
	return fmt.Sprintf("%s --%s--> %s", t.From[0].Value, strings.Join(on, ","), targetNames(t))
}
