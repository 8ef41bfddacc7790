package fsm

import (
	"slices"
)

// Accessor is a field that a set of states shares, with one type: every
// state of the machine, or every leaf inside a composite state. The
// generated package reads it with a function Of (ConversationOf) and sets
// it with a function With (WithConversation), so that code written by
// hand reaches the field without a type switch over the states, which a
// state added later would silently escape.
type Accessor struct {
	Data *Data
	// Field is the field as the first state of the set declares it: its
	// Go name and doc.
	Field *Field
	// Of and With are the functions' names: "ConversationOf",
	// "WithConversation".
	Of, With string
	// Owner is the composite state whose leaves share the field; nil when
	// every state of the machine has it.
	Owner *State
	// States are the leaves that have the field, in spec order.
	States []*State
}

// accessors finds the fields a set of states shares, with one type: every
// leaf of the machine, or every leaf inside a composite state, when there
// are two or more. A field whose name has two such types, or whose
// functions' names are taken, gets none.
func (b *builder) accessors() {
	m := b.m
	taken := map[string]bool{}
	for _, n := range Generated {
		taken[n] = true
	}
	for _, ds := range b.kindSets() {
		for _, d := range ds.decls {
			taken[d.GoName], taken[d.KindName] = true, true
		}
	}
	byName := map[string]int{}
	var out []*Accessor
	for _, d := range m.Data {
		if len(d.States) < 2 {
			continue
		}
		a := &Accessor{Data: d, States: d.States}
		switch {
		case len(d.States) == len(m.States):
		default:
			a.Owner = d.States[0].Parent
			for a.Owner != nil && !slices.Equal(leavesOf(m, a.Owner), d.States) {
				a.Owner = a.Owner.Parent
			}
			if a.Owner == nil {
				continue
			}
		}
		for _, f := range d.States[0].Fields {
			if f.Data == d {
				a.Field = f
			}
		}
		a.Of, a.With = a.Field.GoName+"Of", "With"+a.Field.GoName
		if taken[a.Of] || taken[a.With] {
			continue
		}
		byName[d.Name]++
		out = append(out, a)
	}
	for _, a := range out {
		if byName[a.Data.Name] == 1 {
			m.Accessors = append(m.Accessors, a)
		}
	}
}

// leavesOf returns the leaves inside composite state c, in spec order.
func leavesOf(m *Machine, c *State) []*State {
	var out []*State
	for _, s := range m.States {
		if c.Contains(s) {
			out = append(out, s)
		}
	}
	return out
}
