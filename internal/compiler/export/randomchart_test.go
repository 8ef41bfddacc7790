package export_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// randomChart writes a random statechart as an fsmgen spec: top-level
// states that are leaves, composite states (some with a history or a done
// transition) or parallel states (whose regions may hold composite and
// final states, with a done transition when every region has a final
// state; a done transition's guards may end without an else, the
// machine then resting in the final configuration (under a deep history
// around a parallel state too, which resumes a region resting so), but
// for one under a deep history inside a region, or of or around a
// parallel state inside a region), parallel states nested right in
// parallel states as regions (see randomgroup_test.go), rows
// between them with actions, guard chains with and without an else (so
// that an event falls back to the enclosing state's rule), In() guards
// between regions and on the rows of parallel states and of the states
// around them, timers, and rows into histories. It is built to be
// total and reachable: every top-level state ignores what it has no rule
// for, a chain of rows reaches every state, and every top-level state
// has a row out. What the checker still refuses (a rule that can never
// fire, a chart a target cannot express) is left to the caller, which
// draws another.
func randomChart(seed uint64) string {
	return drawChart(seed).spec()
}

// drawChart draws the chart of a seed (randomChart writes it).
func drawChart(seed uint64) *chartGen {
	g := &chartGen{r: rand.New(rand.NewPCG(seed, seed*7919+1)), in: rand.New(rand.NewPCG(seed, seed*104729+3)), out: rand.New(rand.NewPCG(seed, seed*15485863+5)), into: rand.New(rand.NewPCG(seed, seed*32452843+7)), inward: rand.New(rand.NewPCG(seed, seed*49979687+11)), cross: rand.New(rand.NewPCG(seed, seed*67867967+13)), wait: rand.New(rand.NewPCG(seed, seed*86028121+17)), quit: rand.New(rand.NewPCG(seed, seed*104395301+19)), rwait: rand.New(rand.NewPCG(seed, seed*122949823+23)), pwait: rand.New(rand.NewPCG(seed, seed*141650939+29)), cwait: rand.New(rand.NewPCG(seed, seed*160481183+31)), hout: rand.New(rand.NewPCG(seed, seed*179424673+37)), name: fmt.Sprintf("Random%d", seed)}
	g.chart()
	return g
}

// node kinds of a random chart.
const (
	leafNode = iota
	compositeNode
	parallelNode
	regionNode
)

// rnode is a state of a random chart; a region is a node of its parallel
// state, whose children are the region's states.
type rnode struct {
	name        string
	kind        int
	parent      *rnode
	children    []*rnode
	final       bool
	transient   bool // left at once by eventless rows
	waits       bool // a top-level leaf that waits on eventless rows (randomparwaits_test.go)
	hosted      bool // a parallel state inside a region
	group       bool // a parallel state nested as a region (randomgroup_test.go)
	mustRest    bool // its done transition's guards end without an else
	ignore      []string
	reject      []string
	timerAction string // a timer that stays, its action
	entry, exit bool
	history     string // "", "shallow" or "deep"
	done        string // the done transition's target
	doneIf      []arm  // or, when set, its guards, which end without an else but for one that leaves a parallel state (see doneLeaving)
	timer       string // the timer's target
	delay       int    // its delay in seconds
}

// arm is an outcome of a done transition's guards.
type arm struct {
	guard, to, action string // guard "" for an else
}

// chartGen draws one chart.
type chartGen struct {
	r *rand.Rand
	// in draws the In() guards of the rows outside regions, out the rows
	// that leave a parallel state from inside a region (see leaving), into
	// the rows from outside a parallel state into its regions (entering),
	// inward the rows of a region into the parallel states inside its
	// states (see inward), cross the rows and timers of a region into
	// another region of its parallel state (see across), wait the states
	// that wait outside regions (see waits), quit the done transitions
	// that leave a parallel state from inside a region (see doneLeaving),
	// rwait the states that wait inside regions (see regionWaits), pwait
	// the parallel states that wait (see parallelWaits), cwait the
	// composite states inside regions that wait (see compositeWaits),
	// hout the rows that leave a parallel state from a region of a
	// parallel state inside a region's state (see hostedLeaving).
	in, out, into, inward, cross, wait, quit, rwait, pwait, cwait, hout *rand.Rand
	name                                                                string
	n                                                                   int // states named so far
	top                                                                 []*rnode
	events                                                              []string
	guards                                                              []string
	actions                                                             []string
	rows                                                                []string
	taken                                                               map[string]bool // from + event of the rows so far
	star                                                                string          // the event of the "*" row, if any
}

