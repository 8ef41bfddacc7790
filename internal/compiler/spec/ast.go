// Package spec parses a state-machine spec (YAML, version 2) into a syntax
// tree in which every value keeps its file:line:col position.
//
// Parsing is strict: "version" must come first, unknown and duplicate keys
// are errors, and every problem found is reported, not only the first. The
// tree is not checked for meaning; package fsm does that.
package spec

import "github.com/fsmgen/fsmgen/internal/compiler/diag"

// String is a scalar from the spec with its position. Set is false when
// the key was absent.
type String struct {
	Value string
	Pos   diag.Pos
	Set   bool
}

// Bool is a boolean from the spec with its position.
type Bool struct {
	Value bool
	Pos   diag.Pos
	Set   bool
}

// File is a whole spec file.
type File struct {
	Path        string
	Pos         diag.Pos // the document root
	Version     String
	Machine     String
	Package     String
	Doc         String
	Imports     []Import
	Output      Output
	States      []State
	Events      []Decl
	Actions     []Decl
	Guards      []Func
	Effects     []Func
	Transitions []Transition
	// Behavior is the Go expression that makes the hand-written Behavior
	// the examples run through, e.g. "behavior.New(behavior.DefaultConfig())".
	Behavior String
	// Breaks are the changes from the previous revision the spec declares
	// it makes on purpose, for fsmgen diff.
	Breaks []Break
	// Initialisms are the spec's own words that Go names write in
	// capitals, beside Go's (ID, URL, TCP, ...): "TCB", "SYN".
	Initialisms []String
	// DeferLimit is how many deferred events the machine holds at most
	// ("defer_limit"); unset for the default.
	DeferLimit String
}

// Break is an intended breaking change: what changes, named as fsmgen
// diff names it ("field Paid.paid_at", "state Legacy"), and why.
type Break struct {
	Pos    diag.Pos
	Change String
	Why    String
}

// Import binds a package qualifier used in field types to an import path.
type Import struct {
	Alias String
	Path  String
}

// Output names the files generated from the spec, relative to the spec file.
type Output struct {
	Go      String // directory of the generated Go package
	Diagram String // Mermaid diagram
	Table   String // Markdown transition table
	// Temporal is the directory of the package that runs the machine as a
	// Temporal workflow (its glue to package fsmtemporal, and the revision
	// record that fsmgen diff's verdicts advance).
	Temporal String
}

// Field is a typed field of a state, event or action.
type Field struct {
	Name String
	Type String
	Doc  String
	// GoName is the Go name the spec gives the field, in place of the
	// one fsmgen makes of its name.
	GoName String
	// RenamedFrom are the names the field had in earlier revisions.
	RenamedFrom []String
}

// State is one entry of "states", or of a composite state's "states".
type State struct {
	Name   String
	Doc    String
	GoName String // the Go name the spec gives it; absent, made of Name
	// RenamedFrom are the names the state had in earlier revisions.
	RenamedFrom []String
	Initial     Bool // the machine's initial state, or its parent's initial child
	Terminal    Bool
	Transient   Bool
	// History is a composite state's history: "shallow" or "deep" (UML's
	// shallowHistory and deepHistory, SCXML's <history type>); unset when
	// it has none.
	History String
	// Final marks a leaf of a composite state that completes it (UML's
	// FinalState, SCXML's <final>).
	Final Bool
	// Parallel marks a composite state whose children are regions, all
	// active at once (UML's orthogonal state, SCXML's <parallel>).
	Parallel Bool
	// Done is a composite state's completion transition, taken when the
	// machine enters one of its final children; nil when absent.
	Done   *Done
	Fields []Field
	Ignore []String // events ignored in this state; "*" for every other one
	Reject []String // events rejected in this state; "*" for every other one
	// Defer are the events the state defers (UML's deferrable triggers):
	// kept in the machine's queue until a state that does not defer them.
	Defer []String
	Entry *Hook // what the state does when entered; nil when absent
	Exit  *Hook // what the state does when left; nil when absent
	// After are the state's timers, in the order written: "after" is one
	// timer (a mapping) or a list of them.
	After []*After
	// States are the children of a composite state, in spec order.
	States []State
	// StatesPos is the position of the "states" key, or zero when absent.
	StatesPos diag.Pos
}

