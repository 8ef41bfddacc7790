package fsm

import (
	"slices"
	"strings"
)

// This file works out, for a machine with parallel states, the ways and
// witness paths through its regions: in a parallel state the machine is
// in one leaf of each region (its configuration), and an event is offered
// to the regions in document order before the parallel state's own rules.
// The generated code never holds the product of the regions' states; the
// search for witness paths, at generate time, visits the configurations
// it reaches.

// pick is what one region does with an event: the rule it takes (nil
// when the event goes on to the parallel state), after the guards it
// tests.
type pick struct {
	tests []Test
	// asks are the rules whose guards tests are, one per test.
	asks []*Rule
	rule *Rule
	// leaves is, for a branch that leaves the parallel state (see
	// Rule.Leaves), the parallel state's rule that takes it; rule is nil.
	leaves *Rule
}

// picks returns what a region's leaf can do with an event through cell c:
// one pick per branch its guards can take, the last with every guard
// false. In(State) guards are no choice: they answer from cfg. A branch
// that leaves the parallel state (Rule.Leaves) takes nothing in the
// region: the event goes on to the parallel state's rules.
func picks(c *Cell, cfg []*State) []pick {
	var out []pick
	var tests []Test
	var asks []*Rule
	for ; c != nil && !c.Out(); c = c.Fallback {
		for _, r := range c.Rules {
			if in := r.SourceIn; in != nil && !in.In.Contains(cfg[in.In.Region.Index]) {
				// A branch of a row of a state inside a region of a
				// parallel state inside a region's state, which leaves
				// that parallel state, where its source is not active
				// (see parhostedlift.go): not tried.
				continue
			}
			take, leaves := r, r.Leaves
			if leaves != nil {
				// A branch that leaves the parallel state: the region
				// takes nothing, and the parallel state's rule does.
				take = nil
			}
			switch {
			case r.Guard == nil:
				return append(out, pick{tests: slices.Clone(tests), asks: slices.Clone(asks), rule: take, leaves: leaves})
			case r.Guard.In != nil:
				if r.Guard.In.Contains(cfg[r.Guard.In.Region.Index]) {
					return append(out, pick{tests: slices.Clone(tests), asks: slices.Clone(asks), rule: take, leaves: leaves})
				}
			default:
				out = append(out, pick{tests: append(slices.Clone(tests), Test{Guard: r.Guard, Holds: true}), asks: append(slices.Clone(asks), r), rule: take, leaves: leaves})
				tests = append(tests, Test{Guard: r.Guard})
				asks = append(asks, r)
			}
		}
	}
	return append(out, pick{tests: tests, asks: asks})
}

// regionWay is a way through the regions of a parallel state, with the
// configuration it leaves.
type regionWay struct {
	way   *Way
	after []*State
}

// regionWays returns the ways event e can take in parallel state p in
// configuration cfg: for each region with a rule for e, each branch its
// guards can take while the others' guards answer false.
func (m *Machine) regionWays(p *State, cfg []*State, e *Event) []regionWay {
	var alts [][]pick
	var regs []*Region
	for _, reg := range p.Flat {
		if cfg[reg.Index] == nil {
			continue // a region of a parallel state its host is not in
		}
		if c := cfg[reg.Index].Cell(e); c != nil && !c.Out() {
			alts = append(alts, picks(c, cfg))
			regs = append(regs, reg)
		}
	}
	choice := make([]pick, len(alts))
	for i, a := range alts {
		choice[i] = a[len(a)-1]
	}
	var out []regionWay
	seen := map[string]bool{}
	add := func(ch []pick) {
		for _, w := range m.combine(p, cfg, e, regs, ch) {
			if k := wayKey(w.way); !seen[k] {
				seen[k] = true
				out = append(out, w)
			}
		}
	}
	add(choice)
	for i, a := range alts {
		for _, pk := range a[:len(a)-1] {
			ch := slices.Clone(choice)
			ch[i] = pk
			add(ch)
		}
	}
	return out
}

