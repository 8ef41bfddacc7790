// Package diff compares two revisions of a spec, as fsmgen diff does: it
// lists every change between the two checked machines with its verdict
// for what was saved with the old revision (saved states; saved events
// and actions, as an event log holds them), for the hand-written code
// (the Behavior and Handler implementations) and for the machine's
// behaviour (a rule that now does something else).
//
// A state, event, action or field renamed with renamed_from is matched to
// its old name: the rename breaks nothing saved. A change the new spec
// declares under breaks: (naming it as Change.Subject does) is reported as
// declared instead of breaking.
package diff

import (
	"fmt"
	"slices"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// Area is what a change may break.
type Area int

// The areas of a change's verdicts.
const (
	SavedStates Area = iota // states saved by the old revision (Save, a database)
	EventLog                // events and actions saved by the old revision (an event log)
	Code                    // the hand-written Behavior and Handler
	Behaviour               // what the machine does
	numAreas
)

// String names the area as the reports do.
func (a Area) String() string {
	return [...]string{"saved states", "event log", "Behavior/Handler", "behaviour"}[a]
}

// Key names the area in JSON.
func (a Area) Key() string {
	return [...]string{"saved_states", "event_log", "code", "behaviour"}[a]
}

// Verdict says what a change does to an area.
type Verdict int

// The verdicts.
const (
	OK     Verdict = iota // nothing to do
	Breaks                // breaks it
	Review                // does not break it, but deserves a look
)

// String returns "ok", "breaks" or "review".
func (v Verdict) String() string { return [...]string{"ok", "breaks", "review"}[v] }

// Change is one difference between the revisions.
type Change struct {
	// Subject names what changed as a breaks: entry names it: "state
	// Paid", "field Paid.paid_at", "event Refund", "action Notify",
	// "guard hasItems", "effect addItem", "rule Cart × Checkout",
	// "initial state".
	Subject string
	// What says how it changed: "removed", "added", "retyped from int to
	// int64", "renamed from Placed", ...
	What string
	// Old and New are where the subject is in each revision; zero where
	// it does not exist.
	Old, New diag.Pos
	// Verdicts hold the change's verdict for each area, and Why says what
	// a breaking or reviewed verdict means.
	Verdicts [numAreas]Verdict
	Why      [numAreas]string
	// Declared is the reason the new spec gives for the change, when it
	// declares it under breaks:.
	Declared string
}

// Breaks reports whether the change breaks an area and is not declared.
func (c *Change) Breaks() bool {
	return c.Declared == "" && slices.Contains(c.Verdicts[:], Breaks)
}

// Report is the comparison of two revisions.
type Report struct {
	Changes []*Change
	// Unused are the breaks: entries of the new spec that name no breaking
	// change.
	Unused []fsm.Break
}

// Breaks counts the changes that break something and are not declared.
func (r *Report) Breaks() int {
	n := 0
	for _, c := range r.Changes {
		if c.Breaks() {
			n++
		}
	}
	return n
}

// Compare compares the old revision of a machine with the new one.
func Compare(old, new *fsm.Machine) *Report {
	d := &differ{old: old, new: new, r: &Report{}}
	d.states()
	d.regions()
	d.regionTakeovers()
	d.decls("event", old.Events, new.Events)
	d.decls("action", old.Actions, new.Actions)
	d.purity()
	d.funcs("guard", old.Guards, new.Guards)
	d.funcs("effect", old.Effects, new.Effects)
	d.initial()
	d.rules()
	d.accessors()
	d.declared()
	return d.r
}

type differ struct {
	old, new *fsm.Machine
	r        *Report
	// renamed maps the old names of states, events and actions to their
	// new names, by kind ("state", "event", "action").
	renamed map[string]map[string]string
}

// add records a change.
func (d *differ) add(c *Change) { d.r.Changes = append(d.r.Changes, c) }

// verdict sets an area's verdict and why.
func (c *Change) verdict(a Area, v Verdict, why string) *Change {
	c.Verdicts[a], c.Why[a] = v, why
	return c
}

// declared marks the breaking changes the new spec declares, and lists
// the declarations that name none.
func (d *differ) declared() {
	for _, b := range d.new.Breaks {
		found := false
		for _, c := range d.r.Changes {
			if c.Subject == b.Change && slices.Contains(c.Verdicts[:], Breaks) {
				c.Declared = b.Why
				found = true
			}
		}
		if !found {
			d.r.Unused = append(d.r.Unused, b)
		}
	}
}

// declsOf returns the declarations of events or actions.
func declsOf(list any) []*fsm.Decl {
	var out []*fsm.Decl
	switch list := list.(type) {
	case []*fsm.Event:
		for _, e := range list {
			out = append(out, &e.Decl)
		}
	case []*fsm.Action:
		for _, a := range list {
			out = append(out, &a.Decl)
		}
	}
	return out
}

// renamedType says what a rename does to the code that uses the generated
// package: the Go type of a state or event, and its kind, take the new name.
func renamedType(old, new string) string {
	return fmt.Sprintf("the Go type %s is now %s (its kind constant too): code that names it no longer compiles until it is updated", old, new)
}
