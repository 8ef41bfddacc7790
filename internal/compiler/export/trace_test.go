package export_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// microstep ends the exits and entries of a microstep of the regions in
// a Go trace, for scionOrder, which orders each microstep's on its own;
// observable leaves it out.
const microstep = "|"

// goTrace lists the states the Go machine exited and entered on a step,
// from the rules it fired (its observer's steps) as the checked model
// has them: each rule's exits that apply from the leaf it fired in, then
// its entries; New's are the model's Start. prev is the Go machine's leaf
// before the step ("" for New): in a parallel state, its regions' leaves.
//
// Parallel states add what the model leaves to the generated code:
// leaving a parallel state leaves its regions first, in reverse document
// order, each from its leaf up to its root; entering one enters its
// regions after it, in document order, through their Start; and the
// rules of several regions taken on one event are one step, whose exits
// come first (the later region's first), then the entries (SCXML 1.0
// §3.13, exitStates and enterStates). A parallel state's done
// transition, taken in the step that puts the last region in a final
// state, leaves the regions from the leaves those rules entered.
func goTrace(t *testing.T, m *fsm.Machine, prev string, g goResult) []string {
	t.Helper()
	out := []string{}
	if g.Input == (goInput{}) {
		for _, run := range m.Start {
			out = append(out, "entry "+run.State.Name)
			out = append(out, regionEntries(run.State)...)
		}
		if g.Rules = newRules(t, m, g); len(g.Rules) == 0 {
			return out
		}
	}
	cfg := regionConfig(t, m, prev)
	rules := map[int]*fsm.Rule{}
	for _, r := range m.AllRules() {
		rules[r.Index] = r
	}
	var exits, entries []string          // of the regions' rules of the step
	var eventless map[*fsm.Region]bool   // the regions of a microstep of eventless rules
	asked := -1                          // the guards asked before its first rule
	var start map[*fsm.Region]*fsm.State // the regions' leaves when it began
	flush := func() {
		out = append(append(out, exits...), entries...)
		if len(exits)+len(entries) > 0 {
			out = append(out, microstep)
		}
		exits, entries, eventless = nil, nil, nil
	}
	for i, st := range g.Rules {
		r := rules[st.Rule]
		require.NotNil(t, r, "%s has no rule %d", m.Name, st.Rule)
		if r.From != nil && r.From.Region != nil {
			if r.Event == nil && r.Done == nil && (eventless == nil || eventless[r.From.Region] || st.Asked > asked || !pickedIn(r, start)) {
				// The eventless rules of the regions' transient states
				// and states that wait: a microstep after the one that
				// entered them, each region once (SCXML 1.0 §3.13,
				// macrostep), asking every guard before its first rule
				// fires, and answering In(State) from the leaves it
				// began in: a guard asked since the microstep's first
				// rule, or an In(State) those leaves answer otherwise,
				// belongs to the next (a state that waits may stay in
				// one microstep and move in the next).
				flush()
				eventless = map[*fsm.Region]bool{}
				asked = st.Asked
				start = maps.Clone(cfg)
			}
			if eventless != nil {
				eventless[r.From.Region] = true
			}
			if r.Done != nil {
				// The done transition of a composite state inside the
				// region: a microstep of its own, after the step that
				// entered its final state.
				flush()
			}
			from := cfg[r.From.Region]
			var these []string
			for _, run := range r.Exits {
				if run.When == nil || run.When.Contains(from) {
					// A parallel state inside the region: its regions first.
					these = append(these, regionExits(run.State, cfg)...)
					these = append(these, "exit "+run.State.Name)
				}
			}
			exits = append(these, exits...)
			var hosted map[*fsm.Region]*fsm.State // what a deep history resumed
			for _, run := range r.Entries {
				entries = append(entries, "entry "+run.State.Name)
				if run.Resume != nil && run.State.Regions != nil {
					// A deep history resumes a parallel state inside the
					// region: down to the leaves its regions rest in after
					// the step (none of them starts in a transient state or
					// rests in a final one, see fsm's hostedResumes), or
					// those the parallel state's own eventless rule leaves
					// later in the step, or the leaf a region's state that
					// waits leaves later in the step.
					resumed := regionConfig(t, m, g.Leaf)
					if left := leftLeaves(g.Rules[i+1:], rules, r.From.Region.Parallel); left != "" {
						resumed = regionConfig(t, m, left)
					}
					movedFrom(rules, g.Rules[i+1:], resumed)
					resumedFinal(rules, g.Rules[i+1:], run.State, resumed)
					for _, reg := range run.State.Regions {
						require.NotNil(t, resumed[reg], "%s: rule %s resumes %s, but the step's leaves %q name no leaf of its region %s", m.Name, r.Label, run.State.Name, g.Leaf, reg.Root.Name)
					}
					entries = append(entries, resumedEntries(run.State, resumed)...)
					hosted = resumed // where its regions are for the rules after
					continue
				}
				if run.Into != nil {
					// A rule into a state inside a parallel state inside
					// the region: down to it.
					entries = append(entries, intoEntries(run, nil)...)
					continue
				}
				entries = append(entries, regionEntries(run.State)...)
			}
			leaf := r.Target
			if r.EntersInside() {
				leaf = r.To // the parallel state inside the region
			}
			if leaf != nil {
				// The region's new leaf, which a parallel state's done
				// transition, taken next in the same step, leaves.
				for leaf.Composite() {
					leaf = leaf.InitialChild
				}
				cfg[r.From.Region] = leaf
				if leaf.Regions != nil {
					// A parallel state inside the region, entered: its
					// regions' leaves, which a rule that leaves it later
					// in the step exits.
					enterHosted(t, m, r, leaf, g.Leaf, hosted, cfg)
				}
			}
			if r.Done != nil {
				flush()
			}
			continue
		}
		flush()
		from := stateNamed(t, m, st.From)
		for _, run := range r.Exits {
			if run.When == nil || run.When.Contains(from) {
				out = append(out, regionExits(run.State, cfg)...)
				out = append(out, "exit "+run.State.Name)
			}
		}
		for _, run := range r.Entries {
			out = append(out, "entry "+run.State.Name)
			if run.Resume != nil {
				// A deep history resumes the regions: down to the leaves
				// the machine rests in after the step, or, for a region
				// whose transient initial state a later rule of the step
				// leaves, down to that state; or, when the parallel
				// state's own eventless rule leaves it later in the
				// step, down to the leaves it leaves.
				resumed := regionConfig(t, m, g.Leaf)
				if left := leftLeaves(g.Rules[i+1:], rules, run.State); left != "" {
					resumed = regionConfig(t, m, left)
				}
				moved := map[*fsm.Region]bool{}

				for _, later := range g.Rules[i+1:] {
					if lr := rules[later.Rule]; lr != nil && lr.From != nil && lr.From.Region != nil && !moved[lr.From.Region] {
						moved[lr.From.Region] = true
						switch reg := lr.From.Region; {
						case !lr.From.Composite():
							resumed[reg] = lr.From
						case lr.Done != nil:
							// The done transition of a composite state the
							// history resumes in its final state (the charts
							// give each composite state one).
							finals := slices.DeleteFunc(slices.Clone(reg.Leaves), func(l *fsm.State) bool { return !l.Final || !lr.From.Contains(l) })
							require.Len(t, finals, 1, "%s: %s is resumed final, in one of several final states", m.Name, lr.From.Name)
							resumed[reg] = finals[0]
						}
					}
					if lr := rules[later.Rule]; lr != nil && lr.From == run.State && lr.Event == nil && lr.Done == run.State {
						// The parallel state's done transition follows:
						// every region but those a rule moved since was
						// resumed final (the charts give each region one
						// final state).
						for _, reg := range run.State.Regions {
							if moved[reg] {
								continue
							}
							require.Len(t, reg.Finals, 1, "%s: region %s is resumed final, in one of several final states", m.Name, reg.Root.Name)
							resumed[reg] = reg.Finals[0]
						}
						break
					}
					if lr := rules[later.Rule]; lr != nil && lr.From == run.State && lr.Source != nil && lr.Source.Region != nil && !moved[lr.Source.Region] {
						// A rule that leaves the parallel state from a
						// state the history resumed (a transient state's
						// eventless rule, or a final state's done
						// transition, see fsm's parleavedone.go): the step
						// ends outside it, where the leaves say nothing of
						// the regions.
						moved[lr.Source.Region] = true
						resumed[lr.Source.Region] = lr.Source
					}
				}
				if !strings.Contains(g.Leaf, ",") {
					// The step left the parallel state: the regions no
					// rule of it moved were resumed where the history
					// sends them, their initial states when it remembers
					// none.
					for _, reg := range run.State.Regions {
						if resumed[reg] == nil {
							resumed[reg] = reg.Initial
						}
					}
				}
				out = append(out, resumedEntries(run.State, resumed)...)
				for _, reg := range run.State.Regions {
					// Where the regions are for the rules after.
					if l := resumed[reg]; l != nil {
						cfg[reg] = l
					}
				}
				continue
			}
			if run.Into != nil {
				// A rule into a state inside a region: that region down to
				// the leaf it enters, the others through their Start; a
				// parallel state a deep history resumes there, down to the
				// leaves its regions rest in after the step (see
				// fsm.Run.IntoResume).
				var resumed map[*fsm.Region]*fsm.State
				if run.IntoResume != nil {
					resumed = regionConfig(t, m, g.Leaf)
					if left := leftLeaves(g.Rules[i+1:], rules, run.State); left != "" {
						resumed = regionConfig(t, m, left)
					}
				}
				out = append(out, intoEntries(run, resumed)...)
				for _, reg := range run.State.Regions {
					// Where the regions are for a rule after that leaves
					// the parallel state (a done transition of its final
					// state's composite state, see fsm's parleavedone.go).
					if l := run.IntoLeaf(reg); l != nil {
						cfg[reg] = l
					} else if resumed[reg] == nil {
						cfg[reg] = reg.Initial
					}
				}
				placeHosted(run, run.State, resumed, cfg)
				continue
			}
			out = append(out, regionEntries(run.State)...)
			for _, reg := range run.State.Regions {
				cfg[reg] = reg.Initial // (as above)
			}
			placeHosted(run, run.State, nil, cfg)
		}
		// A rule outside the regions is a microstep of its own: a done
		// transition or a transient state's rule after the step's first.
		out = append(out, microstep)
	}
	flush()
	return out
}

