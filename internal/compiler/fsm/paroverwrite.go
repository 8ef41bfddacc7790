package fsm

import (
	"cmp"
	"slices"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
)

// This file refuses, for each parallel state, two pieces of one step's
// content in different regions that set the same field of the parallel
// state, where the later does not read it in its effect: a step runs the
// exits of the states it leaves, in reverse document order of their
// regions, then the rules' content, then the entries of the states it
// enters, in document order (SCXML 1.0 §3.13), each reading what the
// earlier set, so the later would drop the earlier's value unseen.

// writer is one piece of a step's content that sets fields of the
// parallel state: a region rule's own content (run nil), or an entry or
// exit it runs, or one that entering or leaving the parallel state runs
// (rule nil).
type writer struct {
	reg  *Region
	r    *Rule
	run  *Run
	pos  diag.Pos
	key  [3]int // phase (exits, content, entries), region order, place within
	sets []Store
}

// reads reports whether the writer's effect reads storage d.
func (w writer) reads(d *Data) bool {
	args := w.run.effectArgs()
	if w.run == nil {
		args = w.r.EffectArgs
	}
	for _, v := range args {
		if v.Source == FromData && v.Data == d {
			return true
		}
	}
	return false
}

// effectArgs returns the values a run's effect reads; nil for nil.
func (run *Run) effectArgs() []Value {
	if run == nil {
		return nil
	}
	return run.EffectArgs
}

// what describes the writer in messages: "rule (A --Up--> B)", "the exit
// of A (rule A --Up--> B)", "the entry of C".
func (w writer) what() string {
	if w.run == nil {
		return "rule (" + w.r.Label + ")"
	}
	hook := "exit"
	if w.run.Entry {
		hook = "entry"
	}
	out := "the " + hook + " of " + w.run.State.Name
	if w.r != nil {
		out += " (rule " + w.r.Label + ")"
	}
	return out
}

// ruleWriters returns the pieces of region rule r, of region reg, that
// set fields, keyed for the step's order: regions by their place in
// the machine's (document order, the regions of a parallel state inside
// a region after it), so that the entries and exits of the states of
// such a parallel state's regions, which a rule entering or leaving it
// runs, take their places too (see hostedWriters).
func ruleWriters(reg *Region, r *Rule) []writer {
	var out []writer
	for i, run := range r.Exits {
		if hosting(run) {
			out = append(out, hostedWriters(run.State, false, r)...)
		}
		if len(run.Stores) > 0 {
			out = append(out, writer{reg, r, run, run.State.hookPos(false, r.Pos), [3]int{0, -reg.Index, i}, run.Stores})
		}
	}
	if len(r.Stores) > 0 {
		out = append(out, writer{reg, r, nil, r.Pos, [3]int{1, reg.Index, 0}, r.Stores})
	}
	for i, run := range r.Entries {
		if len(run.Stores) > 0 {
			out = append(out, writer{reg, r, run, run.State.hookPos(true, r.Pos), [3]int{2, reg.Index, i}, run.Stores})
		}
		if hosting(run) && run.Resume == nil {
			out = append(out, hostedWriters(run.State, true, r)...)
		}
	}
	return out
}

// hostedWriters returns the entries (or the exits) of the states of the
// regions of q, a parallel state inside a region, that set fields, as
// entering q (or leaving it) runs them: the regions' initial states (or
// any of their states, each region's in a place of its own), and those
// of the parallel states inside them in turn. r is the rule that does,
// nil when entering or leaving the parallel state around q does.
func hostedWriters(q *State, entry bool, r *Rule) []writer {
	var out []writer
	for _, reg := range q.Regions {
		if entry {
			for i, run := range reg.Start {
				if len(run.Stores) > 0 {
					out = append(out, writer{reg, r, run, run.State.hookPos(true, q.Pos), [3]int{2, reg.Index, i}, run.Stores})
				}
				if hosting(run) {
					out = append(out, hostedWriters(run.State, true, r)...)
				}
			}
			continue
		}
		for _, s := range append(slices.Clone(reg.Leaves), reg.Composites...) {
			if s.Regions != nil && slices.Contains(reg.Leaves, s) {
				out = append(out, hostedWriters(s, false, r)...)
			}
			if s.Leave != nil && len(s.Leave.Stores) > 0 {
				out = append(out, writer{reg, r, s.Leave, s.hookPos(false, q.Pos), [3]int{0, -reg.Index, 0}, s.Leave.Stores})
			}
		}
	}
	return out
}