// wayKey identifies a way by its guards' answers and rules.
func wayKey(w *Way) string {
	var sb strings.Builder
	for _, t := range w.Tests {
		if !t.Holds {
			sb.WriteByte('!')
		}
		sb.WriteString(t.Guard.Name)
		sb.WriteByte(';')
	}
	for _, r := range w.Rules {
		sb.WriteString(r.Label)
		sb.WriteByte(';')
	}
	return sb.String()
}

// combine returns the ways of the regions' picks ch: a region that
// rejects the event refuses it (the regions after it test nothing); the
// first branch that leaves the parallel state, where no region before it
// took a transition with a target, is its rule's, with the other
// regions' rules without a target and ignores beside it; the transitions
// taken are one step, with the ignores of the regions beside them;
// ignored by all that have a rule, their ignores; deferred by all that
// have a rule, the first deferral; with no rule in any region, the
// parallel state's own.
func (m *Machine) combine(p *State, cfg []*State, e *Event, regs []*Region, ch []pick) []regionWay {
	var tests []Test
	var moves, ignores, defers []*Rule
	var moved []*Region
	ch = preempt(regs, ch)
	// The guards are asked in the regions' pick order, up to a region
	// that rejects the event.
	for _, reg := range PickOrder(regs) {
		pk := ch[slices.Index(regs, reg)]
		tests = append(tests, pk.tests...)
		if r := pk.rule; r != nil && r.Kind == Reject {
			w := &Way{From: p, Event: e, Tests: tests, Rules: []*Rule{r}, To: p, Config: cfg, Regional: true}
			return []regionWay{{way: w, after: cfg}}
		}
	}
	// The first region, in document order, whose chain stopped at a
	// branch that leaves p where no region before it took a transition:
	// p's rule for the branch, which drops the later regions' rules with a
	// target (SCXML 1.0 §3.13, removeConflictingTransitions); a rule
	// without a target, an ignore or a deferral conflicts with none.
	var lead *Rule
	at := 0            // lead's region, in ch
	var beside []*Rule // the rules taken beside lead, in document order
	before := 0        // how many of them come before lead
	for i, pk := range ch {
		if pk.leaves != nil {
			lead, at = pk.leaves, i
			break
		}
		if r := pk.rule; r != nil && !r.ExitsNone() {
			break
		}
	}
	var taken []*Rule // the ignores and transitions, in document order
	var takers []*Region
	for i, pk := range ch {
		switch r := pk.rule; {
		case lead != nil:
			if r != nil && r.ExitsNone() && r.Kind != Defer {
				// A rule without a target (or an ignore) exits nothing
				// and conflicts with none: SCXML 1.0 §3.13 takes it in
				// lead's step.
				beside = append(beside, r)
				if i < at {
					before++
				}
			}
		case r == nil:
		case r.Kind == Defer:
			defers = append(defers, r)
		default:
			if r.Kind == Ignore {
				ignores = append(ignores, r)
			} else {
				moves = append(moves, r)
			}
			taken, takers = append(taken, r), append(takers, regs[i])
		}
	}
	switch {
	case len(moves) > 0:
		// The regions that ignore the event take their ignores in the
		// step, as targetless rules (SCXML 1.0 §3.13: a targetless
		// transition conflicts with none).
		moves, moved = taken, takers
		w := &Way{From: p, Event: e, Tests: tests, Rules: moves, To: p, Config: cfg, Regional: true}
		after := slices.Clone(cfg)
		for i, r := range moves {
			if r.To != nil {
				after[moved[i].Index] = r.To
			}
		}
		p.reenter(after, moves)
		w.moved, w.micro, w.pre = moved, len(moves), len(tests)
		return m.settle(p, w, after, p.raised(nil, p.targeted(moves, moved), after))
	case len(ignores) > 0:
		w := &Way{From: p, Event: e, Tests: tests, Rules: ignores, To: p, Config: cfg, Regional: true}
		if p.Awaits() {
			// The states that wait test their rules after an ignore too,
			// as after every step that keeps p.
			w.moved, w.micro, w.pre = takers, len(taken), len(tests)
			return m.settle(p, w, cfg, nil)
		}
		return []regionWay{{way: w, after: cfg}}
	case len(defers) > 0:
		// A region's deferral, which no region's other rule overrides.
		w := &Way{From: p, Event: e, Tests: tests, Rules: defers[:1], To: p, Config: cfg, Regional: true}
		return []regionWay{{way: w, after: cfg}}
	}
	c, leaves := OwnChain(p, e), lead
	if lead != nil {
		c = &Cell{State: p, Event: e, Rules: []*Rule{lead}}
	}
	if c == nil {
		return nil
	}
	var out []regionWay
	for _, w := range expand(p, c) {
		if !inAgrees(w, cfg) {
			continue // a rule that leaves p from a state its region is not in
		}
		if leaves != nil {
			// The region's chain asked its guard already.
			w.Tests = slices.DeleteFunc(w.Tests, func(t Test) bool { return t.Guard == leaves.Guard && leaves.SourceIn != nil })
			w.besides(beside, before)
		}
		w.Tests = append(slices.Clone(tests), w.Tests...)
		w.Config = cfg
		after := cfg
		if w.To.Regions != nil && enters(w, w.To) {
			after = m.enteredConfig(w)
		}
		out = append(out, regionWay{way: w, after: after})
	}
	return out
}

