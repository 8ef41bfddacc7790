package diff

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// initial compares where New starts the machine.
func (d *differ) initial() {
	o, n := d.old.Initial, d.new.Initial
	if o == nil || n == nil || d.rename("state", o.Name) == n.Name {
		return
	}
	c := &Change{Subject: "initial state", What: fmt.Sprintf("%s, was %s", n.Name, o.Name), Old: o.Pos, New: n.Pos}
	why := "New starts the machine in " + n.Name
	if n.Transient {
		why += ", a transient state whose rows New takes before it returns"
	}
	c.verdict(Behaviour, Breaks, why)
	d.add(c)
}

// rules compares, for every leaf and event of both revisions, the rules
// that handle the event there, and each state's entry, exit and timer.
func (d *differ) rules() {
	oldStates := map[string]*fsm.State{}
	for _, s := range append(append(slices.Clone(d.old.States), d.old.Composites...), regionStates(d.old)...) {
		oldStates[d.rename("state", s.Name)] = s
	}
	oldEvents := map[string]*fsm.Event{}
	for _, e := range d.old.Events {
		oldEvents[d.rename("event", e.Name)] = e
	}
	for _, ns := range append(append(slices.Clone(d.new.States), d.new.Composites...), regionStates(d.new)...) {
		os := oldStates[ns.Name]
		if os == nil {
			continue
		}
		for _, what := range []string{"entry", "exit"} {
			oh, nh := os.Entry, ns.Entry
			if what == "exit" {
				oh, nh = os.Exit, ns.Exit
			}
			if ow, nw := d.hook(oh), hookText(nh); ow != nw {
				c := &Change{Subject: "state " + ns.Name, What: fmt.Sprintf("%s changed: %s, was %s", what, orNothing(nw), orNothing(ow)), Old: os.Pos, New: ns.Pos}
				c.verdict(Behaviour, Breaks, fmt.Sprintf("%s %s now %s", what2verb(what), ns.Name, orNothing(nw)))
				d.add(c)
			}
		}
		d.stateTimers(os, ns)
		if ns.Composite() {
			continue
		}
		if ns.Choice != nil || os.Choice != nil {
			what := " (its choice)"
			if ns.Waits || os.Waits {
				what = " (its eventless rules)" // tested after each step that leaves the machine in it
			}
			d.cell(ns.Name+what, os.Choice, ns.Choice)
		}
		if ns.Transient || os.Transient {
			// A transient state receives no events: its choice says
			// what it does, in place of a row per event (what made it
			// transient, or no longer, is compared with the states). A
			// final state whose done transition may refuse rests, and
			// takes events: its rows are compared too.
			continue
		}
		if ns.Completion != nil || os.Completion != nil {
			// A parallel state's done transition.
			d.cell(ns.Name+" (done)", os.Completion, ns.Completion)
		}
		for _, ng := range ns.Nested() {
			// A nested parallel state's done transition, a rule of ns.
			var oc *fsm.Cell
			if og := d.nestedOf(os, ng); og != nil {
				oc = og.Completion
			}
			if ng.Completion != nil || oc != nil {
				d.cell(ng.Name+" (done)", oc, ng.Completion)
			}
		}
		for _, ne := range d.new.Events {
			oe := oldEvents[ne.Name]
			if oe == nil || ne.Builtin {
				continue
			}
			d.cell(ns.Name+" × "+ne.Name, cellOf(os, oe), cellOf(ns, ne))
		}
	}
}

func what2verb(what string) string {
	if what == "entry" {
		return "entering"
	}
	return "leaving"
}

// cell compares the rules of a pair, or of a transient state's choice.
func (d *differ) cell(pair string, o, n *fsm.Cell) {
	ow, nw := d.cellText(o), cellText(n)
	if ow == nw {
		return
	}
	c := &Change{Subject: "rule " + pair, What: fmt.Sprintf("now %s, was %s", nw, ow)}
	if o != nil && len(o.Rules) > 0 {
		c.Old = o.Rules[0].Pos
	}
	if n != nil && len(n.Rules) > 0 {
		c.New = n.Rules[0].Pos
	}
	c.verdict(Behaviour, Breaks, "the machine does something else in "+pair)
	deferralChanged(c, pair, o, n)
	d.add(c)
}

