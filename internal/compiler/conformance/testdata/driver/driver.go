// Package driver runs the conformance corpus's scripts against generated
// machines. The conformance test copies it into a temporary module, beside
// one generated package per case and an adapter for each; a single program
// runs every case and writes what it saw as JSON for the test to check.
//
// The driver knows nothing of the expectations: it executes operations
// (make a machine, send an event, set a guard's answer) and records, for
// each, the trace of the step: the guards and effects called, the rules
// that fired (through the machine's observer) and the actions handed to
// the Recorder, in the order they happened.
package driver

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"
)

// Machine is one generated machine behind its adapter, which the harness
// generates for each case's package.
type Machine interface {
	// New makes the machine with the package's New from the initial
	// state, given as the JSON of the state (with its "kind").
	New(state []byte) error
	// Restore makes the machine with Restore from a state decoded with
	// UnmarshalState.
	Restore(state []byte) error
	// Handle decodes an event with UnmarshalEvent and hands it to
	// HandleEvent.
	Handle(event []byte) error
	// Rejected reports whether err wraps the package's ErrRejected.
	Rejected(err error) bool
	// Actions returns the actions the Recorder holds, oldest first.
	Actions() []any
	// State returns the machine's State(), or nil before New or Restore.
	State() any
	// Timers returns the machine's Timers(); nil when the machine has no
	// timers.
	Timers() []Timer
}

// Timer is a running timer as Timers lists it.
type Timer struct {
	ID    uint64        `json:"id"`
	Delay time.Duration `json:"delay"`
}

// Op is one operation of a script, as the harness translates it.
type Op struct {
	Op      string            `json:"op"`                // new, restore, send, guard, effect
	Data    json.RawMessage   `json:"data,omitempty"`    // new, restore, send: the state's or event's JSON
	Name    string            `json:"name,omitempty"`    // guard, effect
	Answer  bool              `json:"answer,omitempty"`  // guard
	Results []json.RawMessage `json:"results,omitempty"` // effect: one JSON value per result
}

// Entry is one line of a trace: a call of a guard or effect, a step of
// the machine (a rule fired), or an action handed to the Handler.
type Entry struct {
	Type string `json:"type"` // call, step, action
	// Name is the guard's or effect's spec name (call).
	Name string `json:"name,omitempty"`
	// Args are the values a call was given, by the names of what the
	// guard or effect reads (call).
	Args map[string]json.RawMessage `json:"args,omitempty"`
	// Rule, From and To describe a step: the rule's index in Rules()
	// and the state kinds before and after.
	Rule int    `json:"rule,omitempty"`
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// Action is an action's JSON (action).
	Action json.RawMessage `json:"action,omitempty"`
}

// Record is what one operation did.
type Record struct {
	Trace []Entry `json:"trace"`
	// Err is the error the operation returned; Rejected is set when it
	// wraps ErrRejected.
	Err      string `json:"err,omitempty"`
	Rejected bool   `json:"rejected,omitempty"`
	// State is the machine's state after the operation, as JSON; null
	// when there is no machine yet.
	State json.RawMessage `json:"state"`
	// Timers are the machine's Timers() after the operation.
	Timers []Timer `json:"timers"`
}

// Driver runs one case's operations and is the behaviour's script: it
// answers guards and returns effects' results as the operations set
// them, and records every call.
type Driver struct {
	m       Machine
	guards  map[string]bool
	effects map[string][]json.RawMessage
	trace   []Entry
	seen    int // actions of the Recorder already in the trace
	err     error
}

// Guard records a call of a guard and returns the answer the script set
// (false until it sets one).
func (d *Driver) Guard(name string, params []string, args []any) bool {
	d.call(name, params, args)
	return d.guards[name]
}

// Effect records a call of an effect and stores the results the script
// set into results (pointers); results the script did not set stay zero.
func (d *Driver) Effect(name string, params []string, args []any, results ...any) {
	d.call(name, params, args)
	set := d.effects[name]
	if set == nil {
		return
	}
	if len(set) != len(results) {
		d.fail(fmt.Errorf("effect %s returns %d results, the script gave %d", name, len(results), len(set)))
		return
	}
	for i, r := range results {
		if err := json.Unmarshal(set[i], r); err != nil {
			d.fail(fmt.Errorf("effect %s, result %d: %w", name, i+1, err))
		}
	}
}

