package export_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// randomWaitChart writes a random statechart without parallel states as an
// fsmgen spec: three to five top-level states, some composite (two or three
// states, one of them perhaps composite in turn, some with a shallow or
// deep history), entry and exit actions, three or four events, rows from
// leaves and from composite states (to a state or a history, without a
// target and with an action, guard chains ending in else or, below a state
// with a rule for the event, falling back to it, rejections), perhaps a
// "*" row, timers that keep their state or leave it, top-level transient
// states, and leaves that wait on eventless rows: one or two guarded
// branches, each to another state. It is built to be total, reachable and
// free of eventless loops: the first event moves each top-level state to
// the next (the last to the first), the second each state of a composite
// to the next; a transient state's else (or its only row) goes to the next
// top-level state; an eventless row goes to a state whose leaves all come
// later in document order, or to one that enters no leaf that waits or is
// transient (a state around its own, say), where the eventless rows stop;
// every rule of a composite state keeps a leaf that has no rule of its own
// for the event (its keeper); and every leaf ignores what neither it, a
// state around it nor the "*" row takes. The initial leaf never waits, nor a
// composite state (the charts dispatch and cooler have those). What the checker still refuses (about one chart in
// fifteen: a rule into a history whose variant for some remembered state
// the machine never takes, as the chart goes) is left to the caller.
func randomWaitChart(seed uint64) string {
	g := &waitGen{r: rand.New(rand.NewPCG(seed, seed*2654435761+17)), name: fmt.Sprintf("Waits%d", seed)}
	return g.chart()
}

// wnode is a state of a random chart of randomWaitChart.
type wnode struct {
	name        string
	parent      *wnode
	children    []*wnode
	history     string // "", "shallow" or "deep"
	entry, exit bool
	transient   bool
	waits       bool
	ignore      []string
	timer       string // "to: X" or "action: X", the timer's outcome
	delay       int    // its delay in seconds
	order       int    // a leaf's place in document order
}

// leaves lists the leaves of n (n itself when it is one) in document
// order.
func (n *wnode) leaves() []*wnode {
	if len(n.children) == 0 {
		return []*wnode{n}
	}
	var out []*wnode
	for _, c := range n.children {
		out = append(out, c.leaves()...)
	}
	return out
}

// within reports whether n is a or inside it.
func (n *wnode) within(a *wnode) bool {
	for p := n; p != nil; p = p.parent {
		if p == a {
			return true
		}
	}
	return false
}

// branch is one outcome of a row: when guard is "" it is the else (or
// the row's only outcome).
type branch struct {
	guard, to, action, reject string
	ignore, local             bool
}

// waitGen draws one chart.
type waitGen struct {
	r      *rand.Rand
	name   string
	n      int      // states named so far
	top    []*wnode // the top-level states
	nodes  []*wnode // every state, in document order
	leaves []*wnode // every leaf, in document order (wnode.order)
	events []string
	star   string // the event of the "*" row, if any
	rows   []string
	guards []string
	used   map[string]bool // the actions the rows use
	// own holds the events a state has a rule of its own for; total those
	// whose rule takes the event whatever its guards answer (no guards,
	// or an else).
	own, total map[*wnode]map[string]bool
	// keeper maps a leaf and an event to the composite state whose rule
	// for the event the leaf keeps reachable: no state from the leaf up
	// to that state's child may take the event whatever its guards answer.
	keeper map[*wnode]map[string]*wnode
}

var waitActions = []string{"Ping", "Log", "Note"}

func (g *waitGen) chance(p float64) bool { return g.r.Float64() < p }

func (g *waitGen) action() string { return waitActions[g.r.IntN(len(waitActions))] }

func (g *waitGen) newGuard() string {
	name := fmt.Sprintf("g%d", len(g.guards)+1)
	g.guards = append(g.guards, name)
	return name
}

func (g *waitGen) newNode(parent *wnode) *wnode {
	g.n++
	n := &wnode{name: fmt.Sprintf("S%d", g.n), parent: parent, entry: g.chance(0.4), exit: g.chance(0.3)}
	if parent != nil {
		parent.children = append(parent.children, n)
	}
	return n
}