// cellOf returns the cell that handles event e in leaf s: its own, or the
// one it shares.
func cellOf(s *fsm.State, e *fsm.Event) *fsm.Cell {
	for _, list := range [][]*fsm.Cell{s.Handles, s.Refuses, s.Inherited} {
		for _, c := range list {
			if c.Event == e && s.Regions != nil && s.Region == nil {
				return leavingFor(c, s) // its own rules
			}
			if c.Event == e {
				return outOfRegion(s, c)
			}
		}
	}
	return nil
}

// ownCell returns the cell that handles event e in leaf s, as cellOf,
// but a parallel state's whole: the rules that leave it too.
func ownCell(s *fsm.State, e *fsm.Event) *fsm.Cell {
	for _, list := range [][]*fsm.Cell{s.Handles, s.Refuses, s.Inherited} {
		for _, c := range list {
			if c.Event == e {
				return c
			}
		}
	}
	return nil
}

// cellText describes what a cell does, in the new revision's names.
func cellText(c *fsm.Cell) string { return (&differ{}).cellText(c) }

// cellText describes what a cell does, with the names of an old revision
// mapped to the new ones.
func (d *differ) cellText(c *fsm.Cell) string {
	if c == nil {
		return "nothing"
	}
	var parts []string
	for _, r := range c.Rules {
		if r.Leaves != nil {
			// A branch that leaves the parallel state in a region's
			// chain: what the parallel state's rule for it does.
			o := *r.Leaves
			o.Guard, o.Else, o.SourceIn = r.Guard, r.Else, nil
			r = &o
		}
		parts = append(parts, d.ruleText(r))
	}
	if f := c.Fallback; f != nil {
		as := `the "*" row`
		if f.Owner != nil {
			as = d.rename("state", f.Owner.Name)
		}
		parts = append(parts, fmt.Sprintf("no guard holds: as %s (%s)", as, d.cellText(f)))
	}
	return strings.Join(parts, "; ")
}

// ruleText describes one rule: its guard, what it does, its effect, the
// constants it sets and where it takes what its with: names, and its
// actions.
func (d *differ) ruleText(r *fsm.Rule) string {
	var b strings.Builder
	switch {
	case r.Guard != nil:
		fmt.Fprintf(&b, "[%s] ", d.rename("guard", r.Guard.Name))
	case r.Else:
		b.WriteString("[else] ")
	}
	switch r.Kind {
	case fsm.Ignore:
		b.WriteString("ignored")
		return b.String()
	case fsm.Reject:
		b.WriteString("rejected")
		if r.Reason != "" && !r.Listed { // a list's reason names the state and event
			fmt.Fprintf(&b, " (%s)", r.Reason)
		}
		return b.String()
	case fsm.Defer:
		b.WriteString("deferred")
		return b.String()
	}
	if r.History != nil {
		b.WriteString("to " + d.rename("state", r.History.Name) + ".history (" + r.History.History.String() + ")")
	} else if r.Target == nil {
		b.WriteString("stays")
	} else {
		b.WriteString("to " + d.rename("state", r.Target.Name))
		if r.Local {
			b.WriteString(" (local)")
		}
	}
	var does []string
	if r.Effect != nil {
		does = append(does, d.rename("effect", r.Effect.Name))
	}
	for _, c := range r.Consts {
		does = append(does, c.String())
	}
	for _, w := range r.With {
		does = append(does, w.String())
	}
	if len(does) > 0 {
		b.WriteString(" {" + strings.Join(does, ", ") + "}")
	}
	var acts []string
	for _, e := range r.Actions {
		acts = append(acts, d.rename("action", e.Action.Name))
	}
	if len(acts) > 0 {
		b.WriteString(" / " + strings.Join(acts, ", "))
	}
	return b.String()
}

// hookText describes an entry or exit, in the new revision's names.
func hookText(h *fsm.Hook) string { return (&differ{}).hook(h) }

func (d *differ) hook(h *fsm.Hook) string {
	if h == nil {
		return ""
	}
	var parts []string
	if h.Effect != nil {
		parts = append(parts, "runs "+d.rename("effect", h.Effect.Name))
	}
	var acts []string
	for _, a := range h.Actions {
		acts = append(acts, d.rename("action", a.Name))
	}
	if len(acts) > 0 {
		parts = append(parts, "emits "+strings.Join(acts, ", "))
	}
	return strings.Join(parts, " and ")
}

