package fsmrt

import (
	"slices"
	"strconv"
)

// Kind is the constraint of the kind types a generated package declares:
// its StateKind, EventKind and ActionKind, each an unsigned integer that
// numbers its states, events or actions from 1 (0 is none) and names them
// with String.
type Kind interface {
	~uint8 | ~uint16 | ~uint32
	String() string
}

// RuleKind says what a rule does with its event.
type RuleKind uint8

// The kinds of rules.
const (
	// RuleTransition moves to a state (or stays), runs the rule's effect
	// and emits its actions.
	RuleTransition RuleKind = iota
	// RuleIgnore drops the event: nothing changes.
	RuleIgnore
	// RuleReject refuses the event: nothing changes, and HandleEvent
	// returns a *RejectedError.
	RuleReject
	// RuleDefer defers the event: the machine keeps it, and handles it
	// once it is in a state that does not defer it.
	RuleDefer
)

// String returns "transition", "ignore", "reject" or "defer".
func (k RuleKind) String() string {
	switch k {
	case RuleTransition:
		return "transition"
	case RuleIgnore:
		return "ignore"
	case RuleReject:
		return "reject"
	case RuleDefer:
		return "defer"
	}
	return "RuleKind(" + strconv.Itoa(int(k)) + ")"
}

// Rule is one rule of a machine: a row of its spec for one state (a "*"
// row once for all states), a guarded branch of one, an entry of a state's
// ignore or reject list, or a timer's rule. A generated package's Rules
// function returns its rule table, which Step.Rule indexes.
type Rule[S, E, A Kind] struct {
	// Kind says what the rule does.
	Kind RuleKind
	// From is the state the rule applies in; zero for a rule many states
	// share (a "*" row, or a rule of a composite state), which applies in
	// every state that has no rule of its own for the event.
	From S
	// Composite names the composite state whose rule it is, shared by its
	// substates; "" for other rules.
	Composite string
	// Event is the event the rule handles; zero for an eventless rule of
	// a transient state.
	Event E
	// Guard names the guard that must hold, "else" on a last branch, or
	// "" when the rule is unguarded.
	Guard string
	// To is the state after the rule; zero when the rule stays in its
	// state.
	To S
	// Effect names the effect that runs, or "".
	Effect string
	// Actions are the actions the rule emits, in order.
	Actions []A
	// Reason says why a reject rule refuses the event.
	Reason string
	// Label describes the rule on one line, as the spec writes it.
	Label string
}

// Step describes one step a machine takes: an event handled by a rule, or
// an eventless rule of a transient state. A machine's observer is given
// each step before the step's actions are handed to its Handler. In a
// parallel state, each region's rule is a step of its own, an ignore
// beside another region's transition included.
type Step[S, E Kind] struct {
	// From is the state before the step.
	From S
	// Event is the event handled; zero for an eventless step.
	Event E
	// Rule is the number of the rule that fired, an index into the
	// machine's rule table.
	Rule int
	// To is the state after the step.
	To S
}

// Desc describes a generated machine to this package: its names, for
// messages, and its rule table. A generated package declares one, as a
// variable it never changes.
type Desc[S, E, A Kind] struct {
	// Package is the generated package's name, the prefix of its errors.
	Package string
	// Machine is the machine's name in the spec.
	Machine string
	// Rules is the rule table.
	Rules []Rule[S, E, A]
	// Shape is the fingerprint of what a saved machine holds: its states,
	// their fields and the fields' types, and its timers (see Save).
	Shape string
	// Timers describes the machine's timers, in order.
	Timers []TimerOf[S]
	// History describes the composite states with a history, in order.
	History []HistoryOf[S]
	// DeferLimit is how many deferred events the machine holds at most;
	// zero when no state defers one.
	DeferLimit int
	// Renamed maps, for a state, event or action ("state created"), the
	// old JSON names of its renamed fields (and of a parallel state's
	// renamed regions) to their names now.
	Renamed map[string]map[string]string
}

// TimerOf describes a timer of a machine: the state whose timer it is,
// by its JSON kind, and the first and last of that state's leaves (the
// leaves of a state have consecutive kinds). For a state inside a region
// of a parallel state, First and Last are the parallel state, which the
// machine is in while the timer runs; the generated code checks the
// region's state.
type TimerOf[S Kind] struct {
	State string
	// Timer is the timer's id among its state's timers (its "id:" in the
	// spec); empty for a state's timer without one.
	Timer       string
	First, Last S
	// Was lists the state's earlier JSON names (renamed_from), under
	// which a machine saved by an earlier revision holds its timer.
	Was []string
}

// CopyRules returns a copy of the rule table that shares no memory with
// it: the caller may change it.
func (d *Desc[S, E, A]) CopyRules() []Rule[S, E, A] {
	rules := slices.Clone(d.Rules)
	for i := range rules {
		rules[i].Actions = slices.Clone(rules[i].Actions)
	}
	return rules
}

// KindName returns the name of kind k in names, which names the kinds
// from 1 in order, or "typ(k)" for a kind out of range: the String method
// of a generated kind type.
func KindName[K ~uint8 | ~uint16 | ~uint32](k K, typ string, names []string) string {
	if k >= 1 && uint64(k) <= uint64(len(names)) {
		return names[k-1]
	}
	return typ + "(" + strconv.FormatUint(uint64(k), 10) + ")"
}

// InState names state kind k in the errors Restore and Load give for a
// region's state: its name, or "no state" for the zero kind, which a
// region has when the saved data leaves it out (or the value given to
// Restore does not set it).
func InState[K Kind](k K) string {
	if k == 0 {
		return "no state"
	}
	return k.String()
}
