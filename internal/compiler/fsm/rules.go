package fsm

import "github.com/fsmgen/fsmgen/internal/compiler/diag"

// Cell is how one state (or, for a "*" row, every state that leaves the
// event to it) handles one event: the rules that may fire, in the order
// their guards are tried. An unguarded cell has one rule.
type Cell struct {
	State *State // nil for a shared cell
	// Owner is, for a shared cell, the composite state whose rules it
	// holds; nil for a "*" row.
	Owner *State
	Event *Event // nil for the eventless rules of a transient state
	Rules []*Rule
	// ReadsEvent is set when a rule of the cell reads the event's fields.
	ReadsEvent bool
	// Fallback is, for a chain of guards without else, the cell the event
	// goes to when no guard holds: the rule of the innermost state around
	// the cell's with one for the event, else the "*" row's. nil for a
	// chain with else, and for other cells.
	Fallback *Cell
}

// Open reports whether the cell is a chain of guards without else: when no
// guard holds, its event goes to Fallback.
func (c *Cell) Open() bool {
	return len(c.Rules) > 0 && c.Rules[len(c.Rules)-1].Guard != nil
}

// RuleKind says what a rule does with its event.
type RuleKind int

// The kinds of rules.
const (
	Transition RuleKind = iota // move (or stay), run the effect, emit the actions
	Ignore                     // drop the event; nothing changes
	Reject                     // refuse the event; report it to the caller
	Defer                      // keep the event until a state that does not defer it (see Deferral)
)

// String returns "transition", "ignore", "reject" or "defer".
func (k RuleKind) String() string {
	return [...]string{"transition", "ignore", "reject", "defer"}[k]
}

