// Package fsm is the resolved, checked model of a state machine (the IR)
// and the builder that makes it from a parsed spec.
//
// The IR is final: every Go name, JSON name, doc text, storage field, and
// every value a rule passes, stores or clears is computed here once, and
// slices are in a fixed order, so the emitters only read it. Build collects
// every problem of a spec into one sorted list.
package fsm

import "github.com/fsmgen/fsmgen/internal/diag"

// Machine is a checked state machine.
type Machine struct {
	Name     string // the spec's machine name, e.g. "Agent"
	Package  string // the Go package name
	Doc      string
	SpecFile string // the spec's file name, without directories
	Imports  []Import
	Output   Output
	States   []*State
	Events   []*Event
	Actions  []*Action
	Guards   []*Func
	Effects  []*Func
	// Data is the machine's storage: one entry per field name and type
	// that some state has. States share the entries of their fields, so a
	// field carried over from one state to the next is not copied.
	Data []*Data
	// Rules are every rule of the machine, numbered: for each state in
	// spec order, its cells in event order, then the eventless rules of
	// the transient states, then the "*" rules in event order.
	// Rules[i].Index == i.
	Rules []*Rule
	// Wild holds the cells of the "*" rows, in event order.
	Wild []*Cell
	// Ways are the ways through every cell (see Way), for the generated
	// tests.
	Ways    []*Way
	Initial *State
	// ReadsEvents is set when some rule reads its event's fields, so that
	// the machine checks for nil events.
	ReadsEvents bool
	// Ignores and Rejects are set when some rule ignores, or rejects, its
	// event.
	Ignores, Rejects bool
}

// HasBehavior reports whether the machine calls guards or effects.
func (m *Machine) HasBehavior() bool {
	for _, fns := range [][]*Func{m.Guards, m.Effects} {
		for _, fn := range fns {
			if len(fn.Uses) > 0 {
				return true
			}
		}
	}
	return false
}

// HasHandler reports whether the machine has actions to hand to a Handler.
func (m *Machine) HasHandler() bool { return len(m.Actions) > 0 }

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