// fill gives composite state c two or three states, one of them (not the
// first) perhaps composite when depth allows, and perhaps a history.
func (g *waitGen) fill(c *wnode, depth int) {
	for i := range 2 + g.r.IntN(2) {
		s := g.newNode(c)
		if depth < 2 && i > 0 && g.chance(0.3) {
			g.fill(s, depth+1)
		}
	}
	switch x := g.r.Float64(); {
	case x < 0.25:
		c.history = "shallow"
	case x < 0.45:
		c.history = "deep"
	}
}

func (g *waitGen) mark(m map[*wnode]map[string]bool, s *wnode, e string) {
	if m[s] == nil {
		m[s] = map[string]bool{}
	}
	m[s][e] = true
}

// blocked reports whether a rule of s that always takes e would leave the
// rule of a state around s unreachable (s holds its keeper).
func (g *waitGen) blocked(s *wnode, e string) bool {
	for _, k := range s.leaves() {
		if c := g.keeper[k][e]; c != nil && c != s && s.within(c) {
			return true
		}
	}
	return false
}

// keep picks a leaf of composite state c that keeps c's rule for e
// reachable, and records it; it returns false when every leaf of c meets
// a rule of its own for e first.
func (g *waitGen) keep(c *wnode, e string) bool {
	var can []*wnode
	for _, k := range c.leaves() {
		free := true
		for s := k; s != c; s = s.parent {
			free = free && !g.total[s][e]
		}
		if free {
			can = append(can, k)
		}
	}
	if len(can) == 0 {
		return false
	}
	k := can[g.r.IntN(len(can))]
	if g.keeper[k] == nil {
		g.keeper[k] = map[string]*wnode{}
	}
	if g.keeper[k][e] == nil {
		// (already kept for a state around c: c's rule is reached first)
		g.keeper[k][e] = c
	}
	return true
}

// handledAbove reports whether a state around s has a rule for e, which
// a guard chain of s without an else falls back to, or the "*" row does.
func (g *waitGen) handledAbove(s *wnode, e string) bool {
	if e == g.star {
		return true
	}
	for p := s.parent; p != nil; p = p.parent {
		if g.own[p][e] {
			return true
		}
	}
	return false
}

// row adds a rule of s for event e; it returns false, adding nothing,
// when s has one, or when the rule would hide a rule of a state around
// s, or would have no keeper.
func (g *waitGen) row(s *wnode, e string, bs []branch) bool {
	takes := bs[len(bs)-1].guard == ""
	if g.own[s][e] || takes && g.blocked(s, e) || len(s.children) > 0 && !g.keep(s, e) {
		return false
	}
	g.mark(g.own, s, e)
	if takes {
		g.mark(g.total, s, e)
	}
	g.write(s, e, bs)
	return true
}

// write writes a row from s on e ("" for an eventless row); with s nil,
// the row's from is already written.
func (g *waitGen) write(s *wnode, e string, bs []branch) {
	var b strings.Builder
	if s != nil {
		fmt.Fprintf(&b, "  - from: %s\n", s.name)
	}
	if e != "" {
		fmt.Fprintf(&b, "    on: %s\n", e)
	}
	outcome := func(indent string, o branch) {
		if o.to != "" {
			fmt.Fprintf(&b, "%sto: %s\n", indent, o.to)
		}
		if o.local {
			fmt.Fprintf(&b, "%slocal: true\n", indent)
		}
		if o.action != "" {
			g.used[o.action] = true
			fmt.Fprintf(&b, "%saction: %s\n", indent, o.action)
		}
		if o.ignore {
			fmt.Fprintf(&b, "%signore: true\n", indent)
		}
		if o.reject != "" {
			fmt.Fprintf(&b, "%sreject: %s\n", indent, o.reject)
		}
	}
	if len(bs) == 1 && bs[0].guard == "" {
		outcome("    ", bs[0])
	} else {
		b.WriteString("    guards:\n")
		for _, o := range bs {
			if o.guard == "" {
				b.WriteString("      - else: true\n")
			} else {
				fmt.Fprintf(&b, "      - if: %s\n", o.guard)
			}
			outcome("        ", o)
		}
	}
	g.rows = append(g.rows, b.String())
}

