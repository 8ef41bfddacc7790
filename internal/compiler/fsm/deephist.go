package fsm

import (
	"slices"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file resolves deep histories over parallel states: a deep history
// of a parallel state, or of a composite state around one, records every
// atomic state the machine is in when it leaves the state (SCXML 1.0
// §3.10 and §3.13, exitStates; Appendix D), so it remembers, beside the
// leaf of the machine around the regions (the parallel state), the leaf
// of each region. Resuming the history enters the parallel state and
// each region down to the leaf it remembers, or through its initial
// states when it remembers none. XState v5 does the same. A leaf it
// resumes may be a final state its region rests in (its composite state's
// done transition refused by every guard): entering it anew raises that
// done event again, whose guards the resuming step tests (ResumesRest).
//
// A shallow history of a composite state around a parallel state resumes
// the parallel state, its regions through their initial states (a
// shallow history remembers the composite state's child only); a shallow
// history of a parallel state itself would resume its regions' own states
// through their initial states, which is entering it: fsmgen refuses it.

// Memory is the leaf of one region that a deep history remembers: the
// leaf the region was in when the machine last left History from the
// region's parallel state (History then remembers the parallel state as
// its leaf). Slot is its place in the machine's memory array, after one
// per Histories.
type Memory struct {
	History *State
	Region  *Region
	Slot    int
}

// HistSlots returns the size of the machine's memory array: one leaf per
// history, then one per region a deep history remembers.
func (m *Machine) HistSlots() int { return len(m.Histories) + len(m.Memories) }

// MemoriesOf returns the memories history h keeps of the regions of
// parallel state p, in region order; nil when it keeps none.
func (m *Machine) MemoriesOf(h, p *State) []*Memory {
	var out []*Memory
	for _, mem := range m.Memories {
		if mem.History == h && mem.Region.Owner() == p {
			out = append(out, mem)
		}
	}
	return out
}

// MemoryOf returns the first parallel state whose regions' leaves the
// deep history of h remembers; nil when it remembers none.
func (m *Machine) MemoryOf(h *State) *State {
	for _, mem := range m.Memories {
		if mem.History == h {
			return mem.Region.Owner()
		}
	}
	return nil
}

// Owner returns the parallel state whose regions reg is one of: Within
// for a region of a parallel state inside another region, else Parallel.
func (reg *Region) Owner() *State {
	if reg.Within != nil {
		return reg.Within
	}
	return reg.Parallel
}

// deepHistoryOf checks a history of parallel state s, and one around it
// (deep: the innermost composite state around s with a deep history,
// nil for none), and reports whether a deep history may resume the
// leaves of s's regions.
func deepHistoryOf(s, deep *spec.State, diags *diag.List) bool {
	own := s.History.Set && s.History.Value == "deep"
	if s.History.Set && s.History.Value == "shallow" {
		// SCXML 1.0 §3.10: a shallow history records the active children
		// of its state, which for a <parallel> are all its regions.
		diags.Errorf(s.History.Pos, "parallel state %s has a shallow history, which would resume every region through its initial states: that is entering %s (SCXML 1.0 §3.10; XState v5 does the same); target %s instead, or make the history deep to resume the leaf each region was in", s.Name.Value, s.Name.Value, s.Name.Value)
	}
	return own || deep != nil
}

// memories makes the machine's Memories, once its regions are joined:
// one per region of each parallel state a deep history holds (the
// parallel state's own, or a composite state's around it, which may be
// inside a region around a parallel state inside the region), by
// history, then parallel state, then region.
func (m *Machine) memories() {
	for _, h := range m.Histories {
		if h.History != HistoryDeep {
			continue
		}
		for _, p := range append(slices.Clone(m.States), m.RegionLeaves()...) {
			if p.Regions == nil || !h.Contains(p) {
				continue
			}
			for _, reg := range p.Regions {
				m.Memories = append(m.Memories, &Memory{History: h, Region: reg, Slot: m.HistSlots()})
			}
		}
	}
}

// ResumesRest returns the regions of the parallel state rule r enters
// through a deep history that remembers them (see Restings); nil for
// other rules.
func (m *Machine) ResumesRest(r *Rule) []*Region {
	var out []*Region
	for _, run := range r.Entries {
		if run.Entry && run.Resume != nil && run.State.Regions != nil {
			out = append(out, m.Restings(run.Resume, run.State)...)
		}
	}
	return out
}

// Restings returns the regions of parallel state p whose leaves deep
// history h remembers and that may rest in a final state whose composite
// state has a done transition (State.Rests), in region order. Resuming
// such a final state enters it anew, which raises its done event again
// (SCXML 1.0 §3.10 and §3.13): the step that resumes h tests the done
// transition's guards once more, after the entries, as the step that
// first entered the final state did, and the done transitions of the
// other regions and of p follow as after any step of the regions.
//
// A region whose transient state the history may remember (see Recalls)
// is among them too: resuming it tests its eventless rules anew.
func (m *Machine) Restings(h, p *State) []*Region {
	var out []*Region
	for _, mem := range m.MemoriesOf(h, p) {
		if slices.ContainsFunc(mem.Region.Leaves, func(l *State) bool { return l.Rests() || Recalls(h, l) }) {
			out = append(out, mem.Region)
		}
	}
	return out
}

// Recalls reports whether deep history h, of a parallel state or of a
// state around one, may remember leaf l of one of its regions, which the
// region never rests in: a transient state whose eventless rule, or a
// final state whose composite state's done transition, leaves the
// parallel state (Rule.Leaves), which records h as it exits
// (SCXML 1.0 §3.10: the atomic states exited, l among them; see
// quietRefusals, which writes such a rule only where every other region
// rests). Resuming h enters l again, whose rules are tested anew in the
// step.
//
// So may it remember a final state whose done event may wait when the
// parallel state's own eventless rule leaves it (see waitRefusals): its
// rules are tested before the done events of its regions (SCXML 1.0
// §3.13), and resuming the final state raises its done event again.
func Recalls(h, l *State) bool {
	if h.History != HistoryDeep || l.Region == nil || l.Waits {
		return false
	}
	p := l.Region.Parallel
	records := func(r *Rule) bool {
		return h == p || slices.ContainsFunc(r.Remembers, func(rem Remember) bool { return rem.State == h })
	}
	if l.Eventless() || l.Completes != nil {
		// Its eventless rules, or its composite state's done transition.
		for c := l.Choice; c != nil && !c.Out(); c = c.Fallback {
			for _, r := range c.Rules {
				if r.Leaves != nil && records(r.Leaves) {
					return true
				}
			}
		}
		if l.Eventless() {
			return false
		}
	}
	return l.Settles() && l.awaitsDone() && p.Waits && slices.ContainsFunc(p.Choice.Rules, func(r *Rule) bool { return r.To != nil && records(r) })
}

// enters resolves, in the build of a region a deep history may resume,
// the entries of each of its leaves from the region's own state down
// (State.Enter), as start does the machine's initial state's.
func (b *builder) enters() {
	if !b.par.inRegion() || !b.par.region.resumed && len(b.par.region.entered) == 0 {
		return
	}
	for _, l := range b.m.States {
		c := &runCtx{taken: map[string]bool{"m": true, "b": true, "h": true}, written: map[*Data]bool{}}
		for _, s := range l.Path() {
			if s.Entry != nil || len(s.Timers) > 0 || b.parallel(s) {
				// (a parallel state inside the region: its regions are
				// entered with it, see Run.IntoLeaf)
				run := &Run{State: s, Entry: true}
				b.resolveRun(run, c)
				l.Enter = append(l.Enter, run)
			}
		}
	}
}

// leaves resolves, in a region's build, the exit of each state inside
// the region that has one (State.Leave): leaving the parallel state runs
// it, with its effect and its actions' fields, from whatever rule leaves.
func (b *builder) leaves() {
	if !b.par.inRegion() {
		return
	}
	for _, s := range append(append([]*State{}, b.m.States...), b.m.Composites...) {
		if s.Exit == nil {
			continue
		}
		c := &runCtx{taken: map[string]bool{"m": true, "b": true, "h": true}, written: map[*Data]bool{}}
		run := &Run{State: s}
		b.resolveRun(run, c)
		s.Leave = run
	}
}

// resumes returns entry run of rule r, marked when r, into a deep
// history, enters a parallel state: the parallel state is the leaf the
// history resumes (or its default), so its regions resume what the
// history remembers.
func (b *builder) resumes(r *Rule, run *Run) *Run {
	if r.History != nil && r.History.History == HistoryDeep && b.parallel(run.State) {
		run.Resume = r.History
	}
	return run
}

// rememberLeaves returns hist after way w, from parallel state w.From
// whose regions are in w.Config, leaves it: each deep history its rule
// leaves remembers the leaf of each region.
func (m *Machine) rememberLeaves(w *Way, hist []*State) []*State {
	if len(m.Memories) == 0 || w.Config == nil {
		return hist
	}
	first := w.firstTransition()
	if first == nil {
		return hist
	}
	var out []*State
	for _, rem := range first.Remembers {
		if rem.When && !rem.State.Contains(w.From) {
			continue
		}
		for _, mem := range m.MemoriesOf(rem.State, w.From) {
			if out == nil {
				out = slices.Clone(hist)
			}
			out[mem.Slot] = w.Config[mem.Region.Index]
		}
	}
	if out == nil {
		return hist
	}
	return out
}

// resumed returns, for way w that ends in a parallel state it enters
// through a deep history, the leaves its regions resume from memory hist
// (the initial leaf of a region the history remembers nothing of), and
// whether it does.
func (m *Machine) resumed(w *Way, hist []*State) ([]*State, bool) {
	if w.To.Regions == nil {
		return nil, false
	}
	var h *State
	for _, r := range w.Rules {
		for _, run := range r.Entries {
			if run.State == w.To {
				h = run.Resume
			}
		}
	}
	if h == nil {
		return nil, false
	}
	cfg := initialConfig(m)
	for _, mem := range m.MemoriesOf(h, w.To) {
		if at := hist[mem.Slot]; at != nil {
			cfg[mem.Region.Index] = at
		}
	}
	return cfg, true
}

// memoryShape returns the lines the memories of deep histories over
// parallel states add to the machine's shape: what a saved machine may
// remember of each region, under each deep history that holds its
// parallel state (see Memory; the memories themselves are made once the
// regions are joined).
func memoryShape(list []spec.State, regions []*specRegion) []string {
	holders := map[*spec.State][]string{}
	var walk func(list []spec.State, deep []string)
	walk = func(list []spec.State, deep []string) {
		for i := range list {
			s := &list[i]
			d := deep
			if s.History.Value == "deep" {
				d = append(slices.Clip(deep), snakeOf(s))
			}
			if s.Parallel.Value {
				// Its regions, whose states may hold parallel states too.
				holders[s] = d
			}
			walk(s.States, d)
		}
	}
	walk(list, nil)
	var out []string
	for _, r := range regions {
		for _, h := range holders[r.par] {
			out = append(out, "history "+h+" region "+snakeOf(r.root))
		}
	}
	return out
}
