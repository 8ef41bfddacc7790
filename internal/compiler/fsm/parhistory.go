package fsm

import "slices"

// This file resolves the histories of composite states inside regions
// (see history.go and parallel.go). Each region is built as a machine of
// its own, so its rules into a history have their variants and its rules
// that leave a composite state remember its leaf, as a flat machine's do.
// What the region's build cannot see is its parallel state left as a
// whole: every state of every region is exited then (UML 2.5.1
// §14.2.3.4.5, SCXML 1.0 §3.10 and §3.13, exitStates), so each history
// inside a region remembers the leaf its region was in. Entering the
// parallel state again enters the regions' initial states; a later rule
// of the region into the history resumes what it remembers.

// RegionHistories returns the composite states with a history inside the
// regions of parallel state p, in Machine.Histories order.
func (m *Machine) RegionHistories(p *State) []*State {
	var out []*State
	for _, s := range m.Histories {
		if s.Region != nil && s.Region.Parallel == p {
			out = append(out, s)
		}
	}
	return out
}

// leavesParallel reports whether way w, from parallel state p, leaves p:
// its first transition runs p's exit.
func leavesParallel(w *Way, p *State) bool {
	r := w.firstTransition()
	return r != nil && slices.ContainsFunc(r.Exits, func(x *Run) bool {
		return x.State == p && !x.Entry && (x.When == nil || x.When.Contains(p))
	})
}

// rememberRegions returns hist after parallel state p is left with its
// regions in cfg: each history inside a region holds the region's leaf
// when the leaf is inside its state (and a deep one the leaves of the
// regions of a parallel state inside the region it holds, see
// rememberHostLeaves).
func (m *Machine) rememberRegions(p *State, cfg, hist []*State) []*State {
	var out []*State
	for _, s := range m.RegionHistories(p) {
		if at := cfg[s.Region.Index]; at != nil && s.Contains(at) {
			if out == nil {
				out = slices.Clone(hist)
			}
			out[s.Hist] = at
			m.rememberHostLeaves(s, at, cfg, out)
		}
	}
	if out == nil {
		return hist
	}
	return out
}

// resolveRegional is resolveWay for a machine with parallel states: way
// rw as it goes from a machine that remembers hist, each rule into a
// history replaced by the variant that fires (a region's rule picks by
// its region's leaf), the configuration after it updated, and the memory
// after it: the region's rules remember their region's leaf, and a way
// that leaves a parallel state remembers every region's.
func (m *Machine) resolveRegional(rw regionWay, hist []*State) (regionWay, []*State) {
	w := rw.way
	if !w.Regional {
		if w.From.Regions != nil && w.Config != nil && leavesParallel(w, w.From) {
			hist = m.rememberRegions(w.From, w.Config, hist)
			hist = m.rememberLeaves(w, hist)
		}
		out, mem := resolveWay(w, hist)
		if out != w && out.To.Regions != nil && enters(out, out.To) {
			rw.after = m.enteredConfig(out)
		}
		for _, r := range out.Rules {
			if resumed := m.resumeHosted(r, mem); resumed != nil {
				// A deep history resumes a parallel state inside a
				// region from outside: its regions resume the leaves it
				// remembers.
				out = owned(w, out)
				out.hosted = resumed
				rw.after = m.placeResumed(rw.after, resumed)
			}
		}
		if cfg, ok := m.resumed(out, mem); ok {
			// The regions resume what the deep history remembers.
			out = owned(w, out)
			out.Resumed, rw.after = cfg, slices.Clone(cfg)
		}
		rw.way = out
		return rw, mem
	}
	out := w
	// Each rule from the leaf its region is in before it: the step's
	// first rules from the configuration, the done transitions inside the
	// regions after them (settle) from the final states those entered;
	// the configuration also says which histories inside the regions of a
	// parallel state inside a region a rule leaves.
	cur := slices.Clone(w.Config)
	hosted := m.hostedHistories()
	for i, reg := range w.moved {
		r, at := w.Rules[i], cur[reg.Index]
		if hosted {
			hist = m.rememberHosted(w.Rules[i], cur, hist)
		}
		if p := r.Pick(at, hist); p != r {
			if out == w {
				cp := *w
				cp.Rules = slices.Clone(w.Rules)
				out = &cp
			}
			out.Rules[i] = p
			if rw.after != nil && p.To != nil {
				rw.after = slices.Clone(rw.after)
				rw.after[reg.Index] = p.To
				// A parallel state inside the region the history resumes
				// enters its regions' initial states (a shallow history).
				w.From.reenter(rw.after, []*Rule{p})
			}
			r = p
		}
		hist = m.rememberRule(r, at, cur, hist)
		if r.To != nil {
			cur[reg.Index] = r.To
			w.From.reenter(cur, []*Rule{r})
		}
		if resumed := m.resumeHosted(r, hist); resumed != nil {
			// A parallel state inside the region that a deep history
			// resumes: its regions resume the leaves it remembers
			// (unless continueRegion settled the way from them already:
			// its regions are where the step's later rules took them).
			out = owned(w, out)
			if w.hosted == nil {
				rw.after = m.placeResumed(rw.after, resumed)
			}
			out.hosted = resumed
			cur = m.placeResumed(cur, resumed)
		}
	}
	rw.way = out
	if w.Final != nil {
		// The regions' rules ended with the parallel state's done
		// transition.
		return m.resolveDone(w.From, rw, hist)
	}
	return rw, hist
}