// Rule is one rule of the machine: a row of the spec for one state, a
// guarded branch of one, an entry of a state's ignore or reject list, or
// a "*" row (for every state that leaves its event to it).
type Rule struct {
	Index int
	Kind  RuleKind
	// From is the state whose rule it is: a leaf, a composite state (whose
	// leaves share it) or nil for a "*" row.
	From  *State
	Event *Event // nil for an eventless rule
	Guard *Func  // nil when unguarded or the else branch
	Else  bool
	// To is the state after the rule, a leaf; nil when the rule stays
	// where it is (an internal transition: nothing is left or entered).
	To *State
	// Target is the state the spec names with "to": To, or a composite
	// state entered down to To through its initial children.
	Target *State
	// Local is set when the rule moves within its own composite source
	// without leaving it.
	Local bool
	// History is, for a rule into a composite state's history ("to:
	// S.history"), that state; nil for other rules. Such a rule is
	// resolved once per state it may resume (see Resume): the rule itself
	// is the default (the composite's initial child, when nothing is
	// remembered), and Variants the others, each with its own Target, To,
	// exits and entries, numbered right after it.
	History  *State
	Variants []*Rule
	// Resume is, for a variant, the state it resumes: a child of History
	// (shallow) or a leaf inside it (deep); nil for the default.
	Resume *State
	// Remembers are the composite states with a history that the rule
	// leaves: each remembers the leaf the machine was in.
	Remembers []Remember
	// Done is, for a composite state's done transition (an eventless
	// rule of one of its final leaves), that composite state: the rule
	// leaves and enters as a rule of it would.
	Done *State
	// Timer is the timer that fires the rule; nil for other rules.
	Timer *Timer
	// Spends is, for a timer's rule that does not leave the timer's
	// state, the timer: it has fired and runs no more, though its state
	// stays active.
	Spends *Timer
	// Exits are the states the rule leaves, innermost first, and Entries
	// those it enters, outermost first, down to To. Shared rules run some
	// exits only from some of their states (see Run.When).
	Exits, Entries []*Run
	Effect         *Func
	// Consts are the constants the rule gives fields (set:), in spec
	// order, as they are written for the first field each fills.
	Consts []*Const
	// With are the rule's with: entries: where it takes the values of
	// the names it reads from, in spec order.
	With []*Binding
	// Actions are the actions the rule emits, in order.
	Actions []*Emit
	Reason  string // why a Reject rule refuses the event
	Listed  bool   // the rule comes from a state's ignore or reject list
	// Others is set on a listed rule that comes from "ignore: *" or
	// "reject: *": the state resolves every other event that way.
	Others bool
	// Group is, for a rule that comes from a parallel state nested as a
	// region, its list (see parnestlists.go) or its row, that state: one
	// of its regions holds it, From the region's own state, or, for a
	// row with a target or for an event several of its regions take,
	// the parallel state it is a region of, From that state (see
	// parnestlift.go).
	Group *State
	// Source is, for a rule of a state inside a region that leaves the
	// region's parallel state, which the generated code runs as a rule of
	// the parallel state (From) guarded by In(Source), that state: its
	// label, the table, the diagram and the export name it (see
	// parleave.go).
	Source *State
	// SourceIn is, for such a rule written from a branch of its source's
	// guards that names a guard (Guard), the In(Source) guard the
	// generated code tests first, and nil for the others, whose Guard is
	// In(Source) (see parleaveguards.go).
	SourceIn *Func
	// Around is, for a rule that the eventless row of a composite state
	// gives a state inside it that waits (see compositeWaits), that
	// composite state, also on the parallel state's rule a branch that
	// leaves it from inside a region stands for: the diagram draws the
	// row once, from it.
	Around *State
	// Leaves is, for a branch of the guards of a row of a state inside a
	// region that leaves the region's parallel state P where the region
	// keeps the row (others of the row stay in the region, or another
	// region has a rule for the event, see parleavekept.go), the rule of
	// P that takes it (Source set): the region's chain holds this rule,
	// which ends the chain without the region taking the event, and
	// Leaves is taken where no region before it took a transition. Such a
	// rule is in no list of the machine's rules, and has no index of its
	// own (see parleave.go).
	Leaves *Rule
	// Mixed is set on such a rule of P (the Leaves of a rule of a
	// region's chain): the region's chain takes it where it stops at its
	// branch, and P's own chain, tried once no region took the event,
	// leaves it out (see OwnChain).
	Mixed bool
	// into names, for a rule whose target is a state inside a region of a
	// parallel state, that state while the build of the machine around
	// the regions holds the rule as one into the parallel state (see
	// parenter.go): its label names it.
	into  string
	Pos   diag.Pos
	Label string // one line for comments, tests and messages; see RuleLabel

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

// Remember is a composite state with a history that a rule leaves.
type Remember struct {
	State *State
	// When is set when the rule leaves the state only from the leaves
	// inside it (a rule of a composite state around it, or a "*" row).
	When bool
}

// Capture is a storage field read into a local before a rule changes it.
type Capture struct {
	Data  *Data
	Local string // the local variable's name, e.g. "prevRetries"
}

// Owner is the state the rule is written on: its From, the parallel
// state nested as a region whose list or rule one of its regions holds
// (Group), or the state inside a region whose rule leaves its parallel
// state (Source).
func (r *Rule) Owner() *State {
	if r.Source != nil {
		return r.Source
	}
	if r.Group != nil {
		return r.Group
	}
	return r.From
}

// Stays reports whether the rule leaves the machine in its state.
func (r *Rule) Stays() bool { return r.To == nil }

// ExitsNone reports whether the rule leaves no state when taken: an
// ignore, a deferral, or a transition without a target. In a parallel
// state such a rule of one region conflicts with no other region's
// (SCXML 1.0 §3.13, removeConflictingTransitions: its exit set is empty).
func (r *Rule) ExitsNone() bool {
	return r.Kind == Ignore || r.Kind == Defer || r.Kind == Transition && r.To == nil && r.Leaves == nil
}

// Wild reports whether the rule is a "*" row.
func (r *Rule) Wild() bool { return r.From == nil }

// Shared reports whether many states share the rule: a rule of a
// composite state, or a "*" row.
func (r *Rule) Shared() bool { return r.From == nil || r.From.Composite() }

// Run is the entry or the exit of one state as one rule (or New) runs it:
// the effect, where its results go, and the actions emitted.
type Run struct {
	State *State
	Entry bool
	// Resume is, for the entry of a parallel state that a rule into a deep
	// history enters, the state with that history (the parallel state or
	// a composite state around it): its regions resume the leaves it
	// remembers (see Memory) instead of their initial ones.
	Resume *State
	// Into is, for the entry of a parallel state that a rule into a state
	// inside one of its regions enters, the leaf that region is entered
	// through (the target, or the leaf it is entered down to), whose
	// entries (State.Enter) run instead of the region's Start; nil
	// otherwise (see parenter.go).
	Into *State
	// IntoResume is, for such an entry whose Into is a parallel state
	// inside the region that a rule into a deep history resumes, the state
	// with that history: Into's regions resume the leaves it remembers
	// (see Memory) instead of their initial ones; nil otherwise.
	IntoResume *State
	// When, for an exit that a shared rule runs only from some of its
	// states, is the state (a leaf, or a composite state) the machine must
	// be in; nil when the run always happens.
	When *State
	// EffectArgs are the values passed for the effect's reads; Results
	// the locals that receive its results, one per set.
	EffectArgs []Value
	Results    []string
	// Stores are, for an entry, the state's fields its effect sets.
	Stores []Store
	// Actions are the actions emitted, in order: for an exit the timer's
	// CancelTimer first, for an entry the timer's StartTimer last.
	Actions []*Emit
	// Delays are, for an entry, the delays its timers' delay functions
	// compute, in the order of the timers.
	Delays []*Delay
}

// Delay is the delay of a timer an entry starts, computed by the timer's
// delay function.
type Delay struct {
	Timer *Timer
	// Args are the values passed to the delay function, and Local the
	// local that receives the delay.
	Args  []Value
	Local string
}

// Hook returns what the run's state does on this entry or exit; nil when
// it does nothing but run its timer.
func (run *Run) Hook() *Hook {
	if run.Entry {
		return run.State.Entry
	}
	return run.State.Exit
}

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
	FromTimer                // the id of a running timer
	FromConst                // a constant
)

