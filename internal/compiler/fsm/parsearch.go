package fsm

import (
	"slices"
	"strings"
)

// This file searches the configurations a machine with parallel states
// reaches, breadth first, for the shortest path to each rule (see
// parpaths.go for the ways one event takes through the regions).

// configKey identifies a configuration.
func configKey(cfg []*State) string {
	var sb strings.Builder
	for _, s := range cfg {
		if s != nil {
			sb.WriteString(s.Name)
		}
		sb.WriteByte(',')
	}
	return sb.String()
}

// trail is a path of the search, kept as its last step and the path
// before it: the items of the queue share their prefixes.
type trail struct {
	prev *trail
	way  *Way
	n    int // steps
}

// steps lays the trail out, first step first.
func (t *trail) steps() []*Way {
	out := make([]*Way, t.n)
	for ; t != nil; t = t.prev {
		out[t.n-1] = t.way
	}
	return out
}

// pathSearchLimit is how many configurations parallelPaths visits at
// most: with several parallel states, their histories and timers, there
// may be millions, which a rule that never fires would otherwise make it
// visit all of. A variable for the tests.
var pathSearchLimit = 1 << 17

// parallelPaths finds again, for a machine with parallel states, the
// shortest path to every rule, its regions' included, breadth first over
// the configurations the machine reaches (see paths), and lays them out
// as witnesses.
func (m *Machine) parallelPaths(b *builder) {
	m.searching = true
	defer func() { m.searching = false }()
	all := m.AllRules()
	found := make([]*Path, len(all))
	mem0 := make([]*State, m.HistSlots())
	var cfg0 []*State
	if m.Initial.Regions != nil {
		cfg0 = initialConfig(m)
	}
	start := regionNode{node: node{leaf: m.Initial, hist: histKey(mem0)}, cfg: configKey(cfg0)}
	seen := map[regionNode]bool{}
	var queue []regionItem
	// The search ends once every rule has its path (but those a region
	// always preempts, which have none), or at the limit.
	left := 0
	for _, r := range all {
		if !preempted(r) {
			left++
		}
	}
	active := map[*State]bool{} // the regions' leaves in the configurations reached
	rested := map[*State]bool{} // the machine's leaves it rests in
	passed := map[*State]bool{} // the regions' leaves entered, resting there or not
	// advance takes the ways of a step from item it: the done transitions
	// and histories they lead through, the paths to the rules they take,
	// and the configurations they reach, queued once.
	advance := func(it regionItem, next []regionWay) {
		var final []regionWay
		for _, rw := range next {
			if len(rw.way.Rules) == 0 {
				final = append(final, rw) // New's step where no guard holds
				continue
			}
			final = append(final, m.continueFinal(rw, it.mem)...)
		}
		for _, rw := range final {
			rw, mem := m.resolveRegional(rw, it.mem)
			for _, l := range rw.after {
				if l != nil {
					passed[l] = true
				}
			}
			settled, mems := m.settleAll(rw, mem)
			for i, rw := range settled {
				mem := mems[i]
				w := rw.way
				for _, r := range w.Rules {
					if r.To != nil && r.To.Region != nil {
						passed[r.To] = true // (a transient state, or one left by its step's rules)
					}
				}
				if rw.way.To.Regions == nil {
					rw.after = nil
				}
				tr := &trail{prev: it.trail, way: w, n: 1}
				if it.trail != nil {
					tr.n = it.trail.n + 1
				}
				for _, r := range w.Rules {
					if found[r.Index] == nil {
						found[r.Index] = &Path{Rule: r, Steps: tr.steps()}
						if !preempted(r) {
							left--
						}
					}
				}
				n := regionNode{node: node{leaf: w.To, spent: spendIn(it.n.spent, w, rw.after), hist: histKey(mem)}, cfg: configKey(rw.after)}
				if !seen[n] {
					seen[n] = true
					queue = append(queue, regionItem{n: n, cfg: rw.after, mem: mem, trail: tr})
				}
			}
		}
	}
	if (m.Initial.Waits || m.Initial.Transient) && m.Initial.Regions == nil {
		// New tests the eventless rules of an initial state that waits:
		// every path starts with that step (a way without an event), which
		// may enter a parallel state.
		var next []regionWay
		for _, w := range expand(m.Initial, m.Initial.Choice) {
			var after []*State
			if w.To.Regions != nil && enters(w, w.To) {
				after = m.enteredConfig(w)
			}
			next = append(next, regionWay{way: w, after: after})
		}
		advance(regionItem{n: start, cfg: cfg0, mem: mem0}, next)
	} else if p := m.Initial; p.Regions != nil && (p.Waits || slices.ContainsFunc(p.Flat, func(reg *Region) bool { return cfg0[reg.Index].Eventless() })) {
		// New tests the eventless rules of the regions' initial states
		// that wait, and those of the parallel state when it waits: every
		// path starts with that step (a way without an event).
		w := &Way{From: p, To: p, Config: cfg0, Regional: true}
		advance(regionItem{n: start, cfg: cfg0, mem: mem0}, m.settle(p, w, cfg0, nil))
	} else {
		seen[start] = true
		queue = append(queue, regionItem{n: start, cfg: cfg0, mem: mem0})
	}
	for len(queue) > 0 && left > 0 && len(seen) <= pathSearchLimit && m.swamped == nil {
		it := queue[0]
		queue = queue[1:]
		rested[it.n.leaf] = true
		for _, l := range it.cfg {
			if l != nil {
				active[l] = true
			}
		}
		var next []regionWay
		for _, c := range b.edges(it.n.node) {
			if it.n.leaf.Regions != nil && (c.stale == nil && (c.cell.Event == nil || !c.cell.Event.Builtin)) {
				continue // the events: offered to the regions below
			}
			for _, w := range c.ways(it.n.leaf) {
				if w = inWay(w, it.cfg); w == nil {
					continue // In(State) answers otherwise (see parinown.go)
				}
				if it.cfg != nil {
					cp := *w
					cp.Config = it.cfg
					w = &cp
				}
				after := it.cfg
				if w.To.Regions != nil && enters(w, w.To) {
					after = m.enteredConfig(w)
				} else if w.To.Regions == nil {
					after = nil
				}
				next = append(next, regionWay{way: w, after: after})
			}
		}
		if it.n.leaf.Regions != nil {
			var rws []regionWay
			for _, e := range m.Events {
				if !e.Builtin {
					rws = append(rws, m.regionWays(it.n.leaf, it.cfg, e)...)
				}
			}
			for _, t := range regionTimers(it.n.leaf, it.cfg) {
				if !(t.Index < 64 && it.n.spent&(1<<t.Index) != 0) {
					rws = append(rws, m.regionTimerWays(it.n.leaf, it.cfg, t)...)
				}
			}
			for _, rw := range rws {
				if rw.way.To.Regions == nil {
					rw.after = nil
				}
				next = append(next, rw)
			}
		}
		advance(it, next)
	}
	m.Paths = nil
	for _, r := range all {
		if src := r.Source; found[r.Index] == nil && r.Mixed && src != nil && src.Region != nil && slices.ContainsFunc(src.Region.Leaves, func(l *State) bool { return active[l] && (l == src || src.Contains(l)) }) {
			// A branch of a region's chain that leaves its parallel
			// state, whose state is reached.
			takes := "an eventless transition with a target"
			if r.Event != nil {
				takes = r.Event.Name + " by a transition with a target"
			} else if in := r.Guard; in != nil && in.In != nil {
				// An eventless branch: its In(State) guard never holds
				// where its state rests, or a region before it moves.
				b.errorf(r.Pos, "rule %s can never fire: %s is reached, but never while %s is active, ahead of the eventless transitions of the regions before %s; test In() of a state that is active beside %s, or remove the rule", r.Label, src.Name, in.In.Name, src.Region.Root.Name, src.Name)
				continue
			}
			b.errorf(r.Pos, "rule %s can never fire: %s is reached, but in every configuration the machine reaches with it, a region before %s takes %s first, and SCXML then drops a transition that leaves %s from a later region (SCXML 1.0 §3.13, removeConflictingTransitions); remove the rule", r.Label, src.Name, src.Region.Root.Name, takes, r.From.Name)
			continue
		}
		if found[r.Index] == nil && r.From != nil && r.From.Regions != nil && r.Event != nil {
			if reg := TakesAll(r.From, r.Event); reg != nil {
				b.errorf(r.Pos, "rule %s can never fire: region %s has a rule for %s in every state, which is taken instead (SCXML 1.0 §3.13: a region's transition preempts its parallel state's); remove the rule", r.Label, reg.Root.Name, r.Event.Name)
				continue
			}
			if leftOnlyInFinals(r.From, r.Event) {
				b.errorf(r.Pos, "rule %s can never fire: every region leaves %s to %s only in its final states, and the machine never rests with every region final (%s's done transition leaves it in that step); remove the rule", r.Label, r.Event.Name, r.From.Name, r.From.Name)
				continue
			}
		}
		if found[r.Index] == nil && r.Kind == Defer && r.From != nil && r.From.Region != nil {
			// UML 2.5.1 §14.2.3.4.5: a deferral has effect only where no
			// rule takes the event; here another region always decides.
			b.errorf(r.Pos, "state %s defers %s, but in every configuration that can be reached while it is active another region decides %s first (its transition, ignore or reject, or the deferral of a region before %s's): the deferral never holds an event; remove it", r.From.Name, r.Event.Name, r.Event.Name, r.From.Region.Root.Name)
			continue
		}
		if found[r.Index] == nil && r.Kind == Defer && r.From != nil && r.From.Regions != nil && len(queue) == 0 {
			// Restore accepts the configurations that leave the event to
			// the parallel state, but the machine never rests in one.
			b.errorf(r.Pos, "parallel state %s defers %s, but no configuration of its regions that the machine reaches leaves %s to it (a region takes it first in each): the deferral never holds an event; ignore or reject %s in %s instead (Restore accepts the configurations that leave it there)", r.From.Name, r.Event.Name, r.Event.Name, r.Event.Name, r.From.Name)
			continue
		}
		if found[r.Index] == nil && len(queue) == 0 && inNever(b, r, rested) {
			continue // see parinown.go
		}
		if found[r.Index] == nil && restoredOnly(r, rested) {
			// Needed all the same: Restore and Load accept the
			// configurations it answers, which the regions' own
			// checks allow; TestRules takes it from one.
			m.Paths = append(m.Paths, &Path{Rule: r})
			continue
		}
		if found[r.Index] == nil && len(queue) > 0 {
			b.errorf(r.Pos, "rule %s fires in none of the first %d configurations the machine reaches (its states, the states of its parallel states' regions, what its histories remember and which timers run): fsmgen stops searching there, so it may never fire; make a state that takes it reachable in fewer steps, or remove the rule", r.Label, pathSearchLimit)
			continue
		}
		if found[r.Index] == nil && (b.defaultNever(r, found) || b.variantNever(r, found)) {
			continue
		}
		if found[r.Index] == nil {
			if src := r.Source; src != nil && r.Event != nil && src.Region != nil && slices.ContainsFunc(src.Region.Leaves, func(l *State) bool { return active[l] && (l == src || src.Contains(l)) }) {
				// A region's row that leaves its parallel state, whose
				// state is reached: the event always goes elsewhere.
				b.errorf(r.Pos, "rule %s can never fire: %s is reached, but in every configuration the machine reaches with it, another region decides %s first (a region before %s that takes it by a transition with a target, or leaves %s, wins over a later region's row that leaves it, SCXML 1.0 §3.13, removeConflictingTransitions; a region that rejects it refuses it for the machine); remove the rule", r.Label, src.Name, r.Event.Name, src.Region.Root.Name, r.From.Name)
				continue
			}
			if r.From != nil && r.Event != nil && r.From.Region != nil && slices.ContainsFunc(r.From.Region.Leaves, func(l *State) bool { return active[l] && (l == r.From || r.From.Contains(l)) }) {
				// Its state is reached: the event always goes elsewhere,
				// or its In(State) guard never holds there.
				if r.Guard != nil && r.Guard.In != nil {
					b.errorf(r.Pos, "rule %s can never fire: %s is reached, but never while %s is active and no other region decides %s first (a region that rejects it refuses it for the machine, a row that leaves the parallel state drops the other regions' rules); test In() of a state that is active beside %s, or remove the rule", r.Label, r.From.Name, r.Guard.In.Name, r.Event.Name, r.From.Name)
					continue
				}
				b.errorf(r.Pos, "rule %s can never fire: %s is reached, but in every configuration the machine reaches with it, another region decides %s first (a region that rejects it refuses it for the machine, a row that leaves the parallel state drops the other regions' rules, and a region of a parallel state inside decides before the states around it); remove the rule", r.Label, r.From.Name, r.Event.Name)
				continue
			}
			if l := enteredOnly(r.From, passed, active); l != nil {
				// Entered, and left in the same step every time.
				if l.Choice != nil {
					b.errorf(r.Pos, "rule %s can never fire: the machine enters %s, but never rests there: in every step that enters it, the eventless rules of %s leave it in that step (an In(State) guard that the configuration entered answers, say); guard them so that they may fail there, or remove the rule", r.Label, l.Name, l.Name)
				} else {
					b.errorf(r.Pos, "rule %s can never fire: the machine enters %s, but never rests there: in every step that enters it, an eventless rule of another region or a done transition leaves it in that step; make that rule's guard able to fail there, or remove the rule", r.Label, l.Name)
				}
				continue
			}
			b.errorf(r.Pos, "rule %s can never fire: no state that takes it can be reached from the initial state %s", r.Label, m.Initial.Name)
			continue
		}
		m.Paths = append(m.Paths, found[r.Index])
	}
	m.Witnesses, m.PathEnds = nil, nil
	m.witnesses()
}