// leftLeaves returns the leaves of the regions of parallel state p that
// its own eventless rule, or the eventless rule of a state inside one of
// its regions that leaves it, leaves them from among a step's later rules
// (the adapter records them, see fromLeaves), "" when none does: the
// step's leaves after it say nothing of p's regions.
func leftLeaves(later []goRule, rules map[int]*fsm.Rule, p *fsm.State) string {
	own := func(r *fsm.Rule) bool {
		return p.Waits && slices.ContainsFunc(p.Choice.Rules, func(c *fsm.Rule) bool { return c == r || slices.Contains(c.Variants, r) })
	}
	for _, g := range later {
		r := rules[g.Rule]
		if g.Leaves != "" && r != nil && (own(r) || quietLeave(r, p)) {
			return g.Leaves
		}
	}
	return ""
}

// resumedFinal records in resumed, when the done transition of parallel
// state q is among later (the rules a step fired after the one that
// resumed q's regions through a deep history), the final leaf of each of
// q's regions it names no leaf for: the history resumed every region
// final, and the done transition left q in that step, so the step's
// leaves say nothing of them. A region with several final leaves is left
// out (its entries unknown here).
func resumedFinal(rules map[int]*fsm.Rule, later []goRule, q *fsm.State, resumed map[*fsm.Region]*fsm.State) {
	if !slices.ContainsFunc(later, func(g goRule) bool { r := rules[g.Rule]; return r != nil && r.Done == q && r.From == q }) {
		return
	}
	for _, reg := range q.Regions {
		finals := slices.DeleteFunc(slices.Clone(reg.Leaves), func(l *fsm.State) bool { return !slices.Contains(reg.Finals, l) })
		if resumed[reg] == nil && len(finals) == 1 {
			resumed[reg] = finals[0]
		}
	}
}