// hookPos is where state s's entry (or exit) is written; def when it has
// none.
func (s *State) hookPos(entry bool, def diag.Pos) diag.Pos {
	h := s.Exit
	if entry {
		h = s.Entry
	}
	if h == nil {
		return def
	}
	return h.Pos
}

// overwrites refuses, for each parallel state, two writers of different
// regions in one step that set the same field, the later not reading it:
// the rules for one event (or the eventless rules) of different regions,
// with the entries and exits they run; the entries that entering the
// parallel state runs; the exits that leaving it runs. It does not ask
// whether guards, or the states the regions are in, let both run in one
// step.
func overwrites(m *Machine, diags *diag.List) {
	for _, p := range m.States {
		if p.Regions == nil {
			continue
		}
		byEvent := map[*Event][]writer{}
		var events []*Event
		var enter, leave []writer
		for _, reg := range p.Flat {
			// The rules of the regions of the parallel states inside
			// regions too: an event may be taken by one of them and by
			// another region in one step.
			for _, r := range reg.Rules {
				if r.Kind != Transition || r.Timer != nil {
					continue
				}
				ws := ruleWriters(reg, r)
				if len(ws) == 0 {
					continue
				}
				if byEvent[r.Event] == nil {
					events = append(events, r.Event)
				}
				byEvent[r.Event] = append(byEvent[r.Event], ws...)
			}
		}
		for _, reg := range p.Regions {
			for i, run := range reg.Start {
				if len(run.Stores) > 0 {
					enter = append(enter, writer{reg, nil, run, run.State.hookPos(true, p.Pos), [3]int{2, reg.Index, i}, run.Stores})
				}
				if hosting(run) {
					enter = append(enter, hostedWriters(run.State, true, nil)...)
				}
			}
			for _, s := range append(append(slices.Clone(reg.Leaves), reg.Composites...), reg.GroupExits()...) {
				if s.Regions != nil && slices.Contains(reg.Leaves, s) {
					leave = append(leave, hostedWriters(s, false, nil)...)
				}
				if s.Leave != nil && len(s.Leave.Stores) > 0 {
					leave = append(leave, writer{reg, nil, s.Leave, s.hookPos(false, p.Pos), [3]int{0, -reg.Index, 0}, s.Leave.Stores})
				}
			}
		}
		for _, e := range events {
			clash(p, byEvent[e], eventWord(e), diags)
		}
		clash(p, enter, "the entry of "+p.Name, diags)
		clash(p, leave, "the exit of "+p.Name, diags)
	}
}

// clash reports the writers of list, of one step, that set a field
// which the writer before them in the step (of another region) set,
// without reading it. The writers of one region's other rules for the
// step's event are not before it: a region takes one rule.
func clash(p *State, list []writer, step string, diags *diag.List) {
	slices.SortStableFunc(list, func(a, b writer) int {
		for i := range a.key {
			if c := cmp.Compare(a.key[i], b.key[i]); c != 0 {
				return c
			}
		}
		return 0
	})
	for j, later := range list {
		for _, st := range later.sets {
			if later.reads(st.Data) {
				continue
			}
			var earlier *writer
			for i := j - 1; i >= 0 && earlier == nil; i-- {
				o := list[i]
				if (o.reg != later.reg || o.r == later.r) && slices.ContainsFunc(o.sets, func(x Store) bool { return x.Data == st.Data }) {
					earlier = &list[i]
				}
			}
			if earlier == nil || earlier.reg == later.reg {
				continue
			}
			if later.run == nil && earlier.run == nil {
				diags.Errorf(later.pos, "region %s's rule (%s) sets field %s of %s, which region %s's rule (%s) sets too when both take %s in one step: their content runs in document order (SCXML 1.0 §3.13), so %s's value would be dropped unseen; let one of them set %s, or give %s's rule an effect that reads %s", later.reg.Root.Name, later.r.Label, st.Data.Name, p.Name, earlier.reg.Root.Name, earlier.r.Label, step, earlier.reg.Root.Name, st.Data.Name, later.reg.Root.Name, st.Data.Name)
				continue
			}
			diags.Errorf(later.pos, "region %s: %s sets field %s of %s after %s of region %s set it, in one step (%s): a step runs the exits, then the rules' content, then the entries (SCXML 1.0 §3.13), so %s's value would be dropped unseen; let one of them set %s, or give the later an effect that reads %s", later.reg.Root.Name, later.what(), st.Data.Name, p.Name, earlier.what(), earlier.reg.Root.Name, step, earlier.reg.Root.Name, st.Data.Name, st.Data.Name)
		}
	}
}
