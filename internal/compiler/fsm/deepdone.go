package fsm

import (
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
)

// This file resumes a deep history that remembers every region of a
// parallel state final: the parallel state's own deep history beside its
// done transition, or a deep history around it whose state its done
// transition leaves. The done transition leaves the parallel state from
// its regions' final states, and SCXML 1.0 §3.10 records the history as
// the state is exited, every region's final state among its atomic
// states. Resuming the history enters them again, which completes the
// parallel state in that step (§3.13: enterStates raises done.state once
// every child of a <parallel> is final; the done transition is taken in
// the same macrostep, its guards tested after the entries). XState v5
// does the same. The generated code tests, after the entries of a rule
// that resumes such a history, whether every region is final, and takes
// the done transition then; the witness paths go on through it
// (settleEntry), remembering what it leaves (resolveSettled).

// RemembersFinal reports whether deep history h, which holds parallel
// state p (h is p, or a composite state around it), may remember every
// region of p in a final state: p has a done transition, and a branch of
// it leaves h (p's own done always leaves p), or the machine may rest
// with every region final (RestsFinal), which any rule may leave h from. Load then reads such a
// memory, and a rule into h tests, once it resumed p, whether p is done.
func (m *Machine) RemembersFinal(h, p *State) bool {
	if p.Completion == nil || h.History != HistoryDeep || !h.Contains(p) {
		return false
	}
	if h == p || p.RestsFinal() {
		return true // (a machine resting with every region final may leave h)
	}
	return slices.ContainsFunc(p.Completion.Rules, func(r *Rule) bool {
		return slices.ContainsFunc(r.Remembers, func(rem Remember) bool { return rem.State == h })
	})
}

// restingEnd returns a final state that deep history h, which holds
// parallel state p with a done transition, may remember a region of p
// resting in (see Restings), whose composite state's done transition may
// end the region (State.Ends): resuming it raises that done event again,
// which may put the last region in a final state and complete p in that
// step. Nil for none.
func (m *Machine) restingEnd(h, p *State) *State {
	if p.Completion == nil {
		return nil
	}
	for _, reg := range m.Restings(h, p) {
		if i := slices.IndexFunc(reg.Leaves, func(l *State) bool { return l.Rests() && l.Ends() }); i >= 0 {
			return reg.Leaves[i]
		}
	}
	return nil
}

// resumeCompletes reports whether resuming deep history h may complete
// parallel state p in that step: it may remember every region of p final
// (RemembersFinal), or a region resting in a final state whose done
// transition may end it (restingEnd).
func (m *Machine) resumeCompletes(h, p *State) bool {
	return m.RemembersFinal(h, p) || m.restingEnd(h, p) != nil
}

// ResumesDone returns the parallel state rule r enters through a deep
// history that may remember every region of it final (see
// RemembersFinal): r then takes its done transition when it resumed them
// so. Nil for other rules.
func (m *Machine) ResumesDone(r *Rule) *State {
	for _, run := range r.Entries {
		if run.Entry && run.Resume != nil && run.State.Regions != nil && m.RemembersFinal(run.Resume, run.State) {
			return run.State
		}
	}
	return nil
}

// finalLoop refuses a done transition of a parallel state that leads,
// directly or through the eventless rules of transient states, into a
// deep history that may remember every region of the parallel state
// final: resuming it would complete the parallel state again, and its
// done transition would lead into the history again, without end (as a
// done transition into its own composite state's history does outside
// regions), or that may remember a region of it resting in a final state
// whose done transition may end the region (restingEnd: resuming it
// raises that done event again, which may complete the parallel state in
// that step); or into one that may so complete another parallel state,
// whose done transition leads on, back to the first (two parallel states
// whose done transitions lead into each other's deep history). It
// reports whether it refused one.
func finalLoop(m *Machine, diags *diag.List) bool {
	refused := false
	looped := map[*State]bool{} // in a loop of several, reported once
	for _, p := range m.States {
		if p.Completion == nil || looped[p] {
			continue
		}
		seen := map[*State]bool{}
		var walk func(rules []*Rule, via []*State)
		walk = func(rules []*Rule, via []*State) {
			for _, r := range rules {
				if h := r.History; h != nil && m.resumeCompletes(h, p) {
					refused = true
					if f := m.restingEnd(h, p); len(via) == 0 && !m.RemembersFinal(h, p) {
						diags.Errorf(r.Pos, "the done transition of parallel state %s leads into the history of %s, which may remember region %s of %s resting in final state %s: resuming it raises the done event of %s again, whose done transition may end the region and complete %s again in that step, and its done transition would lead into the history again, forever; lead the done transition to a state instead of %s.history", p.Name, h.Name, f.Region.Root.Name, p.Name, f.Name, f.Completes.Name, p.Name, h.Name)
						continue
					}
					if len(via) == 0 {
						diags.Errorf(r.Pos, "the done transition of parallel state %s leads into the history of %s, which may remember every region of %s final: resuming it completes %s again in that step, and its done transition would lead into the history again, forever; lead the done transition to a state instead of %s.history", p.Name, h.Name, p.Name, p.Name, h.Name)
						continue
					}
					names := []string{p.Name}
					for _, q := range via {
						names = append(names, q.Name)
						looped[q] = true
					}
					if slices.ContainsFunc(via, func(q *State) bool { return q.Regions == nil }) {
						diags.Errorf(r.Pos, "done transitions of parallel and composite states could loop without an event: %s → %s, each completing the next in that step (it leads into a final state of the next, or into a history that may remember one, or every region of the next final, or one resting in a final state whose done transition may end it); lead one of them to a state that completes none", strings.Join(names, " → "), p.Name)
						continue
					}
					diags.Errorf(r.Pos, "the done transitions of parallel states %s and %s could loop without an event: each leads into a deep history whose resuming may complete the next again in that step, remembering every region of it final or one resting in a final state whose done transition may end it (%s → %s); lead one of them to a state instead of a history", strings.Join(names[:len(names)-1], ", "), names[len(names)-1], strings.Join(names, " → "), p.Name)
					continue
				}
				if h := r.History; h != nil {
					// Resuming h may complete another parallel state in
					// that step, whose done transition goes on.
					for _, q := range m.States {
						if q != p && q.Completion != nil && !seen[q] && m.resumeCompletes(h, q) {
							seen[q] = true
							walk(q.Completion.Rules, append(slices.Clip(via), q))
						}
					}
				}
				for _, v := range append([]*Rule{r}, r.Variants...) {
					// A transient state goes on, the final state of a
					// composite state whose done transition leaves it
					// too, which h may remember (the variant resuming
					// it) as well as r enter.
					if t := v.To; t != nil && t.Choice != nil && !seen[t] {
						seen[t] = true
						next := via
						if t.Completes != nil {
							next = append(slices.Clip(via), t.Completes)
						}
						walk(t.Choice.Rules, next)
					}
				}
			}
		}
		walk(p.Completion.Rules, nil)
	}
	return refused
}