// movedFrom records in resumed, for each region whose leaf an eventless
// rule of later (the rules a step fired after the one that resumed the
// regions) leaves first, that leaf: where the history resumed the region,
// its state that waits then moving in that step.
func movedFrom(rules map[int]*fsm.Rule, later []goRule, resumed map[*fsm.Region]*fsm.State) {
	seen := map[*fsm.Region]bool{}
	for _, st := range later {
		r := rules[st.Rule]
		if r == nil || r.From == nil || r.From.Region == nil || r.Event != nil || r.Done != nil || seen[r.From.Region] {
			continue
		}
		seen[r.From.Region] = true
		if !r.From.Composite() {
			resumed[r.From.Region] = r.From
		}
	}
}

// resumedEntries lists the entries of the regions of parallel state p
// resumed into the leaves cfg, in document order.
func resumedEntries(p *fsm.State, cfg map[*fsm.Region]*fsm.State) []string {
	var out []string
	for _, reg := range p.Regions {
		for _, run := range cfg[reg].Enter {
			out = append(out, "entry "+run.State.Name)
		}
	}
	return out
}

// intoEntries lists the entries of the regions of the parallel state
// that run, of a rule into a state inside one of them, enters: in
// document order, the target's region down to run.Into (through the
// parallel states on the way, see Run.IntoLeaf), the others through their
// Start (SCXML 1.0 §3.13, enterStates), but those resumed names a leaf
// for, entered down to it.
func intoEntries(run *fsm.Run, resumed map[*fsm.Region]*fsm.State) []string {
	var out []string
	var enter func(reg *fsm.Region)
	enter = func(reg *fsm.Region) {
		runs := reg.Start
		if l := run.IntoLeaf(reg); l != nil {
			runs = l.Enter
		} else if l := resumed[reg]; l != nil && reg.Within == run.Into {
			runs = l.Enter
		}
		for _, x := range runs {
			out = append(out, "entry "+x.State.Name)
			if x.State.Region != nil {
				// A parallel state inside the region (the target, or on
				// the way to it): its regions in turn.
				for _, in := range x.State.Regions {
					enter(in)
				}
			}
		}
	}
	for _, reg := range run.State.Regions {
		enter(reg)
	}
	return out
}

