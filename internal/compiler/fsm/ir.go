// Package fsm is the resolved, checked model of a state machine (the IR)
// and the builder that makes it from a parsed spec.
//
// The IR is final: every Go name, JSON name, doc text, storage field, and
// every value a rule passes, stores or clears is computed here once, and
// slices are in a fixed order, so the emitters only read it. Build collects
// every problem of a spec into one sorted list.
package fsm

import "github.com/fsmgen/fsmgen/internal/compiler/diag"

// Machine is a checked state machine.
type Machine struct {
	Name     string // the spec's machine name, e.g. "Agent"
	Package  string // the Go package name
	Doc      string
	SpecFile string // the spec's file name, without directories
	// Source is the spec's path in its module (slash-separated), or
	// SpecFile outside a module: the generated files name it.
	Source  string
	Imports []Import
	Output  Output
	States  []*State
	Events  []*Event
	Actions []*Action
	Guards  []*Func
	Effects []*Func
	// Data is the machine's storage: one entry per field name and type
	// that some state has. States share the entries of their fields, so a
	// field carried over from one state to the next is not copied.
	Data []*Data
	// Rules are every rule of the machine, numbered: for each state in
	// spec order, its cells in event order, then the eventless rules of
	// the transient states, then the "*" rules in event order.
	// Rules[i].Index == i.
	Rules []*Rule
	// Shared holds the cells whose rules many states share: the rules of
	// the composite states, innermost first (deepest, then in spec order),
	// each in event order, then the "*" rows in event order.
	Shared []*Cell
	// Composites are the composite states, in spec order (a parent before
	// its children). They group states; the machine is never in one
	// without being in one of its leaves, the states of States.
	Composites []*State
	// Accessors are the fields a set of states shares (see Accessor), in
	// the order of Data.
	Accessors []*Accessor
	// Histories are the composite states with a history, in spec order;
	// Histories[i].Hist == i. The machine remembers, for each, the leaf it
	// was in when it last left it (none before).
	Histories []*State
	// Memories are the leaves of the regions of parallel states that deep
	// histories remember (see Memory), after Histories in the machine's
	// memory array: Memories[i].Slot == len(Histories)+i.
	Memories []*Memory
	// Regions are the regions of the parallel states, in document order
	// (see Region); each parallel state is one of States.
	Regions []*Region
	// Timers are the timers the states declare with "after", in spec
	// order; Timers[i].Index == i.
	Timers []*Timer
	// TimerFired, StartTimer and CancelTimer are the event and actions
	// fsmgen declares when the machine has timers; nil otherwise.
	TimerFired              *Event
	StartTimer, CancelTimer *Action
	// Stale is the rule that ignores a TimerFired of a timer no active
	// state runs; nil without timers.
	Stale *Rule
	// Start are the entries New runs: the initial state's ancestors,
	// outermost first, then the state itself.
	Start []*Run
	// Ways are the ways through every cell (see Way), for the generated
	// tests.
	Ways []*Way
	// Paths are the witnesses of the rules, in rule order: for each, the
	// shortest sequence of events from the initial state that fires it.
	Paths []*Path
	// Witnesses lay the paths out as a prefix tree, and PathEnds holds,
	// for each path in order, its last node (see Witness).
	Witnesses []*Witness
	PathEnds  []int
	// Examples are the spec's examples, in rule order; Behavior is the Go
	// expression that makes the real Behavior they run through, as the
	// spec writes it and resolved (for a file outside the generated
	// package), which may give an error too. ExamplesInPackage says the
	// examples' test must be in the generated package, not in its
	// external test package: the expression names an unexported name
	// of it.
	Examples          []*Example
	Behavior          string
	BehaviorCode      GoCode
	ExamplesInPackage bool
	// Shape is the fingerprint of what a saved machine holds (see shape).
	Shape string
	// Breaks are the changes the spec declares it makes on purpose.
	Breaks []Break
	// ImportPath is the generated package's import path, when the loader
	// knows it (the example tests import it); "" otherwise.
	ImportPath string
	Initial    *State
	// ReadsEvents is set when some rule reads its event's fields, so that
	// the machine checks for nil events.
	ReadsEvents bool
	// Ignores and Rejects are set when some rule ignores, or rejects, its
	// event.
	Ignores, Rejects bool
	// Deferral is the machine's queue of deferred events; nil when no
	// state defers one.
	Deferral *Deferral
	// endless is set to the parallel state whose eventless rules and
	// done transitions the witness paths found in one step to come back
	// to a configuration they began a microstep in (see
	// Machine.eventless): a loop the loop checks missed.
	endless *State
	// settling are the configurations the microsteps of the step the
	// witness paths follow began in, outermost first.
	settling []string
	// microsteps counts the microsteps of eventless rules the witness
	// paths followed, and swamped is set to the parallel state whose
	// microsteps went past microstepLimit (see eventless).
	microsteps int
	swamped    *State
	// searching is set while parallelPaths searches for the witness
	// paths (see trace).
	searching bool
}