func (g *chartGen) chance(p float64) bool { return g.r.Float64() < p }

func (g *chartGen) newNode(kind int, parent *rnode) *rnode {
	g.n++
	prefix := "S"
	if kind == regionNode {
		prefix = "R"
	}
	n := &rnode{name: fmt.Sprintf("%s%d", prefix, g.n), kind: kind, parent: parent}
	if kind != regionNode {
		n.entry, n.exit = g.chance(0.5), g.chance(0.4)
	}
	if parent != nil {
		parent.children = append(parent.children, n)
	}
	return n
}

// named returns the state a target names (its history's too).
func (g *chartGen) named(target string) *rnode {
	name, _, _ := strings.Cut(target, ".")
	for _, s := range g.nodes() {
		if s.name == name {
			return s
		}
	}
	panic("no state " + name)
}

func (g *chartGen) nodes() []*rnode {
	var out []*rnode
	for _, n := range g.top {
		out = append(out, n.all()...)
	}
	return out
}

// fill gives a composite state or a region its states: two or three,
// the first initial, one of them composite when depth allows; with
// final, the last is a final state.
func (g *chartGen) fill(c *rnode, depth int, final bool) {
	k := 2 + g.r.IntN(2)
	for i := range k {
		kind := leafNode
		if depth < 2 && i > 0 && g.chance(0.3) {
			kind = compositeNode
		}
		if final && i == k-1 {
			kind = leafNode
		}
		s := g.newNode(kind, c)
		if final && i == k-1 {
			s.final, s.exit = true, false
			if c.kind != regionNode {
				s.entry = false // left in the step that enters it
			}
		}
		if kind == compositeNode {
			g.composite(s, depth+1)
		}
	}
	// A chain of rows reaches every state of c from its initial one.
	for i := 1; i < len(c.children); i++ {
		g.row(c.children[i-1], g.event(c.children[i-1]), c.children[i].name, "")
	}
}

// composite fills a composite state, perhaps with a history and, when it
// ends in a final state, its done transition (both: the history may then
// remember the final state, inside a region too).
func (g *chartGen) composite(c *rnode, depth int) {
	final := g.chance(0.25)
	g.fill(c, depth, final)
	if final {
		c.done = "?" // chosen once every state exists
	}
	switch {
	case g.chance(0.2):
		c.history = "shallow"
	case g.chance(0.2):
		c.history = "deep"
	}
}

// parallel gives a parallel state two or three regions; with a done
// transition, every region ends in a final state.
func (g *chartGen) parallel(p *rnode) {
	done := g.chance(0.4) // under a deep history, into its state (see build)
	for range 2 + g.r.IntN(2) {
		if !p.hosted && !p.group && g.chance(0.2) {
			g.group(g.newNode(parallelNode, p), p, done)
			continue
		}
		reg := g.newNode(regionNode, p)
		g.fill(reg, 1, done)
		g.rootHistory(reg)
	}
	if done {
		p.done = "?"
	}
	for _, q := range p.children {
		if q.group && q.done != "" && slices.ContainsFunc(p.children, func(r *rnode) bool {
			return r != q && slices.ContainsFunc(r.all(), func(c *rnode) bool { return c.kind == compositeNode && c.done != "" })
		}) {
			// A composite state's done transition in another region,
			// which the checker refuses beside q's (their done events
			// are not ordered yet).
			q.done, q.mustRest = "", false
		}
	}
	groupDone := slices.ContainsFunc(p.children, func(o *rnode) bool { return o.group && o.done != "" })
	if g.chance(0.25) && !p.deepUnder() && !groupDone {
		// Beside a done transition, the history may remember every
		// region final, and resuming it completes p again.
		p.history = "deep"
	}
	if !done && !groupDone && p.history == "" && !p.deepUnder() && p.region() == nil && g.chance(0.35) {
		// A parallel state inside a region, entered and left by the
		// region's rules, in a region with no done transition inside;
		// with a done transition of its own (a rule of the region) when
		// its regions end in final states, beside the done transitions
		// of p's other regions or not (their done events are taken in
		// the order they were raised).
		reg := p.children[g.r.IntN(len(p.children))]
		if reg.group || slices.ContainsFunc(reg.all(), func(n *rnode) bool { return n.done != "" }) {
			return
		}
		at := reg
		if g.chance(0.4) {
			// Inside a composite state with a shallow history, which
			// resumes it by entering it anew, or a deep one, which
			// resumes each of its regions in the leaf it remembers (its
			// regions then have no transient states nor resting final
			// ones, and its done transition stays inside the history's
			// state: see build).
			at = g.newNode(compositeNode, reg)
			at.history = "shallow"
			if g.chance(0.5) {
				at.history = "deep"
			}
			g.newNode(leafNode, at) // its initial state
			g.row(reg.children[0], g.event(reg.children[0]), at.name, "")
		}
		q := g.newNode(parallelNode, at)
		q.hosted = true
		if at != reg {
			g.row(at.children[0], g.event(at.children[0]), q.name, "")
		}
		qdone := g.chance(0.5)
		if qdone {
			q.done = "?"
		} else if g.chance(0.3) {
			// A deep history of its own, which resumes each of its
			// regions in the leaf it remembers (beside a done transition
			// it may remember every region final: refused), under the
			// same terms as one around it.
			q.history = "deep"
		}
		depth := 2 // leaves only: small charts, that the checker keeps
		if g.chance(0.3) {
			depth = 1 // composite states too, perhaps with done or history
		}
		for range 2 {
			reg := g.newNode(regionNode, q)
			g.fill(reg, depth, qdone)
			g.rootHistory(reg)
		}
		g.row(reg.children[0], g.event(reg.children[0]), q.name, "")
		if q.history != "" {
			g.row(reg.children[0], g.event(reg.children[0]), q.name+".history", "")
		}
	}
}

