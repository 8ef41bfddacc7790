package fsm

import (
	"maps"
	"slices"
)

// Way is one way through a cell: an event sent to a state, the guards the
// machine then tests with what each answers, and the rules that fire, in
// order (more than one when the way goes through transient states). The
// generated tests take every way of every cell.
type Way struct {
	// From is the state the event is sent in: the cell's own, or for a
	// shared cell the first state that leaves its event to it.
	From  *State
	Event *Event
	// Timer is, for a TimerFired, the timer that fired: a running timer of
	// From's; nil for other events, and for the TimerFired of a timer not
	// running.
	Timer *Timer
	// Tests are the guards tested, in the order the machine tests them,
	// each with its answer.
	Tests []Test
	Rules []*Rule
	// To is the state the machine rests in after the way.
	To *State
	// Trace is what the way does from a machine made by Restore in From,
	// which numbers the running timers from 1, outermost first.
	Trace Trace
	// Config is, for a way from a parallel state, the leaves its regions
	// are in (by Region.Index); Regional is set on a way the regions take,
	// whose Trace is worked out with it (see parpaths.go).
	Config   []*State
	Regional bool
	// Resumed is, for a way whose rule enters a parallel state through a
	// deep history (Run.Resume), the leaves its regions resume (nil for
	// a region entered through its initial leaf); nil for other ways.
	Resumed []*State
	// hosted is, for a way whose rule enters a parallel state inside a
	// region through a deep history (a rule of the region, or one from
	// outside, see Run.IntoResume), the leaves its regions resume, by
	// Region.Index (nil for the other regions); nil for other ways.
	hosted []*State
	// Final is, for a way the regions take that puts every region of its
	// parallel state in a final leaf, those leaves: the way's last rule is
	// then the parallel state's done transition, taken from them in the
	// same step, but for the eventless rules of the transient states it
	// leads into, the last after of them. Nil for other ways.
	Final []*State
	after int
	// moved are, for a way the regions take, the regions its rules move,
	// one per rule (see regionTrace). The first micro rules are taken as
	// one step (SCXML's microstep); each after them is the done transition
	// of a composite state inside a region, taken alone in the order SCXML
	// raises their done events (see settle).
	moved []*Region
	micro int
	// pre is, for a way the regions take, how many of Tests its first
	// micro rules tested (those after are the done transitions').
	pre int
	// groups are, when the rules after the first micro are the eventless
	// rules of transient states inside the regions, the sizes of the
	// microsteps they are taken in, each the rules of every region then in
	// a transient state (see eventless); nil when each is taken alone.
	groups []int
	// head is, for a way whose last machine rule enters a parallel state
	// whose regions start in leaves they never rest in (a transient
	// initial state: see regtrans.go), the way up to that rule; the rules
	// after head's are the regions' (moved, groups), taken from entered,
	// the leaves the regions were entered in. Nil for other ways.
	head    *Way
	entered []*State
	// beside are, for a way whose rule leaves a parallel state from
	// inside a region, the other regions' rules without a target and
	// ignores taken in its step (they exit nothing and conflict with
	// none, SCXML 1.0 §3.13): in Rules, in document order, around the
	// rule, which is Rules[lead]. Nil for other ways.
	beside []*Rule
	lead   int
	// After are, when a rule of the way sets constants (set:), the
	// fields of To that hold one after the way, in To's order. From a
	// machine made by Restore in From with zero fields, whose effects
	// return zero values (the generated tests' fake behaviour), To's
	// other fields are then zero. Nil for other ways, and when some
	// field's value cannot be known so (a timer's id).
	After []Hold
	// asked are the guards the microsteps of the way's step asked, with
	// their answers (see asked.go).
	asked []asked
	// pins are, for a way the regions take settled anew from what the
	// histories remember (see continueRegion), the variant each rule of
	// its later microsteps into a history fires as: settle takes the
	// variant where it would take the rule.
	pins map[*Rule]*Rule
	// anew marks a way continueRegion settled anew from what the
	// histories remember: it is not settled again.
	anew bool
}