// HasBehavior reports whether the machine calls guards or effects.
func (m *Machine) HasBehavior() bool {
	for _, fns := range [][]*Func{m.Guards, m.Effects} {
		for _, fn := range fns {
			if fn.Used() {
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
	// TemporalDir is the directory of the Temporal workflow's package.
	TemporalDir string
}

// Import binds a qualifier used in field types to an import path.
type Import struct {
	Alias string
	Path  string
	// GoName is the name the generated files import the package under:
	// Alias, unless generated code uses that name for something else.
	GoName string
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
	// Builtin is set on the event and actions fsmgen declares for timers.
	Builtin bool
	// RenamedFrom are the names the spec says it had in earlier
	// revisions (renamed_from), whose data still loads.
	RenamedFrom []string
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
	Type  string // Go type expression, normalised: for messages and comparisons
	// GoType is Type resolved, for the emitter.
	GoType GoCode
	// JSON is the shape of the type's JSON (see Shape): what data saved
	// with the field holds. nil when the type is not known (the spec's
	// imports not loaded, a type of the output package).
	JSON *Shape
	Doc  string
	Pos  diag.Pos
	// TypePos is where the type is written.
	TypePos diag.Pos
	// RenamedFrom are the names the field had in earlier revisions
	// (renamed_from), whose data still loads.
	RenamedFrom []string
	// Data is the storage of a state's field; nil for other fields.
	Data *Data
}

// Data is one field of the machine's storage, shared by every state that
// has a field of its name and type.
type Data struct {
	Name   string // the fields' spec name
	Type   string
	GoType GoCode
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

// State is a state of the machine: a leaf, which the machine can be in,
// or a composite state, which groups states.
type State struct {
	Decl
	Initial   bool
	Terminal  bool
	Transient bool
	// Waits marks a leaf that is not transient but has eventless rules,
	// all guarded (its Choice: its own, then those of the composite
	// states around it): they are tested after every step that leaves
	// the machine in it, and when none holds it stays, handling events as
	// any state (SCXML's eventless transitions, XState's always).
	Waits bool
	// parWaits marks a parallel state that waits, from the start of the
	// build, before its regions are joined: its eventless rules are
	// tested once its regions settle (see waitOwn), not as a leaf's.
	parWaits bool
	// Parent is the composite state that contains the state; nil at the
	// top level.
	Parent *State
	// Depth is the number of ancestors.
	Depth int
	// Children are a composite state's states, in spec order; nil for a
	// leaf.
	Children []*State
	// InitialChild is the child a composite state is entered through.
	InitialChild *State
	// First and Last are a composite state's first and last leaves: the
	// leaves are numbered depth first, so a composite's leaves are the
	// states whose kinds lie from First's to Last's.
	First, Last *State
	// Entry and Exit are what the state does when it is entered and when
	// it is left; nil when nothing.
	Entry, Exit *Hook
	// Timers are the state's timers, in the order its "after" lists
	// them; nil when it has none.
	Timers []*Timer
	// Own are the fields the state declares itself; Fields adds, first,
	// those of its ancestors.
	Own []*Field
	// Handles are the cells of the events the state handles with rules
	// of its own (transitions, or guarded rules), in event order.
	Handles []*Cell
	// Refuses are the cells of the events the state ignores or rejects
	// without guards (its ignore and reject lists, and unguarded rows
	// that ignore or reject), in event order.
	Refuses []*Cell
	// Inherited are the shared cells (of an ancestor, or a "*" row) the
	// state leaves events to, in event order.
	Inherited []*Cell
	// Choice holds the eventless rules of a transient state, of a state
	// that waits, or of a final state whose composite state has a done
	// transition.
	Choice *Cell
	// History is a composite state's history, HistoryNone for none; Hist
	// is then its place in Machine.Histories (its memory's index).
	History History
	Hist    int
	// Enter are, for a leaf of a region that a deep history resumes, the
	// entries that enter it from its region's own state down, outermost
	// first, as Region.Start enters the initial leaf; nil otherwise.
	Enter []*Run
	// Leave is, for a state inside a region with an exit, its exit as
	// leaving the parallel state runs it (the region leaves every state
	// it is in): the effect's reads, stores and the actions it fills; nil
	// for other states.
	Leave *Run
	// Final marks a leaf that completes its composite state (final:
	// true). Completes is then that state when it has a done transition,
	// whose rules are the leaf's Choice, tested in the step that enters
	// it: the leaf is transient when they end with an else, and may rest
	// otherwise (see Rests); nil when the composite state has none (the
	// leaf rests).
	Final     bool
	Completes *State
	// Completion is, for a parallel state with a done transition, the
	// done transition's eventless rules: taken in the step in which the
	// last of its regions enters a final leaf (see Region.Finals); nil
	// otherwise.
	Completion *Cell
	// groupDone are, for a parallel state of the machine, the done
	// transitions of the parallel states nested as its regions, until
	// join gives each its Completion (see groupCompletions).
	groupDone []*Cell
	// Regions are a parallel state's regions, in document order; Region
	// is, for a state inside a region, that region. Both nil elsewhere.
	Regions []*Region
	Region  *Region
	// Flat are, for a parallel state of the machine, its regions and
	// those of the parallel states inside their states (see Region.Host),
	// in document order: the regions its value names and an event is
	// offered to. For a parallel state inside a region, its own regions.
	Flat []*Region
}

// History is the kind of a composite state's history.
type History int

// The kinds of history.
const (
	HistoryNone    History = iota
	HistoryShallow         // the child the machine was in (UML shallowHistory)
	HistoryDeep            // the leaf the machine was in (UML deepHistory)
)

// String returns "", "shallow" or "deep".
func (h History) String() string { return [...]string{"", "shallow", "deep"}[h] }

// Composite reports whether the state contains states.
func (s *State) Composite() bool { return s.Children != nil }

// Contains reports whether t is s or one of its descendants.
func (s *State) Contains(t *State) bool {
	for ; t != nil; t = t.Parent {
		if t == s {
			return true
		}
	}
	return false
}

// Path returns the state's ancestors, outermost first, then the state.
func (s *State) Path() []*State {
	out := make([]*State, s.Depth+1)
	for t := s; t != nil; t = t.Parent {
		out[t.Depth] = t
	}
	return out
}

// Hook is what a state does when it is entered or left: an effect and the
// actions it emits.
type Hook struct {
	Effect  *Func
	Actions []*Action
	Pos     diag.Pos
}

// Timer is one timer of a state's "after": once the state has been
// entered, its TimerFired fires the timer's rules unless the state is left
// first.
type Timer struct {
	Index int
	State *State
	// Place is the timer's position among its state's timers, from 0;
	// ID its id there ("id:"), empty for the one that goes without.
	Place int
	ID    string
	// Delay is a constant delay, in nanoseconds, when DelayFunc is nil;
	// DelayText is the delay as the spec writes it.
	Delay     int64
	DelayText string
	// DelayFunc is the effect that computes the delay from the state's
	// fields, and DelayArgs the values it is given.
	DelayFunc *Func
	DelayArgs []Value
	// Cell holds the timer's rules: one, or its guarded branches.
	Cell *Cell
	// Group is, for a timer of a parallel state nested as a region, that
	// state; State is then the own state of one of its regions, which
	// runs it (see parnesttimers.go), or, for a timer with a target, the
	// parallel state it is a region of (see parnestlift.go). nil for
	// other timers.
	Group *State
	Pos   diag.Pos
}

// Name names the timer in messages and docs: "the timer of S", or for a
// timer with an id "timer reminder of S".
func (t *Timer) Name() string {
	if t.ID == "" {
		return "the timer of " + t.Owner().Name
	}
	return "timer " + t.ID + " of " + t.Owner().Name
}

// Owner is the state the timer is declared on: its State, or the
// parallel state nested as a region whose timer State runs (Group).
func (t *Timer) Owner() *State {
	if t.Group != nil {
		return t.Group
	}
	return t.State
}

// Label is how a rule of the timer names its trigger: "after 30s", "after
// backoff" (the effect that computes the delay), with the timer's id in
// parentheses when it has one ("after 10m (reminder)").
func (t *Timer) Label() string {
	return "after " + t.DelayLabel()
}

// DelayLabel is the timer's delay as the spec writes it (a duration or the
// name of the effect that computes it), with its id in parentheses when it
// has one.
func (t *Timer) DelayLabel() string {
	if t.ID == "" {
		return t.DelayText
	}
	return t.DelayText + " (" + t.ID + ")"
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
type Action struct {
	Decl
	// Pure is set when the spec says the action only computes or records,
	// deterministic given its fields and without I/O (pure: true): a
	// durable engine runs it inside its workflow, replaying it, instead of
	// as an activity. The Handler performs it as any other action.
	Pure bool
}
