package fsm

import (
	"slices"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// This file resolves the hooks of the states (entry, exit) and their
// timers: each timer's delay, id and rules, and the event and actions
// timers declare.

// hasTimers reports whether some state of the spec declares "after".
func hasTimers(list []spec.State) bool {
	for _, ss := range list {
		if len(ss.After) > 0 || hasTimers(ss.States) {
			return true
		}
	}
	return false
}

// timerDecls declares the event and the actions of the timers, and the
// import of package time they need.
func (b *builder) timerDecls() {
	m := b.m
	if imp, ok := b.imports["time"]; ok {
		if imp.Path.Value != "time" {
			b.errorf(imp.Alias.Pos, "import alias time names %q, but the machine's timers need package time under that name: choose another alias", imp.Path.Value)
			return
		}
		imp.used = true
	} else {
		b.imports["time"] = &importUse{Import: spec.Import{Alias: spec.String{Value: "time"}, Path: spec.String{Value: "time"}}, used: true}
		m.Imports = append(m.Imports, Import{Alias: "time", Path: "time", GoName: "time"})
		slices.SortFunc(m.Imports, func(a, c Import) int { return strings.Compare(a.Alias, c.Alias) })
	}
	field := func(name, typ, doc string) *Field {
		return &Field{Name: name, GoName: GoName(name), JSONName: SnakeName(name), Param: ParamName(name, m.Imports), Type: typ, GoType: b.goCode(typ), Doc: doc}
	}
	builtin := func(kind, name, doc string, fields ...*Field) Decl {
		return Decl{Name: name, GoName: name, Snake: SnakeName(name), KindName: strings.ToUpper(kind[:1]) + kind[1:] + name, Doc: doc, Fields: fields, Builtin: true}
	}
	m.TimerFired = &Event{Decl: builtin("event", "TimerFired", "A timer started by StartTimer ran out. A timer that is not running any more (its state was left) fires nothing. Whoever sends it says when the timer was due and when it fired (loop.Timers made with NewTimersAt does), so that the guards and effects of the timer's rules can read deadline and now.",
		field("timer", "TimerID", "is the timer that ran out."),
		field("deadline", "time.Time", "is when the timer was due: the deadline StartTimer returned, or the one Load read."),
		field("now", "time.Time", "is when the timer fired: its deadline, or later when the process was busy or down."))}
	m.TimerFired.Index = len(m.Events)
	m.Events = append(m.Events, m.TimerFired)
	m.StartTimer = &Action{Decl: builtin("action", "StartTimer", "Start a timer: after delay, send TimerFired with its id, unless CancelTimer stops it first. Starting an id again restarts it.",
		field("timer", "TimerID", "is the timer's id."), field("delay", "time.Duration", "is how long the timer runs."))}
	m.CancelTimer = &Action{Decl: builtin("action", "CancelTimer", "Stop a timer: its state was left. A TimerFired it sends anyway changes nothing.",
		field("timer", "TimerID", "is the timer's id."))}
	for _, a := range []*Action{m.StartTimer, m.CancelTimer} {
		a.Index = len(m.Actions)
		m.Actions = append(m.Actions, a)
	}
}

// hooks resolves the entry, exit and timer of every state.
func (b *builder) hooks() {
	for _, s := range b.all {
		ss := b.specOf[s]
		if (ss.Entry != nil || ss.Exit != nil || len(ss.After) > 0) && s.Transient && s.Completes == nil {
			b.errorf(ss.Name.Pos, "transient state %s is left in the step that enters it: it has no entry, exit or after; put the actions on its transitions", s.Name)
			continue
		}
		s.Entry = b.hook(ss.Entry)
		s.Exit = b.hook(ss.Exit)
		b.timerIDs(s, ss.After)
		for _, a := range ss.After {
			b.timer(s, a)
		}
	}
	b.leavingTimers()
	b.leavingEventless()
}

func (b *builder) hook(h *spec.Hook) *Hook {
	if h == nil {
		return nil
	}
	out := &Hook{Pos: h.Pos}
	if h.Effect.Set {
		out.Effect = b.fn(h.Effect, Effect)
	}
	for _, n := range h.Actions {
		if a := b.action(n); a != nil {
			out.Actions = append(out.Actions, a)
		}
	}
	if out.Effect == nil && len(out.Actions) == 0 {
		return nil
	}
	return out
}

// timer resolves one timer of a state's "after": its delay and its rules.
func (b *builder) timer(s *State, a *spec.After) {
	m := b.m
	t := &Timer{Index: len(m.Timers), State: s, Place: len(s.Timers), ID: a.ID.Value, Pos: a.Pos, DelayText: a.Delay.Value}
	if a.Delay.Set {
		if d, err := time.ParseDuration(a.Delay.Value); err == nil {
			if d <= 0 {
				b.errorf(a.Delay.Pos, "the delay of %s is %s: give a positive duration", b.timerName(s, a), a.Delay.Value)
			}
			t.Delay = int64(d)
		} else if identRE.MatchString(a.Delay.Value) {
			if fn := b.fn(a.Delay, Effect); fn != nil {
				if len(fn.Sets) != 1 || fn.Sets[0].Type != "time.Duration" {
					b.errorf(a.Delay.Pos, "effect %s computes the delay of %s, so it sets exactly one time.Duration (it sets %s)", fn.Name, b.timerName(s, a), fieldNames(fn.Sets))
				}
				t.DelayFunc = fn
				fn.Hooks = append(fn.Hooks, s)
			}
		} else {
			b.errorf(a.Delay.Pos, "delay %q is neither a duration such as 90s or 2m30s nor the name of an effect: %v", a.Delay.Value, err)
		}
	}
	row := &spec.Transition{Pos: a.Pos, Outcome: a.Outcome, Guards: a.Guards}
	if len(a.Guards) > 0 && a.Says() {
		b.errorf(a.Pos, "a timer with guards keeps to, effect, action, set, with, ignore and reject inside its branches")
		return
	}
	rules := b.rowRules(row, s, m.TimerFired)
	if rules == nil {
		return
	}
	for _, r := range rules {
		r.Timer = t
		if r.Kind == Reject {
			b.errorf(r.Pos, "a timer's rule cannot reject: nobody sent its event to be told; ignore it, or move")
		}
	}
	t.Cell = &Cell{Owner: s, Event: m.TimerFired, Rules: rules}
	if !s.Composite() {
		t.Cell.Owner, t.Cell.State = nil, s
	}
	s.Timers = append(s.Timers, t)
	m.Timers = append(m.Timers, t)
}

// timerName names timer a of state s in messages: "state S's timer", or
// for a timer with an id "timer reminder of state S".
func (b *builder) timerName(s *State, a *spec.After) string {
	if !a.ID.Set {
		return "state " + s.Name + "'s timer"
	}
	return "timer " + a.ID.Value + " of state " + s.Name
}

// timerIDs checks the ids of a state's timers: names, distinct, and at
// most one timer without.
func (b *builder) timerIDs(s *State, list []*spec.After) {
	seen := map[string]*spec.After{}
	for _, a := range list {
		if a.ID.Set && !identRE.MatchString(a.ID.Value) {
			b.errorf(a.ID.Pos, "timer id %q is not a name: use letters, digits and underscores, starting with a letter", a.ID.Value)
			continue
		}
		if timerTwice(s.Name, seen, a, &b.diags) {
			continue
		}
		seen[a.ID.Value] = a
	}
}

// timerTwice reports whether timer a has the id of a timer in seen (the
// timers of state owner before it), or like one of them none, and if so
// says so: the id names a timer in saved machines, so each must be
// distinct.
func timerTwice(owner string, seen map[string]*spec.After, a *spec.After, diags *diag.List) bool {
	first, ok := seen[a.ID.Value]
	switch {
	case !ok:
		return false
	case a.ID.Set:
		diags.Errorf(a.ID.Pos, "state %s has two timers with id %s (the first at line %d): give each its own", owner, a.ID.Value, first.Pos.Line)
	default:
		diags.Errorf(a.Pos, "state %s has two timers without an id (the first at line %d): give this one an id, which names it in saved machines", owner, first.Pos.Line)
	}
	return true
}