// pinned returns pick pk with its rule replaced by the variant w pins it
// to, if any.
func (w *Way) pinned(pk pick) pick {
	if v := w.pins[pk.rule]; pk.rule != nil && v != nil {
		pk.rule = v
	}
	return pk
}

// Test is a guard tested on a way, and what it answers.
type Test struct {
	Guard *Func
	Holds bool
}

// ways lists one way per rule of every cell, continued through every
// branch of the transient states it enters: the cells of each state in
// spec order, then the shared cells, then the timers.
func (b *builder) ways() {
	m := b.m
	var cells []*Cell
	for _, s := range m.States {
		cells = append(append(cells, s.Handles...), s.Refuses...)
	}
	cells = append(cells, m.Shared...)
	for _, t := range m.Timers {
		cells = append(cells, t.Cell)
	}
	for _, c := range cells {
		from := c.State
		if from == nil {
			// A state that takes the shared cell for its event; one whose
			// own chain of guards falls back to it reaches it through
			// that chain, whose ways go on into it.
			i := slices.IndexFunc(b.users[c], func(s *State) bool {
				return !slices.ContainsFunc(s.Handles, func(h *Cell) bool { return h.Event == c.Event })
			})
			if i < 0 {
				continue
			}
			from = b.users[c][i]
		}
		for _, w := range expand(from, c) {
			if len(m.Histories) > 0 {
				// The generated tests start from Restore, which
				// remembers nothing.
				mem := make([]*State, len(m.Histories))
				w, _ = resolveWay(w, mem)
				if resumesEventless(w) {
					ws, _ := intoEventless(w, mem)
					m.Ways = append(m.Ways, ws...)
					continue
				}
			}
			m.Ways = append(m.Ways, w)
		}
	}
}

// expand returns the ways through cell c when its event is sent in state
// from: one per rule, continued through every branch of the transient
// states it enters (and of the final states whose done transition it
// tests). Cell c may be from's Choice: the ways through its eventless
// rules.
func expand(from *State, c *Cell) []*Way {
	var out []*Way
	var timer *Timer
	if len(c.Rules) > 0 {
		timer = c.Rules[0].Timer
	}
	var follow func(w Way, r *Rule, chain []*Rule, open string)
	// through continues w, which enters s, through s's eventless rules: one
	// way per branch, and, when s is a final state that may rest, one
	// that rests in s, every guard of its done transition answering false.
	through := func(w Way, s *State) {
		for _, next := range s.Choice.Rules {
			follow(w, next, s.Choice.Rules, "")
		}
		if s.Rests() || s.Waits {
			for _, r := range s.Choice.Rules {
				w.Tests = append(slices.Clip(w.Tests), Test{Guard: r.Guard})
			}
			out = append(out, &w)
		}
	}
	follow = func(w Way, r *Rule, chain []*Rule, open string) {
		w.Tests = append([]Test(nil), w.Tests...)
		for _, other := range chain {
			w.Tests = append(w.Tests, chainTests(other, r, open)...)
			if other == r {
				break
			}
		}
		w.Rules = append(append([]*Rule(nil), w.Rules...), r)
		if r.To != nil {
			w.To = r.To
		}
		if r.Kind == Transition && r.To != nil && r.To.Choice != nil && !r.To.parWaits && !(r.History != nil && (r.To.Waits || r.To.Transient)) {
			// (A rule into a history whose default state waits, or is
			// transient, goes on where the variant that fires leads: see
			// resolveWays. One into a parallel state that waits, once its
			// regions settled: see settleEntry.)
			through(w, r.To)
			return
		}
		if r.To == nil && r.Kind != Reject && w.To.Waits && !w.To.parWaits && (w.To.Choice == nil || !slices.Contains(w.To.Choice.Rules, r)) {
			// (Not a stand-in of the state's own eventless rules for a
			// branch that leaves a parallel state from a region, which
			// the parallel state's rule takes; nor a parallel state that
			// waits, whose regions settle first: see settleKept.)
			// A rule that keeps a state that waits: its eventless
			// rules are tested after it.
			through(w, w.To)
			return
		}
		out = append(out, &w)
	}
	base := Way{From: from, Event: c.Event, Timer: timer, To: from}
	if c == from.Choice {
		through(base, from)
		return out
	}
	for ; c != nil; c = c.Fallback {
		for _, r := range c.Rules {
			for _, open := range opens(c.Rules, r) {
				follow(base, r, c.Rules, open)
			}
		}
		if c.Fallback == nil {
			break
		}
		// When no guard of an open chain holds, the event goes on to
		// the chain's fallback: every guard answered false.
		open := opens(c.Rules, nil)
		for _, r := range c.Rules {
			base.Tests = append(slices.Clip(base.Tests), chainTests(r, nil, open[len(open)-1])...)
		}
	}
	return out
}

