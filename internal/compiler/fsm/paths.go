package fsm

import (
	"slices"
	"strings"
)

// Path is a witness of one rule: the shortest sequence of events that,
// sent to a machine made by New, fires the rule, each step with the
// answers its guards must give. Taking branch k of a guarded rule means
// the guards before it answer false and guard k true.
type Path struct {
	Rule *Rule
	// Steps are the events sent, in order; the last fires Rule (as its
	// last rule, or before it, through transient states). None for a
	// rule of a parallel state that fires only in configurations New
	// never leads to, but Restore accepts (see restoredOnly).
	Steps []*Way
}

// node is a state of the search: the leaf the machine rests in, and which
// of the timers of that leaf's states are spent (fired by a rule that kept
// their state: they fire no more until it is entered again).
type node struct {
	leaf  *State
	spent uint64 // bit i: timer i is spent; only timers below 64 are tracked
	// hist is what the machine remembers of the composite states with a
	// history (histKey of mem).
	hist string
}

// item is a node of the search with how it was reached.
type item struct {
	n     node
	mem   []*State // the memory of the histories, as hist encodes it
	steps []*Way
}

// paths finds, breadth first from the initial state, the shortest path to
// every rule. Guards answer as each branch needs, so a rule is out of
// reach only when no state that takes it is; graph reports those states.
func (b *builder) paths() {
	m := b.m
	if m.Initial == nil {
		return
	}
	found := make([]*Path, len(m.Rules))
	mem0 := make([]*State, len(m.Histories))
	start := node{leaf: m.Initial, hist: histKey(mem0)}
	seen := map[node]bool{start: true}
	queue := []item{{n: start, mem: mem0}}
	// A region's start that is transient (its initial state, see
	// regtrans.go, or a state a rule from outside the parallel state
	// enters): the region starts where its eventless rules lead.
	// New's own step (resolved says so) may leave a composite state with
	// a history, which remembers.
	settled := func(s *State, resolved bool) {
		for _, w0 := range expand(s, s.Choice) {
			ws, mems := []*Way{w0}, [][]*State{mem0}
			if resolved && len(m.Histories) > 0 && len(w0.Rules) > 0 {
				ws, mems = resolveWays(w0, mem0)
			}
			for i, w := range ws {
				for _, r := range w.Rules {
					if found[r.Index] == nil {
						found[r.Index] = &Path{Rule: r, Steps: []*Way{w}}
					}
				}
				if n := (node{leaf: w.To, hist: histKey(mems[i])}); !seen[n] {
					seen[n] = true
					queue = append(queue, item{n: n, mem: mems[i], steps: []*Way{w}})
				}
			}
		}
	}
	if m.Initial.Transient && m.Initial.Choice != nil || m.Initial.Waits {
		// New tests the eventless rules of an initial state that waits:
		// every path starts with that step (a way without an event).
		queue = queue[:0]
		delete(seen, start)
		settled(m.Initial, m.Initial.Waits || !b.par.inRegion())
	}
	for _, s := range b.enteredStarts() {
		// A state a rule from outside the parallel state enters.
		if s.Transient && s.Choice != nil {
			settled(s, false)
			continue
		}
		if n := (node{leaf: s, hist: histKey(mem0)}); !seen[n] {
			seen[n] = true
			queue = append(queue, item{n: n, mem: mem0})
		}
	}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		for _, c := range b.edges(it.n) {
			if len(m.Histories) == 0 && c.known(found, seen, it.n) {
				continue // nothing new down this cell: skip building its ways
			}
			var ways []*Way
			var mems [][]*State
			for _, w := range c.ways(it.n.leaf) {
				ws, ms := resolveWays(w, it.mem)
				ways, mems = append(ways, ws...), append(mems, ms...)
			}
			for i, w := range ways {
				mem := mems[i]
				var steps []*Way // the path to w, built only if something needs it
				path := func() []*Way {
					if steps == nil {
						steps = append(slices.Clip(it.steps), w)
					}
					return steps
				}
				for _, r := range w.Rules {
					if found[r.Index] == nil {
						found[r.Index] = &Path{Rule: r, Steps: path()}
					}
				}
				next := node{leaf: w.To, spent: spend(it.n.spent, w), hist: histKey(mem)}
				if !seen[next] {
					seen[next] = true
					queue = append(queue, item{n: next, mem: mem, steps: path()})
				}
			}
		}
	}
	for _, p := range found {
		if p != nil {
			m.Paths = append(m.Paths, p)
		}
	}
	if b.par != nil && !b.par.inRegion() {
		// The machine around parallel states: the paths are found again
		// with the regions' rules, which parallelPaths reports (a
		// parallel state's done transition leads where the regions do).
		return
	}
	for _, r := range m.Rules {
		if r.Resume != nil && b.par.inRegion() {
			// A variant into a history inside a region may need the
			// parallel state left and entered again, which the region's
			// build does not see: the machine's paths tell (parallelPaths).
			continue
		}
		if r.Done != nil && r.Done == r.From {
			// The done transition of a parallel state inside the region,
			// taken once its regions end, which the region's build does
			// not see: the machine's paths tell (parallelPaths).
			continue
		}
		if found[r.Index] == nil && !b.defaultNever(r, found) && !b.variantNever(r, found) {
			b.errorf(r.Pos, "rule %s can never fire: no state that takes it can be reached from the initial state %s", r.Label, m.Initial.Name)
		}
	}
}

