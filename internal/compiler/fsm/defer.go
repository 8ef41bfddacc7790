package fsm

import (
	"slices"
	"strconv"
	"strings"
)

// DefaultDeferLimit is how many deferred events a machine holds at most
// when its spec does not say (defer_limit).
const DefaultDeferLimit = 64

// maxDeferLimit bounds defer_limit: a queue longer than this is a design
// to review, not a deferral.
const maxDeferLimit = 1 << 16

// Deferral is a machine's queue of deferred events (UML 2.5.1 §14.2.3.4, a
// State's deferrableTriggers): an event a state defers is kept, a copy in
// arrival order, and handled once the machine is in a state that does not
// defer it. Each state says so with its defer list ("defer: [E]"), which
// the states inside it take as they take an ignore list: the innermost
// state with a rule for the event decides, so a transition of a state
// inside a deferring one overrides the deferral, and a deferral of a state
// inside one with a transition overrides the transition. In a machine
// with parallel states, the states outside them and a parallel state as a
// whole defer (the parallel state only the events its regions leave to
// it: a region's rule takes precedence), and so do the states inside
// regions (see regdefer.go).
type Deferral struct {
	// Limit is how many events the queue holds at most; HandleEvent
	// refuses one more.
	Limit int
	// Events are the events some state defers, in event order.
	Events []*Event
	// States are the leaves that defer events, in state order: the
	// machine's, then the regions' leaves.
	States []Defers
	// stuck are the deferrals of a region's build that no state of the
	// region frees (see regionDeferral).
	stuck []stuckDeferral
}

// Defers are the events one leaf defers, by a list of its own or of a
// composite state around it, in event order; Rules[i] defers Events[i].
type Defers struct {
	State  *State
	Events []*Event
	Rules  []*Rule
}

// Defers reports whether leaf s defers e by a rule of its own or of a
// composite state around it. For a parallel state, that rule holds e only
// in the configurations whose regions' leaves leave e to it: see
// Machine.ConfigDeferred.
func (d *Deferral) Defers(s *State, e *Event) bool {
	for _, ds := range d.States {
		if ds.State == s {
			for _, de := range ds.Events {
				if de == e {
					return true
				}
			}
		}
	}
	return false
}

// cellFor returns the cell that resolves e in leaf s: its own, or the one
// it takes from a state around it or a "*" row; nil when none does.
func cellFor(s *State, e *Event) *Cell {
	for _, cs := range [][]*Cell{s.Handles, s.Refuses, s.Inherited} {
		for _, c := range cs {
			if c.Event == e {
				return c
			}
		}
	}
	return nil
}

// deferral lays out the machine's queue of deferred events and checks it:
// a terminal state defers nothing (it is never left), every state that
// defers an event can reach one that does not, some state takes a
// transition on each deferred event, and no chain of guards without else
// falls back to a deferral (the event would be deferred or not by the
// guards, which recall could not tell).
func (b *builder) deferral() {
	m := b.m
	if b.par.inRegion() {
		b.regionDeferral()
		return
	}
	d := &Deferral{Limit: DefaultDeferLimit}
	first := map[*Event]*Rule{} // the first rule that defers each event, for messages
	for _, s := range m.States {
		if s.Transient {
			continue
		}
		ds := Defers{State: s}
		for _, e := range m.Events {
			c := cellFor(s, e)
			if c == nil || len(c.Rules) != 1 || c.Rules[0].Kind != Defer {
				continue
			}
			r := c.Rules[0]
			if b.parallel(s) && !b.parallelDefers(s, e) {
				continue
			}
			if s.Terminal {
				b.errorf(r.Pos, "terminal state %s defers %s, which it would keep forever: ignore or reject %s in %s instead", s.Name, e.Name, e.Name, s.Name)
				continue
			}
			ds.Events, ds.Rules = append(ds.Events, e), append(ds.Rules, r)
			if first[e] == nil {
				first[e] = r
				d.Events = append(d.Events, e)
			}
		}
		if len(ds.Events) > 0 {
			d.States = append(d.States, ds)
		}
	}
	regions := b.par != nil && b.par.regionDefers
	b.deferLimit(d, len(d.States) > 0 || regions)
	if len(d.States) == 0 && !regions {
		return
	}
	slices.SortFunc(d.Events, func(a, c *Event) int { return a.Index - c.Index })
	b.deferChecks(d, first)
	m.Deferral = d
}

// deferLimit reads defer_limit into d.
func (b *builder) deferLimit(d *Deferral, defers bool) {
	l := b.f.DeferLimit
	if !l.Set {
		return
	}
	if !defers {
		b.errorf(l.Pos, "defer_limit is set, and no state defers an event: remove it, or list events under a state's defer")
		return
	}
	n, err := strconv.Atoi(strings.TrimSpace(l.Value))
	if err != nil || n < 1 || n > maxDeferLimit {
		b.errorf(l.Pos, "defer_limit %q is not a whole number from 1 to %d: write how many deferred events the machine holds at most", l.Value, maxDeferLimit)
		return
	}
	d.Limit = n
}

