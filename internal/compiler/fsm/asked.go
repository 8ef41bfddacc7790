package fsm

import "slices"

// This file keeps the answers of the guards the microsteps of one step
// ask (see eventless). Guards are pure: a guard asked again with the same
// values answers as before. A state that waits inside a region asks its
// guards in every microstep of the step while it stays, and a witness
// search that let each ask answer anew would follow every order in which
// the guards could come to hold, in a step where none of their values
// changed: ways that no machine takes, as many as the ordered partitions
// of the states that wait (4683 ways for six regions, with a generated
// test of 22 MB). Each ask is kept with the storage its values come
// from, until a rule of the way writes one of them.

// asked is a guard asked in a microstep, with the values it was given
// and its answer.
type asked struct {
	guard *Func
	args  []Value
	holds bool
	// at is how many rules the way had taken when the microstep that
	// asked it began, the last of them last: the rules after them may
	// have written its values. test is its place in the way's Tests.
	at   int
	last *Rule
	test int
}

// stands reports whether ask a still stands on way w: w's tests and rules
// up to the microstep that asked it are those it was asked after (a way
// cut back and taken on anew, see continueRegion, drops what it asked),
// and no rule of w up to its first to wrote its values.
func (w *Way) stands(a asked, to int) bool {
	switch {
	case a.test >= len(w.Tests) || w.Tests[a.test].Guard != a.guard || w.Tests[a.test].Holds != a.holds:
		return false
	case a.at > to || to > len(w.Rules) || a.at > 0 && w.Rules[a.at-1] != a.last:
		return false
	}
	for _, r := range w.Rules[a.at:to] {
		for _, v := range a.args {
			if v.Source == FromData && writes(r, v.Data) {
				return false
			}
		}
	}
	return true
}

// agrees reports whether tests, the guards of rules (one per test),
// asked in the microstep that begins after the way's first at rules,
// answer as the same guards asked before with the same values, where no
// rule since wrote those values.
func (w *Way) agrees(tests []Test, rules []*Rule, at int) bool {
	for i, t := range tests {
		for _, a := range w.asked {
			if a.guard == t.Guard && a.holds != t.Holds && sameArgs(a.args, rules[i].GuardArgs) && w.stands(a, at) {
				return false
			}
		}
	}
	return true
}

// ask records tests, the guards of rules (one per test), the last of the
// way's Tests, asked in the microstep that begins after the way's first
// at rules.
func (w *Way) ask(tests []Test, rules []*Rule, at int) {
	if len(tests) == 0 {
		return
	}
	var last *Rule
	if at > 0 {
		last = w.Rules[at-1]
	}
	w.asked = slices.Clip(w.asked)
	first := len(w.Tests) - len(tests)
	for i, t := range tests {
		w.asked = append(w.asked, asked{guard: t.Guard, args: rules[i].GuardArgs, holds: t.Holds, at: at, last: last, test: first + i})
	}
}

// sameArgs reports whether two guards' values come from the same places.
func sameArgs(a, b []Value) bool {
	return slices.EqualFunc(a, b, func(x, y Value) bool {
		return x.Source == y.Source && x.Data == y.Data && x.Field == y.Field && x.Result == y.Result && x.Timer == y.Timer && x.Const == y.Const
	})
}

// writes reports whether rule r writes storage d: its stores and clears,
// the effects of the entries and exits it runs, and a shared rule that
// moves, which zeroes all storage but its target's.
func writes(r *Rule, d *Data) bool {
	if slices.Contains(r.Clears, d) || r.Shared() && r.To != nil && !slices.Contains(r.Keeps, d) {
		return true
	}
	stored := func(st Store) bool { return st.Data == d }
	if slices.ContainsFunc(r.Stores, stored) {
		return true
	}
	for _, run := range slices.Concat(r.Exits, r.Entries) {
		if slices.ContainsFunc(run.Stores, stored) {
			return true
		}
	}
	return false
}