// rootHistory may give region reg's own state a history, which the
// region's rows may then target: it remembers the region's final state
// too when the parallel state is left, and resuming that may complete
// the parallel state in that step.
func (g *chartGen) rootHistory(reg *rnode) {
	switch {
	case g.chance(0.2):
		reg.history = "shallow"
	case g.chance(0.05):
		reg.history = "deep"
	}
}

// event picks an event that n has no row for yet.
func (g *chartGen) event(n *rnode) string {
	for range 20 {
		e := g.events[g.r.IntN(len(g.events))]
		if !g.taken[n.name+" "+e] {
			return e
		}
	}
	return ""
}

// row adds a row from n on event e: to a target (or none), with an
// action, or, given guard, a chain whose first outcome is guarded.
func (g *chartGen) row(n *rnode, e, to, guard string) {
	if e == "" || n.final {
		return
	}
	g.taken[n.name+" "+e] = true
	var b strings.Builder
	fmt.Fprintf(&b, "  - from: %s\n    on: %s\n", n.name, e)
	outcome := func(indent, to string) {
		if to != "" {
			fmt.Fprintf(&b, "%sto: %s\n", indent, to)
		}
		if to == "" || g.chance(0.4) {
			fmt.Fprintf(&b, "%saction: %s\n", indent, g.actions[g.r.IntN(len(g.actions))])
		}
	}
	fallback := false
	if guard == "" {
		outcome("    ", to)
		if to != "" && !strings.Contains(to, ".") && n.kind == compositeNode && g.named(to) != n && g.named(to).inside(n) && g.chance(0.5) {
			// Into a state inside n without leaving n.
			b.WriteString("    local: true\n")
		}
	} else {
		fallback = true
		fmt.Fprintf(&b, "    guards:\n      - if: %q\n", guard)
		outcome("        ", to)
		switch {
		case g.chance(0.3) || n.parent == nil:
			// A top-level state's chain has nothing to fall back to (its
			// ignore "*" is not a rule).
			fallback = false
			fmt.Fprintf(&b, "      - else: true\n")
			outcome("        ", g.target(n))
		case g.chance(0.3):
			fmt.Fprintf(&b, "      - if: %s\n", g.newGuard())
			outcome("        ", g.target(n))
		}
	}
	g.rows = append(g.rows, b.String())
	if top := n.top(); fallback && top != n && !g.taken[top.name+" "+e] {
		// When no guard holds, the event goes to the top-level state's rule.
		g.row(top, e, g.target(top), "")
	}
}