// enteredOnly returns a leaf of s (s itself, or one inside it) in a
// region that the search entered (passed) but never rested in (active);
// nil when there is none, or s is in no region.
func enteredOnly(s *State, passed, active map[*State]bool) *State {
	if s == nil || s.Region == nil {
		return nil
	}
	if i := slices.IndexFunc(s.Region.Leaves, func(l *State) bool { return passed[l] && !active[l] && (l == s || s.Contains(l)) }); i >= 0 {
		return s.Region.Leaves[i]
	}
	return nil
}

// restoredOnly reports whether r, which fires in no configuration the
// machine reaches from New, is the rule of a parallel state the machine
// rests in that resolves an event for configurations its regions allow
// but the machine never reaches (region Steps in its final state Passed
// while region Logs, whose rule for the event moved it on in the step
// that made Steps final, is not): the totality of the parallel state,
// checked region by region, asks for it, and Restore and Load accept
// those configurations, so it is no dead rule. Its rule decides every
// time (no guard, or the else).
func restoredOnly(r *Rule, rested map[*State]bool) bool {
	return r.From != nil && r.From.Regions != nil && r.Event != nil && r.Guard == nil && rested[r.From] && !preempted(r)
}

// configText writes the leaves of the regions of parallel state p for a
// step's text: " (Playing, Muted, Offline)"; "" for another state.
func configText(p *State, cfg []*State) string {
	var names []string
	for _, reg := range p.Flat {
		if cfg != nil && cfg[reg.Index] != nil {
			names = append(names, cfg[reg.Index].Name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return " (" + strings.Join(names, ", ") + ")"
}
