package export

import (
	"cmp"
	"slices"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// Kind is the kind of a node of the chart, as XState and SCXML know
// them: atomic, compound, parallel and final states and history
// pseudostates, each emitter saying how it writes them or refusing them.
type Kind int

// The kinds of nodes.
const (
	Atomic   Kind = iota // a leaf
	Compound             // a composite state: one active child at a time
	Final                // a terminal leaf at the top level that does nothing with any event, a final child whose composite state has a done transition, or a region's final leaf
	History              // a composite state's history pseudostate
	Parallel             // a parallel state: its children are its regions, all active at once
)

// historyKey is the name of a history node among its composite state's
// children.
const historyKey = "history"

// chart is the machine as a tree of nodes, the form both targets share.
type chart struct {
	m    *fsm.Machine
	root *node
	// byState finds the node of a state.
	byState map[*fsm.State]*node
}

// node is a state of the chart; the root stands for the machine, its
// triggers for the "*" rows.
type node struct {
	state *fsm.State // nil for the root
	name  string
	// path are the names from the top level down to the node, the root
	// excluded.
	path     []string
	kind     Kind
	children []*node
	initial  *node // a compound node's initial child; nil for a parallel node, whose regions are all entered
	// entry and exit are what the state runs: its effect, then its actions.
	entry, exit []call
	timers      []*fsm.Timer
	triggers    []*trigger
	// history is, for a History node, what it remembers.
	history fsm.History
}

// call is a named effect or action of a hook or a transition.
type call struct {
	name   string
	effect bool
}

// trigger is what a node does with one event, one of its timers, or (for
// a transient state) no event: the branches tried in order.
type trigger struct {
	event    *fsm.Event // nil for a timer and for eventless rules
	timer    *fsm.Timer
	branches []*fsm.Rule
	// done is set for a composite state's done transition (XState's
	// onDone, SCXML's done.state.ID).
	done bool
}

// build makes the chart of m.
func build(m *fsm.Machine) *chart {
	c := &chart{m: m, root: &node{name: m.Name}, byState: map[*fsm.State]*node{}}
	var all []*fsm.State
	all = append(append(all, m.States...), m.Composites...)
	slices.SortStableFunc(all, func(a, b *fsm.State) int {
		return cmp.Or(cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Col, b.Pos.Col))
	})
	for _, s := range all {
		if s.Parent == nil {
			c.root.children = append(c.root.children, c.add(s, nil))
		}
	}
	c.root.initial = c.byState[m.Initial.Path()[0]]
	// around is, for each composite state with eventless rows, the first
	// state inside it that takes them (see fsm.Rule.Around).
	around := map[*fsm.State]*fsm.State{}
	// The machine's rules, then its regions' (each region's rules are
	// the rules of its states, which the chart holds like any others).
	for _, r := range m.AllRules() {
		if r == m.Stale || r.Event != nil && r.Event == m.TimerFired && r.Timer == nil {
			continue // the runtime's own bookkeeping of stale timers
		}
		if r.Resume != nil {
			continue // the Go machine's resolution of a rule into a history: the target's history node does it
		}
		n := c.root
		if r.From != nil {
			n = c.byState[r.From]
		}
		if r.Done != nil {
			// The done transition is the composite state's; each final
			// child carries a copy of it in the Go machine. A parallel
			// state's is its own (its Completion), taken once every
			// region is in a final state.
			// (One that leaves a parallel state from inside a region
			// is the parallel state's rule, its final child its Source.)
			from := r.From
			if r.Source != nil {
				from = r.Source
			}
			if from != r.Done && from != firstFinal(r.Done) {
				continue
			}
			n = c.byState[r.Done]
		}
		if r.Group != nil {
			// A nested parallel state's list entry, which one of its
			// regions holds: the state's own.
			n = c.byState[r.Group]
		}
		if r.Source != nil && r.Done == nil {
			// A rule that leaves a parallel state from inside one of its
			// regions, which the parallel state holds: its source's.
			n = c.byState[r.Source]
		}
		if r.Around != nil {
			// A composite state's eventless row, which each state inside
			// it that waits holds a copy of in the Go machine: the
			// composite state's own (both targets try an atomic state's
			// eventless transitions before its ancestors', SCXML 1.0
			// §3.13), written once.
			// (A branch that leaves a parallel state from inside a
			// region is the parallel state's rule, its Source the state
			// that takes it.)
			from := r.From
			if r.Source != nil {
				from = r.Source
			}
			if around[r.Around] == nil {
				around[r.Around] = from
			}
			if from != around[r.Around] {
				continue
			}
			n = c.byState[r.Around]
		}
		done := r.Done != nil
		i := slices.IndexFunc(n.triggers, func(t *trigger) bool {
			return t.done == done && t.timer == r.Timer && (r.Timer != nil || t.event == r.Event)
		})
		if i < 0 {
			t := &trigger{timer: r.Timer, done: done}
			if r.Timer == nil {
				t.event = r.Event
			}
			n.triggers = append(n.triggers, t)
			i = len(n.triggers) - 1
		}
		n.triggers[i].branches = append(n.triggers[i].branches, r)
	}
	for _, n := range c.nodes() {
		for _, t := range n.triggers {
			if slices.ContainsFunc(t.branches, func(r *fsm.Rule) bool { return r.Source != nil }) && slices.ContainsFunc(t.branches, func(r *fsm.Rule) bool { return r.Source == nil }) {
				// A row of a state inside a region that leaves its
				// parallel state by some branches and stays in the
				// region by others: the parallel state's rules came
				// first, the region's after; the branches in the row's
				// order (SCXML 1.0 §3.13: document order).
				slices.SortStableFunc(t.branches, func(a, b *fsm.Rule) int {
					return cmp.Or(cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Col, b.Pos.Col))
				})
			}
		}
	}
	for _, t := range m.Timers {
		if t.Group != nil {
			// A nested parallel state's timer, which the own state of
			// one of its regions runs in the Go machine: the state's own.
			from, to := c.byState[t.State], c.byState[t.Group]
			from.timers = slices.DeleteFunc(slices.Clone(from.timers), func(o *fsm.Timer) bool { return o == t })
			to.timers = append(to.timers, t)
		}
	}
	for _, n := range c.nodes() {
		if n.kind != History && n.kind != Parallel && (final(n) || n.state.Completes != nil || regionFinal(n.state)) {
			n.kind = Final
		}
	}
	return c
}

