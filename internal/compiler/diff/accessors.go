package diff

import (
	"fmt"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// accessors compares the functions the generated package has for the
// fields a set of states shares: one that is gone breaks the hand-written
// code that calls it; one that now covers other states changes what it
// answers.
func (d *differ) accessors() {
	olds := map[string]*fsm.Accessor{}
	for _, a := range d.old.Accessors {
		olds[a.Of] = a
	}
	news := map[string]*fsm.Accessor{}
	for _, a := range d.new.Accessors {
		news[a.Of] = a
	}
	for _, o := range d.old.Accessors {
		n := news[o.Of]
		if n == nil {
			c := &Change{Subject: "function " + o.Of, What: fmt.Sprintf("lost %s and %s", o.Of, o.With), Old: o.Field.Pos}
			c.verdict(Code, Breaks, fmt.Sprintf("the generated package no longer has %s and %s: %s no longer share the field %s with one type; the code that calls them must switch over the states itself", o.Of, o.With, whose(o), o.Data.Name))
			d.add(c)
			continue
		}
		if ow, nw := d.stateList(o.States, true), d.stateList(n.States, false); ow != nw {
			c := &Change{Subject: "function " + n.Of, What: fmt.Sprintf("%s now reads %s, was %s", n.Of, nw, ow), Old: o.Field.Pos, New: n.Field.Pos}
			c.verdict(Behaviour, Review, fmt.Sprintf("%s and %s now answer for %s", n.Of, n.With, nw))
			d.add(c)
		}
	}
	for _, n := range d.new.Accessors {
		if olds[n.Of] == nil {
			c := &Change{Subject: "function " + n.Of, What: fmt.Sprintf("gained %s and %s", n.Of, n.With), New: n.Field.Pos}
			d.add(c)
		}
	}
}

// whose says which states shared an accessor's field: "the states", or
// "the states inside S".
func whose(a *fsm.Accessor) string {
	if a.Owner == nil {
		return "the states"
	}
	return "the states inside " + a.Owner.Name
}

// stateList names states in the new revision's names.
func (d *differ) stateList(ss []*fsm.State, old bool) string {
	var names []string
	for _, s := range ss {
		name := s.Name
		if old {
			name = d.rename("state", s.Name)
		}
		names = append(names, name)
	}
	return fmt.Sprint(names)
}
