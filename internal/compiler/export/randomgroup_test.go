package export_test

import (
	"fmt"
	"slices"
	"strings"
)

// This file draws the parallel states of a random chart (see
// randomchart_test.go) that are nested right in another as a region
// (docs/spec.md, "Parallel states nested in parallel states"): groups of
// regions, active exactly while the outer parallel state is, with an
// entry, an exit, ignore and reject lists, rules that stay in them or
// leave the outer parallel state, a timer, and a done transition with or
// without an else. It draws only what the checker accepts of them: no
// history, no final, no row into one, a rule with a target only for an
// event no other region of the outer one takes, and so on (see
// internal/compiler/fsm/parnest*.go).

// group fills q, a parallel state nested as a region of p, with two
// regions; with final (p's done transition, or q's own), each ends in a
// final state. q may have a done transition of its own when no other
// group of p has one and no deep history is around p: one that rests
// (guards without an else) when p has one too (q's would otherwise
// always leave p before p's could be taken).
func (g *chartGen) group(q, p *rnode, final bool) {
	q.group = true
	qdone := !p.deepUnder() && !slices.ContainsFunc(p.children, func(o *rnode) bool { return o.group && o.done != "" }) && g.chance(0.5)
	if qdone {
		q.done = "?"
		q.mustRest = final // p's done transition waits for q's regions
	}
	depth := 2 // leaves only, mostly
	if g.chance(0.3) {
		depth = 1
	}
	for range 2 {
		reg := g.newNode(regionNode, q)
		g.fill(reg, depth, final || qdone)
		g.rootHistory(reg)
	}
}

// outerOf returns the parallel state q, a group, is a region of.
func (q *rnode) outerOf() *rnode { return q.parent }

// groupTarget reports whether a done transition, a rule or a timer of
// group q may go to t: a state outside its outer parallel state p, or p
// itself (which enters every region anew) or a state around it unless p
// or another group of p has a done transition, whose done event the
// same step could raise in the p just entered.
func (g *chartGen) groupTarget(q *rnode, t string) bool {
	if t == "" {
		return false
	}
	p, n := q.outerOf(), g.named(t)
	if n.inside(p) && n != p {
		return false
	}
	if !p.inside(n) {
		return true
	}
	if p.done != "" || len(p.doneIf) > 0 {
		return false
	}
	return !slices.ContainsFunc(p.children, func(o *rnode) bool { return o.group && (o.done != "" || len(o.doneIf) > 0) })
}

// pickGroupTarget draws a target for q (see groupTarget).
func (g *chartGen) pickGroupTarget(q *rnode) string {
	for {
		if t := g.target(q); g.groupTarget(q, t) {
			return t
		}
	}
}

// takers returns the regions of group q whose states have a row for e.
func (g *chartGen) takers(q *rnode, e string) []*rnode {
	var regs []*rnode
	for _, reg := range q.children {
		if slices.ContainsFunc(reg.all(), func(s *rnode) bool { return g.taken[s.name+" "+e] }) {
			regs = append(regs, reg)
		}
	}
	return regs
}

// takenOutside reports whether a state of p's regions outside group q,
// or p itself, has a row for e.
func (g *chartGen) takenOutside(p, q *rnode, e string) bool {
	return slices.ContainsFunc(p.all(), func(s *rnode) bool { return !s.inside(q) && g.taken[s.name+" "+e] })
}

// groupRows draws rows from group q, once the other rows exist: without
// a target for an event at most one of its regions takes (guards with or
// without an else), or, for an event no state of p outside q takes, with
// a target or for an event several of q's regions take (no guards, or
// an else: it is p's rule then, and preempts p's lists).
func (g *chartGen) groupRows(q *rnode) {
	p := q.outerOf()
	for range g.r.IntN(3) {
		var free []string
		for _, e := range g.events {
			if e != g.star && !g.taken[q.name+" "+e] {
				free = append(free, e)
			}
		}
		if len(free) == 0 {
			return
		}
		e := free[g.r.IntN(len(free))]
		n := len(g.takers(q, e))
		wantTo := g.chance(0.4)
		if (wantTo || n > 1) && g.takenOutside(p, q, e) {
			if n > 1 {
				continue
			}
			wantTo = false
		}
		lifted := wantTo || n > 1
		to := ""
		if wantTo {
			to = g.pickGroupTarget(q)
		}
		g.taken[q.name+" "+e] = true
		var b strings.Builder
		fmt.Fprintf(&b, "  - from: %s\n    on: %s\n", q.name, e)
		action := func() string { return g.actions[g.r.IntN(len(g.actions))] }
		switch {
		case g.chance(0.35):
			fmt.Fprintf(&b, "    guards:\n      - if: %s\n", g.newGuard())
			if to != "" {
				fmt.Fprintf(&b, "        to: %s\n", to)
			}
			fmt.Fprintf(&b, "        action: %s\n", action())
			if lifted || g.chance(0.5) {
				fmt.Fprintf(&b, "      - else: true\n        action: %s\n", action())
			}
		case to != "":
			fmt.Fprintf(&b, "    to: %s\n", to)
			if g.chance(0.5) {
				fmt.Fprintf(&b, "    action: %s\n", action())
			}
		default:
			fmt.Fprintf(&b, "    action: %s\n", action())
		}
		g.rows = append(g.rows, b.String())
	}
}

// groupLists gives group q ignore and reject lists, of events it has no
// row for and no state of its outer parallel state p outside it takes
// (an ignore would otherwise never decide); a rejected event no state of
// its regions takes either.
func (g *chartGen) groupLists(q *rnode) {
	for _, e := range g.events {
		if e == g.star || g.taken[q.name+" "+e] {
			continue
		}
		switch {
		case g.chance(0.2) && !g.takenOutside(q.outerOf(), q, e) && len(g.takers(q, e)) <= 1:
			q.ignore = append(q.ignore, e)
		case g.chance(0.1) && len(g.takers(q, e)) == 0:
			q.reject = append(q.reject, e)
		default:
			continue
		}
		g.taken[q.name+" "+e] = true
	}
}

// groupTimer gives group q a timer: with a target when p and its other
// groups have none with one (it runs as p's timer), else one that stays
// in q with an action.
func (g *chartGen) groupTimer(q *rnode) {
	q.delay = 1 + g.r.IntN(9)
	p := q.outerOf()
	if p.timer == "" && !slices.ContainsFunc(p.children, func(o *rnode) bool { return o.group && o.timer != "" }) && g.chance(0.5) {
		q.timer = g.pickGroupTarget(q)
		return
	}
	q.timerAction = g.actions[g.r.IntN(len(g.actions))]
}
