package fsmtemporal

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// Machine is what the adapter calls on a generated machine: every machine
// fsmgen generates has these methods (E is its Event type).
type Machine[E any] interface {
	// HandleEvent feeds an event to the machine; a rejected event returns
	// an error wrapping fsmrt.ErrRejected and changes nothing.
	HandleEvent(ev E) error
	// Save returns the machine as JSON, for Load.
	Save() ([]byte, error)
}

// Recorder is the machine's Handler inside the workflow: the generated
// Recorder, which keeps the actions of a step as values, behind two
// methods. Begin starts a step: it forgets the actions of the last one
// and makes StartTimer count deadlines from now.
type Recorder[A any] interface {
	Begin(now time.Time)
	// Actions returns the actions of the step since Begin, in order.
	Actions() []A
}

// TimerOp says what an action does to the machine's timers.
type TimerOp uint8

const (
	// NotTimer is an action performed by an activity or in the workflow.
	NotTimer TimerOp = iota
	// StartTimer starts (or restarts) a timer: a workflow timer at the
	// machine's deadline for it.
	StartTimer
	// CancelTimer stops a timer.
	CancelTimer
)

// Def describes one generated machine to the adapter: the few things that
// differ from machine to machine, as functions over the machine's own types.
// M is the machine, E its Event, A its Action, X the activities that perform
// the actions on the worker (an interface with one method per action,
// taking a context and returning an error). A Def is written once per
// machine, next to its generated package (docs/temporal.md shows one, and
// says which parts fsmgen is to generate); it must not change while
// workflows run, except as Revision says.
type Def[M Machine[E], E, A, X any] struct {
	// Name is the workflow's type name, and the prefix of its activities'
	// names (Name + "." + the action's name).
	Name string
	// Revision is the revision of the spec this code runs, and MinRevision
	// the oldest whose running workflows it can continue: a run started
	// under a revision below MinRevision fails its workflow task when it
	// replays here (workflow.GetVersion's "unsupported version"), instead of
	// taking steps its history does not hold. fsmgen diff's verdict sets
	// them: a change that keeps the saved shape and the behaviour raises
	// Revision alone, a breaking one raises both. Both at least 1.
	Revision, MinRevision workflow.Version
	// Open returns the machine Save saved (read with Load, strictly), or a
	// new machine when saved is nil, with the Recorder its Handler records
	// into. It must not do I/O: it runs in the workflow.
	Open func(saved []byte) (M, Recorder[A], error)
	// UnmarshalEvent and UnmarshalAction are the generated package's.
	UnmarshalEvent  func(data []byte) (E, error)
	UnmarshalAction func(data []byte) (A, error)
	// TimerFired, Timer, Timers and Deadline are the machine's timers:
	// all four set for a machine with timers, all nil for one without.
	//
	// TimerFired returns the machine's TimerFired event for timer id.
	TimerFired func(id fsmrt.TimerID, deadline, now time.Time) E
	// Timer says whether a is a StartTimer or CancelTimer action, and of
	// which timer.
	Timer func(a A) (fsmrt.TimerID, TimerOp)
	// Timers returns the ids of the timers the machine has running (its
	// Timers method), to arm them again after Open.
	Timers func(m M) []fsmrt.TimerID
	// Deadline returns when the machine's running timer id fires (its
	// Deadline method).
	Deadline func(m M, id fsmrt.TimerID) time.Time
	// Actions lists the names of the machine's actions that activities
	// perform (all but the timers' and those InWorkflow performs), and
	// ActionName names any action: an action's activity is Name + "." +
	// its name.
	Actions    []string
	ActionName func(a A) string
	// InWorkflow performs, inside the workflow, the actions the spec
	// marks pure (pure: true), and reports false for any other, which
	// then runs as its activity. It must be deterministic and do no I/O:
	// it runs again, with the same actions, whenever the workflow
	// replays, and writes nothing to the history. Nil when the machine
	// has no pure action.
	InWorkflow func(ctx workflow.Context, a A) (ok bool, err error)
	// State returns the machine's state, as its query answers it (the
	// generated State method: a value whose JSON is {"kind": ..., fields}).
	State func(m M) any
	// Terminal reports whether the machine has ended; the workflow then
	// completes with the machine's Save JSON as its result. Nil: it never
	// ends by itself.
	Terminal func(m M) bool
	// Perform performs action a with x: the dispatch from an action value to
	// x's method, on the worker that runs the action's activity.
	Perform func(ctx context.Context, x X, a A) error
}

// Check reports what def lacks: a name, revisions in order from 1, and the
// functions the workflow calls (Terminal may be nil; Perform is needed by
// RegisterActivities alone). Call it when the worker starts, or in a test:
// a workflow whose Def fails it fails its workflow tasks, which Temporal
// retries until a worker with a fixed Def takes them.
func (def *Def[M, E, A, X]) Check() error {
	_, missing := split([]field{
		{"Open", def.Open == nil}, {"UnmarshalEvent", def.UnmarshalEvent == nil},
		{"UnmarshalAction", def.UnmarshalAction == nil}, {"ActionName", def.ActionName == nil},
		{"State", def.State == nil},
	})
	timersSet, timersNil := split([]field{
		{"TimerFired", def.TimerFired == nil}, {"Timer", def.Timer == nil},
		{"Timers", def.Timers == nil}, {"Deadline", def.Deadline == nil},
	})

	switch {
	case def.Name == "":
		return errors.New("fsmtemporal: the Def has no Name: give it the machine's name, the workflow's type")
	case len(missing) > 0:
		return fmt.Errorf("fsmtemporal: %s: the Def lacks %s", def.Name, strings.Join(missing, ", "))
	case len(timersSet) > 0 && len(timersNil) > 0:
		return fmt.Errorf("fsmtemporal: %s: the Def has %s but lacks %s: a machine with timers needs all four, one without none", def.Name, strings.Join(timersSet, ", "), strings.Join(timersNil, ", "))
	case def.MinRevision < 1 || def.Revision < def.MinRevision:
		return fmt.Errorf("fsmtemporal: %s: the revisions are %d to %d: MinRevision must be at least 1 and at most Revision", def.Name, def.MinRevision, def.Revision)
	}
	return nil
}

// field is a function of a Def, by name, and whether it is nil.
type field struct {
	name string
	nil  bool
}

// split names the fields that are set and those that are nil.
func split(fields []field) (set, unset []string) {
	for _, f := range fields {
		if f.nil {
			unset = append(unset, f.name)
		} else {
			set = append(set, f.name)
		}
	}
	return set, unset
}
