package fsm

import (
	"slices"

	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file gives the rules inside the regions of a parallel state the
// parallel state's fields. A region's build (see regionSpec) gives its
// own state, the top of that build, the fields the parallel state has,
// its own and its ancestors': every state of the region then has them
// (a composite state's fields are its states'), so the region's rules
// read them in their guards and effects, set them with effects, set and
// with, and carry them over as any rule does. join then points the
// storage the region's rules name at the machine's (rejoinData).

// parallelFields returns the fields of parallel state par as the machine
// has them: those of its ancestors, outermost first, then its own.
func parallelFields(list []spec.State, par *spec.State) []spec.Field {
	for i := range list {
		s := &list[i]
		if s == par {
			return append([]spec.Field(nil), s.Fields...)
		}
		if inner := parallelFields(s.States, par); inner != nil || holds(s.States, par) {
			return append(append([]spec.Field(nil), s.Fields...), inner...)
		}
	}
	return nil
}

// holds reports whether par is one of list's states or inside one.
func holds(list []spec.State, par *spec.State) bool {
	for i := range list {
		if &list[i] == par || holds(list[i].States, par) {
			return true
		}
	}
	return false
}

// rejoinData points what region rule r reads, stores, clears and keeps at
// the machine's storage: a region's build has storage of its own for the
// parallel state's fields, which the machine holds once.
func rejoinData(m *Machine, r *Rule) {
	for _, vs := range [][]Value{r.GuardArgs, r.EffectArgs} {
		rejoinValues(m, vs)
	}
	for i := range r.Stores {
		r.Stores[i].Data = dataOf(m, r.Stores[i].Data)
		rejoinValues(m, []Value{r.Stores[i].Value})
		r.Stores[i].Value.Data = dataOf(m, r.Stores[i].Value.Data)
	}
	for i, d := range r.Clears {
		r.Clears[i] = dataOf(m, d)
	}
	for i, d := range r.Keeps {
		r.Keeps[i] = dataOf(m, d)
	}
	for i := range r.Captures {
		r.Captures[i].Data = dataOf(m, r.Captures[i].Data)
	}
	for _, e := range r.Actions {
		rejoinValues(m, e.Args)
	}
	for _, run := range append(append([]*Run{}, r.Exits...), r.Entries...) {
		rejoinRunData(m, run)
	}
}

// rejoinRunData points an entry's or exit's values at the machine's
// storage.
func rejoinRunData(m *Machine, run *Run) {
	rejoinValues(m, run.EffectArgs)
	for i := range run.Stores {
		run.Stores[i].Data = dataOf(m, run.Stores[i].Data)
		rejoinValues(m, []Value{run.Stores[i].Value})
		run.Stores[i].Value.Data = dataOf(m, run.Stores[i].Value.Data)
	}
	for _, e := range run.Actions {
		rejoinValues(m, e.Args)
	}
	for _, d := range run.Delays {
		rejoinValues(m, d.Args)
	}
}

// rejoinValues points the storage values of vs at the machine's storage.
func rejoinValues(m *Machine, vs []Value) {
	for i := range vs {
		vs[i].Data = dataOf(m, vs[i].Data)
	}
}

// dataOf returns the machine's storage of d's name and type; nil for nil.
func dataOf(m *Machine, d *Data) *Data {
	if d == nil {
		return nil
	}
	for _, o := range m.Data {
		if o.Name == d.Name && o.Type == d.Type {
			return o
		}
	}
	return d
}

// rejoinEffect points region rule r at the machine's effect.
func rejoinEffect(m *Machine, r *Rule) {
	if r.Effect == nil {
		return
	}
	for _, fn := range m.Effects {
		if fn.Name == r.Effect.Name {
			r.Effect = fn
			fn.Uses = append(fn.Uses, r)
		}
	}
}

// rejoinHooks points the effects of the entry and exit of state s,
// inside a region, at the machine's.
func rejoinHooks(m *Machine, s *State) {
	for _, h := range []*Hook{s.Entry, s.Exit} {
		if h == nil || h.Effect == nil {
			continue
		}
		for _, fn := range m.Effects {
			if fn.Name == h.Effect.Name {
				h.Effect = fn
				if !slices.Contains(fn.Hooks, s) {
					fn.Hooks = append(fn.Hooks, s)
				}
			}
		}
	}
}

// regionEffects returns the effects region rules run, in order.
func regionEffects(rules []*Rule) []*Func {
	var out []*Func
	for _, r := range rules {
		if r.Kind == Transition && r.Effect != nil {
			out = append(out, r.Effect)
		}
	}
	return out
}

// eventWord names what a step takes in messages: an event, or the
// eventless rules of transient states.
func eventWord(e *Event) string {
	if e == nil {
		return "their eventless rules"
	}
	return e.Name
}

// rejoinDelayFunc points region timer t at the machine's effect that
// computes its delay.
func rejoinDelayFunc(m *Machine, t *Timer) {
	if t.DelayFunc == nil {
		return
	}
	for _, fn := range m.Effects {
		if fn.Name == t.DelayFunc.Name {
			t.DelayFunc = fn
			fn.Hooks = append(fn.Hooks, t.State)
		}
	}
}

// delayed notes that timer t, of a state inside a region, started: the
// effect that computes its delay, if any, ran then.
func (run *timerRun) delayed(t *Timer) {
	if t.DelayFunc != nil {
		run.delays = append(run.delays, t.DelayFunc)
	}
}

// drain returns the effects delayed noted, and forgets them.
func (run *timerRun) drain() []*Func {
	out := run.delays
	run.delays = nil
	return out
}
