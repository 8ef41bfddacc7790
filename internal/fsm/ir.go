// Package fsm is the resolved, checked model of a state machine (the IR)
// and the builder that makes it from a parsed spec.
//
// The IR is final: every Go name, JSON name, doc text and carry-over
// assignment is computed here once, and slices are in a fixed order, so the
// emitters only read it. Build collects every problem of a spec into one
// sorted list.
package fsm

import "github.com/fsmgen/fsmgen/internal/diag"

// Machine is a checked state machine.
type Machine struct {
	Name    string // the spec's machine name, e.g. "Agent"
	Package string // the Go package name
	// Behavior names the hand-written type of the output package whose
	// guards and effects the machine calls directly, or is empty.
	Behavior string
	Doc      string
	SpecFile string // the spec's file name, without directories
	Imports  []Import
	Output   Output
	States   []*State
	Events   []*Event
	Actions  []*Action
	Guards   []*Func
	Effects  []*Func
	Rules    []*Rule // every row, wildcards and state lists expanded; Rules[i].Index == i
	Initial  *State
}

// Output holds the spec's output paths, relative to the spec file's
// directory, in slash form; empty when the output is not wanted.
type Output struct {
	GoDir   string
	Diagram string
	Table   string
}

// Import binds a qualifier used in field types to an import path.
type Import struct {
	Alias string
	Path  string
}

// Decl is what states, events and actions have in common.
type Decl struct {
	Name     string // as written in the spec
	GoName   string // exported Go type name
	Snake    string // JSON "kind" value
	KindName string // the kind constant, e.g. "StateCallingLLM"
	Doc      string
	Fields   []*Field
	Pos      diag.Pos
	Index    int // position in its list; the kind constant's value is Index+1
}

// Field is a typed field.
type Field struct {
	Name     string // as written
	GoName   string
	JSONName string
	Type     string // Go type expression, as written
	Doc      string
	Pos      diag.Pos
}

// State is a state of the machine.
type State struct {
	Decl
	Initial   bool
	Terminal  bool
	Transient bool
	// Cells has one entry per event, in event order; empty for a transient state.
	Cells []*Cell
	// Choice holds the eventless rows of a transient state, in guard order.
	Choice *Cell
}

// Event is an event the machine handles.
type Event struct{ Decl }

// Action is an action the machine returns.
type Action struct{ Decl }

// Cell is how one state handles one event: the rows that may fire, in
// the order their guards are tried. An unguarded cell has one row.
type Cell struct {
	State *State
	Event *Event // nil for the eventless rows of a transient state
	Rules []*Rule
}

// RuleKind says what a row does with its event.
type RuleKind int

// The kinds of rows.
const (
	Transition RuleKind = iota // move (or stay) and emit an action
	Ignore                     // drop the event; nothing changes
	Reject                     // refuse the event; report it to the caller
)

// String returns "transition", "ignore" or "reject".
func (k RuleKind) String() string {
	return [...]string{"transition", "ignore", "reject"}[k]
}

// Rule is one row of the expanded transition table.
type Rule struct {
	Index  int
	Kind   RuleKind
	From   *State
	Event  *Event // nil for an eventless row
	Guard  *Func  // nil when unguarded or the else branch
	Else   bool
	To     *State // equals From for a row that stays
	Effect *Func
	Action *Action
	Reason string // why a Reject row refuses the event
	Listed bool   // the row comes from a state's ignore or reject list
	Pos    diag.Pos
	// ToInit fills the target state's fields when To differs from From;
	// ActInit fills the action's fields. Both hold carry-overs only; the
	// effect, if any, sets the rest.
	ToInit  []Assign
	ActInit []Assign
}

// Stays reports whether the row leaves the machine in its state.
func (r *Rule) Stays() bool { return r.To == r.From }

// Source says where a carried-over value comes from.
type Source int

// The sources of carried-over values.
const (
	FromState Source = iota
	FromEvent
)

// Assign fills Field with the field Src of the source state or event.
type Assign struct {
	Field  *Field
	Source Source
	Src    *Field
}

// FuncKind tells guards from effects.
type FuncKind int

// The kinds of named functions.
const (
	Guard FuncKind = iota
	Effect
)

// Func is a guard or an effect, implemented by hand as a method of the
// generated Behavior interface.
type Func struct {
	Name   string
	GoName string
	Kind   FuncKind
	Doc    string
	Pos    diag.Pos
	Uses   []*Rule
	Sig    Signature
}

// Signature lists the parameters of a guard or effect; a nil entry is
// omitted. A guard gets From and Event and returns bool; an effect gets
// From (or, on a row that stays, the state to update), Event, To and Act.
type Signature struct {
	From  *State
	Event *Event
	To    *State
	Act   *Action
	Stays bool
}