// Hook is a state's "entry" or "exit": an effect and the actions emitted.
type Hook struct {
	Pos     diag.Pos
	Effect  String
	Actions []String
}

// After is one of a state's timers: how long after entering it the
// transition fires, unless the state is left first.
type After struct {
	Pos diag.Pos
	// ID names the timer among its state's timers; unset for the one
	// timer of a state that goes without.
	ID     String
	Delay  String // a Go duration ("90s") or the name of an effect that computes one
	Guards []Branch
	Outcome
}

// Done is a composite state's "done": the transition it takes when one of
// its final children is entered (SCXML's done.state.ID), with or without
// guards.
type Done struct {
	Pos    diag.Pos
	Guards []Branch
	Outcome
}

// Decl is one entry of "events" or "actions".
type Decl struct {
	Name   String
	Doc    String
	GoName String // the Go name the spec gives it; absent, made of Name
	Fields []Field
	// RenamedFrom are the names the event or action had in earlier
	// revisions.
	RenamedFrom []String
	// Pure marks an action that only computes or records, deterministic
	// given its fields, without I/O ("pure: true"): a durable engine may
	// run it inside its workflow. Events have no such key.
	Pure Bool
}

// Func is one entry of "guards" or "effects": what it reads (its
// parameters) and, for an effect, what it sets (its results).
type Func struct {
	Name   String
	Doc    String
	GoName String // the Go name the spec gives it; absent, made of Name
	Reads  []Field
	Sets   []Field
	// SetsPos is the position of the "sets" key, or zero when absent.
	SetsPos diag.Pos
}

// Outcome is what a transition or one of its guarded branches does.
type Outcome struct {
	To      String
	Effect  String
	Actions []String // the actions emitted, in order: "action: A" or "action: [A, B]"
	Ignore  Bool
	Reject  String // the reason; set when the branch rejects the event
	// Local keeps a transition into the source state's own substates from
	// leaving and re-entering the source.
	Local Bool
	// Set are the constants the rule gives fields ("set: {retries: 0}"),
	// in spec order: scalars, with their YAML tags. Nil when absent.
	Set []Value
	// With says, for names the rule reads, where it takes each from
	// ("with: {remote: event.remote}"), in spec order. Nil when absent.
	With []Binding
	// Examples are concrete cases that must take this rule.
	Examples []Example
}

// Says reports whether the outcome says anything of its own: to, an
// effect, actions, ignore, reject, set or with (beside guards, whose
// branches hold these instead).
func (o *Outcome) Says() bool {
	return o.To.Set || o.Effect.Set || len(o.Actions) > 0 || o.Ignore.Set || o.Reject.Set || o.Set != nil || o.With != nil
}

// Example is a concrete case the spec says takes a rule: a state at rest
// with its fields, and an event with its fields.
type Example struct {
	Pos  diag.Pos
	Name String
	// In is the state at rest the machine starts in, and Send the event
	// sent; absent, the rule's own.
	In, Send String
	// State and Event are the fields given, in spec order, as YAML values
	// decoded into Go values (strings, numbers, bools, lists, maps).
	State, Event []Value
}

// Value is a field's value in an example, or a constant of "set".
type Value struct {
	Name  String
	Value any
	// Tag is the YAML tag of a scalar ("!!str", "!!int", ...), or "" for
	// a list or a mapping; Text is a scalar as the spec writes it.
	Tag  string
	Text string
	Pos  diag.Pos
}

// Binding is an entry of "with": the name a rule reads, and where it
// takes it from, "event.<field>" or "state.<field>", as written.
type Binding struct {
	Name   String
	Source String
}

// Transition is one entry of "transitions".
type Transition struct {
	Pos  diag.Pos
	From []String // state names, or a single "*"
	// On are the events the row handles: one ("on: A") or several ("on:
	// [A, B]"), each with the same rules; none for the eventless rows of
	// a transient state. OnPos is the position of the "on" key's value.
	On      []String
	OnPos   diag.Pos
	Outcome // when there are no guards
	Guards  []Branch
}

// Branch is one guarded alternative of a transition.
type Branch struct {
	Pos  diag.Pos
	If   String // the guard's name; absent on the else branch
	Else Bool
	Outcome
}
