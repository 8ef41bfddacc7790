package fsm

import (
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// transitions resolves every transition entry into rules: for each state
// it names, or once for "*", and for each event it names (a row with
// several events is one rule per event, as a row with several states is
// one per state).
func (b *builder) transitions() {
	b.rows = make([][]*pending, len(b.m.States))
	b.wild = make([]*pending, len(b.m.Events))
	b.eventless = make([]*pending, len(b.m.States))
	b.shared = map[*State][]*pending{}
	for i := range b.f.Transitions {
		t := &b.f.Transitions[i]
		if len(t.Guards) > 0 && t.Says() {
			b.errorf(t.Pos, "a transition with guards keeps to, effect, action, set, with, ignore and reject inside its branches")
			continue
		}
		evs, ok := b.rowEvents(t)
		if !ok {
			continue
		}
		for _, ev := range evs {
			b.row(t, ev)
		}
	}
	b.doneRows()
}

// rowEvents resolves the events of a transition's "on": one, several, or
// a single nil for the eventless rows of a transient state. It reports
// false when one does not resolve.
func (b *builder) rowEvents(t *spec.Transition) ([]*Event, bool) {
	var out []*Event
	ok := true
	for _, n := range t.On {
		if !n.Set {
			continue // "on: ~": no event
		}
		if n.Value == "*" {
			b.errorf(n.Pos, "on: \"*\" names no event: a row names its events; to ignore or reject every event a state has no rule for, write ignore: \"*\" or reject: under the state, and for one event in every state, from: \"*\"")
			ok = false
			continue
		}
		ev := b.event(n)
		switch {
		case ev == nil:
			ok = false
		case ev.Builtin:
			b.errorf(n.Pos, "%s is the event of the timers: give the state \"after\" instead of a transition on it", ev.Name)
			ok = false
		case slices.Contains(out, ev):
			b.errorf(n.Pos, "event %s is listed twice", ev.Name)
			ok = false
		default:
			out = append(out, ev)
		}
	}
	if !ok {
		return nil, false
	}
	if len(out) == 0 {
		return []*Event{nil}, true
	}
	return out, true
}

// onPos returns where a transition names event ev, for messages.
func onPos(t *spec.Transition, ev *Event) diag.Pos {
	for _, n := range t.On {
		if ev != nil && n.Value == ev.Name {
			return n.Pos
		}
	}
	return t.OnPos
}

// row resolves one transition entry for one of its events (nil for an
// eventless row).
func (b *builder) row(t *spec.Transition, ev *Event) {
	if len(t.From) == 1 && t.From[0].Value == "*" {
		if ev == nil {
			b.errorf(t.Pos, "a \"*\" row needs \"on\": it says what every state does with one event")
			return
		}
		if rules := b.rowRules(t, nil, ev); rules != nil {
			if prev := b.wild[ev.Index]; prev != nil {
				b.errorf(t.Pos, "\"*\" already handles %s at %s: merge the two rows into one with guards", ev.Name, prev.pos)
				return
			}
			b.wild[ev.Index] = &pending{rules: rules, pos: t.Pos}
		}
		return
	}
	for _, from := range b.froms(t) {
		if from.Composite() {
			if ev == nil {
				b.compositeWaits(t, from)
				continue
			}
			rules := b.rowRules(t, from, ev)
			if rules == nil {
				continue
			}
			if b.shared[from] == nil {
				b.shared[from] = make([]*pending, len(b.m.Events))
			}
			if prev := b.shared[from][ev.Index]; prev != nil {
				b.errorf(t.Pos, "%s is already handled at %s: two transitions for one pair can both fire; merge them into one transition with guards", pairName(from, ev), prev.pos)
				continue
			}
			b.shared[from][ev.Index] = &pending{rules: rules, pos: t.Pos}
			continue
		}
		if from.Rests() {
			b.errorf(t.Pos, "final state %s completes %s, whose done transition is tested in the step that enters it: it has no transitions of its own (SCXML 1.0 §3.7), and the events it is offered when no guard holds go to %s and the states around it; write the row from %s", from.Name, from.Completes.Name, from.Completes.Name, from.Completes.Name)
			continue
		}
		if ev == nil && !from.Transient && !b.waits(t, from) {
			continue
		}
		if from.Transient && ev != nil {
			b.errorf(onPos(t, ev), "transient state %s cannot handle event %s: it is left in the step that enters it, so give it eventless transitions (no \"on\")", from.Name, ev.Name)
			continue
		}
		rules := b.rowRules(t, from, ev)
		if rules == nil {
			continue
		}
		p := &pending{rules: rules, pos: t.Pos}
		if ev == nil {
			if prev := b.eventless[from.Index]; prev != nil {
				b.errorf(t.Pos, "%s is already handled at %s: two transitions for one pair can both fire; merge them into one transition with guards", pairName(from, nil), prev.pos)
				continue
			}
			b.eventless[from.Index] = p
			continue
		}
		if b.rows[from.Index] == nil {
			b.rows[from.Index] = make([]*pending, len(b.m.Events))
		}
		if prev := b.rows[from.Index][ev.Index]; prev != nil {
			b.errorf(t.Pos, "%s is already handled at %s: two transitions for one pair can both fire; merge them into one transition with guards", pairName(from, ev), prev.pos)
			continue
		}
		b.rows[from.Index][ev.Index] = p
	}
}

// froms resolves the states of a transition's "from".
func (b *builder) froms(t *spec.Transition) []*State {
	var out []*State
	seen := map[*State]bool{}
	for _, n := range t.From {
		if n.Value == "*" {
			b.errorf(n.Pos, "\"*\" stands alone: it already means every state")
			continue
		}
		if s := b.state(n); s != nil {
			if seen[s] {
				b.errorf(n.Pos, "state %s is listed twice", s.Name)
				continue
			}
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// rowRules makes the rules one transition entry gives one state, or "*"
// when from is nil.
func (b *builder) rowRules(t *spec.Transition, from *State, ev *Event) []*Rule {
	if len(t.Guards) == 0 {
		r := b.outcome(&t.Outcome, t.Pos, from, ev)
		if r == nil {
			return nil
		}
		return []*Rule{r}
	}
	var out []*Rule
	seen := map[guardKey]diag.Pos{}
	sawElse, ok := false, true
	for i := range t.Guards {
		br := &t.Guards[i]
		if sawElse {
			b.errorf(br.Pos, "branch after else can never fire: else must be the last branch")
			return nil
		}
		switch {
		case br.If.Set && br.Else.Set:
			b.errorf(br.Pos, "a branch has either \"if\" or \"else\", not both")
			ok = false
			continue
		case br.Else.Set:
			if !br.Else.Value {
				b.errorf(br.Else.Pos, "write \"else: true\" for the last branch, or remove it")
				ok = false
				continue
			}
			sawElse = true
		case !br.If.Set:
			b.errorf(br.Pos, "branch has no \"if\": name a guard, or write \"else: true\"")
			ok = false
			continue
		}
		r := b.outcome(&br.Outcome, br.Pos, from, ev)
		if br.If.Set {
			in, name, g := b.par.sourceIn(br.If) // see parleaveguards.go
			if g == nil {
				g = b.fn(name, Guard)
			}
			if g == nil {
				ok = false
				continue
			}
			if prev, dup := seen[keyOf(in, g)]; dup {
				b.errorf(br.If.Pos, "guard %s is already tested at %s: this branch can never fire", g.Name, prev)
				ok = false
				continue
			}
			seen[keyOf(in, g)] = br.If.Pos
			if r != nil {
				r.Guard, r.SourceIn = g, in
			}
		} else if r != nil {
			r.Else = true
		}
		if r == nil {
			ok = false
			continue
		}
		out = append(out, r)
	}
	if !ok {
		return nil
	}
	if !sawElse && (from == nil || ev == nil || ev.Builtin) && !from.Rests() && !(ev == nil && (b.parallel(from) || from.Waits)) {
		// A chain of a state's rule for an event falls back to the rule
		// around it (see fallbacks); a "*" row, a transient state's
		// eventless rules and a timer's have nothing around them. A
		// done transition's (a final state's that may rest, or a
		// parallel state's) may be refused: the machine then rests.
		b.errorf(t.Pos, "guards of %s end without an else branch: add \"- else: true\" saying what happens when no guard holds", pairName(from, ev))
		return nil
	}
	return out
}

func pairName(s *State, e *Event) string {
	from := "*"
	if s != nil {
		from = s.Name
	}
	if e == nil {
		return from + " (eventless)"
	}
	return from + " × " + e.Name
}

// outcome resolves what a transition or branch does.
func (b *builder) outcome(o *spec.Outcome, pos diag.Pos, from *State, ev *Event) *Rule {
	r := b.outcomeRule(o, pos, from, ev)
	if r != nil && len(o.Examples) > 0 {
		i := slices.IndexFunc(b.pendingEx, func(pe *pendingExamples) bool { return &pe.examples[0] == &o.Examples[0] })
		if i < 0 {
			b.pendingEx = append(b.pendingEx, &pendingExamples{examples: o.Examples})
			i = len(b.pendingEx) - 1
		}
		b.pendingEx[i].rules = append(b.pendingEx[i].rules, r)
	}
	return r
}

// outcomeRule makes the rule of an outcome.
func (b *builder) outcomeRule(o *spec.Outcome, pos diag.Pos, from *State, ev *Event) *Rule {
	r := &Rule{From: from, Event: ev, Pos: pos}
	if b.outcomeOf == nil {
		b.outcomeOf = map[*Rule]*spec.Outcome{}
	}
	b.outcomeOf[r] = o
	moves := o.To.Set || o.Effect.Set || len(o.Actions) > 0 || len(o.Set) > 0 || len(o.With) > 0
	if !b.bindings(r, o) {
		return nil
	}
	switch {
	case o.Ignore.Set && o.Reject.Set, (o.Ignore.Set || o.Reject.Set) && moves:
		b.errorf(pos, "choose one of ignore, reject, or a transition (to, effect, action, set, with)")
		return nil
	case ev == nil && from != nil && o.Ignore.Set && b.par != nil && b.par.passes[pos]:
		// A stand-in for a branch that leaves the parallel state (see
		// parleaveeventless.go and parleavedone.go).
		r.Kind = Ignore
		return r
	case ev == nil && from.Rests() && (o.Ignore.Set || o.Reject.Set):
		b.errorf(pos, "the done transition of %s has no event to ignore or reject: each branch leaves the final state %s (give it \"to\"), and when no guard holds the machine rests there", from.Completes.Name, from.Name)
		return nil
	case ev == nil && from != nil && from.Waits && (o.Ignore.Set || o.Reject.Set):
		b.errorf(pos, "%s has no event to ignore or reject in an eventless transition: each branch leaves it (give it \"to\"), and when no guard holds the machine stays in %s", from.Name, from.Name)
		return nil
	case ev == nil && from != nil && (o.Ignore.Set || o.Reject.Set):
		b.errorf(pos, "transient state %s has no event to ignore or reject: its eventless transitions must leave it", from.Name)
		return nil
	case o.Ignore.Set:
		if !o.Ignore.Value {
			b.errorf(o.Ignore.Pos, "write \"ignore: true\", or remove it")
			return nil
		}
		r.Kind = Ignore
		return r
	case o.Reject.Set:
		if strings.TrimSpace(o.Reject.Value) == "" {
			b.errorf(o.Reject.Pos, "reject needs a reason, e.g. \"reject: busy with a request\"")
			return nil
		}
		r.Kind, r.Reason = Reject, strings.TrimSpace(o.Reject.Value)
		return r
	case !moves:
		b.errorf(pos, "transition does nothing: give it to, effect, action, set or with, or ignore or reject the event")
		return nil
	}
	r.Kind = Transition
	ok := true
	if from.Rests() && !o.To.Set {
		b.errorf(pos, "a branch of the done transition of %s must leave its final state %s: give it \"to\"", from.Completes.Name, from.Name)
		return nil
	}
	if from != nil && from.Transient && !o.To.Set {
		b.errorf(pos, "an eventless transition of transient state %s must leave it: give it \"to\"", from.Name)
		return nil
	}
	if ev == nil && from != nil && from.Waits && !o.To.Set {
		b.errorf(pos, "an eventless transition of %s, which waits, must leave it: give it \"to\" (a rule without one would be tested again after itself, forever)", from.Name)
		return nil
	}
	if o.To.Set && strings.HasSuffix(o.To.Value, historySuffix) {
		if r.History = b.historyTarget(o.To); r.History == nil {
			ok = false
		} else {
			r.Target, r.To = r.History, descend(r.History)
		}
		if o.Local.Set && o.Local.Value {
			b.errorf(o.Local.Pos, "a transition into the history of %s cannot be local: remove local", o.To.Value)
			ok = false
		}
	} else if o.To.Set {
		if r.Target = b.state(o.To); r.Target == nil {
			ok = false
		} else if r.To = descend(r.Target); r.To == nil {
			ok = false // the composite's missing initial child is reported
		} else if r.To == from && from.Transient {
			b.errorf(o.To.Pos, "transient state %s cannot lead to itself: it would loop without an event", from.Name)
			ok = false
		} else if ev == nil && from != nil && r.To == from && from.Waits {
			to := "itself"
			if in := b.par.into(pos); in != "" {
				to = in + ", inside it" // a state of a parallel state's region
			}
			b.errorf(o.To.Pos, "the eventless transition of %s cannot lead to %s: entering %s tests it again, so it would loop without an event while its guard holds", from.Name, to, from.Name)
			ok = false
		}
	}
	r.into = b.par.into(pos) // a target inside a region (see parenter.go)
	if o.Local.Set && o.Local.Value && !strings.HasSuffix(o.To.Value, historySuffix) {
		switch {
		case from == nil || !from.Composite():
			b.errorf(o.Local.Pos, "local applies to a transition of a composite state into its own substates: this one has no composite source")
			ok = false
		case r.Target == nil || !from.Contains(r.Target) || r.Target == from:
			b.errorf(o.Local.Pos, "a local transition of %s must lead to one of its substates (UML: its target differs from its source); to leave and re-enter %s, remove local", from.Name, from.Name)
			ok = false
		default:
			r.Local = true
		}
	}
	if o.Effect.Set {
		if r.Effect = b.fn(o.Effect, Effect); r.Effect == nil {
			ok = false
		}
	}
	for _, n := range o.Actions {
		a := b.action(n)
		if a == nil {
			ok = false
			continue
		}
		r.Actions = append(r.Actions, &Emit{Action: a})
	}
	if from != nil && from.Terminal && r.To != nil && r.To != from {
		b.errorf(o.To.Pos, "terminal state %s cannot have a transition to %s: a terminal state is never left", from.Name, r.To.Name)
		ok = false
	}
	if !ok {
		return nil
	}
	return r
}
