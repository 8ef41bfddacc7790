package fsm

import (
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file resolves history (UML 2.5.1 §14.2.3.4.5, shallowHistory and
// deepHistory; SCXML §3.10, <history>) at generate time. A composite
// state with "history:" has a memory in the machine: the leaf the machine
// was in when it last left the state. A rule "to: S.history" is resolved
// into one rule per state it may resume (the default, S's initial child,
// and each child, or for deep history each leaf), each with its own
// exits and entries; the generated code picks one by the memory, with a
// switch over kinds, and the rules that leave S write the memory.

// historySuffix is how a target names a composite state's history.
const historySuffix = ".history"

// histories reads the "history:" of every state, once the states are read.
func (b *builder) histories() {
	for _, s := range b.all {
		ss := b.specOf[s]
		if !ss.History.Set {
			continue
		}
		switch ss.History.Value {
		case "shallow":
			s.History = HistoryShallow
		case "deep":
			s.History = HistoryDeep
		default:
			b.errorf(ss.History.Pos, "history %q of state %s is neither shallow nor deep: write \"history: shallow\" (the child it was in) or \"history: deep\" (the leaf it was in)", ss.History.Value, s.Name)
			continue
		}
		if !s.Composite() && !b.parallel(s) {
			b.errorf(ss.History.Pos, "state %s has no states inside it, so it has no history to remember: put history on a composite state", s.Name)
			s.History = HistoryNone
			continue
		}
		if !s.Composite() {
			// A parallel state, a leaf of the machine around its
			// regions: its history remembers itself, and the leaves of
			// its regions beside (see deephist.go).
			s.First, s.Last = s, s
		}
		s.Hist = len(b.m.Histories)
		b.m.Histories = append(b.m.Histories, s)
	}
}

// historyTarget resolves a target "S.history": the composite state S,
// which must have a history; nil after reporting an error.
func (b *builder) historyTarget(to spec.String) *State {
	name := spec.String{Value: strings.TrimSuffix(to.Value, historySuffix), Pos: to.Pos, Set: to.Set}
	s := b.state(name)
	if s == nil {
		return nil
	}
	if s.History == HistoryNone {
		b.errorf(to.Pos, "state %s has no history for %s to enter: add \"history: shallow\" or \"history: deep\" to %s", s.Name, to.Value, s.Name)
		return nil
	}
	return s
}

// historyVariants makes the variants of rule r into the history of s: one
// per state s may resume other than its default (its initial child, down
// to a leaf, which r itself enters). Each is r with another target:
// made as r is numbered (see number), once its guard, done, timer and
// the rest are set, so that they copy them all.
func (b *builder) historyVariants(r *Rule) {
	s := r.History
	def := descend(s)
	var resumes []*State
	if s.History == HistoryShallow {
		for _, c := range s.Children {
			if c != s.InitialChild && b.remembered(s, c) {
				resumes = append(resumes, c)
			}
		}
	} else {
		for _, l := range b.m.States {
			if s.Contains(l) && l != def && b.remembered(s, l) {
				resumes = append(resumes, l)
			}
		}
	}
	o := b.outcomeOf[r]
	for _, c := range resumes {
		v := *r
		v.Variants = nil
		v.Target, v.To, v.Resume = c, descend(c), c
		v.Actions = nil
		for _, e := range r.Actions {
			v.Actions = append(v.Actions, &Emit{Action: e.Action})
		}
		b.outcomeOf[&v] = o
		r.Variants = append(r.Variants, &v)
	}
}

// remembered reports whether the history of s may remember state l: a
// state the machine rests in, a final state whose done transition leaves
// s, or a transient state whose eventless rules may leave s. SCXML 1.0
// §3.10 records the history as s is exited, the final or transient state
// then among its atomic states, and resuming it enters that state again,
// whose eventless rules are tested anew in that macrostep (a final
// state's: §3.13 enterStates raises done.state, and fsmgen's final state
// is then transient, its done transition its eventless rule). A
// transient state whose rules stay inside s is never remembered.
func (b *builder) remembered(s, l *State) bool {
	return mayRemember(s, l, func() bool {
		if l.Completes == nil {
			rules := b.waitRules(l, b.eventless[l.Index])
			// (In a region's build, a branch that leaves the parallel
			// state is a stand-in that ignores: it leaves s too.)
			return leavesBy(s, rules) || b.par != nil && slices.ContainsFunc(rules, func(r *Rule) bool { return r.Kind == Ignore && b.par.passes[r.Pos] })
		}
		return b.doneLeaves(s, l)
	})
}

// leavesBy reports whether one of rules leaves s: its target is outside
// s, or s itself entered anew.
func leavesBy(s *State, rules []*Rule) bool {
	return slices.ContainsFunc(rules, func(r *Rule) bool {
		t := r.Target
		return t != nil && (t == s && r.History == nil || !s.Contains(t))
	})
}

// mayRemember is remembered, with leaves reporting whether the done
// transition of l's composite state, not s, leaves s.
func mayRemember(s, l *State, leaves func() bool) bool {
	switch {
	case !l.Transient:
		return true
	case l.Completes == nil:
		return leaves()
	case l.Completes == s:
		return true // s's own done transition leaves s
	}
	return leaves()
}

// doneLeaves reports whether the done transition of the composite state
// of final state l leaves s, as the spec writes its targets.
func (b *builder) doneLeaves(s, l *State) bool {
	d := b.specOf[l.Completes].Done
	targets := []spec.String{d.To}
	stands := []diag.Pos{d.Pos}
	for _, br := range d.Guards {
		targets = append(targets, br.To)
		stands = append(stands, br.Pos)
	}
	if b.par != nil && slices.ContainsFunc(stands, func(p diag.Pos) bool { return b.par.passes[p] }) {
		// In a region's build, a branch that leaves the parallel state
		// is a stand-in that ignores (see leaving.dones): it leaves s.
		return true
	}
	for _, t := range targets {
		if !t.Set {
			continue
		}
		name := strings.TrimSuffix(t.Value, historySuffix)
		to, ok := b.states[name]
		if !ok {
			continue // reported with the rule
		}
		if to == s && name == t.Value || !s.Contains(to) {
			return true // the done transition leaves s
		}
	}
	return false
}

// historyDomain is the domain of a rule into the history of s whose rule
// belongs to owner: the innermost proper ancestor of owner that contains
// s's history, a pseudostate inside s (SCXML's LCCA of the source and the
// <history> element): s itself for a source inside it.
func historyDomain(owner, s *State) *State {
	if owner == nil {
		return nil
	}
	d := owner.Parent
	for d != nil && !d.Contains(s) {
		d = d.Parent
	}
	return d
}

// remembers works out the composite states with a history that rule r,
// which moves, leaves: those below its domain that the machine is in.
func (b *builder) remembers(r *Rule, domain *State) {
	owner := r.From
	for _, s := range b.m.Histories {
		if domain != nil && (domain == s || !domain.Contains(s)) {
			continue // not left: the domain is s or inside it, or elsewhere
		}
		switch {
		case owner != nil && s.Contains(owner):
			r.Remembers = append(r.Remembers, Remember{State: s})
		case owner == nil || owner.Contains(s):
			for _, u := range b.sources(r) {
				if s.Contains(u) {
					r.Remembers = append(r.Remembers, Remember{State: s, When: true})
					break
				}
			}
		}
	}
}

// Key says what rule r into a history picks its variant by, as the
// generated code does: the memory of r.History, or, when r leaves
// r.History itself, the leaf it leaves (which it remembers first).
// Always is set when r leaves it from every state that takes r; Leaves
// when from some.
func (r *Rule) Key() (leaves, always bool) {
	for _, rem := range r.Remembers {
		if rem.State == r.History {
			return true, !rem.When
		}
	}
	return false, false
}

// Pick returns the variant of r that fires when the machine is in leaf
// at and remembers hist (hist[i] is the leaf of Histories[i], nil for
// none): the one whose resumed state holds the remembered leaf, else r.
func (r *Rule) Pick(at *State, hist []*State) *Rule {
	if r.History == nil {
		return r
	}
	key := hist[r.History.Hist]
	if leaves, always := r.Key(); leaves && (always || r.History.Contains(at)) {
		key = at
	}
	if key == nil {
		return r
	}
	for _, v := range r.Variants {
		if v.Resume.Contains(key) {
			return v
		}
	}
	return r
}

// Remember returns hist after rule r fires in leaf at: the memories it
// writes hold at.
func (r *Rule) Remember(at *State, hist []*State) []*State {
	if len(r.Remembers) == 0 {
		return hist
	}
	out := append([]*State(nil), hist...)
	for _, rem := range r.Remembers {
		if !rem.When || rem.State.Contains(at) {
			out[rem.State.Hist] = at
		}
	}
	return out
}

// resolveWay returns way w as it goes from a machine that remembers hist:
// each rule into a history replaced by the variant that fires, and the
// memory after it. w itself is returned when nothing changes.
func resolveWay(w *Way, hist []*State) (*Way, []*State) {
	at := w.From
	out := w
	for i, r := range w.Rules {
		if r.Kind != Transition {
			continue
		}
		if p := r.Pick(at, hist); p != r {
			if out == w {
				cp := *w
				cp.Rules = append([]*Rule(nil), w.Rules...)
				out = &cp
			}
			out.Rules[i] = p
			r = p
		}
		hist = r.Remember(at, hist)
		if r.To != nil {
			at = r.To
		}
	}
	if out != w {
		out.To = at
	}
	return out, hist
}

// histKey encodes a memory as a comparable key for the search of paths.
func histKey(hist []*State) string {
	if len(hist) == 0 {
		return ""
	}
	var sb strings.Builder
	for _, s := range hist {
		if s == nil {
			sb.WriteString("-,")
			continue
		}
		sb.WriteString(s.Name)
		sb.WriteByte(',')
	}
	return sb.String()
}

// Unremembered returns the leaves inside composite state s that its
// history never remembers: the transient states (a final state whose
// done transition follows at once among them) whose rules stay inside s
// (see resumable). The machine never rests there, and never leaves s
// from one, so no saved machine remembers one.
func (m *Machine) Unremembered(s *State) []*State {
	var out []*State
	for _, l := range append(slices.Clone(m.States), m.RegionLeaves()...) {
		if s.Contains(l) && (l.Transient || l.Settles()) && !resumable(s, l) {
			out = append(out, l)
		}
	}
	return out
}