// defaultNever reports, as an error of b, rule r into a history (the
// default, into the history's state's initial state) when it fires on no
// path though a variant of it does (found, by rule index): whenever the
// machine takes it, the history remembers a state, so the default is never
// entered. The rule is the row itself, so the message says how to make the
// default reachable rather than to remove it.
func (b *builder) defaultNever(r *Rule, found []*Path) bool {
	if r.History == nil || r.Resume != nil || !slices.ContainsFunc(r.Variants, func(v *Rule) bool { return found[v.Index] != nil }) {
		return false
	}
	h := r.History
	b.errorf(r.Pos, "rule %s can never fire into its default: whenever the machine takes it, the history of %s remembers a state (the machine enters %s only in ways that leave it remembering one), so it never enters %s, its initial state; enter %s once some other way first (a rule into %s), or lead the rule to a state of %s instead of its history", r.Label, h.Name, h.Name, r.To.Name, h.Name, h.Name, h.Name)
	return true
}

// variantNever reports, as an error of b, variant r of a rule into a
// history when it fires on no path though the rule does, by its default
// or another variant (found, by rule index): the machine takes the rule,
// but never while the history remembers r's state. The variant is no row
// of the spec, so the message names what the history does remember
// there rather than saying to remove it.
func (b *builder) variantNever(r *Rule, found []*Path) bool {
	if r.Resume == nil {
		return false
	}
	all := b.m.AllRules()
	i := slices.IndexFunc(all, func(d *Rule) bool { return slices.Contains(d.Variants, r) })
	if i < 0 {
		return false
	}
	d := all[i]
	h := d.History
	var resumes []string
	if found[d.Index] != nil {
		def := d.To // the default: the leaf a deep history resumes
		if h.History == HistoryShallow {
			def = h.InitialChild
		}
		resumes = append(resumes, def.Name+" (or nothing yet)")
	}
	for _, v := range d.Variants {
		if found[v.Index] != nil {
			resumes = append(resumes, v.Resume.Name)
		}
	}
	if len(resumes) == 0 {
		return false
	}
	b.errorf(r.Pos, "rule %s can never fire: whenever the machine takes %s, the history of %s remembers %s, never %s (the machine does not take the rule after leaving %s from %s); lead the rule to the state it does resume instead of the history, or let the machine reach the rule after leaving %s from %s", r.Label, d.Label, h.Name, joinOr(resumes), r.Resume.Name, h.Name, r.Resume.Name, h.Name, r.Resume.Name)
	return true
}

// edge is a cell a node can take: an event's, a running timer's, or the
// TimerFired of no running timer (stale).
type edge struct {
	cell  *Cell
	stale *Way
}

// ways returns the ways through the edge's cell from state from.
func (e edge) ways(from *State) []*Way {
	if e.stale != nil {
		return []*Way{e.stale}
	}
	return expand(from, e.cell)
}

// known reports whether taking the edge from node n can find nothing new:
// every rule of its cell is found, none leads into a transient state, and
// each leads to a node already seen. Wide machines have many such cells.
func (e edge) known(found []*Path, seen map[node]bool, n node) bool {
	if e.stale != nil {
		return found[e.stale.Rules[0].Index] != nil
	}
	if e.cell.Fallback != nil {
		return false // its ways go on into the fallback's rules
	}
	for _, r := range e.cell.Rules {
		if found[r.Index] == nil || r.Spends != nil || len(r.Entries) > 0 {
			return false
		}
		if r.Kind != Reject && r.To == nil && n.leaf.Waits {
			return false // its ways go on into the state's eventless rules
		}
		if r.Kind != Transition || r.To == nil {
			continue
		}
		if r.To.Choice != nil || !seen[node{leaf: r.To, spent: n.spent & timersOf(r.To)}] {
			return false
		}
	}
	return true
}

// timersOf returns the bits of the timers of s and its ancestors.
func timersOf(s *State) uint64 {
	var bits uint64
	for a := s; a != nil; a = a.Parent {
		for _, t := range a.Timers {
			if t.Index < 64 {
				bits |= 1 << t.Index
			}
		}
	}
	return bits
}

