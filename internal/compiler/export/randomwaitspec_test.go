package export_test

import (
	"fmt"
	"slices"
	"strings"
)

// chart draws the chart and writes its spec.
func (g *waitGen) chart() string {
	g.own, g.total, g.keeper, g.used = map[*wnode]map[string]bool{}, map[*wnode]map[string]bool{}, map[*wnode]map[string]*wnode{}, map[string]bool{}
	g.events = []string{"Go", "Next", "Poke", "Zap"}[:3+g.r.IntN(2)]
	k := 3 + g.r.IntN(3)
	for i := range k {
		s := g.newNode(nil)
		g.top = append(g.top, s)
		switch x := g.r.Float64(); {
		case i > 0 && i < k-1 && x < 0.25:
			// Left at once, to a later state: the next top-level state
			// when no guard holds.
			s.transient, s.entry, s.exit = true, false, false
		case x < 0.7:
			g.fill(s, 1)
		}
	}
	var walk func(n *wnode)
	walk = func(n *wnode) {
		g.nodes = append(g.nodes, n)
		if len(n.children) == 0 {
			n.order = len(g.leaves)
			g.leaves = append(g.leaves, n)
		}
		for _, c := range n.children {
			walk(c)
		}
	}
	for _, s := range g.top {
		walk(s)
	}
	// The chains, innermost first, so that each composite state's rule
	// finds a keeper: its last state has no rule for the second event.
	var chain func(c *wnode)
	chain = func(c *wnode) {
		for _, s := range c.children {
			if len(s.children) > 0 {
				chain(s)
			}
		}
		for i := 1; i < len(c.children); i++ {
			g.row(c.children[i-1], g.events[1], []branch{{to: c.children[i].name}})
		}
	}
	for _, s := range g.top {
		if len(s.children) > 0 {
			chain(s)
		}
	}
	for i, s := range g.top {
		if !s.transient {
			g.row(s, g.events[0], []branch{{to: g.top[(i+1)%k].name}})
		}
	}
	if len(g.events) > 2 && g.chance(0.3) {
		// A "*" row: every state without a rule for the event takes it
		// (not the first two events', which every leaf has).
		g.star = g.events[2+g.r.IntN(len(g.events)-2)]
		o := branch{action: g.action()}
		if g.chance(0.5) {
			o = branch{to: g.target(g.top[0], -1)}
		}
		g.rows = append(g.rows, "  - from: \"*\"\n")
		g.write(nil, g.star, []branch{o})
	}
	// Rules of composite states, shared by their leaves, then the
	// leaves' own.
	for _, c := range g.nodes {
		if len(c.children) > 0 && g.chance(0.6) {
			e := g.events[g.r.IntN(len(g.events))]
			g.row(c, e, g.rule(c, e))
		}
	}
	for _, s := range g.leaves {
		if s.transient {
			continue
		}
		for _, e := range g.events {
			switch {
			case g.own[s][e]:
			case g.chance(0.35):
				g.row(s, e, g.rule(s, e))
			case e != g.events[0] && g.chance(0.05) && !g.blocked(s, e):
				g.mark(g.own, s, e)
				g.mark(g.total, s, e)
				s.ignore = append(s.ignore, e)
			}
		}
	}
	for _, s := range g.nodes {
		if !s.transient && g.chance(0.15) {
			s.delay = 1 + g.r.IntN(5)
			if g.chance(0.5) {
				s.timer = "action: " + g.action()
			} else {
				s.timer = "to: " + g.target(s, -1)
			}
		}
	}
	// The leaves that wait, then the eventless rows of the transient
	// states and of those.
	for _, s := range g.leaves[1:] {
		s.waits = !s.transient && g.chance(0.4)
	}
	if !slices.ContainsFunc(g.leaves, func(s *wnode) bool { return s.waits }) {
		if s := g.leaves[1+g.r.IntN(len(g.leaves)-1)]; !s.transient {
			s.waits = true
		}
	}
	for i, s := range g.top {
		if !s.transient {
			continue
		}
		next := branch{to: g.top[i+1].name}
		if g.chance(0.3) {
			g.write(s, "", []branch{next})
			continue
		}
		var bs []branch
		for range 1 + g.r.IntN(2) {
			bs = append(bs, branch{guard: g.newGuard(), to: g.eventlessTarget(s)})
		}
		for j := range bs {
			if g.chance(0.3) {
				bs[j].action = g.action()
			}
		}
		g.write(s, "", append(bs, next))
	}
	for _, s := range g.leaves {
		if !s.waits {
			continue
		}
		var bs []branch
		for range 1 + g.r.IntN(2) {
			o := branch{guard: g.newGuard(), to: g.eventlessTarget(s)}
			if o.to == "" {
				break
			}
			if g.chance(0.4) {
				o.action = g.action()
			}
			bs = append(bs, o)
		}
		if len(bs) == 0 {
			s.waits = false // (nowhere to go: it takes events only)
			continue
		}
		g.write(s, "", bs)
	}
	// Every leaf ignores what nothing takes.
	for _, s := range g.leaves {
		if s.transient {
			continue
		}
		for _, e := range g.events {
			if !g.own[s][e] && !g.handledAbove(s, e) {
				s.ignore = append(s.ignore, e)
			}
		}
	}
	return g.spec()
}