// resolveFresh resolves a way the regions take from a machine made by
// Restore, which remembers nothing (the generated tests' start), and works
// out its trace again when it changed.
func (m *Machine) resolveFresh(w *Way, cfg []*State) *Way {
	if m.HistSlots() == 0 {
		return w
	}
	rw, _ := m.resolveRegional(regionWay{way: w}, make([]*State, m.HistSlots()))
	if rw.way != w {
		rw.way.Trace = m.trace(rw.way, w.From, cfg)
	}
	return rw.way
}

// regionHistoryShape returns the lines the histories inside regions add to
// the machine's shape: what a saved machine remembers of each, a leaf
// inside it, as for the machine's own (see shape).
func regionHistoryShape(regions []*specRegion) []string {
	var out []string
	for _, r := range regions {
		for _, s := range r.build.Histories {
			out = append(out, "history "+s.Snake)
		}
	}
	return out
}

// hostedHistories reports whether some composite state with a history is
// inside a region of a parallel state inside a region.
func (m *Machine) hostedHistories() bool {
	return slices.ContainsFunc(m.Histories, func(s *State) bool { return s.Region != nil && s.Region.Host != nil })
}

// rememberHosted returns hist after region rule r, taken with the regions
// in cfg, leaves the parallel states inside its region that it leaves:
// each history inside their regions (at any depth) holds its region's
// leaf when the leaf is inside its state, as when the parallel state
// around is left (SCXML 1.0 §3.13, exitStates records the histories of
// every state it exits).
func (m *Machine) rememberHosted(r *Rule, cfg, hist []*State) []*State {
	out, copied := hist, false
	for _, run := range r.Exits {
		if !hosting(run) {
			continue
		}
		for _, s := range m.Histories {
			if s.Region == nil || !s.Region.under(run.State) {
				continue
			}
			if at := cfg[s.Region.Index]; at != nil && s.Contains(at) && s.Hist < len(out) {
				if !copied {
					out, copied = slices.Clone(hist), true
				}
				out[s.Hist] = at
				m.rememberHostLeaves(s, at, cfg, out)
			}
		}
	}
	return out
}

// under reports whether region reg is a region of parallel state q, a
// state inside a region, or of a parallel state inside one of those.
func (reg *Region) under(q *State) bool {
	for h := reg; h.Host != nil; h = h.Host {
		if h.Within == q {
			return true
		}
	}
	return false
}

// rememberHostLeaves writes into hist, a copy its caller owns, what deep
// history h, which remembers leaf at of its region, remembers of the
// regions of at when at is a parallel state inside the region: the leaf
// each is in, in cfg (SCXML 1.0 §3.10: a deep history records every
// active atomic descendant).
func (m *Machine) rememberHostLeaves(h, at *State, cfg, hist []*State) {
	for _, mem := range m.MemoriesOf(h, at) {
		hist[mem.Slot] = cfg[mem.Region.Index]
	}
}

// rememberRule returns hist after region rule r, taken from leaf at with
// the regions in cfg: the histories it leaves remember at (Rule.Remember),
// and the deep ones the leaves of at's regions when at is a parallel
// state inside the region.
func (m *Machine) rememberRule(r *Rule, at *State, cfg, hist []*State) []*State {
	out := r.Remember(at, hist)
	if at == nil || at.Regions == nil {
		return out
	}
	for _, rem := range r.Remembers {
		if !rem.When || rem.State.Contains(at) {
			m.rememberHostLeaves(rem.State, at, cfg, out)
		}
	}
	return out
}

// resumeHosted returns, for region rule r that enters a parallel state
// inside its region through a deep history (Run.Resume), the leaves its
// regions resume from memory hist, by Region.Index (the initial leaf of a
// region the history remembers nothing of, nil for other regions); nil
// for other rules.
func (m *Machine) resumeHosted(r *Rule, hist []*State) []*State {
	var out []*State
	for _, run := range r.Entries {
		q, h := run.State, run.Resume
		if run.IntoResume != nil {
			// A rule from outside the parallel state around the region
			// (see Run.IntoResume).
			q, h = run.Into, run.IntoResume
		} else if !run.Entry || run.Resume == nil || !hosting(run) {
			continue
		}
		if out == nil {
			out = make([]*State, len(m.Regions))
		}
		for _, reg := range q.Regions {
			out[reg.Index] = reg.Initial
		}
		for _, mem := range m.MemoriesOf(h, q) {
			if at := hist[mem.Slot]; at != nil {
				out[mem.Region.Index] = at
			}
		}
	}
	return out
}

// owned returns out, the way resolveRegional makes of w, as one it may
// change: a copy of w while it is still w.
func owned(w, out *Way) *Way {
	if out == w {
		cp := *w
		return &cp
	}
	return out
}

// placeResumed returns cfg with the regions resumed holds a leaf for in
// that leaf, while their host region is still in their parallel state;
// nil for nil.
func (m *Machine) placeResumed(cfg, resumed []*State) []*State {
	if cfg == nil {
		return nil
	}
	out := slices.Clone(cfg)
	for i, l := range resumed {
		if reg := m.Regions[i]; l != nil && out[reg.Host.Index] == reg.Within {
			out[i] = l
		}
	}
	return out
}