// Value is a value a rule reads: a field of the source state, a field of
// the event, a result of the effect, a timer's id, or a constant.
type Value struct {
	Source Source
	Data   *Data  // FromData
	Field  *Field // FromEvent: the event's field
	Result *Field // FromResult: the effect's set
	Timer  *Timer // FromTimer; and for FromConst, the timer whose delay it is
	Const  *Const // FromConst: a constant of set:, when Timer is nil
	// Local names the local variable that holds a FromData value the
	// rule read before changing its storage (see Rule.Captures); "" when
	// the value is read from storage.
	Local string
}

// Const is a constant a rule gives a field (set:): a scalar of the spec,
// checked against the type of the field it fills.
type Const struct {
	Name string // the field's spec name
	// Text is the value as the spec writes it: 0, cancelled, 90s.
	Text string
	// Go is the value as a Go literal: 0, "cancelled", true, 1.5; for a
	// time.Duration field, Duration is set and Nanos holds the value.
	Go       string
	Duration bool
	Nanos    int64
	Pos      diag.Pos
}

// String writes the constant as rule labels show it: retries=0,
// reason="cancelled", delay=90s.
func (c *Const) String() string {
	if c.Duration {
		return c.Name + "=" + c.Text
	}
	return c.Name + "=" + c.Go
}

// Binding is an entry of a rule's with: the name the rule reads, and the
// field it takes it from, the event's or the source state's.
type Binding struct {
	Name string
	// Event is set for event.<field>, clear for state.<field>; Field is
	// the field's spec name.
	Event bool
	Field string
	Pos   diag.Pos
}

// String writes the binding as the spec does: remote=event.remote.
func (bd *Binding) String() string {
	src := "state."
	if bd.Event {
		src = "event."
	}
	return bd.Name + "=" + src + bd.Field
}

// Store writes a value into the machine's storage.
type Store struct {
	Data  *Data
	Value Value
}