// firstFinal returns the first final child of s that completes it.
func firstFinal(s *fsm.State) *fsm.State {
	for _, ch := range s.Children {
		if ch.Completes == s {
			return ch
		}
	}
	return nil
}

// regionFinal reports whether s is a final leaf of a region (final: true
// right inside it): a state the region rests in, written as a final
// state, which takes no transitions of its own (the compiler allows it
// none) and with whose entry the targets raise the parallel state's done
// once every region is in one (SCXML 1.0 §3.7, §3.13 enterStates).
func regionFinal(s *fsm.State) bool {
	return s.Final && s.Region != nil && slices.Contains(s.Region.Finals, s)
}

// add makes the node of s and its descendants.
func (c *chart) add(s *fsm.State, parent *node) *node {
	n := &node{state: s, name: s.Name, kind: Atomic, timers: s.Timers}
	if parent != nil {
		n.path = slices.Clone(parent.path)
	}
	n.path = append(n.path, s.Name)
	n.entry, n.exit = hookCalls(s.Entry), hookCalls(s.Exit)
	c.byState[s] = n
	if s.Regions != nil {
		// A parallel state is a leaf of the machine around it, and its
		// regions' roots are its children, in document order.
		n.kind = Parallel
		for _, reg := range s.Regions {
			// A region's own state, or a parallel state nested as a region
			// (XState's and SCXML's nested parallel node, its regions its
			// children), added with its first region.
			if ch := s.Child(reg); c.byState[ch] == nil {
				n.children = append(n.children, c.add(ch, n))
			}
		}
		if s.History != fsm.HistoryNone {
			// Its deep history, after its regions (XState and SCXML
			// allow a history among a parallel state's children).
			n.children = append(n.children, &node{state: s, name: historyKey, kind: History, history: s.History, path: append(slices.Clone(n.path), historyKey)})
		}
		return n
	}
	if s.Composite() {
		n.kind = Compound
		for _, ch := range s.Children {
			n.children = append(n.children, c.add(ch, n))
		}
		n.initial = c.byState[s.InitialChild]
		if s.History != fsm.HistoryNone {
			h := &node{state: s, name: historyKey, kind: History, history: s.History, path: append(slices.Clone(n.path), historyKey)}
			n.children = append(n.children, h)
		}
	}
	return n
}

// historyNode returns the history node of composite state s.
func (c *chart) historyNode(s *fsm.State) *node {
	for _, ch := range c.byState[s].children {
		if ch.kind == History {
			return ch
		}
	}
	return nil
}

// hookCalls lists what an entry or exit runs: its effect, then its
// actions.
func hookCalls(h *fsm.Hook) []call {
	if h == nil {
		return nil
	}
	var out []call
	if h.Effect != nil {
		out = append(out, call{name: h.Effect.Name, effect: true})
	}
	for _, a := range h.Actions {
		if !a.Builtin {
			out = append(out, call{name: a.Name})
		}
	}
	return out
}

// ruleCalls lists what a rule runs: its effect, then its actions (the
// timers' StartTimer and CancelTimer are the targets' own business).
func ruleCalls(r *fsm.Rule) []call {
	var out []call
	if r.Effect != nil {
		out = append(out, call{name: r.Effect.Name, effect: true})
	}
	for _, e := range r.Actions {
		if !e.Action.Builtin {
			out = append(out, call{name: e.Action.Name})
		}
	}
	return out
}

// final reports whether a node is written as a final state: a terminal
// leaf at the top level whose every rule ignores or rejects its event and
// that runs no timer. Both targets stop the machine in a top-level final
// state, and a final state takes no transitions, so a terminal state that
// still does something with an event stays an atomic state.
func final(n *node) bool {
	s := n.state
	if !s.Terminal || s.Composite() || s.Parent != nil || len(s.Timers) > 0 {
		return false
	}
	cells := slices.Concat(s.Handles, s.Refuses, s.Inherited)
	for i := 0; i < len(cells); i++ {
		c := cells[i]
		for _, r := range c.Rules {
			if r.Kind == fsm.Transition {
				return false
			}
		}
		if c.Fallback != nil {
			cells = append(cells, c.Fallback)
		}
	}
	return true
}

// reenters reports whether a rule that moves leaves and enters its source
// again although its target is inside it: an external transition from a
// state to itself or into it (XState's reenter: true; SCXML's default).
//
// A rule from outside a parallel state into a state inside one of its
// regions goes into the parallel state (fsm.Rule.EntersInside).
func reenters(r *fsm.Rule) bool {
	t := r.Target
	if r.EntersInside() {
		t = r.To
	}
	if r.Done != nil {
		return t != nil && !r.Local && r.Done.Contains(t)
	}
	return r.From != nil && t != nil && !r.Local && r.From.Contains(t)
}

// nodes lists the chart's nodes below the root, depth first in spec
// order.
func (c *chart) nodes() []*node {
	var out []*node
	var walk func(*node)
	walk = func(n *node) {
		for _, ch := range n.children {
			out = append(out, ch)
			walk(ch)
		}
	}
	walk(c.root)
	return out
}