// eventless writes the rows out of transient state t: one, or a guarded
// one and an else, each to a state that is not transient; in a region of
// a parallel state nested as a region, the first may leave the outermost
// parallel state (drawn from a stream of its own).
func (g *chartGen) eventless(t *rnode) {
	to := func() string {
		for {
			x := g.target(t)
			if x != "" && !g.named(x).transient {
				return x
			}
		}
	}
	first := to
	if reg := t.region(); reg != nil && reg.parent.group {
		// Out of the outermost parallel state, by the first branch
		// (see leaving).
		if out := g.outside(g.out, groupLeavable(reg, g.out)); out != "" {
			first = func() string { to(); return out } // (to drawn as before)
		}
	}
	if g.chance(0.3) {
		g.rows = append(g.rows, fmt.Sprintf("  - from: %s\n    to: %s\n", t.name, first()))
		return
	}
	g.rows = append(g.rows, fmt.Sprintf("  - from: %s\n    guards:\n      - if: %s\n        to: %s\n      - else: true\n        to: %s\n        action: %s\n",
		t.name, g.newGuard(), first(), to(), g.actions[g.r.IntN(len(g.actions))]))
}

// restingDone turns s's done transition into one or two guarded
// outcomes and no else, the first to s.done, another to a state outside s.
func (g *chartGen) restingDone(s *rnode) {
	s.doneIf = []arm{{guard: g.newGuard(), to: s.done}}
	if g.chance(0.4) {
		to := ""
		for to == "" || g.named(to).inside(s) || s.group && !g.groupTarget(s, to) {
			to = g.target(s)
		}
		s.doneIf = append(s.doneIf, arm{guard: g.newGuard(), to: to})
	}
	for i := range s.doneIf {
		if g.chance(0.4) {
			s.doneIf[i].action = g.actions[g.r.IntN(len(g.actions))]
		}
	}
	s.done = ""
}

// guard picks a guard for a row from n: a declared one or, inside a
// region, In() of a state of another region of its parallel state, and
// outside regions, In() of a state of the regions of a parallel state n
// is or holds.
func (g *chartGen) guard(n *rnode) string {
	if reg := n.region(); reg != nil && g.chance(0.4) {
		var others []string
		for _, other := range reg.parent.children {
			if other == reg {
				continue
			}
			for _, s := range other.all()[1:] {
				if (!s.final || s.parent == other) && !s.transient && s.kind != regionNode && !s.group {
					// (a composite's final state is left at once)
					others = append(others, s.name)
				}
			}
		}
		return "In(" + others[g.r.IntN(len(others))] + ")"
	}
	if ins := restingInside(n); len(ins) > 0 && g.in.Float64() < 0.6 {
		// A parallel state's own row, or a row of a state around one:
		// In() of a state of its regions (drawn from a stream of its
		// own, so the charts are otherwise those of the seed before).
		return "In(" + ins[g.in.IntN(len(ins))] + ")"
	}
	return g.newGuard()
}

// newGuard declares a guard of its own for one outcome: the targets ask
// a guard as often as they evaluate it (SCION once per active leaf that
// reaches it), and the differential test answers them by name, so no two
// outcomes share one.
func (g *chartGen) newGuard() string {
	name := fmt.Sprintf("g%d", len(g.guards)+1)
	g.guards = append(g.guards, name)
	return name
}