// parallelWays makes the machine's ways right for its parallel states:
// a way of a parallel state's own rules starts in a configuration in which
// no region takes its event (none: the way is dropped, as the regions
// always take the event first), and every rule of every region gets ways,
// from the configurations that take it.
func (m *Machine) parallelWays() {
	var ways []*Way
	for _, w := range m.Ways {
		if w.To.Regions != nil {
			// The generated test compares the state after the way with
			// the constants it sets, which do not say the regions'
			// states: it checks the way's rules and actions only.
			w.After = nil
		}
		if home := inHome(w); home != nil {
			// A rule of a composite state whose In(State) guards hold
			// in a parallel state inside it: from there.
			w = home
		}
		if w.From.Regions == nil {
			if w = inWay(w, nil); w == nil {
				continue // In(State) never holds outside its parallel state
			}
			w.Trace = m.trace(w, w.From, nil)
			ways = append(ways, m.settleWay(w, nil)...)
			continue
		}
		cfg := quietConfig(m, w.From, w.Event)
		if cfg != nil {
			in := m.inConfig(w.From, w, cfg)
			if in == nil {
				in = m.hostedInConfig(w.From, w, cfg)
			}
			cfg = in
		}
		if cfg == nil {
			continue
		}
		w.Config = cfg
		w.Trace = m.trace(w, w.From, cfg)
		for _, fw := range m.freshEventless(m.resolveFresh(w, cfg), cfg) {
			ways = append(ways, m.settleWay(fw, cfg)...)
		}
	}
	seen := map[string]bool{}
	for _, p := range m.States {
		for _, reg := range p.Flat {
			for _, l := range reg.Leaves {
				for _, e := range m.Events {
					c := l.Cell(e)
					if c == nil || c.Out() {
						continue
					}
					base := quietConfig(m, p, e)
					if base == nil {
						base = restingConfig(m)
					}
					m.place(base, reg, l)
					cfgs := [][]*State{base}
					if q := quietOthers(p, reg, base, e); q != nil && passes(c) {
						// A branch that leaves p: also from where no
						// other region takes e, so that p's rule does.
						cfgs = append(cfgs, q)
					}
					ends := false
					for x := c; x != nil && !x.Out(); x = x.Fallback {
						for _, r := range x.Rules {
							if in := r.Guard; in != nil && in.In != nil {
								cfg := slices.Clone(base)
								m.place(cfg, in.In.Region, descend(in.In))
								if cfg[reg.Index] == l {
									cfgs = append(cfgs, cfg)
								}
							}
							ends = ends || r.To != nil && r.To.Ends()
						}
					}
					if ends {
						// The rule ends its region: also from the
						// configuration in which it completes p.
						for _, cfg := range slices.Clone(cfgs) {
							if f := finalConfig(p, reg, cfg); f != nil {
								cfgs = append(cfgs, f)
							}
						}
					}
					for _, cfg := range cfgs {
						if p.completes(cfg) || hostDone(p, cfg) != nil {
							continue // never at rest: a done transition was taken
						}
						for _, rw := range m.regionWays(p, cfg, e) {
							if k := configKey(cfg) + wayKey(rw.way); !seen[k] {
								seen[k] = true
								rw.way.Trace = m.trace(rw.way, p, cfg)
								for _, fw := range m.freshEventless(m.resolveFresh(rw.way, cfg), cfg) {
									ways = append(ways, m.settleWay(fw, cfg)...)
								}
							}
						}
					}
				}
			}
		}
	}
	for _, p := range m.States {
		ways = append(ways, m.timerWays(p)...)
	}
	m.Ways = ways
}

