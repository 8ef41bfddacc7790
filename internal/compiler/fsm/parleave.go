package fsm

import (
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file resolves the rows of the states inside a region of a parallel
// state P whose target is outside P (or P itself, entered again): such a
// rule's transition domain is the compound state around P (SCXML 1.0
// §3.13, getTransitionDomain and findLCCA), so it exits every active
// state of P, all its regions innermost first and P itself, before its
// actions run and its target is entered, as a rule of P does. fsmgen
// writes it as a rule of P, guarded by In(S) for its source S and tried
// before P's own rules for the event (a region's rule preempts its
// parallel state's): the generated code takes it when S's region is in S
// and no region takes the event, which is exactly when SCXML would, as
// long as the other regions of P with a rule or a list entry for the
// event come before S's in document order and move within themselves or
// reject it (SCXML keeps the rule of the first region in document order
// and drops a later one whose exits intersect its own,
// removeConflictingTransitions), and no state around S inside its region
// has one (S's leaves would take it there). Rows of several regions are
// tried in the regions' document order; a row's guards are branches of
// P's row (see parleaveguards.go). Otherwise, and where a row leaves P
// by some branches of its guards and stays in its region by others, the
// row stays the region's, each branch that leaves a stand-in that ends
// the region's chain and takes P's rule for it where no region before
// it took a transition (see mixed and parleavekept.go).
// A timer of S whose rules leave P runs as S's, its rules resolved as
// P's (see parleavetimers.go). The rule stays S's (Rule.Source): its
// label, the table, the diagram and the export name S; its examples
// start in P (see parleaveexamples.go).

// leaveRow is one row of a state inside a region that leaves the
// region's parallel state, for one source and one event.
type leaveRow struct {
	r   *specRegion
	src spec.String
	t   spec.Transition
	// leave are, for a row that leaves by some branches of its guards and
	// stays in the region by others, the positions of those that leave;
	// nil when every branch leaves.
	leave map[diag.Pos]bool
}

// leaving collects the rows that leave parallel states, by parallel
// state and event, in spec order.
type leaving struct {
	rows   map[string]map[string][]leaveRow
	pars   []*spec.State
	evs    map[string][]string
	names  map[diag.Pos][]string
	timers []leaveTimer
	// owns are the positions of the else branches that are the parallel
	// state's own unguarded rule or list entry (see ownBranches), and
	// elses those of the else branches of the guards of the rows that
	// leave it (see branches).
	owns, elses map[diag.Pos]bool
	// passes are the positions of the branches that leave of the rows
	// that stay in their region by others (see mixed).
	passes map[diag.Pos]bool
	// quiet are the eventless rows that leave (see parleaveeventless.go).
	quiet []leaveRow
	// kept are, by parallel state and event, the events whose rows that
	// leave it their regions keep (see parleavekept.go).
	kept map[string]map[string]bool
	// spec are the spec's rows and regions every region, in document
	// order, once keep has run.
	spec    []spec.Transition
	regions []*specRegion
	// lifted are, by parallel state inside a region's state and event,
	// the rows of its regions that leave it for states of that region
	// (see parhostedlift.go), liftPars a region of each such parallel
	// state and liftEvs its events, in spec order.
	lifted   map[string]map[string][]leaveRow
	liftPars []*specRegion
	liftEvs  map[string][]string
	// liftTimers are, by host region, the timers of the states of the
	// regions of the parallel states inside its states whose rules leave
	// those for its states (see timer): its build resolves their rules.
	liftTimers map[*specRegion][]leaveTimer
}

func newLeaving() *leaving {
	return &leaving{rows: map[string]map[string][]leaveRow{}, evs: map[string][]string{}, lifted: map[string]map[string][]leaveRow{}, liftEvs: map[string][]string{}, liftTimers: map[*specRegion][]leaveTimer{}, names: map[diag.Pos][]string{}, owns: map[diag.Pos]bool{}, elses: map[diag.Pos]bool{}, passes: map[diag.Pos]bool{}}
}

// leavesAll reports whether some of t's targets name a state outside the
// regions of every parallel state (a parallel state itself among them),
// and whether all do.
func leavesAll(t *spec.Transition, regionOf map[string]*specRegion) (some, all bool) {
	to := targets(t)
	all = len(to) > 0
	for _, n := range to {
		if regionOf[strings.TrimSuffix(n.Value, historySuffix)] == nil {
			some = true
		} else {
			all = false
		}
	}
	return some, all
}

// take records row t of the states of region r when it leaves r's
// parallel state, and reports whether it did (or refused it, named); a
// row that does not leave it is regionRow's. A row that leaves by some
// branches of its guards and stays in the region by others is recorded
// for its branches that leave, and stays the region's too (take reports
// false), each branch that leaves a stand-in there (see mixed). A region
// of a parallel state nested as a region is one of the parallel state's
// here (its nested parallel state's own rules are check's).
func (l *leaving) take(t *spec.Transition, r *specRegion, regionOf map[string]*specRegion, diags *diag.List) bool {
	some, all := leavesAll(t, regionOf)
	switch {
	case !some:
		return false // regionRow's
	case r.host != nil:
		return l.takeHosted(t, r, regionOf, diags)
	}
	par := r.par.Name.Value
	if len(t.On) == 0 {
		l.eventless(t, r, regionOf)
		return false
	}
	var leave map[diag.Pos]bool
	kept := !all || staysBy(t) || l.keeps(par, t.On)
	if kept {
		leave = map[diag.Pos]bool{}
		if len(t.Guards) == 0 {
			leave[t.Pos] = true
		}
		for _, br := range t.Guards {
			if br.To.Set && regionOf[strings.TrimSuffix(br.To.Value, historySuffix)] == nil {
				leave[br.Pos] = true
			}
		}
	}
	for _, from := range t.From {
		if r.finals[from.Value] {
			if all && !kept { // else regionRow says so
				diags.Errorf(from.Pos, "region %s rests in its final state %s, which has no transitions of its own (SCXML 1.0 §3.7): the events it is offered go to the states around it; write the row from %s or from %s", r.root.Name.Value, from.Value, r.root.Name.Value, par)
			}
			continue
		}
		for _, e := range t.On {
			o := *t
			o.From, o.On = []spec.String{from}, []spec.String{e}
			l.record(r.par, e.Value, leaveRow{r: r, src: from, t: o, leave: leave})
		}
	}
	if !kept {
		return true
	}
	l.standIn(t, leave)
	return false
}

// mixed turns row t, which leaves its parallel state P by the branches of
// its guards at the positions leave and stays in its region by the others,
// into the region's row: each branch that leaves becomes a stand-in that
// ends the region's chain without the region taking the event (it ignores
// it in the region's build; the join marks the rule, Rule.Leaves), so
// that the branches after it are not tried, and P's rule for the branch
// (see merge) is taken where no region before it took a transition, its
// guard not asked again; P's own chain leaves those rules out (see
// OwnChain). SCXML 1.0 §3.13 (selectTransitions) takes the first branch
// of S's whose guard holds, and drops it where it leaves P and an earlier
// region's transition is taken (removeConflictingTransitions), as the
// generated code does.
func (l *leaving) mixed(t *spec.Transition, leave map[diag.Pos]bool) {
	guards := slices.Clone(t.Guards)
	for i := range guards {
		if leave[guards[i].Pos] {
			guards[i].Outcome = spec.Outcome{Ignore: spec.Bool{Value: true, Pos: guards[i].Pos, Set: true}}
			l.passes[guards[i].Pos] = true
		}
	}
	t.Guards = guards
}

// merge writes the rows that leave each parallel state as one row of it
// per event (see above), before its own row for the event or its list
// entry, which become the last branches; rows are the spec's, regions
// every region.
func (l *leaving) merge(outer *spec.File, rows []spec.Transition, regions []*specRegion, diags *diag.List) {
	for _, p := range l.pars {
		par := p.Name.Value
		for _, e := range l.evs[par] {
			list := l.rows[par][e]
			// The rules of the first region in document order first:
			// SCXML takes the first region's and drops a later one's.
			// (A region of a parallel state inside a region's state
			// comes right after its host.)
			// Within one such region, a row of a state inside another
			// first: SCXML tries its source's transitions before those
			// of the states around it (see takeHosted).
			slices.SortStableFunc(list, func(a, b leaveRow) int {
				if a.r == b.r && a.r.host != nil {
					return len(around(b.r.root, b.src.Value)) - len(around(a.r.root, a.src.Value))
				}
				return slices.Index(regions, a.r) - slices.Index(regions, b.r)
			})
			if !l.check(p, e, list, rows, regions, diags) {
				continue
			}
			first := list[0]
			row := spec.Transition{Pos: first.t.Pos, From: []spec.String{{Value: par, Pos: first.src.Pos, Set: true}}, On: first.t.On, OnPos: first.t.OnPos}
			for _, lr := range list {
				row.Guards = append(row.Guards, l.branches(lr)...)
			}
			own := ownBranches(outer, p, e)
			if len(own) == 1 && own[0].Else.Value {
				// p's own rule, unguarded, or its list entry: it stays
				// so in the table and the labels.
				l.owns[own[0].Pos] = true
			}
			row.Guards = append(row.Guards, own...)
			outer.Transitions = append(outer.Transitions, row)
		}
	}
}

// sources returns, by parallel state and event, the states whose rules
// leave the parallel state (see parHook.sources).
func (l *leaving) sources() map[string]map[string][]string {
	out := map[string]map[string][]string{}
	for par, byEvent := range l.rows {
		out[par] = map[string][]string{}
		for e, list := range byEvent {
			for _, lr := range list {
				if decides(list, lr.src.Value) {
					out[par][e] = append(out[par][e], lr.src.Value)
				}
			}
		}
	}
	return out
}
