// Package driver runs walks on generated machines for the export's
// differential test (internal/compiler/export). The test copies it into a
// temporary module beside one generated package per spec, each with an
// adapter; a single program runs every walk and writes, step by step,
// what the machine did, as JSON.
package driver

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
)

// Machine is one generated machine behind its adapter.
type Machine interface {
	New() error
	// Send hands the event of the given JSON kind, with zero fields, to
	// HandleEvent; Fire hands it TimerFired of timer id.
	Send(kind string) error
	Fire(id uint64) error
	Rejected(err error) bool
	// TakeActions returns the actions handed out since the last call.
	TakeActions() []any
	// Leaf is the current state's name; Save is m.Save().
	Leaf() string
	Save() ([]byte, error)
}

// Walk is what to do with one machine: explicit steps, or Length random
// ones drawn from Seed among Events and the running timers.
type Walk struct {
	Machine string   `json:"machine"`
	Steps   []Input  `json:"steps,omitempty"`
	Guards  []bool   `json:"guards,omitempty"` // the answers of an explicit walk's guards, in order
	Seed    uint64   `json:"seed,omitempty"`
	Length  int      `json:"length,omitempty"`
	Events  []string `json:"events,omitempty"` // the JSON kinds of the events a random walk sends
}

// Input is one step: an event's JSON kind, or the timer of a state (its
// JSON kind) and id ("" for the timer without one).
type Input struct {
	Event string `json:"event,omitempty"`
	State string `json:"state,omitempty"`
	Timer string `json:"timer,omitempty"`
	Fire  bool   `json:"fire,omitempty"`
}

// Result is what the machine did on one step (the first is New).
type Result struct {
	Input   Input             `json:"input"`
	Guards  []Answer          `json:"guards"`
	Effects []string          `json:"effects"`
	Rules   []Rule            `json:"rules"`
	Actions []json.RawMessage `json:"actions"`
	Leaf    string            `json:"leaf"`
	Timers  []SavedTimer      `json:"timers"`
	Error   string            `json:"error,omitempty"`
}

// Answer is a guard's call and its answer.
type Answer struct {
	Guard  string `json:"guard"`
	Answer bool   `json:"answer"`
}

// Rule is a rule fired, the leaf it fired in, and how many guards the
// step had asked before it (which tells the microsteps of eventless rules
// apart: each asks its guards before any of its rules fires).
type Rule struct {
	Rule  int    `json:"rule"`
	From  string `json:"from"`
	Asked int    `json:"asked"`
	// Leaves are, for a rule of a parallel state that waits, the leaves
	// of its regions the machine holds as the observer sees it: those its
	// own eventless rule leaves from.
	Leaves string `json:"leaves,omitempty"`
}

// SavedTimer is a running timer as Save writes it.
type SavedTimer struct {
	State string `json:"state"`
	Timer string `json:"timer,omitempty"`
	ID    uint64 `json:"id"`
}

// Driver runs the walks and collects what happens.
type Driver struct {
	cur     *Result
	answers []bool
	rng     *rand.Rand
	fail    error
}

// Guard answers a guard: the walk's next answer, or a random one.
func (d *Driver) Guard(name string) bool {
	var a bool
	switch {
	case d.rng != nil:
		a = d.rng.IntN(2) == 0
	case len(d.answers) > 0:
		a, d.answers = d.answers[0], d.answers[1:]
	default:
		d.fail = fmt.Errorf("guard %s called with no answer left", name)
	}
	d.cur.Guards = append(d.cur.Guards, Answer{name, a})
	return a
}

// Effect records an effect's call.
func (d *Driver) Effect(name string) { d.cur.Effects = append(d.cur.Effects, name) }

// Step records a rule fired from state from, leaves the leaves of its
// regions when it is a parallel state that waits ("" otherwise).
func (d *Driver) Step(rule int, from, leaves string) {
	d.cur.Rules = append(d.cur.Rules, Rule{rule, from, len(d.cur.Guards), leaves})
}