// rememberDone returns hist after done transition r of parallel state p,
// taken with p's regions in their final leaves cfg: each deep history r
// leaves remembers the leaf of each region of p, a final one.
func (m *Machine) rememberDone(p *State, r *Rule, cfg, hist []*State) []*State {
	var out []*State
	for _, rem := range r.Remembers {
		for _, mem := range m.MemoriesOf(rem.State, p) {
			if out == nil {
				out = slices.Clone(hist)
			}
			out[mem.Slot] = cfg[mem.Region.Index]
		}
	}
	if out == nil {
		return hist
	}
	return out
}

// resolveSettled returns way rw, which entered a parallel state and
// settled its regions in the same step (its head, see settleEntry), from
// a machine that remembers hist after the head, with the memory after it:
// what the regions' rules after the head remember as they leave states
// with a history (a done transition that leaves its composite state from
// a final state the step entered, say: SCXML 1.0 §3.13, exitStates), and
// when the step ends with the parallel state's done transition, what the
// done transition remembers as it leaves the regions (see resolveDone).
func (m *Machine) resolveSettled(rw regionWay, hist []*State) (regionWay, []*State) {
	w := rw.way
	if w.head == nil {
		return rw, hist
	}
	p, cur := w.head.To, slices.Clone(w.entered)
	for i, reg := range w.moved {
		r := w.Rules[len(w.head.Rules)+i]
		hist = m.rememberRule(r, cur[reg.Index], cur, hist)
		if r.To != nil {
			cur[reg.Index] = r.To
			p.reenter(cur, []*Rule{r})
		}
	}
	if w.Final == nil {
		return rw, hist
	}
	return m.resolveDone(p, rw, hist)
}

// resolveDone is resolveRegional for the end of way rw, whose rules from
// parallel state p end with p's done transition, taken from the final
// leaves w.Final, then the eventless rules of the transient states it
// leads into: each rule into a history replaced by the variant that fires
// (from what the machine remembers then), and the memory after them.
func (m *Machine) resolveDone(p *State, rw regionWay, hist []*State) (regionWay, []*State) {
	w := rw.way
	out := w
	// The done transition leaves the parallel state from the final
	// leaves: the histories inside its regions remember them.
	hist = m.rememberRegions(p, w.Final, hist)
	// The done transition, then the eventless rules of the transient
	// states it leads into (w.after), each from where the one before led.
	from := p
	first := len(w.Rules) - 1 - w.after
	for i := first; i < len(w.Rules); i++ {
		r := w.Rules[i]
		if i == first {
			// The deep histories it leaves remember the regions' leaves.
			hist = m.rememberDone(p, r, w.Final, hist)
		}
		if pk := r.Pick(from, hist); pk != r {
			if out == w {
				cp := *w
				cp.Rules = slices.Clone(w.Rules)
				out = &cp
			}
			out.Rules[i], out.To = pk, pk.To
			// The history resumes a state of its own: a parallel state
			// enters its regions' initial states (unless a deep history
			// resumes them, below).
			rw.after = nil
			if out.To.Regions != nil {
				rw.after = m.enteredConfig(out)
			}
		}
		hist = out.Rules[i].Remember(from, hist)
		if out.Rules[i].To != nil {
			from = out.Rules[i].To
		}
	}
	if cfg, ok := m.resumed(out, hist); ok {
		// Into a parallel state's deep history, or one around it.
		if out == w {
			cp := *w
			out = &cp
		}
		out.Resumed, rw.after = cfg, slices.Clone(cfg)
	}
	rw.way = out
	return rw, hist
}