// spec writes the chart as an fsmgen spec.
func (g *waitGen) spec() string {
	var b strings.Builder
	fmt.Fprintf(&b, "version: 2\nmachine: %s\npackage: %s\noutput:\n  go: .\nstates:\n", g.name, strings.ToLower(g.name))
	var actions []string
	for i, s := range g.top {
		actions = g.writeState(&b, s, "  ", i == 0, actions)
	}
	b.WriteString("events:\n")
	for _, e := range g.events {
		fmt.Fprintf(&b, "  %s: {}\n", e)
	}
	for _, a := range waitActions {
		if g.used[a] {
			actions = append(actions, a)
		}
	}
	rows := strings.Join(g.rows, "")
	writeTail(&b, actions, g.guards, rows, rows)
	return b.String()
}

// writeState writes state n and the states inside it, and returns the
// actions with its entry and exit added.
func (g *waitGen) writeState(b *strings.Builder, n *wnode, indent string, initial bool, actions []string) []string {
	var lines []string
	if initial {
		lines = append(lines, "initial: true")
	}
	if n.transient {
		lines = append(lines, "transient: true")
	}
	if n.history != "" {
		lines = append(lines, "history: "+n.history)
	}
	if n.entry {
		lines = append(lines, "entry: "+n.name+"In")
		actions = append(actions, n.name+"In")
	}
	if n.exit {
		lines = append(lines, "exit: "+n.name+"Out")
		actions = append(actions, n.name+"Out")
	}
	if len(n.ignore) > 0 {
		lines = append(lines, "ignore: ["+strings.Join(n.ignore, ", ")+"]")
	}
	if n.timer != "" {
		if strings.HasPrefix(n.timer, "action: ") {
			g.used[strings.TrimPrefix(n.timer, "action: ")] = true
		}
		lines = append(lines, fmt.Sprintf("after: [{delay: %ds, %s}]", n.delay, n.timer))
	}
	if len(lines) == 0 && len(n.children) == 0 {
		fmt.Fprintf(b, "%s%s: {}\n", indent, n.name)
		return actions
	}
	in := indent + "  "
	fmt.Fprintf(b, "%s%s:\n", indent, n.name)
	for _, l := range lines {
		b.WriteString(in + l + "\n")
	}
	if len(n.children) > 0 {
		b.WriteString(in + "states:\n")
		for i, c := range n.children {
			actions = g.writeState(b, c, in+"  ", i == 0, actions)
		}
	}
	return actions
}