// target picks a state or a history whose leaves all come after the leaf
// at place after in document order (any, for -1), but the states around
// from; not the history of a state around from.
func (g *waitGen) target(from *wnode, after int) string {
	var can []string
	for _, n := range g.nodes {
		if n.leaves()[0].order <= after || after >= 0 && from.within(n) {
			continue
		}
		can = append(can, n.name)
		if n.history != "" && !from.within(n) {
			// (from inside n, its history resumes the state the rule
			// leaves, and the rule's variant into n's initial state,
			// which fsmgen checks apart, may never fire)
			can = append(can, n.name+".history")
		}
	}
	if len(can) == 0 {
		return ""
	}
	return can[g.r.IntN(len(can))]
}

// eventlessTarget picks the target of an eventless row of s: a state or
// a history whose leaves all come after s in document order, or one that
// enters only leaves that neither wait nor are transient (any state
// around s too, but not its history), where the eventless rows stop.
func (g *waitGen) eventlessTarget(s *wnode) string {
	if g.chance(0.6) {
		if to := g.target(s, s.order); to != "" {
			return to
		}
	}
	calm := func(ls []*wnode) bool {
		return !slices.ContainsFunc(ls, func(l *wnode) bool { return l.waits || l.transient })
	}
	var can []string
	for _, n := range g.nodes {
		if n == s {
			continue
		}
		first := n
		for len(first.children) > 0 {
			first = first.children[0]
		}
		if calm([]*wnode{first}) {
			can = append(can, n.name)
		}
		if n.history != "" && !s.within(n) && calm(n.leaves()) {
			can = append(can, n.name+".history")
		}
	}
	if len(can) == 0 {
		return g.target(s, s.order)
	}
	return can[g.r.IntN(len(can))]
}

// named returns the state called name.
func (g *waitGen) named(name string) *wnode {
	for _, n := range g.nodes {
		if n.name == name {
			return n
		}
	}
	panic("no state " + name)
}

// outcome draws what a branch of a rule of s does: move (perhaps with an
// action), or stay with an action; for an else, perhaps ignore or reject
// the event.
func (g *waitGen) outcome(s *wnode, last bool) branch {
	switch x := g.r.Float64(); {
	case x < 0.5:
		o := branch{to: g.target(s, -1)}
		if g.chance(0.4) {
			o.action = g.action()
		}
		if len(s.children) > 0 && !strings.Contains(o.to, ".") && o.to != s.name && g.named(o.to).within(s) && g.chance(0.5) {
			o.local = true // into a state inside s without leaving s
		}
		return o
	case last && x < 0.6:
		return branch{ignore: true}
	case last && x < 0.68:
		return branch{reject: "not now"}
	default:
		return branch{action: g.action()}
	}
}

// rule draws a rule of s for e: one outcome, or a guard chain ending in an
// else or, when a state around s has a rule for e, perhaps in no else; or
// a rejection.
//
// A rule for the first event that takes it whatever its guards answer
// has a branch with a target: the top-level state's rule for it is
// every leaf's way out, and s's would hide it.
func (g *waitGen) rule(s *wnode, e string) []branch {
	var bs []branch
	switch {
	case g.chance(0.08):
		bs = []branch{{reject: "refused"}}
	case g.chance(0.55):
		bs = []branch{g.outcome(s, false)}
	default:
		bs = []branch{withGuard(g.newGuard(), g.outcome(s, false))}
		if g.chance(0.3) {
			bs = append(bs, withGuard(g.newGuard(), g.outcome(s, false)))
		}
		if !g.handledAbove(s, e) || g.chance(0.5) {
			bs = append(bs, g.outcome(s, true))
		}
	}
	last := &bs[len(bs)-1]
	if e == g.events[0] && last.guard == "" && !slices.ContainsFunc(bs, func(b branch) bool { return b.to != "" }) {
		*last = branch{to: g.target(s, -1)}
	}
	return bs
}

func withGuard(guard string, o branch) branch {
	o.guard = guard
	return o
}
