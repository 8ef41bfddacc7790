package fsm

import (
	"regexp"
	"slices"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file writes the guards of a row of a state S inside a region of
// parallel state P that leaves P (see parleave.go). SCXML tries S's
// transitions for the event in document order and takes the first whose
// condition holds (SCXML 1.0 §3.13, selectTransitions); when none does,
// it tries the states around S, then P's own, then the states around P.
// fsmgen writes each branch as a branch of P's row for the event, where
// the row's other leaving branches and P's own rule come after it: an if
// branch tests In(S) and then its guard (Rule.SourceIn), an else branch
// In(S) alone, and when no branch of S holds the generated code goes on
// to P's own rule and the states around P, as SCXML does (the regions
// took the event nowhere, which is when P's row runs).

// branches returns the branches of P's row that row lr writes: one that
// tests In(S) for a row without guards, and each of its branches for one
// with guards, an if branch testing In(S) before its guard (written
// "In(S) && guard", see sourceIn), an else branch In(S).
func (l *leaving) branches(lr leaveRow) []spec.Branch {
	in := spec.String{Value: "In(" + lr.src.Value + ")", Pos: lr.src.Pos, Set: true}
	l.name(in.Pos, lr.src.Value)
	if len(lr.t.Guards) == 0 {
		return []spec.Branch{{Pos: lr.t.Pos, If: in, Outcome: lr.t.Outcome}}
	}
	var out []spec.Branch
	for _, br := range lr.t.Guards {
		if lr.leave != nil && !lr.leave[br.Pos] {
			continue // a branch that stays in the region, the region's
		}
		o := br
		switch {
		case br.Else.Set && br.Else.Value && !br.If.Set:
			o.Else, o.If = spec.Bool{}, in
			l.elses[br.Pos] = true
		case br.If.Set && !br.Else.Set:
			o.If = spec.String{Value: in.Value + " && " + br.If.Value, Pos: br.If.Pos, Set: true}
			l.name(br.If.Pos, lr.src.Value)
		}
		out = append(out, o)
	}
	return out
}

// name records src as a source of the In(State) guard at pos (a guarded
// row from several states has one position for each branch's guard).
func (l *leaving) name(pos diag.Pos, src string) {
	if !slices.Contains(l.names[pos], src) {
		l.names[pos] = append(l.names[pos], src)
	}
}

// sourceRE matches the guard of an if branch of a row that leaves a
// parallel state from inside a region, as branches writes it.
var sourceRE = regexp.MustCompile(`^In\(([A-Za-z_][A-Za-z0-9_]*)\) && (.*)$`)

// sourceIn returns, for the guard s of an if branch of a row that leaves
// a parallel state from inside a region (see branches), the In(State)
// guard of its source, which the rule tests first (Rule.SourceIn), and
// the branch's own guard, resolved already (inner) when it is In(State)
// too; nil, s and nil for any other guard.
func (h *parHook) sourceIn(s spec.String) (in *Func, guard spec.String, inner *Func) {
	if h == nil || len(h.leaving[s.Pos]) == 0 {
		return nil, s, nil
	}
	mt := sourceRE.FindStringSubmatch(s.Value)
	if mt == nil || !slices.Contains(h.leaving[s.Pos], mt[1]) {
		return nil, s, nil
	}
	fn := &Func{Name: "In(" + mt[1] + ")", Kind: Guard, Pos: s.Pos, InName: mt[1], source: true}
	h.ins = append(h.ins, fn)
	g := spec.String{Value: mt[2], Pos: s.Pos, Set: true}
	if in := inRE.FindStringSubmatch(g.Value); in != nil {
		// The branch's own guard is In(State) too: it tests the state of
		// another region of the parallel state, as on a rule inside a
		// region (resolved with the others, see leavingRules).
		inner := &Func{Name: g.Value, Kind: Guard, Pos: s.Pos, InName: in[1]}
		h.ins = append(h.ins, inner)
		return fn, g, inner
	}
	return fn, g, nil
}

// chainTests returns the tests a way through rule r of a cell asks of
// rule other, tried before r or r itself, with their answers: other's
// guard, holding when other is r. A rule that tests In(S) before its
// guard (SourceIn) asks both where it is r, or where S is open, the
// state the way's configuration is in while S's guards fail (see
// opens), and In(S) alone, failing, otherwise; r is nil for a way past
// every rule of the cell.
func chainTests(other, r *Rule, open string) []Test {
	in := other.SourceIn
	switch {
	case other.Guard == nil:
		return nil
	case in == nil:
		return []Test{{Guard: other.Guard, Holds: other == r}}
	case other == r:
		return []Test{{Guard: in, Holds: true}, {Guard: other.Guard, Holds: true}}
	case in.InName == open:
		return []Test{{Guard: in, Holds: true}, {Guard: other.Guard}}
	}
	return []Test{{Guard: in}}
}

// opens returns, for the ways through rule r of chain (nil: past every
// rule), the states whose rules that leave a parallel state from inside
// a region the way's configuration is in (see chainTests): r's source
// for such a rule; for another, none ("") and each source whose guards
// may all fail, in whose configurations SCXML goes on to the rules after
// them (a way that no configuration answers is dropped, see inConfig);
// past every rule, the last of these.
func opens(chain []*Rule, r *Rule) []string {
	if r != nil && sourceName(r) != "" {
		return []string{sourceName(r)}
	}
	out := []string{""}
	for _, o := range chain {
		if o.SourceIn != nil && !slices.Contains(out, o.SourceIn.InName) && !slices.ContainsFunc(chain, func(e *Rule) bool { return e.SourceIn == nil && sourceName(e) == o.SourceIn.InName }) {
			out = append(out, o.SourceIn.InName)
		}
	}
	return out
}

// sourceName is the name of the state inside a region whose rule r
// leaves its parallel state, by the In(State) guard it tests, or "".
func sourceName(r *Rule) string {
	switch {
	case r.SourceIn != nil:
		return r.SourceIn.InName
	case r.Guard != nil && r.Guard.source:
		return r.Guard.InName
	}
	return ""
}

// ShownGuard is the guard that r's label, table row, diagram edge and
// export show: none for the In(State) guard of a rule that leaves a
// parallel state from inside a region, which its source says (Source),
// and Guard for any other rule (one that tests its guard after
// In(State), see SourceIn, the rules of a timer of a state inside a
// region, and an eventless rule, whose In(State) is the spec's, too).
func (r *Rule) ShownGuard() *Func {
	if r.Source != nil && r.SourceIn == nil && r.Guard != nil && r.Guard.InName != "" && r.Event != nil {
		return nil
	}
	return r.Guard
}

// decides reports whether the rows list of a state that leave its
// parallel state on an event always take it there: a row without
// guards, or one whose guards end in else, every branch leaving.
func decides(list []leaveRow, src string) bool {
	return slices.ContainsFunc(list, func(lr leaveRow) bool {
		return lr.src.Value == src && lr.leave == nil && (len(lr.t.Guards) == 0 || lr.t.Guards[len(lr.t.Guards)-1].Else.Value)
	})
}

// guardKey is what a branch of a chain of guards tests: its guard, after
// In(S) for a branch of a rule that leaves a parallel state from inside
// a region (see sourceIn); a chain that tests one twice never takes the
// second.
type guardKey struct {
	in    string
	guard *Func
}

// keyOf is the guardKey of guard g tested after In(State) guard in.
func keyOf(in, g *Func) guardKey {
	if in == nil {
		return guardKey{guard: g}
	}
	return guardKey{in: in.InName, guard: g}
}

// targetNames names the targets of row t: "Failed", "Flaky or Failed".
func targetNames(t *spec.Transition) string {
	var names []string
	for _, to := range targets(t) {
		if !slices.Contains(names, to.Value) {
			names = append(names, to.Value)
		}
	}
	return joinOr(names)
}

// openLeave reports, named, when cell c of parallel state p, which no
// rule around p takes over, holds the branches of a row that leaves p
// from inside a region whose guards may all fail (no else): the event
// would then go to p's own rule, and it has none.
func (h *parHook) openLeave(b *builder, c *Cell, p *State) bool {
	if h == nil || h.region != nil {
		return false
	}
	i := slices.IndexFunc(c.Rules, func(r *Rule) bool {
		// (A branch of a row that stays in its region by others is the
		// region's chain's to take: see mixed.)
		return r.SourceIn != nil && !h.passes[r.Pos] && slices.Contains(opens(c.Rules, nil), r.SourceIn.InName)
	})
	if i < 0 {
		return false
	}
	r := c.Rules[i]
	var to []string
	for _, o := range c.Rules {
		if o.SourceIn != nil && o.SourceIn.InName == r.SourceIn.InName && o.To != nil && !slices.Contains(to, o.To.Name) {
			to = append(to, o.To.Name)
		}
	}
	b.errorf(r.Pos, "rule %s --%s--> %s leaves parallel state %s by guards that may all fail, without an else branch, and neither %s nor a state around it has a rule for %s, where SCXML 1.0 §3.13 would then take it: add \"- else: true\" to the guards, or give %s a rule or an ignore entry for %s", r.SourceIn.InName, c.Event.Name, joinOr(to), p.Name, p.Name, c.Event.Name, p.Name, c.Event.Name)
	return true
}