// Main reads the walks from the file named by os.Args[1], runs them and
// writes the results, one list per walk, to os.Args[2].
func Main(machines map[string]func(*Driver) Machine) {
	if err := run(machines, os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "driver:", err)
		os.Exit(1)
	}
}

func run(machines map[string]func(*Driver) Machine, in, out string) error {
	data, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var walks []Walk
	if err := json.Unmarshal(data, &walks); err != nil {
		return err
	}
	var results [][]Result
	for i, w := range walks {
		mk := machines[w.Machine]
		if mk == nil {
			return fmt.Errorf("walk %d: no machine %q", i, w.Machine)
		}
		rs, err := walk(mk, w)
		if err != nil {
			return fmt.Errorf("walk %d on %s: %w", i, w.Machine, err)
		}
		results = append(results, rs)
	}
	data, err = json.Marshal(results)
	if err != nil {
		return err
	}
	return os.WriteFile(out, data, 0o644)
}

func walk(mk func(*Driver) Machine, w Walk) ([]Result, error) {
	d := &Driver{answers: w.Guards}
	var pick *rand.Rand
	if w.Length > 0 {
		d.rng = rand.New(rand.NewPCG(w.Seed, 1))
		pick = rand.New(rand.NewPCG(w.Seed, 2))
	}
	m := mk(d)
	var out []Result
	d.cur = &Result{}
	err := m.New()
	if err := d.finish(m, err, &out); err != nil {
		return nil, err
	}
	n := len(w.Steps)
	if w.Length > 0 {
		n = w.Length
	}
	for i := range n {
		d.cur = &Result{}
		var in Input
		if w.Length > 0 {
			in = Input{Event: w.Events[pick.IntN(len(w.Events))]}
			if timers := out[len(out)-1].Timers; len(timers) > 0 && pick.IntN(3) == 0 {
				t := timers[pick.IntN(len(timers))]
				in = Input{State: t.State, Timer: t.Timer, Fire: true}
			}
		} else {
			in = w.Steps[i]
		}
		d.cur.Input = in
		var err error
		if in.Fire {
			id, ok := uint64(0), false
			for _, t := range out[len(out)-1].Timers {
				if t.State == in.State && t.Timer == in.Timer {
					id, ok = t.ID, true
				}
			}
			if !ok {
				return nil, fmt.Errorf("step %d: timer %q of %s is not running", i+1, in.Timer, in.State)
			}
			err = m.Fire(id)
		} else {
			err = m.Send(in.Event)
		}
		if err := d.finish(m, err, &out); err != nil {
			return nil, fmt.Errorf("step %d: %w", i+1, err)
		}
	}
	if len(d.answers) > 0 {
		// The witness path said the machine would ask more guards than
		// it did.
		return nil, fmt.Errorf("%d guard answers left unused", len(d.answers))
	}
	return out, nil
}

// finish completes the current result after an operation that returned
// err, and appends it.
func (d *Driver) finish(m Machine, err error, out *[]Result) error {
	if d.fail != nil {
		return d.fail
	}
	switch {
	case err == nil:
	case m.Rejected(err):
		d.cur.Error = "rejected"
	default:
		return err
	}
	for _, a := range m.TakeActions() {
		raw, err := json.Marshal(a)
		if err != nil {
			return err
		}
		d.cur.Actions = append(d.cur.Actions, raw)
	}
	d.cur.Leaf = m.Leaf()
	saved, err := m.Save()
	if err != nil {
		return fmt.Errorf("save: %w", err)
	}
	var s struct {
		Timers []SavedTimer `json:"timers"`
	}
	if err := json.Unmarshal(saved, &s); err != nil {
		return errors.Join(errors.New("read what Save wrote"), err)
	}
	d.cur.Timers = s.Timers
	*out = append(*out, *d.cur)
	return nil
}
