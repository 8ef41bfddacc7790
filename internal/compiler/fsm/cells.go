package fsm

import (
	"fmt"
	"go/token"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// stateLists adds the rules of each state's ignore and reject lists; a
// "*" list resolves every event the state has no rule for.
func (b *builder) stateLists() {
	b.other = map[*State]otherList{}
	for _, s := range b.all {
		ss := b.specOf[s]
		for _, list := range []struct {
			names []spec.String
			kind  RuleKind
		}{{ss.Ignore, Ignore}, {ss.Reject, Reject}, {ss.Defer, Defer}} {
			for _, n := range list.names {
				if s.Transient && list.kind == Defer {
					b.errorf(n.Pos, "transient state %s receives no events, so it defers none", s.Name)
					break
				}
				if s.Transient {
					b.errorf(n.Pos, "transient state %s receives no events, so it ignores or rejects none", s.Name)
					break
				}
				if n.Value == "*" && list.kind == Defer {
					b.errorf(n.Pos, "a state defers events by name, not \"*\": list the events %s defers", s.Name)
					continue
				}
				if n.Value == "*" {
					if prev, ok := b.other[s]; ok {
						b.errorf(n.Pos, "state %s already resolves every other event at %s", s.Name, prev.pos)
						continue
					}
					if len(list.names) > 1 {
						b.errorf(n.Pos, "\"*\" stands alone in a %s list: it already means every other event", list.kind)
						continue
					}
					b.other[s] = otherList{kind: list.kind, pos: n.Pos}
					continue
				}
				e := b.event(n)
				if e == nil {
					continue
				}
				if e.Builtin {
					b.errorf(n.Pos, "%s is the event of the timers: a state without a running timer already ignores it", e.Name)
					continue
				}
				r := &Rule{Kind: list.kind, From: s, Event: e, Pos: n.Pos, Listed: true}
				if list.kind == Reject {
					r.Reason = refusal(s, e)
				}
				rows := b.rowsOf(s)
				if prev := rows[e.Index]; prev != nil {
					b.errorf(n.Pos, "%s is listed under %s but already handled at %s: remove it from one of them", pairName(s, e), list.kind, prev.pos)
					continue
				}
				rows[e.Index] = &pending{rules: []*Rule{r}, pos: n.Pos}
			}
		}
	}
}

// refusal is the reason a state's reject list gives: "X is not accepted
// in state S", or for a composite state "X is not accepted while in S".
func refusal(s *State, e *Event) string {
	if s.Composite() {
		return fmt.Sprintf("%s is not accepted while in %s", e.Name, s.Name)
	}
	return fmt.Sprintf("%s is not accepted in state %s", e.Name, s.Name)
}

// rowsOf returns the rows of a state, by event, allocating them.
func (b *builder) rowsOf(s *State) []*pending {
	if s.Composite() {
		if b.shared[s] == nil {
			b.shared[s] = make([]*pending, len(b.m.Events))
		}
		return b.shared[s]
	}
	if b.rows[s.Index] == nil {
		b.rows[s.Index] = make([]*pending, len(b.m.Events))
	}
	return b.rows[s.Index]
}

// data lays out the machine's storage: one entry per field name and type
// of the states, shared by the states that have it.
func (b *builder) data() {
	type key struct{ name, typ string }
	byKey := map[key]*Data{}
	used := map[string]bool{}
	for _, s := range b.all {
		for _, f := range s.Fields {
			k := key{f.Name, f.Type}
			d := byKey[k]
			if d == nil {
				base := b.names.LowerName(f.Name)
				goName := base
				for i := 2; used[goName] || token.IsKeyword(goName); i++ {
					goName = fmt.Sprintf("%s%d", base, i)
				}
				used[goName] = true
				d = &Data{Name: f.Name, Type: f.Type, GoType: f.GoType, GoName: goName, Zero: b.zero(f.Type)}
				byKey[k] = d
				b.m.Data = append(b.m.Data, d)
			}
			if !s.Composite() {
				d.States = append(d.States, s)
			}
			f.Data = d
		}
	}
}

// applies reports whether the shared row p gives state s its rules for
// the event: never to a transient state, and never to a terminal state
// that one of its rules would lead out.
func applies(s *State, p *pending) bool {
	if s.Transient {
		return false
	}
	if s.Terminal {
		for _, r := range p.rules {
			if r.Kind == Transition && r.To != nil && r.To != s {
				return false
			}
		}
	}
	return true
}

// cells orders the rules into cells, numbers them, and reports the pairs
// nothing resolves. A state handles an event with a rule of its own, or
// else leaves it to the innermost ancestor with a rule for it, or else to
// a "*" row.
func (b *builder) cells() {
	m := b.m
	b.sharedCells, b.users, b.cellOf = map[sharedKey]*Cell{}, map[*Cell][]*State{}, map[*Rule]*Cell{}
	var inherited []*Cell // a state's, gathered here and copied once to its exact size
	for _, s := range m.States {
		if s.Transient || s.Rests() || s.Waits {
			p := b.eventless[s.Index]
			if p == nil && !s.Waits {
				b.errorf(s.Pos, "transient state %s has no eventless transitions: add transitions from it without \"on\"", s.Name)
				continue
			}
			s.Choice = &Cell{State: s, Rules: b.waitRules(s, p)}
			b.number(s.Choice)
			if s.Transient {
				continue
			}
		}
		var missing []string
		inherited = inherited[:0]
		for _, e := range m.Events {
			if e.Builtin {
				continue
			}
			var p *pending
			if b.rows[s.Index] != nil {
				p = b.rows[s.Index][e.Index]
			}
			if p == nil && !b.par.covers(s, e) {
				// (a parallel state's "*" list takes no event one of
				// its regions always takes)
				p = b.others(s, e)
			}
			if p == nil {
				if c := b.inherited(s, e); c != nil {
					inherited = append(inherited, c)
					b.users[c] = append(b.users[c], s)
				} else if !b.par.covers(s, e) {
					missing = append(missing, e.Name)
				}
				continue
			}
			c := &Cell{State: s, Event: e, Rules: p.rules}
			if len(p.rules) == 1 && p.rules[0].Kind != Transition && p.rules[0].Guard == nil {
				s.Refuses = append(s.Refuses, c)
			} else {
				s.Handles = append(s.Handles, c)
			}
			b.number(c)
		}
		if len(inherited) > 0 {
			s.Inherited = slices.Clone(inherited)
		}
		if p := b.parDone[s]; p != nil {
			// A parallel state's done transition (see parallelDoneRows).
			s.Completion = &Cell{State: s, Rules: p.rules}
			b.number(s.Completion)
		}
		for _, p := range b.groupDone {
			if p.state == s {
				c := &Cell{State: s, Rules: p.rules}
				b.number(c)
				s.groupDone = append(s.groupDone, c)
			}
		}
		b.reportMissing(s, missing)
	}
	b.fallbacks()
	b.doneEntersAgain()
	comps := slices.Clone(m.Composites)
	slices.SortStableFunc(comps, func(a, c *State) int { return c.Depth - a.Depth })
	for _, owner := range append(comps, nil) {
		for _, e := range m.Events {
			if c := b.sharedCells[sharedKey{owner, e}]; c != nil {
				m.Shared = append(m.Shared, c)
				b.number(c)
			}
		}
	}
	for _, t := range m.Timers {
		b.number(t.Cell)
		if t.State.Composite() {
			for _, s := range m.States {
				if t.State.Contains(s) {
					b.users[t.Cell] = append(b.users[t.Cell], s)
				}
			}
		}
	}
	if b.par != nil {
		for _, t := range b.par.leftTimers {
			b.number(t.Cell) // see parleave.go
		}
		for _, c := range b.par.quietCells {
			b.number(c) // see parleaveeventless.go
		}
	}
	if m.TimerFired != nil {
		pos := b.par.timerPos()
		if len(m.Timers) > 0 {
			pos = m.Timers[0].Pos
		}
		m.Stale = &Rule{Kind: Ignore, Event: m.TimerFired, Pos: pos, Reason: "the timer is not running"}
		b.number(&Cell{Event: m.TimerFired, Rules: []*Rule{m.Stale}})
	}
	for _, p := range b.wild {
		if p != nil && b.cellOf[p.rules[0]] == nil {
			e := p.rules[0].Event
			b.diags.Warnf(p.pos, "the \"*\" row for %s applies to no state: every state handles %s itself; remove the row", e.Name, e.Name)
		}
	}
	for owner, rows := range b.shared {
		for _, p := range rows {
			if p != nil && b.cellOf[p.rules[0]] == nil {
				b.diags.Warnf(p.pos, "the rule of %s for %s applies to no state: every state in %s handles %s itself; remove the rule", owner.Name, p.rules[0].Event.Name, owner.Name, p.rules[0].Event.Name)
			}
		}
	}
}

// inherited returns the shared cell that gives leaf s its rules for e:
// the innermost ancestor's that has a row (or an "ignore: *" or
// "reject: *"), else the "*" row's; nil when none applies.
func (b *builder) inherited(s *State, e *Event) *Cell {
	for a := s.Parent; ; a = a.Parent {
		var p *pending
		if a == nil {
			p = b.wild[e.Index]
		} else if rows := b.shared[a]; rows != nil && rows[e.Index] != nil {
			p = rows[e.Index]
		} else if k := (sharedKey{a, e}); b.sharedCells[k] != nil {
			p = &pending{rules: b.sharedCells[k].Rules}
		} else {
			p = b.others(a, e)
		}
		if p != nil {
			if !applies(s, p) {
				return nil
			}
			k := sharedKey{a, e}
			c := b.sharedCells[k]
			if c == nil {
				c = &Cell{Owner: a, Event: e, Rules: p.rules}
				b.sharedCells[k] = c
			}
			return c
		}
		if a == nil {
			return nil
		}
	}
}

// fallbacks gives every chain of guards without else the cell its event
// goes to when no guard holds: the rule of the innermost state around the
// chain's state with one for the event, else the "*" row (SCXML's and
// UML's selection of transitions: a state's transitions are tried in
// document order, then its parent's). The states that take the chain take
// that rule too. A chain with nothing around it is an error. Chains are
// resolved innermost first, so that a cell's states are all known before
// its own chain falls back.
func (b *builder) fallbacks() {
	m := b.m
	for _, s := range m.States {
		for _, c := range s.Handles {
			if c.Open() {
				b.fallback(c, s, []*State{s})
			}
		}
	}
	done := map[*Cell]bool{}
	for {
		var next *Cell
		for k, c := range b.sharedCells {
			if done[c] || !c.Open() || k.owner == nil {
				continue
			}
			if next == nil || c.Owner.Depth > next.Owner.Depth ||
				c.Owner.Depth == next.Owner.Depth && (c.Owner.Index < next.Owner.Index || c.Owner == next.Owner && c.Event.Index < next.Event.Index) {
				next = c
			}
		}
		if next == nil {
			return
		}
		done[next] = true
		b.fallback(next, next.Owner, b.users[next])
	}
}

// fallback resolves the fallback of open cell c, the rule of state owner
// that states take.
func (b *builder) fallback(c *Cell, owner *State, states []*State) {
	f := b.inherited(owner, c.Event)
	if f == nil && b.par.covers(owner, c.Event) {
		// Rules that leave a parallel state from the states of a region
		// that leave the event to it (see parleave.go): the regions take
		// the event in every other state, so the guards never all fail.
		return
	}
	if f == nil && b.par.openLeave(b, c, owner) {
		return // named (see parleaveguards.go)
	}
	if f == nil {
		pos := c.Rules[0].Pos
		if rows := b.shared[owner]; owner.Composite() && rows != nil && rows[c.Event.Index] != nil {
			pos = rows[c.Event.Index].pos
		} else if !owner.Composite() && b.rows[owner.Index] != nil && b.rows[owner.Index][c.Event.Index] != nil {
			pos = b.rows[owner.Index][c.Event.Index].pos
		}
		if where := b.par.reaching(owner, c.Event.Name); where != "" && slices.ContainsFunc(c.Rules, b.par.leaves) {
			// The rules that leave the parallel state from inside a
			// region (parleave.go), their guards ending in else or not,
			// hold only in their sources.
			b.errorf(owner.Pos, "parallel state %s does not handle event %s, which reaches it %s: add a transition from %s, list %s under its ignore or reject, or handle it in those states", owner.Name, c.Event.Name, where, owner.Name, c.Event.Name)
			return
		}
		b.errorf(pos, "guards of %s end without an else branch, and no state around %s nor a \"*\" row has a rule for %s: add \"- else: true\" saying what happens when no guard holds", pairName(owner, c.Event), owner.Name, c.Event.Name)
		return
	}
	c.Fallback = f
	for _, s := range states {
		if !slices.Contains(b.users[f], s) {
			b.users[f] = append(b.users[f], s)
		}
	}
}

// reportMissing reports the events a state resolves in no way: one error
// per event, where the message can say more of it (a parallel state's
// names where each reaches it), or one for them all when there are many,
// naming up to listed of them.
func (b *builder) reportMissing(s *State, missing []string) {
	const each, listed = 3, 12
	names := strings.Join(missing[:min(len(missing), listed)], ", ")
	if len(missing) > listed {
		names = fmt.Sprintf("%s and %d more", names, len(missing)-listed)
	}
	where := make([]string, len(missing))
	reaches := false
	for i, name := range missing {
		where[i] = b.par.reaching(s, name)
		reaches = reaches || where[i] != ""
	}
	switch {
	case s.Rests() && len(missing) <= each:
		// A final state that may rest has no rules of its own.
		for _, name := range missing {
			b.errorf(s.Pos, "final state %s (where the machine rests when no guard of the done transition of %s holds) does not handle event %s: add a transition from %s or a state around it, or list %s under its ignore or reject", s.Name, s.Completes.Name, name, s.Completes.Name, name)
		}
	case s.Rests():
		b.errorf(s.Pos, "final state %s (where the machine rests when no guard of the done transition of %s holds) does not handle %d events (%s): add transitions from %s or a state around it, or list them under its ignore or reject", s.Name, s.Completes.Name, len(missing), names, s.Completes.Name)
	case len(missing) <= each || reaches:
		for i, name := range missing {
			switch {
			case where[i] != "":
				b.errorf(s.Pos, "parallel state %s does not handle event %s, which reaches it %s: add a transition from %s, list %s under its ignore or reject, or handle it in those states", s.Name, name, where[i], s.Name, name)
			case s.Terminal:
				b.errorf(s.Pos, "state %s does not handle event %s: list %s under the state's ignore or reject (ignore: \"*\" ignores every event the terminal state has no rule for)", s.Name, name, name)
			default:
				b.errorf(s.Pos, "state %s does not handle event %s: add a transition, or list %s under the state's ignore or reject", s.Name, name, name)
			}
		}
	case s.Terminal:
		b.errorf(s.Pos, "state %s does not handle %d events (%s): list them under the state's ignore or reject (ignore: \"*\" ignores every event the terminal state has no rule for)", s.Name, len(missing), names)
	default:
		b.errorf(s.Pos, "state %s does not handle %d events (%s): add transitions, or list them under the state's ignore or reject", s.Name, len(missing), names)
	}
}

func (b *builder) number(c *Cell) {
	for _, r := range c.Rules {
		b.cellOf[r] = c
		b.m.Ignores = b.m.Ignores || r.Kind == Ignore
		b.m.Rejects = b.m.Rejects || r.Kind == Reject
		r.Index = len(b.m.Rules)
		r.Label = RuleLabel(r)
		b.m.Rules = append(b.m.Rules, r)
		if r.History != nil && r.Variants == nil {
			// Made once the rule is complete: each variant is the rule
			// but for where it leads.
			b.historyVariants(r)
		}
		for _, v := range r.Variants {
			b.cellOf[v] = c
			v.Index = len(b.m.Rules)
			v.Label = RuleLabel(v)
			b.m.Rules = append(b.m.Rules, v)
		}
	}
}

// sources returns the states whose data rule r reads: its own, or every
// state that leaves its event to a shared rule.
func (b *builder) sources(r *Rule) []*State {
	if !r.Shared() {
		return []*State{r.From}
	}
	return b.users[b.cellOf[r]]
}

// resolve works out what every rule passes, stores, clears and emits, and
// reports the fields that nothing fills.
func (b *builder) resolve() {
	for _, r := range b.m.Rules {
		if r.Guard != nil {
			r.Guard.Uses = append(r.Guard.Uses, r)
		}
		if r.Effect != nil {
			r.Effect.Uses = append(r.Effect.Uses, r)
		}
		if r.Kind != Transition && r.Guard == nil {
			continue
		}
		b.routes(r)
		if r.Timer != nil && r.Kind == Transition && !slices.ContainsFunc(r.Exits, func(run *Run) bool { return run.State == r.Timer.State }) {
			r.Spends = r.Timer
		}
		fl := &flow{b: b, r: r, from: b.sources(r)}
		fl.run()
	}
	for _, s := range b.m.States {
		for _, c := range append(append([]*Cell(nil), s.Handles...), s.Choice) {
			b.markReads(c)
		}
	}
	for _, c := range b.m.Shared {
		b.markReads(c)
	}
	for _, t := range b.m.Timers {
		b.markReads(t.Cell)
	}
}

// markReads sets c.ReadsEvent, and the machine's ReadsEvents, when a rule
// of c reads its event.
func (b *builder) markReads(c *Cell) {
	if c == nil || c.Event == nil {
		return
	}
	for _, r := range c.Rules {
		vals := append(append([]Value(nil), r.GuardArgs...), r.EffectArgs...)
		for _, st := range r.Stores {
			vals = append(vals, st.Value)
		}
		for _, e := range r.Actions {
			vals = append(vals, e.Args...)
		}
		for _, v := range vals {
			if v.Source == FromEvent {
				c.ReadsEvent, b.m.ReadsEvents = true, true
				return
			}
		}
	}
}
