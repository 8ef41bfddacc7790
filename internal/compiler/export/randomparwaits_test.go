package export_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// This file draws the states of a random chart with parallel states (see
// randomchart_test.go) that wait on eventless rows (docs/spec.md, "States
// that wait on eventless rows"): top-level leaves whose rows, without an
// event, are one to three branches, each guarded (a guard of its own, no
// else) with a target and perhaps an action. They are drawn last, from a
// stream of their own (chartGen.wait), so a chart without them is the
// seed's before they were drawn; with them, the states that wait are
// added to it:
//
//   - the initial state, which New enters and tests the rows of;
//   - the target of done transitions of states outside regions: a
//     composite state's, a parallel state's own and that of one nested as
//     a region (whose state that waits then never enters the outer
//     parallel state again, which the checker refuses: the done event of
//     the outer one raised in that step would be taken in the one entered
//     anew);
//   - others, entered by rows on events from states outside regions.
//
// Their rows lead to states outside regions (parallel ones too) or their
// histories, to states inside the regions of a parallel state outside
// regions, or to a state that waits drawn after them: never to a
// transient state, a final state, a state that waits before them, or a
// history that may resume a state whose done transition leads into a
// state that waits, so the eventless rows cannot loop. A state that waits
// ignores what it has no row for, as every top-level state (see
// writeNode), and may have rows on events (out of it, into it again, or
// keeping it), rejections, and a timer of its own.
//
// They are drawn in one chart in two, or, with FSMGEN_RANDOM_WAITS set, in
// that many charts in a hundred.
func (g *chartGen) waits() {
	w := g.wait
	if w.Float64() >= waitsChance {
		return
	}
	var ws []*rnode
	add := func() *rnode {
		g.n++
		s := &rnode{name: fmt.Sprintf("S%d", g.n), kind: leafNode, waits: true, entry: w.Float64() < 0.5, exit: w.Float64() < 0.4}
		ws = append(ws, s)
		return s
	}
	entered := map[*rnode]bool{} // by New, a done transition or a row
	if w.Float64() < 0.45 {
		s := add()
		entered[s] = true
		g.top = append([]*rnode{s}, g.top...) // the initial state
	}
	// avoid holds, for a state that waits, the outer parallel states of
	// the nested ones whose done transition leads into it.
	avoid := map[*rnode][]*rnode{}
	intoWait := map[*rnode]bool{} // the states whose done transition leads into one
	for _, s := range g.nodes() {
		if s.kind != parallelNode && s.kind != compositeNode || s.region() != nil || s.done == "" && len(s.doneIf) == 0 || w.Float64() >= 0.5 {
			continue
		}
		var to *rnode
		if len(ws) > 0 && w.Float64() < 0.3 {
			to = ws[w.IntN(len(ws))]
		} else {
			to = add()
		}
		if s.done != "" {
			s.done = to.name
		} else {
			i := w.IntN(len(s.doneIf))
			if slices.ContainsFunc(s.doneIf, func(a arm) bool { return a.to == to.name }) {
				continue // (no two outcomes into one state)
			}
			s.doneIf[i].to = to.name
		}
		entered[to] = true
		intoWait[s] = true
		if s.group {
			avoid[to] = append(avoid[to], s.outerOf())
		}
	}
	for n := 1 + w.IntN(2); n > 0; n-- {
		if len(ws) == 0 || w.Float64() < 0.5 {
			add()
		}
	}
	for _, s := range ws {
		if !slices.Contains(g.top, s) {
			g.top = append(g.top, s)
		}
	}
	// The targets of their rows, but the states that wait.
	var outside, inside, histories []string
	for _, s := range g.nodes() {
		if s.kind == regionNode || s.group || s.transient || s.final || s.waits {
			continue
		}
		if s.region() == nil {
			outside = append(outside, s.name)
			if s.history != "" && !slices.ContainsFunc(s.all(), func(n *rnode) bool { return intoWait[n] }) {
				// Its history, but where resuming it may complete a
				// state whose done transition leads into a state that
				// waits, which may lead into the history again.
				histories = append(histories, s.name+".history")
			}
		} else if !slices.ContainsFunc(g.nodes(), func(q *rnode) bool { return q.group && s.inside(q) }) {
			inside = append(inside, s.name)
		}
	}
	// Rows on events: into the states that wait New or no done transition
	// enters (into the others too, sometimes), and out of them; timers.
	var sources []*rnode
	for _, s := range g.nodes() {
		if s.kind == leafNode && s.region() == nil && !s.transient && !s.final && !slices.Contains(ws, s) {
			// (the chart's own, which it reaches: not a state that waits,
			// which may be reached only from another)
			sources = append(sources, s)
		}
	}
	// free draws an event that neither s nor a state around it has a rule
	// for (which a row of s would hide), nor the "*" row.
	free := func(s *rnode) string {
		var es []string
		for _, e := range g.events {
			taken := e == g.star
			for a := s; a != nil; a = a.parent {
				taken = taken || g.taken[a.name+" "+e]
			}
			if !taken {
				es = append(es, e)
			}
		}
		if len(es) == 0 {
			return ""
		}
		return es[w.IntN(len(es))]
	}
	eventRow := func(from *rnode, e, to string) {
		g.taken[from.name+" "+e] = true
		row := fmt.Sprintf("  - from: %s\n    on: %s\n", from.name, e)
		if to != "" {
			row += fmt.Sprintf("    to: %s\n", to)
		}
		if to == "" || w.Float64() < 0.3 {
			row += fmt.Sprintf("    action: %s\n", g.actions[w.IntN(len(g.actions))])
		}
		g.rows = append(g.rows, row)
	}
	for _, s := range ws {
		if !entered[s] || w.Float64() < 0.3 {
			// From a state of the chart with an event it has no rule for,
			// or else from a state that waits already reached.
			var from []*rnode
			for _, src := range sources {
				if src != s && free(src) != "" {
					from = append(from, src)
				}
			}
			if len(from) == 0 {
				for _, src := range ws {
					if src != s && entered[src] && free(src) != "" {
						from = append(from, src)
					}
				}
			}
			if len(from) > 0 {
				src := from[w.IntN(len(from))]
				eventRow(src, free(src), s.name)
				entered[s] = true
			}
		}
		to := slices.Concat(outside, histories)
		if s == g.top[0] {
			to = outside // (see below)
		}
		for range w.IntN(3) {
			// A row on an event out of it, into it again, or that keeps
			// it (its eventless rows are tested after all three), or a
			// rejection (after which they are not).
			e := free(s)
			if e == "" {
				break
			}
			switch x := w.Float64(); {
			case x < 0.4:
				eventRow(s, e, g.pick(w, to))
			case x < 0.6:
				eventRow(s, e, s.name)
			case x < 0.8:
				eventRow(s, e, "")
			default:
				s.reject = append(s.reject, e)
				g.taken[s.name+" "+e] = true
			}
		}
		if w.Float64() < 0.15 {
			s.delay = 1 + w.IntN(9)
			if w.Float64() < 0.5 {
				s.timer = g.pick(w, to)
			} else {
				s.timerAction = g.actions[w.IntN(len(g.actions))]
			}
		}
	}
	if !entered[ws[0]] {
		// No event left for a row into it: it is the initial state.
		g.top = slices.DeleteFunc(g.top, func(t *rnode) bool { return t == ws[0] })
		g.top = append([]*rnode{ws[0]}, g.top...)
		entered[ws[0]] = true
	}
	// A state that waits no row on an event enters is entered by the
	// eventless rows of one before it that is (but one that a done
	// transition of a nested parallel state enters: see avoid).
	forced := map[*rnode][]string{}
	for i, s := range ws {
		if !entered[s] || len(avoid[s]) > 0 {
			continue
		}
		for _, t := range ws[i+1:] {
			if !entered[t] && len(forced[s]) < 2 {
				forced[s], entered[t] = append(forced[s], t.name), true
			}
		}
	}
	// reach holds the states a state that waits may enter through its
	// eventless rows and those of the states that wait it enters.
	reach := map[*rnode][]string{}
	allowed := func(s *rnode, names []string) bool {
		for _, p := range avoid[s] {
			for _, name := range names {
				if t := g.named(name); t.inside(p) || p.inside(t) {
					return false
				}
			}
		}
		return true
	}
	for i := len(ws) - 1; i >= 0; i-- {
		s := ws[i]
		var can []string
		for _, t := range outside {
			if allowed(s, []string{t}) {
				can = append(can, t)
			}
		}
		if s != g.top[0] && w.Float64() < 0.3 {
			// (not from the initial state: New leaves it with every
			// history empty, and the checker refuses a row into a
			// history whose variant for a state it may remember never
			// fires)
			for _, t := range histories {
				if allowed(s, []string{t}) {
					can = append(can, t)
				}
			}
		}
		if w.Float64() < 0.2 {
			for _, t := range inside {
				if allowed(s, []string{t}) {
					can = append(can, t)
				}
			}
		}
		for _, t := range ws[i+1:] {
			if allowed(s, append(reach[t], t.name)) {
				can = append(can, t.name, t.name) // (twice: more chains)
			}
		}
		if len(can) == 0 {
			s.waits = false
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "  - from: %s\n    guards:\n", s.name)
		for k := range max(1+w.IntN(3), len(forced[s])) {
			var to string
			switch {
			case k < len(forced[s]):
				to = forced[s][k]
			case len(can) == 0:
				break
			default:
				to = can[w.IntN(len(can))]
			}
			if to == "" {
				break
			}
			can = slices.DeleteFunc(can, func(t string) bool { return t == to })
			fmt.Fprintf(&b, "      - if: %s\n        to: %s\n", g.newGuard(), to)
			if w.Float64() < 0.4 {
				fmt.Fprintf(&b, "        action: %s\n", g.actions[w.IntN(len(g.actions))])
			}
			reach[s] = append(reach[s], to)
			if t := g.named(to); t.waits {
				reach[s] = append(reach[s], reach[t]...)
			}
		}
		g.rows = append(g.rows, b.String())
	}
}

// waitsChance is the chance that chartGen.waits draws states that wait.
var waitsChance = envChance("FSMGEN_RANDOM_WAITS", 0.5)

// envChance is a chance the environment variable name may set, in
// hundredths; def when it does not.
func envChance(name string, def float64) float64 {
	var n int
	if _, err := fmt.Sscan(os.Getenv(name), &n); err != nil {
		return def
	}
	return float64(n) / 100
}