// Field returns the field of the given spec name, or nil.
func (d *Decl) Field(name string) *Field {
	for _, f := range d.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// Field is a typed field of a state, event or action, or a value a guard
// or effect reads or an effect sets.
type Field struct {
	Name     string // as written
	GoName   string // exported, for struct fields
	JSONName string
	// Param is the unexported Go name used for the field as a parameter,
	// a result or a local variable: "callID", "error_".
	Param string
	Type  string // Go type expression, normalised
	Doc   string
	Pos   diag.Pos
	// TypePos is where the type is written.
	TypePos diag.Pos
	// Data is the storage of a state's field; nil for other fields.
	Data *Data
}

// Data is one field of the machine's storage, shared by every state that
// has a field of its name and type.
type Data struct {
	Name   string // the fields' spec name
	Type   string
	GoName string // the storage field's unexported name: "conversation", "amountCents2"
	// Zero says how the zero value of Type is written in Go.
	Zero Zero
	// States are the states that have the field, in spec order.
	States []*State
}

// Zero says how the zero value of a type is written.
type Zero int

// The ways of writing a zero value.
const (
	ZeroNew       Zero = iota // *new(T): a type whose kind is not known
	ZeroNumber                // 0
	ZeroString                // ""
	ZeroBool                  // false
	ZeroNil                   // nil: a pointer, slice, map, channel, function or interface
	ZeroComposite             // T{}: a struct or an array
)

// State is a state of the machine.
type State struct {
	Decl
	Initial   bool
	Terminal  bool
	Transient bool
	// Handles are the cells of the events the state handles with rules
	// of its own (transitions, or guarded rules), in event order.
	Handles []*Cell
	// Refuses are the cells of the events the state ignores or rejects
	// without guards (its ignore and reject lists, and unguarded rows
	// that ignore or reject), in event order.
	Refuses []*Cell
	// Wild lists the events the state leaves to a "*" row, in event order.
	Wild []*Event
	// Choice holds the eventless rules of a transient state.
	Choice *Cell
}

// Has reports whether the state has data field d.
func (s *State) Has(d *Data) bool {
	for _, f := range s.Fields {
		if f.Data == d {
			return true
		}
	}
	return false
}

// Event is an event the machine handles.
type Event struct{ Decl }

// Action is an action the machine emits.
type Action struct{ Decl }

// Cell is how one state (or, for a "*" row, every state that leaves the
// event to it) handles one event: the rules that may fire, in the order
// their guards are tried. An unguarded cell has one rule.
type Cell struct {
	State *State // nil for a "*" row
	Event *Event // nil for the eventless rules of a transient state
	Rules []*Rule
	// ReadsEvent is set when a rule of the cell reads the event's fields.
	ReadsEvent bool
}

// RuleKind says what a rule does with its event.
type RuleKind int

// The kinds of rules.
const (
	Transition RuleKind = iota // move (or stay), run the effect, emit the actions
	Ignore                     // drop the event; nothing changes
	Reject                     // refuse the event; report it to the caller
)

// String returns "transition", "ignore" or "reject".
func (k RuleKind) String() string {
	return [...]string{"transition", "ignore", "reject"}[k]
}

// Rule is one rule of the machine: a row of the spec for one state, a
// guarded branch of one, an entry of a state's ignore or reject list, or
// a "*" row (for every state that leaves its event to it).
type Rule struct {
	Index int
	Kind  RuleKind
	From  *State // nil for a "*" rule
	Event *Event // nil for an eventless rule
	Guard *Func  // nil when unguarded or the else branch
	Else  bool
	// To is the state after the rule; nil when the rule stays where it is.
	To     *State
	Effect *Func
	// Actions are the actions the rule emits, in order.
	Actions []*Emit
	Reason  string // why a Reject rule refuses the event
	Listed  bool   // the rule comes from a state's ignore or reject list
	Pos     diag.Pos
	Label   string // one line for comments, tests and messages; see RuleLabel

	// GuardArgs and EffectArgs are the values passed for the guard's and
	// the effect's reads, in order.
	GuardArgs  []Value
	EffectArgs []Value
	// Stores are the storage writes of the rule, made after its effect
	// ran: the effect's results and the fields carried over from the
	// event. Fields carried over from the source state share its storage
	// and need no write.
	Stores []Store
	// Clears are the storage fields of the source state that the target
	// does not have, zeroed when the rule leaves it (explicit rules).
	Clears []*Data
	// Keeps are, for a "*" rule that moves, the storage fields the target
	// has: the rule zeroes all storage but these, since it does not know
	// statically which state it leaves.
	Keeps []*Data
	// Captures are storage fields an action reads that the rule
	// overwrites or clears: the machine reads them into locals first.
	Captures []Capture
}

// Capture is a storage field read into a local before a rule changes it.
type Capture struct {
	Data  *Data
	Local string // the local variable's name, e.g. "prevRetries"
}

// Stays reports whether the rule leaves the machine in its state.
func (r *Rule) Stays() bool { return r.To == nil }

// Wild reports whether the rule is a "*" row.
func (r *Rule) Wild() bool { return r.From == nil }

// Emit is one action a rule emits, with the values of its fields.
type Emit struct {
	Action *Action
	Args   []Value // one per field of the action, in order
}

// Source says where a value comes from.
type Source int

// The sources of values.
const (
	FromData   Source = iota // the source state's field, in storage
	FromEvent                // the event's field
	FromResult               // a result of the rule's effect
)

// Value is a value a rule reads: a field of the source state, a field of
// the event, or a result of the effect.
type Value struct {
	Source Source
	Data   *Data  // FromData
	Field  *Field // FromEvent: the event's field
	Result *Field // FromResult: the effect's set
	// Local names the local variable that holds a FromData value the
	// rule read before changing its storage (see Rule.Captures); "" when
	// the value is read from storage.
	Local string
}

// Store writes a value into the machine's storage.
type Store struct {
	Data  *Data
	Value Value
}

// FuncKind tells guards from effects.
type FuncKind int

// The kinds of named functions.
const (
	Guard FuncKind = iota
	Effect
)

// Func is a guard or an effect, implemented by hand as a method of the
// generated Behavior interface. Its signature follows from what it
// declares: it takes what it reads, in order, and a guard returns bool
// while an effect returns what it sets, in order.
type Func struct {
	Name   string
	GoName string
	Kind   FuncKind
	Doc    string
	Pos    diag.Pos
	Reads  []*Field
	Sets   []*Field
	Uses   []*Rule
}

// Set returns the field the effect sets of the given name, or nil.
func (fn *Func) Set(name string) *Field {
	for _, f := range fn.Sets {
		if f.Name == name {
			return f
		}
	}
	return nil
}