// deferChecks reports the deferrals that could keep their event forever,
// the deferred events nothing takes, and the guards that fall back to a
// deferral.
func (b *builder) deferChecks(d *Deferral, first map[*Event]*Rule) {
	m := b.m
	succ := b.successors()
	reported := map[*Rule]bool{}
	for _, ds := range d.States {
		reach := reachable(ds.State, succ)
		for i, e := range ds.Events {
			r := ds.Rules[i]
			if reported[r] {
				continue
			}
			free := b.frees(d, ds.State, e) || slices.ContainsFunc(reach, func(t *State) bool { return b.frees(d, t, e) })
			if !free {
				reported[r] = true
				b.errorf(r.Pos, "%s defers %s, and every state it can reach defers %s too: the event would wait forever; add a way to a state that takes %s, or ignore it", ds.State.Name, e.Name, e.Name, e.Name)
			}
		}
	}
	for _, e := range d.Events {
		if !b.taken(e) {
			r := first[e]
			b.errorf(r.Pos, "%s is deferred, and no state has a transition for it: add a transition on %s to the state that should take it, or ignore it instead of deferring it", e.Name, e.Name)
		}
	}
	for _, s := range m.States {
		for _, c := range s.Handles {
			b.deferFallback(c)
		}
	}
	for _, c := range m.Shared {
		b.deferFallback(c)
	}
}

// frees reports whether the machine, in leaf t, may take e: t does not
// defer it, or t is a parallel state that defers it only in the
// configurations whose leaves leave it to t (a state of one of its
// regions has a rule for e, which its regions can reach).
func (b *builder) frees(d *Deferral, t *State, e *Event) bool {
	return !t.Transient && (!d.Defers(t, e) || b.par != nil && b.par.regionRule[t.Name][e.Name] != "")
}

// deferFallback reports a chain of guards without else that falls back
// to a deferral.
func (b *builder) deferFallback(c *Cell) {
	f := c.Fallback
	if f == nil || len(f.Rules) != 1 || f.Rules[0].Kind != Defer {
		return
	}
	b.errorf(c.Rules[0].Pos, "guards of %s end without an else branch and fall back to the deferral of %s at %s: a deferred event is recalled when a state no longer defers it, whatever the guards say; add \"- else: true\" (\"defer\" is not a branch)", cellName(c), f.Rules[0].From.Name, f.Rules[0].Pos)
}

// cellName names a cell's state (or owner) and event for messages.
func cellName(c *Cell) string {
	s := c.State
	if s == nil {
		s = c.Owner
	}
	return pairName(s, c.Event)
}

// taken reports whether some state takes a transition on e, a state
// inside a region included.
func (b *builder) taken(e *Event) bool {
	for _, r := range b.m.Rules {
		if r.Event == e && r.Kind == Transition {
			return true
		}
	}
	return b.par.uses("event " + e.Name)
}

// reachable returns the states reachable from s in one step or more.
func reachable(s *State, succ map[*State][]*State) []*State {
	seen := map[*State]bool{}
	var out []*State
	queue := []*State{s}
	for len(queue) > 0 {
		q := queue[0]
		queue = queue[1:]
		for _, t := range succ[q] {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
				queue = append(queue, t)
			}
		}
	}
	return out
}

// OwnDeferrals returns the events state s (a leaf, a composite state, or
// a parallel state nested as a region) defers by its own defer list, in
// event order; the states inside a composite state defer them too.
func (m *Machine) OwnDeferrals(s *State) []*Event {
	var out []*Event
	for _, rules := range [][]*Rule{m.Rules, m.RegionRules()} { // AllRules without its copy: this runs for each state
		for _, r := range rules {
			if r.Kind == Defer && r.Owner() == s {
				out = append(out, r.Event)
			}
		}
	}
	slices.SortFunc(out, func(a, c *Event) int { return a.Index - c.Index })
	return out
}

// deferredShape is what a saved machine may hold of deferred events, for
// its shape: each state's deferred events with their fields. A machine
// that defers nothing adds nothing.
func (m *Machine) deferredShape() []string {
	if m.Deferral == nil {
		return nil
	}
	var lines []string
	for _, ds := range m.Deferral.States {
		for _, e := range ds.Events {
			var fields []string
			for _, f := range e.Fields {
				fields = append(fields, f.JSONName+" "+f.GoType.Canonical())
			}
			slices.Sort(fields)
			lines = append(lines, "deferred "+ds.State.Snake+" "+e.Snake+" {"+strings.Join(fields, "; ")+"}")
		}
	}
	return lines
}

// parallelDefers reports whether parallel state s, a leaf of the machine
// around its regions, defers e by a rule of its own or of a composite
// state around it. The regions are offered e first (a region's rule
// preempts the parallel state's, see Parallel states in docs/spec.md):
// when some region takes e in every state, e never reaches the deferral,
// and s does not defer it (UML 2.5.1 §14.2.3.4, deferred events: a
// deferral does not hold an event that a transition of the configuration
// takes). When a region has a rule for e in some of its states only, s
// defers e in the configurations whose leaves leave it to s: see
// Deferral.Holds, which decides it at run time.
func (b *builder) parallelDefers(s *State, e *Event) bool {
	return !b.par.covers(s, e)
}

// regionRules records, for each parallel state of the machine, the events
// a state of one of its regions (or of the regions of a parallel state
// inside them) has a rule for, not a deferral (hook.regionRule,
// naming the first such state): a deferral of the parallel state does
// not hold them while that state is active, and the deferral's checks
// count the parallel state as one that frees them.
func regionRules(regions []*specRegion, hook *parHook) {
	hook.regionRule = map[string]map[string]string{}
	for _, r := range regions {
		par := r.top.Name.Value
		if hook.regionRule[par] == nil {
			hook.regionRule[par] = map[string]string{}
		}
		for _, s := range r.build.States {
			if s.Transient {
				continue
			}
			for _, e := range r.build.Events {
				if c := s.Cell(e); c != nil && !c.Out() && !deferCell(c) && hook.regionRule[par][e.Name] == "" {
					hook.regionRule[par][e.Name] = s.Name
				}
			}
		}
	}
}