// edges returns the cells out of a node: every event's in event order (the
// leaf's own rule, or the one it takes from an ancestor or a "*" row),
// then the leaf's running timers, outermost first, then a TimerFired of no
// running timer. The slice is the builder's, reused by the next call: the
// searches read it before they ask for the next node's (a node of the
// 600 × 600 spec has 600 edges, and the search visits every state).
func (b *builder) edges(n node) []edge {
	m := b.m
	s := n.leaf
	out := b.edgeBuf[:0]
	for _, cells := range [][]*Cell{s.Handles, s.Refuses, s.Inherited} {
		for _, c := range cells {
			out = append(out, edge{cell: c})
		}
	}
	slices.SortFunc(out, func(x, y edge) int { return x.cell.Event.Index - y.cell.Event.Index })
	if s.Completion != nil && b.par.inRegion() {
		// A parallel state inside a region's build: its done transition
		// leads on, once its regions end (the machine's paths say when).
		out = append(out, edge{cell: s.Completion})
	}
	for _, a := range s.Path() {
		for _, t := range a.Timers {
			if !(t.Index < 64 && n.spent&(1<<t.Index) != 0) {
				out = append(out, edge{cell: t.Cell})
			}
		}
	}
	if b.par != nil {
		for _, t := range b.par.leftTimers {
			if t.State == s {
				// A timer inside a region that leaves s (see
				// parleave.go): the machine's paths say when it runs.
				out = append(out, edge{cell: t.Cell})
			}
		}
	}
	if m.Stale != nil {
		out = append(out, edge{stale: &Way{From: s, Event: m.TimerFired, Rules: []*Rule{m.Stale}, To: s}})
	}
	b.edgeBuf = out
	return out
}

// spend returns the spent timers after way w: those its rules spend, less
// those of the states it enters, which start again; only the timers of
// the states of the leaf it ends in are kept.
func spend(spent uint64, w *Way) uint64 {
	for _, r := range w.Rules {
		for _, run := range r.Entries {
			for _, t := range run.State.Timers {
				if t.Index < 64 {
					spent &^= 1 << t.Index
				}
			}
		}
		if t := r.Spends; t != nil && t.Index < 64 {
			spent |= 1 << t.Index
		}
	}
	return spent & timersOf(w.To)
}

// PathStep is one step of a path as `fsmgen paths -json` prints it.
type PathStep struct {
	From  string `json:"from"`
	Event string `json:"event"`
	// Timer names the state whose timer fires, for a TimerFired.
	Timer  string       `json:"timer,omitempty"`
	Guards []GuardValue `json:"guards,omitempty"`
	Rules  []int        `json:"rules"`
	To     string       `json:"to"`
}

// GuardValue is a guard's answer on a step.
type GuardValue struct {
	Guard string `json:"guard"`
	Holds bool   `json:"holds"`
}

// PathRecord is a rule's path as `fsmgen paths -json` prints it.
type PathRecord struct {
	Rule  int        `json:"rule"`
	Label string     `json:"label"`
	At    string     `json:"at"`
	Steps []PathStep `json:"steps"`
}

// Records returns the machine's paths as records, in rule order.
func (m *Machine) Records() []PathRecord {
	var out []PathRecord
	for _, p := range m.Paths {
		rec := PathRecord{Rule: p.Rule.Index, Label: p.Rule.Label, At: p.Rule.Pos.String(), Steps: []PathStep{}}
		for _, w := range p.Steps {
			st := PathStep{From: w.From.Name, To: w.To.Name}
			if w.Event != nil { // none for New's own step (see StepText)
				st.Event = w.Event.Name
			}
			if w.Timer != nil {
				st.Timer = w.Timer.State.Name
			}
			for _, t := range w.Tests {
				st.Guards = append(st.Guards, GuardValue{Guard: t.Guard.Name, Holds: t.Holds})
			}
			for _, r := range w.Rules {
				st.Rules = append(st.Rules, r.Index)
			}
			rec.Steps = append(rec.Steps, st)
		}
		out = append(out, rec)
	}
	return out
}

// StepText describes a step on one line: "in Idle, send Start", "in
// TimeWait, its timer fires", "New enters Idle", with the guards'
// answers.
func StepText(w *Way) string {
	s := "in " + w.From.Name + configText(w.From, w.Config) + ", "
	switch {
	case w.Event == nil:
		// New's own step: the eventless rules of an initial state that
		// waits, tested once New has entered it.
		s = "New enters " + w.From.Name
	case w.Timer != nil && w.Timer.State == w.From:
		s += "its timer fires"
	case w.Timer != nil:
		s += "the timer of " + w.Timer.Owner().Name + " fires"
	case w.Event.Builtin:
		s += "a TimerFired of no running timer arrives"
	default:
		s += "send " + w.Event.Name
	}
	if len(w.Tests) > 0 {
		var g []string
		for _, t := range w.Tests {
			g = append(g, t.String())
		}
		s += " [" + strings.Join(g, ", ") + "]"
	}
	// A way that resumes a parallel state through a deep history says
	// the leaves its regions resume; one whose regions start in transient
	// states, the leaves they rest in.
	return s + " → " + w.To.Name + configText(w.To, w.restsIn())
}