// regionEntries lists the entries of the regions of parallel state p,
// in document order; nil for another state.
func regionEntries(p *fsm.State) []string {
	var out []string
	for _, reg := range p.Regions {
		for _, run := range reg.Start {
			out = append(out, "entry "+run.State.Name)
			if run.State.Region != nil {
				// A parallel state inside the region, entered with it (a
				// parallel state nested as a region is entered with its
				// regions' first).
				out = append(out, regionEntries(run.State)...)
			}
		}
	}
	return out
}

// placeHosted records in cfg, for run, an entry of parallel state p
// whose regions cfg holds the leaves of, the leaves of the regions of
// the parallel states inside them that run enters too (random chart
// 48006): the leaf it targets there (Run.IntoLeaf), or their initial
// states, but those resumed names.
func placeHosted(run *fsm.Run, p *fsm.State, resumed, cfg map[*fsm.Region]*fsm.State) {
	for _, reg := range p.Regions {
		q := cfg[reg]
		if q == nil || q.Regions == nil {
			continue
		}
		for _, in := range q.Regions {
			switch l := run.IntoLeaf(in); {
			case l != nil:
				cfg[in] = l
			case resumed[in] == nil:
				cfg[in] = in.Initial
			}
		}
		placeHosted(run, q, resumed, cfg)
	}
}