// Hold is a field of a state that holds a constant.
type Hold struct {
	Field *Field
	Const *Const
}

// holds works out, for every way through a rule that sets constants
// (set:), the fields of the state it ends in that hold one (see
// Way.After).
func (m *Machine) holds() {
	for _, w := range m.Ways {
		if !slices.ContainsFunc(w.Rules, func(r *Rule) bool { return len(r.Consts) > 0 }) {
			continue
		}
		vals, known := m.replay(w)
		if !known {
			continue
		}
		w.After = []Hold{}
		for _, f := range w.To.Fields {
			if c := vals[f.Data]; c != nil {
				w.After = append(w.After, Hold{Field: f, Const: c})
			}
		}
	}
}

// replay follows what way w stores, from a machine made by Restore in
// w.From (its fields zero) whose effects return zero values: it returns
// the storage that holds a constant after the way, and false when some
// value cannot be known this way (a timer's id).
func (m *Machine) replay(w *Way) (map[*Data]*Const, bool) {
	vals := map[*Data]*Const{}
	src := w.From
	for _, r := range w.Rules {
		if r.Kind != Transition {
			continue
		}
		before := maps.Clone(vals)
		if r.Shared() && r.To != nil {
			for d := range vals {
				if !slices.Contains(r.Keeps, d) {
					delete(vals, d)
				}
			}
		}
		for _, st := range r.Stores {
			v := st.Value
			switch {
			case v.Source == FromConst && v.Const != nil:
				vals[st.Data] = v.Const
			case v.Source == FromData && v.Local != "":
				vals[st.Data] = before[v.Data]
			case v.Source == FromData:
				vals[st.Data] = vals[v.Data]
			case v.Source == FromEvent && w.Event == m.TimerFired, v.Source == FromTimer, v.Source == FromConst:
				return nil, false
			default: // the event's field, or an effect's result: zero
				delete(vals, st.Data)
			}
		}
		for _, d := range r.Clears {
			delete(vals, d)
		}
		for _, run := range r.Entries {
			if run.When == nil || run.When.Contains(src) {
				for _, st := range run.Stores {
					delete(vals, st.Data)
				}
			}
		}
		if r.To != nil {
			src = r.To
		}
	}
	return vals, true
}

// besides puts rules beside, of the other regions of the parallel state
// way w's first rule leaves, in w's step: before of them before the rule,
// the rest after it (see Way.beside).
func (w *Way) besides(beside []*Rule, before int) {
	if len(beside) == 0 {
		return
	}
	w.Rules = slices.Concat(beside[:before], w.Rules[:1], beside[before:], w.Rules[1:])
	w.beside, w.lead = beside, before
}

// content returns the rules whose actions way w hands out where it hands
// out rule r's (SCXML 1.0 §3.13: the transitions' content in document
// order, after every exit and before every entry): r, with the rules
// beside it when it is w's lead.
func (w *Way) content(r *Rule) []*Rule {
	if w.beside == nil || w.Rules[w.lead] != r {
		return []*Rule{r}
	}
	return w.Rules[:len(w.beside)+1]
}

// firstTransition returns the first transition of way w, the rules
// beside its lead aside (see Way.beside); nil when it has none.
func (w *Way) firstTransition() *Rule {
	for _, r := range w.Rules {
		if r.Kind == Transition && !slices.Contains(w.beside, r) {
			return r
		}
	}
	return nil
}