// regionNode is a state of the search for witness paths: a node, and the
// configuration of the parallel state it rests in ("" elsewhere).
type regionNode struct {
	node
	cfg string
}

// regionItem is a regionNode with how it was reached.
type regionItem struct {
	n     regionNode
	cfg   []*State
	mem   []*State
	trail *trail
}

// preempted reports whether rule r of a parallel state never fires
// because its regions always take its event first (see TakesAll and
// leftOnlyInFinals).
func preempted(r *Rule) bool {
	if r.From == nil || r.From.Regions == nil || r.Event == nil || r.Mixed {
		// (A rule that leaves from a region's chain, Rule.Mixed, is
		// taken there.)
		return false
	}
	return TakesAll(r.From, r.Event) != nil || leftOnlyInFinals(r.From, r.Event)
}

// TakesAll returns the first region of parallel state p that takes e in
// every leaf, whatever its guards answer: e never reaches p's own rules.
// nil when none does.
func TakesAll(p *State, e *Event) *Region {
	for _, reg := range p.Regions {
		if !slices.ContainsFunc(reg.Leaves, func(s *State) bool { return !inside(s.Cell(e)) }) {
			return reg
		}
	}
	return nil
}

// EndsOnEntry returns the parallel state, p or one nested as its regions,
// whose done transition always leaves p and waits for regions that rest in
// final states only: the step that enters p ends them all and leaves it,
// and the machine never rests in p, which no configuration restores (the
// generated tests restore none). It returns nil when the machine may rest
// in p.
func (p *State) EndsOnEntry() *State {
	ends := func(q *State) bool {
		if len(q.Regions) == 0 || q.Completion == nil || q.RestsFinal() {
			return false
		}
		for _, reg := range q.Regions {
			if !reg.Resting().Final {
				return false
			}
		}
		return true
	}
	if ends(p) {
		return p
	}
	if i := slices.IndexFunc(p.Nested(), ends); i >= 0 {
		return p.Nested()[i]
	}
	return nil
}

// leftOnlyInFinals reports whether every region of parallel state p
// leaves e to p only in the region's final states, where the machine
// never rests: p has a done transition that always leaves it (not one
// whose guards may all fail: RestsFinal).
func leftOnlyInFinals(p *State, e *Event) bool {
	if p.Completion == nil || p.RestsFinal() {
		return false
	}
	for _, reg := range p.Regions {
		for _, s := range reg.Leaves {
			if !s.Transient && !inside(s.Cell(e)) && !slices.Contains(reg.Finals, s) {
				return false
			}
		}
	}
	return true
}