// regionExits lists the exits of the regions of parallel state p, whose
// leaves are cfg: in reverse document order, each from its leaf up to
// its root; nil for another state.
func regionExits(p *fsm.State, cfg map[*fsm.Region]*fsm.State) []string {
	var out []string
	for i := len(p.Regions) - 1; i >= 0; i-- {
		for s := cfg[p.Regions[i]]; s != nil; s = s.Parent {
			// A parallel state inside the region: its regions first.
			out = append(out, regionExits(s, cfg)...)
			out = append(out, "exit "+s.Name)
		}
		reg := p.Regions[i]
		for j := len(reg.Groups) - 1; j >= 0; j-- {
			if g := reg.Groups[j]; g.Regions[0] == reg {
				// A parallel state nested as a region, left after its
				// regions, innermost first.
				out = append(out, "exit "+g.Name)
			}
		}
	}
	return out
}

// enterHosted records in cfg the leaves rule r of a region enters the
// regions of q, a parallel state inside the region, in: the state it
// targets inside q, what a deep history resumes (resumed, as goTrace
// found it, else the leaves the step ends in, leaf), or their initial
// states.
func enterHosted(t *testing.T, m *fsm.Machine, r *fsm.Rule, q *fsm.State, leaf string, resumed, cfg map[*fsm.Region]*fsm.State) {
	t.Helper()
	for _, run := range r.Entries {
		if run.State == q && run.Resume != nil && resumed == nil {
			resumed = regionConfig(t, m, leaf)
		}
	}
	for _, reg := range q.Regions {
		l := reg.Initial
		for _, run := range r.Entries {
			if in := run.IntoLeaf(reg); in != nil {
				l = in
			}
		}
		if in := resumed[reg]; in != nil {
			l = in
		}
		for l.Composite() {
			l = l.InitialChild
		}
		cfg[reg] = l
	}
}

// regionConfig returns the leaf each region is in, from a Go leaf that
// names them ("Playing,Normal,Offline"); empty outside parallel states.
func regionConfig(t *testing.T, m *fsm.Machine, leaf string) map[*fsm.Region]*fsm.State {
	t.Helper()
	cfg := map[*fsm.Region]*fsm.State{}
	if !strings.Contains(leaf, ",") {
		return cfg // a leaf of the machine: a parallel state has two regions or more
	}
	for _, name := range strings.Split(leaf, ",") {
		i := slices.IndexFunc(m.RegionLeaves(), func(s *fsm.State) bool { return s.Name == name })
		require.GreaterOrEqual(t, i, 0, "%s: %s is no leaf of a region", m.Name, name)
		s := m.RegionLeaves()[i]
		cfg[s.Region] = s
		for reg := s.Region; reg.Within != nil; reg = reg.Host {
			// A parallel state inside a region, which the leaves name
			// through its regions': its host region is in it.
			cfg[reg.Host] = reg.Within
		}
	}
	return cfg
}

// leafSet returns the leaves a side names (one, or one per region of a
// parallel state), sorted: XState's and SCION's configurations are sets.
func leafSet(leaf string) []string {
	out := strings.Split(leaf, ",")
	slices.Sort(out)
	return out
}

// scionOrder reorders each run of exits and of entries of a Go trace as
// SCION orders a microstep's: exits deepest first, then in reverse
// document order; entries shallowest first, then in document order.
// SCXML 1.0 (Appendix D, exitOrder and entryOrder) exits in reverse
// document order and enters in document order, as XState and the Go
// machine do; SCION differs when a step leaves or enters regions whose
// states lie at different depths. It reports whether the order changed.
func scionOrder(t *testing.T, m *fsm.Machine, trace []string) ([]string, bool) {
	t.Helper()
	out := slices.Clone(trace)
	depth := func(e string) int {
		_, name, _ := strings.Cut(e, " ")
		return chartDepth(anyStateNamed(t, m, name))
	}
	for i := 0; i < len(out); {
		what, _, _ := strings.Cut(out[i], " ")
		j := i
		for j < len(out) && strings.HasPrefix(out[j], what+" ") {
			j++
		}
		slices.SortStableFunc(out[i:j], func(a, b string) int {
			// Exits deepest first, entries shallowest first; among states
			// of one depth the order is already the document's (entries)
			// or its reverse (exits).
			if what == "exit" {
				return depth(b) - depth(a)
			}
			return depth(a) - depth(b)
		})
		i = max(j, i+1) // a microstep's end stands alone
	}
	return out, !slices.Equal(out, trace)
}

