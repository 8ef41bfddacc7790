package fsm

import (
	"fmt"
	"slices"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file resolves the hierarchy of a spec at generate time: composite
// states, their shared rules, entry and exit (timers.go: the states' hooks
// and timers). The machine it leaves is flat: its states are the leaves,
// numbered depth first, and every rule knows which states it leaves and
// enters, so the generated code walks no tree at run time.

// readStates reads the spec's states, depth first: the leaves go to
// Machine.States, the composite states to Machine.Composites.
func (b *builder) readStates() {
	m := b.m
	var top *State
	var walk func(list []spec.State, parent *State)
	walk = func(list []spec.State, parent *State) {
		for i := range list {
			ss := &list[i]
			s := &State{Decl: b.decl("state", ss.Name, ss.Doc, ss.GoName, ss.Fields, ss.RenamedFrom, 0), Parent: parent}
			s.Terminal, s.Transient = ss.Terminal.Value, ss.Transient.Value
			s.Own = s.Fields
			b.all = append(b.all, s)
			if parent != nil {
				parent.Children = append(parent.Children, s)
			}
			if parent != nil {
				s.Depth = parent.Depth + 1
				s.Fields = b.inherit(s, parent)
			}
			if s.GoName != "" {
				if prev, ok := b.states[s.Name]; ok {
					b.errorf(ss.Name.Pos, "state %s is declared twice (also at %s): state names are unique across the whole machine", s.Name, prev.Pos)
				} else {
					b.states[s.Name] = s
				}
			}
			b.specOf[s] = ss
			if ss.Initial.Value {
				switch {
				case parent == nil && top != nil:
					b.errorf(ss.Initial.Pos, "state %s is marked initial, but %s (%s) already is: a machine has one initial state", s.Name, top.Name, top.Pos)
				case parent == nil:
					top = s
				case parent.InitialChild != nil:
					b.errorf(ss.Initial.Pos, "state %s is marked initial, but %s (%s) already is: a composite state has one initial child", s.Name, parent.InitialChild.Name, parent.InitialChild.Pos)
				default:
					parent.InitialChild = s
				}
			}
			if len(ss.States) == 0 {
				if ss.StatesPos.Line > 0 {
					b.errorf(ss.StatesPos, "state %s has an empty \"states\": list its substates, or remove the key", s.Name)
				}
				if s.Transient && s.Terminal {
					b.errorf(ss.Transient.Pos, "state %s cannot be transient and terminal: a transient state is left in the step that enters it", s.Name)
				}
				s.Index = len(m.States)
				m.States = append(m.States, s)
				continue
			}
			s.Children = []*State{}
			s.KindName = "" // composite states have no kind: the machine is in one of their leaves
			for _, flag := range []struct {
				set  spec.Bool
				what string
			}{{ss.Terminal, "terminal"}, {ss.Transient, "transient"}} {
				if flag.set.Value {
					b.errorf(flag.set.Pos, "composite state %s cannot be %s: mark one of its leaves instead", s.Name, flag.what)
				}
			}
			s.Terminal, s.Transient = false, false
			s.Index = len(m.Composites)
			m.Composites = append(m.Composites, s)
			first := len(m.States)
			walk(ss.States, s) // each child adds itself to s.Children
			if len(m.States) > first {
				s.First, s.Last = m.States[first], m.States[len(m.States)-1]
			}
			if s.InitialChild == nil {
				b.errorf(ss.Name.Pos, "composite state %s has no initial child: mark the state it is entered through \"initial: true\"", s.Name)
			}
		}
	}
	walk(b.f.States, nil)
	if top == nil && len(b.f.States) > 0 {
		b.errorf(b.f.States[0].Name.Pos, "no state is marked \"initial: true\": mark the state the machine starts in")
		return
	}
	if top != nil {
		m.Initial = descend(top)
		if m.Initial != nil {
			m.Initial.Initial = true
		}
	}
}

// descend returns the leaf a state is entered down to, through the
// initial children; nil when a composite state has none.
func descend(s *State) *State {
	for s != nil && s.Composite() {
		s = s.InitialChild
	}
	return s
}

// inherit returns the fields of s: its parent's, then its own, reporting
// a field declared again.
func (b *builder) inherit(s, parent *State) []*Field {
	out := make([]*Field, 0, len(parent.Fields)+len(s.Own))
	for _, f := range parent.Fields {
		cp := *f
		out = append(out, &cp)
	}
	for _, f := range s.Own {
		if prev := parent.Field(f.Name); prev != nil {
			b.errorf(f.Pos, "field %s of state %s is already a field of %s (%s): a substate has its ancestors' fields; remove it here", f.Name, s.Name, b.fieldOwner(parent, f.Name), prev.Pos)
			continue
		}
		out = append(out, f)
	}
	return out
}

// fieldOwner names the ancestor (or state) that declares a field.
func (b *builder) fieldOwner(s *State, name string) string {
	for ; s != nil; s = s.Parent {
		for _, f := range s.Own {
			if f.Name == name {
				return s.Name
			}
		}
	}
	return "an ancestor"
}

// fieldNames lists field names for messages: "a and b", or "nothing".
func fieldNames(fs []*Field) string {
	if len(fs) == 0 {
		return "nothing"
	}
	var names []string
	for _, f := range fs {
		names = append(names, f.Name+" "+f.Type)
	}
	return joinOr(names)
}

// routes works out the states a rule that moves leaves and enters: it
// leaves the states up to the rule's domain (the innermost state that
// properly contains both its source and its target; the source itself
// for a local rule) and enters those below it down to To.
func (b *builder) routes(r *Rule) {
	if r.Kind != Transition || r.To == nil {
		return
	}
	owner := r.From
	if r.Done != nil {
		// A done transition is the composite state's: its domain is
		// worked out from it, and it leaves the final leaf and every
		// state up to the domain.
		owner = r.Done
	}
	var domain *State
	if r.Local {
		domain = owner
	} else if r.History != nil {
		domain = historyDomain(owner, r.History)
	} else if owner != nil {
		// The innermost proper ancestor of the source that contains the
		// target and is not the target itself: a transition to an
		// enclosing state leaves it and enters it again (SCXML's LCCA).
		for domain = owner.Parent; domain != nil && (!domain.Contains(r.Target) || domain == r.Target); domain = domain.Parent {
		}
	}
	b.remembers(r, domain)
	hooked := func(s *State) bool { return s.Exit != nil || len(s.Timers) > 0 || b.parallel(s) }
	if r.Shared() {
		// The states inside the owner that the machine may be in when the
		// rule fires: leaves first (only one is active), then composite
		// states deepest first.
		users := b.users[b.cellOf[r]]
		var inner []*State
		for _, s := range users {
			if hooked(s) && s != owner {
				inner = append(inner, s)
			}
		}
		var comps []*State
		for _, c := range b.m.Composites {
			if c == owner || owner != nil && !owner.Contains(c) || !hooked(c) {
				continue
			}
			if slices.ContainsFunc(users, func(u *State) bool { return c.Contains(u) }) {
				comps = append(comps, c)
			}
		}
		slices.SortStableFunc(comps, func(a, c *State) int { return c.Depth - a.Depth })
		for _, s := range append(inner, comps...) {
			r.Exits = append(r.Exits, &Run{State: s, When: s})
		}
	}
	start := owner
	if r.Done != nil {
		start = r.From
	}
	if r.Shared() && owner != nil {
		start = owner // the owner and its ancestors are left unconditionally
	}
	for s := start; s != nil && s != domain; s = s.Parent {
		if hooked(s) {
			r.Exits = append(r.Exits, &Run{State: s})
		}
	}
	for _, s := range entryPath(domain, r.Target) {
		if s.Entry != nil || len(s.Timers) > 0 || b.parallel(s) {
			r.Entries = append(r.Entries, b.resumes(r, &Run{State: s, Entry: true}))
		}
	}
}

// entryPath returns the states entered from inside domain (nil: the top)
// down to target and, below it, through the initial children to a leaf,
// outermost first.
func entryPath(domain, target *State) []*State {
	var out []*State
	for _, s := range target.Path() {
		if domain == nil || s.Depth > domain.Depth {
			out = append(out, s)
		}
	}
	for s := target; s.Composite() && s.InitialChild != nil; s = s.InitialChild {
		out = append(out, s.InitialChild)
	}
	return out
}

// runCtx is what resolving a run needs to know of the rule around it.
type runCtx struct {
	// taken are the local names in use in the generated step.
	taken map[string]bool
	// written marks the storage the step writes.
	written map[*Data]bool
	// firing is the timer whose rule runs: leaving its state does not
	// cancel it, since it has just fired.
	firing *Timer
}

// local returns a fresh local name based on name.
func (c *runCtx) local(name string) string {
	l := name
	for i := 2; c.taken[l]; i++ {
		l = fmt.Sprintf("%s%d", name, i)
	}
	c.taken[l] = true
	return l
}

// resolveRun works out what one entry or exit passes, stores and emits:
// its effect reads the state's fields and gives its results to the
// state's own fields (an entry) and to its actions.
func (b *builder) resolveRun(run *Run, c *runCtx) {
	s := run.State
	h := run.Hook()
	what := "exit"
	if run.Entry {
		what = "entry"
	}
	results := map[string]*Field{}
	local := map[*Field]string{}
	placed := map[*Field]bool{}
	if h != nil && h.Effect != nil {
		fn := h.Effect
		fn.Hooks = append(fn.Hooks, s)
		run.EffectArgs = b.stateReads(fn, s, c, what)
		for _, set := range fn.Sets {
			results[set.Name] = set
			local[set] = c.local(set.Param)
			run.Results = append(run.Results, local[set])
		}
		// Inside a region an entry or exit effect sets the parallel
		// state's fields; elsewhere an entry's sets the state's own.
		if run.Entry || b.par.inRegion() {
			for _, set := range fn.Sets {
				f := s.Field(set.Name)
				if f == nil || !slices.Contains(s.Own, f) && !b.par.inRegion() {
					continue
				}
				placed[set] = true
				if f.Type != set.Type {
					b.errorf(h.Pos, "effect %s sets %s as %s, but state %s's %s is %s: make the types agree", fn.Name, set.Name, set.Type, s.Name, f.Name, f.Type)
					continue
				}
				st := Store{Data: f.Data, Value: Value{Source: FromResult, Result: set, Local: local[set]}}
				run.Stores = append(run.Stores, st)
				c.written[f.Data] = true
			}
		}
	}
	if !run.Entry {
		for _, t := range s.Timers {
			if t != c.firing {
				run.Actions = append(run.Actions, &Emit{Action: b.m.CancelTimer, Args: []Value{{Source: FromTimer, Timer: t}}})
			}
		}
	}
	if h != nil {
		for _, a := range h.Actions {
			e := &Emit{Action: a}
			for _, af := range a.Fields {
				if set := results[af.Name]; set != nil {
					placed[set] = true
					if set.Type != af.Type {
						b.errorf(h.Pos, "effect %s sets %s as %s, but action %s's %s is %s: make the types agree", h.Effect.Name, set.Name, set.Type, a.Name, af.Name, af.Type)
					}
					e.Args = append(e.Args, Value{Source: FromResult, Result: set, Local: local[set]})
					continue
				}
				f := s.Field(af.Name)
				switch {
				case f == nil:
					b.errorf(h.Pos, "field %s of action %s is not filled on %s of state %s: the state has no field %s; give it the field, or an %s effect that sets it", af.Name, a.Name, what, s.Name, af.Name, what)
				case f.Type != af.Type:
					b.errorf(h.Pos, "field %s of action %s is %s, but state %s's %s is %s: make the types agree", af.Name, a.Name, af.Type, s.Name, f.Name, f.Type)
				}
				if f == nil {
					e.Args = append(e.Args, Value{})
					continue
				}
				e.Args = append(e.Args, Value{Source: FromData, Data: f.Data})
			}
			run.Actions = append(run.Actions, e)
		}
		if h.Effect != nil {
			for _, set := range h.Effect.Sets {
				if !placed[set] {
					takers := [][]*Field{}
					if run.Entry {
						takers = append(takers, s.Own)
					}
					for _, a := range h.Actions {
						takers = append(takers, a.Fields)
					}
					b.errorf(h.Pos, "effect %s sets %s, but nothing on %s of state %s takes it: neither the state's own fields nor its %s actions have %s %s%s", h.Effect.Name, set.Name, what, s.Name, what, set.Name, set.Type, didYouMean(set.Name, h.Effect.Sets, takers...))
				}
			}
		}
	}
	for _, t := range s.Timers {
		if !run.Entry {
			break
		}
		delay := Value{Source: FromConst, Timer: t}
		if t.DelayFunc != nil {
			d := &Delay{Timer: t, Args: t.DelayArgs, Local: c.local("delay")}
			run.Delays = append(run.Delays, d)
			delay = Value{Source: FromResult, Result: t.DelayFunc.Sets[0], Local: d.Local}
		}
		run.Actions = append(run.Actions, &Emit{Action: b.m.StartTimer, Args: []Value{{Source: FromTimer, Timer: t}, delay}})
	}
}

// stateReads resolves the reads of a function that runs on entry, exit or
// for a timer: the state's fields.
func (b *builder) stateReads(fn *Func, s *State, c *runCtx, what string) []Value {
	var out []Value
	for _, rd := range fn.Reads {
		f := s.Field(rd.Name)
		switch {
		case f == nil:
			b.errorf(fn.Pos, "effect %s runs on %s of state %s and reads %s, but the state has no field %s%s: an %s effect reads the state's fields", fn.Name, what, s.Name, rd.Name, rd.Name, didYouMean(rd.Name, fn.Reads, s.Fields), what)
		case f.Type != rd.Type:
			b.errorf(fn.Pos, "effect %s reads %s as %s, but state %s's %s is %s: declare the same type in both places", fn.Name, rd.Name, rd.Type, s.Name, f.Name, f.Type)
		default:
			out = append(out, Value{Source: FromData, Data: f.Data})
			continue
		}
		out = append(out, Value{})
	}
	return out
}

// timerArgs resolves what the delay functions of the timers read.
func (b *builder) timerArgs() {
	for _, t := range b.m.Timers {
		if t.DelayFunc != nil {
			t.DelayArgs = b.stateReads(t.DelayFunc, t.State, nil, "timer")
		}
	}
	if len(b.m.Timers) > 0 {
		b.m.ReadsEvents = true // the timers' dispatch reads TimerFired's id
	}
}

// start resolves the entries New runs: the initial state and its
// ancestors, outermost first.
func (b *builder) start() {
	m := b.m
	if m.Initial == nil {
		return
	}
	c := &runCtx{taken: map[string]bool{"m": true, "b": true, "h": true, "initial": true}, written: map[*Data]bool{}}
	for _, s := range m.Initial.Path() {
		if s.Entry != nil || len(s.Timers) > 0 || b.parallel(s) {
			run := &Run{State: s, Entry: true}
			b.resolveRun(run, c)
			m.Start = append(m.Start, run)
		}
	}
}

// others returns the rule with which state s ignores or rejects event e
// through its "ignore: *" or "reject: *", creating it on first use; nil
// when s has no such list.
func (b *builder) others(s *State, e *Event) *pending {
	o, ok := b.other[s]
	if !ok {
		return nil
	}
	r := &Rule{Kind: o.kind, From: s, Event: e, Pos: o.pos, Listed: true, Others: true}
	if o.kind == Reject {
		r.Reason = refusal(s, e)
	}
	return &pending{rules: []*Rule{r}, pos: o.pos}
}

// otherList is a state's "ignore: *" or "reject: *".
type otherList struct {
	kind RuleKind
	pos  diag.Pos
}
