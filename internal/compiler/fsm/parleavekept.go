package fsm

import (
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file decides which rows that leave a parallel state P from inside
// a region their regions keep (see mixed). SCXML 1.0 §3.13 selects a
// transition in every region in document order and then drops a
// transition whose exits intersect an earlier one's
// (removeConflictingTransitions): a transition that leaves P exits every
// state of P, so the first region's, in document order, that leaves P
// or moves within itself is taken, a transition that leaves P drops
// every later region's, and one that moves within its region drops a
// later region's that leaves P; a transition without a target (an
// ignore) exits nothing and conflicts with none.
//
// Written as P's rule, a row that leaves P is taken once no region took
// the event, which is SCXML's choice only where every other region with
// a rule for the event comes before the row's and moves within itself
// (or rejects the event). Otherwise the row's region keeps it: its
// branches that leave are stand-ins that end the region's chain, and the
// generated code takes P's rule for the first of them, in document
// order, where no region before it took a transition, before the
// regions' rules (see emit's regionsTogether and combine).

// keep records, before the rows are taken, the events of each parallel
// state whose rows that leave it the regions keep (see above): where a
// row leaves by some branches and stays by others; where its source or a
// state around it inside the region has a rule or a list entry for the
// event too (the region's chain tries them after the row); where a region
// of P with a rule or a list entry for the event comes after the first
// region that leaves, or before it does anything but move within itself
// or reject the event, or a parallel state nested as a region of P has
// one (a region of it holds the rule, see parnestrules.go); and where a region that leaves does anything but
// move or leave in its other states, or, after the first, anything but
// leave (see contested). A row for several events kept for one is kept
// for all, and so are the others' rows for those events: the rows of one
// event are written one way. rows are the spec's.
func (l *leaving) keep(rows []spec.Transition, regions []*specRegion, regionOf map[string]*specRegion) {
	l.spec, l.regions = rows, regions
	type key struct{ par, e string }
	type use struct {
		regs  []*specRegion
		mixed bool
	}
	uses := map[key]*use{}
	var spans [][]key
	for _, t := range rows {
		if len(t.On) == 0 {
			continue // an eventless row (see parleaveeventless.go)
		}
		var span []key
		for _, n := range t.From {
			r := regionOf[n.Value]
			if r == nil || r.host != nil {
				continue
			}
			some, all := leavesFor(&t, r, regionOf)
			if !some {
				continue
			}
			for _, e := range t.On {
				k := key{r.par.Name.Value, e.Value}
				u := uses[k]
				if u == nil {
					u = &use{}
					uses[k] = u
				}
				if !slices.Contains(u.regs, r) {
					u.regs = append(u.regs, r)
				}
				u.mixed = u.mixed || !all || staysBy(&t) || aroundTakes(r, n.Value, e.Value, rows)
				span = append(span, k)
			}
		}
		spans = append(spans, span)
	}
	l.kept = map[string]map[string]bool{}
	set := func(k key) bool {
		if l.kept[k.par][k.e] {
			return false
		}
		if l.kept[k.par] == nil {
			l.kept[k.par] = map[string]bool{}
		}
		l.kept[k.par][k.e] = true
		return true
	}
	for k, u := range uses {
		if u.mixed || contested(k.e, u.regs, rows, regions, regionOf) {
			set(k)
		}
	}
	for changed := true; changed; {
		changed = false
		for _, span := range spans {
			if slices.ContainsFunc(span, func(k key) bool { return l.kept[k.par][k.e] }) {
				for _, k := range span {
					changed = set(k) || changed
				}
			}
		}
	}
}

// leavesFor reports, as leavesAll does after the targets of a row into
// another region are rewritten (see entering.across), whether some of
// row t's targets leave the parallel state of region r, its source's,
// and whether all do: a target outside every region, or inside another
// region of r's parallel state, which the row leaves and enters again.
func leavesFor(t *spec.Transition, r *specRegion, regionOf map[string]*specRegion) (some, all bool) {
	to := targets(t)
	all = len(to) > 0
	for _, n := range to {
		o := regionOf[strings.TrimSuffix(n.Value, historySuffix)]
		if o == nil || o != r && o.par == r.par && o.host == nil {
			some = true
		} else {
			all = false
		}
	}
	return some, all
}

// contested reports whether the regions leaving (those with a row that
// leaves their parallel state on event e) share e with a region that P's
// rule, taken once no region took e, would not wait for rightly (see
// above); rows are the spec's, regions every region.
func contested(e string, leaving []*specRegion, rows []spec.Transition, regions []*specRegion, regionOf map[string]*specRegion) bool {
	first := leaving[0]
	for _, r := range leaving {
		if r.place < first.place {
			first = r
		}
	}
	for _, o := range regions {
		if o.top != first.par || o.host != nil {
			continue // refused where they take e (see check)
		}
		if slices.Contains(leaving, o) {
			// Its rules for e that do not leave, in its other states,
			// preempt an earlier region's rule that leaves where it is
			// P's: only the first region's may move.
			if !movesOnly(o, e, rows) || o != first && staysOn(o, e, rows, regionOf) {
				return true
			}
			continue
		}
		if regionTakes(o, e, rows) != "" && (o.place > first.place || !movesOnly(o, e, rows)) {
			return true
		}
		if groupTakes(o.groups, e, rows) != nil {
			// A rule or list entry of a parallel state nested as a
			// region, which one of its regions holds (see
			// parnestrules.go and parnestlists.go).
			return true
		}
	}
	return false
}

// aroundTakes reports whether state src of region r, a row of which
// leaves r's parallel state on event e, has a list entry for e beside
// the row ("*" too), or a state around it inside r a rule or list entry
// for e: the region's chain, which the region keeps (see keep), tries
// them after the row; rows are the spec's.
func aroundTakes(r *specRegion, src, e string, rows []spec.Transition) bool {
	named := func(n spec.String) bool { return n.Value == e || n.Value == "*" }
	if s := stateNamed(r.root, src); s != nil && slices.ContainsFunc(listEntries(s), named) {
		return true
	}
	return slices.ContainsFunc(around(r.root, src), func(a *spec.State) bool {
		return slices.ContainsFunc(listEntries(a), named) || hasRow(a, e, rows)
	})
}

// staysOn reports whether a state of region o has a rule for event e
// that does not leave o's parallel state (a branch of one), or a list
// entry for it; rows are the spec's.
func staysOn(o *specRegion, e string, rows []spec.Transition, regionOf map[string]*specRegion) bool {
	return stayer(o, e, rows, regionOf) != ""
}

// stayer returns the first state of region o that staysOn finds; "" when
// none is.
func stayer(o *specRegion, e string, rows []spec.Transition, regionOf map[string]*specRegion) string {
	if by := regionTakes(o, e, nil); by != "" {
		return by // a list entry
	}
	for _, t := range rows {
		if !slices.ContainsFunc(t.On, func(n spec.String) bool { return n.Value == e }) {
			continue
		}
		i := slices.IndexFunc(t.From, func(n spec.String) bool { return o.names[n.Value] })
		if i < 0 {
			continue
		}
		if some, all := leavesFor(&t, o, regionOf); !some || !all || staysBy(&t) || len(t.Guards) > 0 && slices.ContainsFunc(t.Guards, func(br spec.Branch) bool { return !br.To.Set }) {
			return t.From[i].Value
		}
	}
	return ""
}

// keeps reports whether the rows of parallel state par that leave it on
// one of events ons stay their regions' (see keep).
func (l *leaving) keeps(par string, ons []spec.String) bool {
	return slices.ContainsFunc(ons, func(e spec.String) bool { return l.kept[par][e.Value] })
}

// standIn turns row t, which leaves its parallel state by the branches of
// its guards at the positions leave (by itself, without guards), into
// its region's row (see mixed).
func (l *leaving) standIn(t *spec.Transition, leave map[diag.Pos]bool) {
	if len(t.Guards) > 0 {
		l.mixed(t, leave)
		return
	}
	t.Outcome = spec.Outcome{Ignore: spec.Bool{Value: true, Pos: t.Pos, Set: true}}
	l.passes[t.Pos] = true
}

// staysBy reports whether a branch of row t's guards stays in its state
// without a target (its content runs there): the branch is its region's
// rule, which SCXML runs beside another region's (see mixed).
func staysBy(t *spec.Transition) bool {
	return slices.ContainsFunc(t.Guards, func(br spec.Branch) bool { return stays(br.Outcome) })
}

// stays reports whether outcome o stays in its state without a target:
// neither ignores nor rejects the event.
func stays(o spec.Outcome) bool { return !o.To.Set && !o.Ignore.Set && !o.Reject.Set }