// parallelGuard reports whether guard g is asked by a rule of the
// machine around the regions (a parallel state's own, one around it, or
// a "*" row), or by a region's rule of a parallel state inside the region
// or of a state around it there, which SCION may ask once per region that
// leaves an event (see run.cjs), even when another region's rule
// preempts it.
func parallelGuard(m *fsm.Machine, g string) bool {
	if !m.Regional() {
		return false
	}
	asks := func(r *fsm.Rule) bool { return r.Guard != nil && r.Guard.Name == g }
	if slices.ContainsFunc(m.Rules, asks) {
		return true
	}
	// A parallel state inside a region: its own rules are its region's;
	// a parallel state nested as a region: one of its regions holds its
	// rules, which SCION selects again from each of its regions.
	if slices.ContainsFunc(m.AllRules(), func(r *fsm.Rule) bool { return asks(r) && (r.From != nil && r.From.Regions != nil || r.Group != nil) }) {
		return true
	}
	for _, reg := range m.Regions {
		if q := reg.Within; q != nil && slices.ContainsFunc(reg.Host.Rules, func(r *fsm.Rule) bool { return asks(r) && r.From != nil && r.From.Contains(q) }) {
			return true
		}
	}
	return false
}

// chartDepth is the depth of state s in the chart the targets run: below
// its region's parallel state, the parallel state nested as a region that
// holds it, or the parallel state inside another region that holds it.
func chartDepth(s *fsm.State) int {
	switch {
	case s.Region != nil && s.Region.Within != nil:
		return chartDepth(s.Region.Within) + 1 + s.Depth
	case s.Region != nil && s.Region.Group != nil:
		// A region of a parallel state nested in another: below it.
		return s.Region.Group.Depth + 1 + s.Depth
	case s.Region != nil:
		return s.Region.Parallel.Depth + 1 + s.Depth
	}
	return s.Depth
}

// walkText writes the Go machine's steps of a walk, one a line: the
// input, the guards answered and the leaf it led to.
func walkText(steps []goResult) string {
	var b strings.Builder
	for i, g := range steps {
		fmt.Fprintf(&b, "%d. %s", i, inputText(g.Input))
		for _, a := range g.Guards {
			fmt.Fprintf(&b, " %s=%t", a.Guard, a.Answer)
		}
		fmt.Fprintf(&b, " -> %s\n", g.Leaf)
	}
	return b.String()
}

// pickedIn reports whether eventless rule r of a region's state could be
// picked in a microstep that began with the regions' leaves start: its
// In(State) guard holds there, and none of the In(State) guards of the
// branches before it in its state's chain does (nil start: any).
func pickedIn(r *fsm.Rule, start map[*fsm.Region]*fsm.State) bool {
	if start == nil {
		return true
	}
	in := func(x *fsm.Rule) bool { return x.Guard.In.Contains(start[x.Guard.In.Region]) }
	l := start[r.From.Region]
	if l == nil || l.Choice == nil {
		return r.Guard == nil || r.Guard.In == nil || in(r)
	}
	for c := l.Choice; c != nil && !c.Out(); c = c.Fallback {
		for _, x := range c.Rules {
			if x == r {
				return x.Guard == nil || x.Guard.In == nil || in(x)
			}
			if x.Guard != nil && x.Guard.In != nil && in(x) {
				return false // x would have been picked
			}
		}
	}
	return true
}