// chart draws the chart.
func (g *chartGen) chart() {
	g.taken = map[string]bool{}
	g.events = []string{"Go", "Back", "Flip", "Poke", "Zap"}[:3+g.r.IntN(3)]
	g.actions = []string{"Ping", "Log", "Note"}
	parallels := 0
	for i := range 2 + g.r.IntN(3) {
		kind := leafNode
		switch x := g.r.Float64(); {
		case i > 0 && parallels < 2 && x < 0.45:
			kind = parallelNode
			parallels++
		case x < 0.75:
			kind = compositeNode
		}
		s := g.newNode(kind, nil)
		g.top = append(g.top, s)
		switch kind {
		case compositeNode:
			g.composite(s, 1)
			if len(s.children) > 1 && g.chance(0.3) {
				// A parallel state inside a composite state.
				p := g.newNode(parallelNode, s)
				g.parallel(p)
				g.row(s.children[0], g.event(s.children[0]), p.name, "")
			}
		case parallelNode:
			g.parallel(s)
		}
	}
	if parallels == 0 {
		// Every chart has a parallel state.
		s := g.newNode(parallelNode, nil)
		g.top = append(g.top, s)
		g.parallel(s)
	}
	// Transient states in composite states outside regions, each
	// entered from the composite state's first state.
	var transients []*rnode
	for _, c := range g.nodes() {
		// (a region that holds a parallel state may have them, which
		// then may enter it; so may its regions)
		inRegion := c.kind == regionNode
		remembered := false // a history around would remember it
		for a := c; a != nil; a = a.parent {
			remembered = remembered || a.history != ""
		}
		if (c.kind == compositeNode && c.region() == nil && c.done == "" || inRegion) && !remembered && g.chance(0.35) {
			t := g.newNode(leafNode, c)
			t.transient, t.entry, t.exit = true, false, false
			transients = append(transients, t)
			g.row(c.children[0], g.event(c.children[0]), t.name, "")
		}
	}
	// A chain of rows reaches every top-level state, and leaves it.
	for i, s := range g.top {
		g.row(s, g.event(s), g.top[(i+1)%len(g.top)].name, "")
	}
	if g.chance(0.3) {
		// A "*" row: every state without a rule for the event takes it.
		g.star = g.events[len(g.events)-1]
		g.rows = append(g.rows, fmt.Sprintf("  - from: \"*\"\n    on: %s\n    to: %s\n    action: %s\n", g.star, g.top[g.r.IntN(len(g.top))].name, g.actions[0]))
	}
	for _, s := range g.nodes() {
		if s.done == "?" {
			// A target outside s: a done transition without one would
			// leave the regions resting in their final states.
			s.done = ""
			if d := s.deepAbove(); s.kind == parallelNode && d != nil && (s.hosted || g.chance(0.5)) {
				// Under a deep history, a done transition that stays
				// inside the history's state: the history then never
				// remembers every region final (otherwise it may, and
				// resuming it completes s again, which fsmgen does not
				// do yet for a parallel state inside a region).
				for range 30 {
					t := g.target(s)
					if t != "" && !g.named(t).inside(s) && g.named(t).inside(d) && strings.TrimSuffix(t, ".history") != d.name {
						s.done = t
						break
					}
				}
			}
			for s.done == "" || g.named(s.done).inside(s) || s.hosted && strings.Contains(s.done, ".") || s.group && !g.groupTarget(s, s.done) {
				s.done = g.target(s)
			}
			if in := g.inwards(s); in != "" && s.kind != parallelNode && s.deepAbove() == nil && !g.named(strings.TrimSuffix(in, ".history")).inside(s) {
				s.done = in // a composite state's, into a parallel state inside its region
			}
			out := g.doneLeaving(s)
			if s.mustRest || s.mayRest() && g.chance(0.4) {
				// Guards without an else: when none holds, the machine
				// rests in the final state, or with every region final,
				// or the region in the final state, until an event leaves.
				g.restingDone(s)
			}
			if out != "" {
				// A composite state's, out of its parallel state: a first
				// branch, before those drawn (or an else to its target).
				first := arm{guard: g.newGuard(), to: out}
				if len(s.doneIf) == 0 {
					s.doneIf, s.done = []arm{{to: s.done}}, ""
				}
				s.doneIf = append([]arm{first}, s.doneIf...)
			}
		}
		if s.group && g.chance(0.2) {
			g.groupTimer(s)
		} else if s.kind != regionNode && !s.group && !s.final && !s.transient && g.chance(0.15) {
			s.timer, s.delay = g.target(s), 1+g.r.IntN(9)
			for s.timer == "" {
				s.timer = g.target(s)
			}
			if reg := s.region(); reg != nil && reg.parent.group {
				// Out of the outermost parallel state (see leaving).
				if out := g.outside(g.out, groupLeavable(reg, g.out)); out != "" {
					s.timer = out
				}
			}
			if in := g.inwards(s); in != "" {
				s.timer = in
			}
			if x := g.across(s); x != "" {
				s.timer = x
			}
		}
	}
	var sources []*rnode
	for _, s := range g.nodes() {
		if s.kind != regionNode && !s.group && !s.final && !s.transient {
			sources = append(sources, s)
		}
	}
	for _, t := range transients {
		g.eventless(t)
	}
	for range len(sources) + g.r.IntN(len(sources)+1) {
		s := sources[g.r.IntN(len(sources))]
		guard := ""
		if g.chance(0.35) {
			guard = g.guard(s)
		}
		e, to := g.event(s), g.target(s) // (in the order the charts before drew them)
		if out := g.leaving(s); out != "" {
			to = out
		}
		if in := g.entering(s); in != "" {
			to = in
		}
		if in := g.inwards(s); in != "" {
			to = in
		}
		if x := g.across(s); x != "" {
			to = x
		}
		g.row(s, e, to, guard)
	}
	for _, q := range g.nodes() {
		if q.group {
			g.groupRows(q)
			g.groupLists(q)
		}
	}
	g.waits() // last, from a stream of its own: the chart is otherwise the seed's before
	g.regionWaits()
	g.parallelWaits()
	g.compositeWaits()
	g.hostedLeaving()
}