// timerText describes a state's timer, in the new revision's names.
func timerText(t *fsm.Timer) string { return (&differ{}).timer(t) }

func (d *differ) timer(t *fsm.Timer) string {
	if t == nil {
		return ""
	}
	delay := t.DelayText
	if t.DelayFunc != nil {
		delay = "the delay " + d.rename("effect", t.DelayFunc.Name) + " computes"
	}
	return "fires after " + delay + ": " + d.cellText(t.Cell)
}

// delayChanged says, when the delay of a state's timer changed, what
// becomes of the machines saved while it ran: the deadline is saved, and
// loads as it was, unless Load is told to re-arm the timer.
func delayChanged(o, n *fsm.Timer) string {
	if o == nil || n == nil || delayText(o) == delayText(n) {
		return ""
	}
	in := "in " + o.State.Name
	if o.State.Composite() {
		in = "in a state of " + o.State.Name
	}
	which := "the timer"
	if n.ID != "" {
		which = "timer " + n.ID
	}
	was := o.DelayText + " after the timer started"
	if o.DelayFunc != nil {
		was = "the delay " + o.DelayFunc.Name + " computed after the timer started"
	}
	now := n.DelayText + " after the timer started"
	if n.DelayFunc != nil {
		now = fmt.Sprintf("the time it started plus the delay %s computes from the state's fields when the machine is loaded (what that is, fsmgen diff cannot know: %s is code)", n.DelayFunc.Name, n.DelayFunc.Name)
	}
	return fmt.Sprintf("a machine saved %s with %s running loads with the deadline it saved, %s; LoadWith(c, data, LoadOptions{Rearm: true}) moves it to %s", in, which, was, now)
}

// delayText describes a timer's delay: the duration, or the effect that
// computes it.
func delayText(t *fsm.Timer) string {
	if t.DelayFunc != nil {
		return "effect " + t.DelayFunc.Name
	}
	return t.DelayText
}

// stateTimers compares the timers of a state, matched by their ids: a
// timer changed, added or removed changes what the state does.
func (d *differ) stateTimers(os, ns *fsm.State) {
	byID := func(list []*fsm.Timer, id string) *fsm.Timer {
		for _, t := range list {
			if t.ID == id {
				return t
			}
		}
		return nil
	}
	var ids []string
	for _, t := range ns.Timers {
		ids = append(ids, t.ID)
	}
	for _, t := range os.Timers {
		if byID(ns.Timers, t.ID) == nil {
			ids = append(ids, t.ID)
		}
	}
	for _, id := range ids {
		o, n := byID(os.Timers, id), byID(ns.Timers, id)
		ow, nw := d.timer(o), timerText(n)
		if ow == nw {
			continue
		}
		what, whose := "timer", "the timer of "+ns.Name
		if id != "" {
			what, whose = "timer "+id, "timer "+id+" of "+ns.Name
		}
		var c *Change
		switch {
		case o == nil && len(os.Timers) > 0 || n == nil && len(ns.Timers) > 0:
			verb := "added"
			if n == nil {
				verb = "removed"
			}
			c = &Change{Subject: "state " + ns.Name, What: fmt.Sprintf("%s %s: %s", verb, what, orNothing(ow+nw)), Old: os.Pos, New: ns.Pos}
			if n == nil {
				c.verdict(Behaviour, Breaks, fmt.Sprintf("%s no longer fires: it %s", whose, ow))
			} else {
				c.verdict(Behaviour, Breaks, fmt.Sprintf("%s now %s", whose, nw))
			}
		default:
			c = &Change{Subject: "state " + ns.Name, What: fmt.Sprintf("%s changed: %s, was %s", what, orNothing(nw), orNothing(ow)), Old: os.Pos, New: ns.Pos}
			c.verdict(Behaviour, Breaks, fmt.Sprintf("%s now %s", whose, orNothing(nw)))
		}
		if why := delayChanged(o, n); why != "" {
			c.verdict(SavedStates, Review, why)
		}
		d.add(c)
	}
}