// Step records a step of the machine; the adapter's observer calls it.
func (d *Driver) Step(rule int, from, to string) {
	d.flush()
	d.trace = append(d.trace, Entry{Type: "step", Rule: rule, From: from, To: to})
}

func (d *Driver) call(name string, params []string, args []any) {
	d.flush()
	e := Entry{Type: "call", Name: name, Args: map[string]json.RawMessage{}}
	for i, p := range params {
		data, err := json.Marshal(args[i])
		if err != nil {
			d.fail(fmt.Errorf("encode %s's %s: %w", name, p, err))
		}
		e.Args[p] = data
	}
	d.trace = append(d.trace, e)
}

// flush moves the actions recorded since the last flush into the trace.
func (d *Driver) flush() {
	if d.m == nil {
		return
	}
	actions := d.m.Actions()
	for _, a := range actions[min(d.seen, len(actions)):] {
		data, err := json.Marshal(a)
		if err != nil {
			d.fail(fmt.Errorf("encode action %T: %w", a, err))
		}
		d.trace = append(d.trace, Entry{Type: "action", Action: data})
	}
	d.seen = len(actions)
}

// fail keeps the first error of the harness itself (not of the machine).
func (d *Driver) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

// Run runs ops on the machine the adapter m wraps and returns one record
// per operation. A panic ends the case: its record says so and the rest
// are not run.
func (d *Driver) Run(m Machine, ops []Op) []Record {
	d.m, d.guards, d.effects = m, map[string]bool{}, map[string][]json.RawMessage{}
	var out []Record
	for _, op := range ops {
		rec, ok := d.do(op)
		out = append(out, rec)
		if !ok {
			break
		}
	}
	return out
}

// do runs one operation; ok is false when it panicked.
func (d *Driver) do(op Op) (rec Record, ok bool) {
	d.trace, d.err = nil, nil
	defer func() {
		if p := recover(); p != nil {
			rec = Record{Trace: d.trace, Err: fmt.Sprintf("panic: %v", p)}
			ok = false
		}
	}()
	var err error
	switch op.Op {
	case "new", "restore":
		d.seen = 0
		if op.Op == "new" {
			err = d.m.New(op.Data)
		} else {
			err = d.m.Restore(op.Data)
		}
	case "send":
		err = d.m.Handle(op.Data)
	case "guard":
		d.guards[op.Name] = op.Answer
	case "effect":
		d.effects[op.Name] = op.Results
	default:
		err = fmt.Errorf("unknown operation %q", op.Op)
	}
	d.flush()
	rec = Record{Trace: d.trace, State: json.RawMessage("null"), Timers: d.m.Timers()}
	if err != nil {
		rec.Err, rec.Rejected = err.Error(), d.m.Rejected(err)
	}
	if d.err != nil {
		rec.Err = "harness: " + errors.Join(d.err, err).Error()
	}
	if s := d.m.State(); s != nil {
		data, err := json.Marshal(s)
		if err != nil {
			rec.Err = fmt.Sprintf("harness: encode state %T: %v", s, err)
		}
		rec.State = data
	}
	return rec, true
}

// Input is what the program reads: each case's operations.
type Input struct {
	Cases map[string][]Op `json:"cases"`
}

// Output is what the program writes: each case's records.
type Output struct {
	Cases map[string][]Record `json:"cases"`
}

// Main runs the cases named in the input file (os.Args[1]) with the
// adapters of machines and writes the output file (os.Args[2]).
func Main(machines map[string]func(*Driver) Machine) {
	if err := run(machines); err != nil {
		fmt.Fprintln(os.Stderr, "conformance driver:", err)
		os.Exit(1)
	}
}

func run(machines map[string]func(*Driver) Machine) error {
	if len(os.Args) != 3 {
		return errors.New("usage: run INPUT.json OUTPUT.json")
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		return err
	}
	var in Input
	if err := json.Unmarshal(data, &in); err != nil {
		return fmt.Errorf("decode %s: %w", os.Args[1], err)
	}
	out := Output{Cases: map[string][]Record{}}
	for name, ops := range in.Cases {
		mk, ok := machines[name]
		if !ok {
			return fmt.Errorf("no machine for case %s", name)
		}
		d := &Driver{}
		out.Cases[name] = d.Run(mk(d), ops)
	}
	data, err = json.Marshal(out)
	if err != nil {
		return err
	}
	return os.WriteFile(os.Args[2], data, 0o644)
}
