package fsm

import (
	"fmt"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// bindings reads a rule's with: entries, each a name the rule reads and
// where it takes it from, event.<field> or state.<field>. Which fields
// those are is resolved with the rule's flow (see flow.bind). It reports
// false when an entry is malformed.
func (b *builder) bindings(r *Rule, o *spec.Outcome) bool {
	ok := true
	for _, w := range o.With {
		qual, field, found := strings.Cut(w.Source.Value, ".")
		switch {
		case !w.Source.Set:
			b.errorf(w.Source.Pos, "with: %s takes nothing: write event.%s for the event's field or state.%s for the source state's", w.Name.Value, w.Name.Value, w.Name.Value)
		case !found || (qual != "event" && qual != "state") || !identRE.MatchString(field):
			b.errorf(w.Source.Pos, "with: %s takes %q, which is neither event.<field> nor state.<field>: write event.%s for the event's field or state.%s for the source state's", w.Name.Value, w.Source.Value, w.Name.Value, w.Name.Value)
		default:
			r.With = append(r.With, &Binding{Name: w.Name.Value, Event: qual == "event", Field: field, Pos: w.Source.Pos})
			continue
		}
		ok = false
	}
	return ok
}

// bound is a with: entry of the rule as its flow resolves it: the value
// the rule takes for the name, and whether something read it.
type bound struct {
	*Binding
	found *found
	used  bool
}

// bind resolves the rule's with: entries into the values they name. It
// reports false, having said why, when one names no field of the row.
func (fl *flow) bind() bool {
	r := fl.r
	fl.with = map[string]*bound{}
	ok := true
	for _, bd := range r.With {
		var src *found
		var problem string
		switch {
		case bd.Event && r.Event == nil:
			problem = fmt.Sprintf("but this row has no event (%s): take it from the state, state.%s", r.Label, bd.Field)
		case bd.Event:
			if f := r.Event.Field(bd.Field); f != nil {
				src = &found{val: Value{Source: FromEvent, Field: f}, typ: f.Type, desc: "event " + r.Event.Name + "'s " + bd.Field}
			} else {
				problem = fmt.Sprintf("but event %s has no field %s%s", r.Event.Name, bd.Field, didYouMean(bd.Field, nil, r.Event.Fields))
			}
		default:
			var with, without []string
			src, with, without, problem = fl.stateField(bd.Field)
			switch {
			case problem != "":
				problem = "but " + problem
			case len(with) > 0:
				problem = fmt.Sprintf("but only some of %s have it (%s; %s): give the states the field, or write rows of their own", fl.shared(), does(with, "has it"), does(without, "has not"))
			case src == nil:
				var fields [][]*Field
				for _, s := range fl.from {
					fields = append(fields, s.Fields)
				}
				hint := didYouMean(bd.Field, nil, fields...)
				problem = fmt.Sprintf("but state %s has no field %s%s", r.From.Name, bd.Field, hint)
				if r.Shared() {
					problem = fmt.Sprintf("but none of %s has it (%s)%s", fl.shared(), strings.Join(without, ", "), hint)
				}
			}
		}
		if problem != "" {
			src := "event."
			if !bd.Event {
				src = "state."
			}
			fl.b.errorf(bd.Pos, "with: %s takes %s%s, %s", bd.Name, src, bd.Field, problem)
			ok = false
			continue
		}
		fl.with[bd.Name] = &bound{Binding: bd, found: src}
	}
	return ok
}

// unbound reports the with: entries that nothing on the row read.
func (fl *flow) unbound() {
	for _, bd := range fl.r.With {
		if w := fl.with[bd.Name]; w != nil && !w.used {
			fl.b.errorf(bd.Pos, "with: %s, but nothing on this row (%s) reads %s: no guard or effect reads it, and no field the row fills is named %s; remove it", bd, fl.r.Label, bd.Name, bd.Name)
		}
	}
}

// updateWith stores, on a rule that stays, what its with: entries name
// into the source state's fields of their names, as an effect's results
// are stored: with: {remote: event.remote} gives the state the event's
// remote. A name the effect sets is the effect's; a name the state does
// not have is left to the rest of the row (a guard, an action).
func (fl *flow) updateWith() {
	r := fl.r
	for _, bd := range r.With {
		w := fl.with[bd.Name]
		if w == nil || (r.Effect != nil && r.Effect.Set(bd.Name) != nil) {
			continue
		}
		var have []*Field
		for _, s := range fl.from {
			if f := s.Field(bd.Name); f != nil {
				have = append(have, f)
			}
		}
		switch {
		case len(have) == 0:
			continue
		case len(have) < len(fl.from):
			w.used = true
			fl.b.errorf(bd.Pos, "with: %s, but only some of %s have %s (%s): give them all the field, or write rows of their own", bd, fl.shared(), bd.Name, r.Label)
			continue
		case have[0].Type != w.found.typ:
			w.used = true
			fl.b.errorf(bd.Pos, "with: %s, but %s is %s and state %s's %s is %s (%s): name a field of its type, or give the two one type", bd, w.found.desc, w.found.typ, fl.from[0].Name, bd.Name, have[0].Type, r.Label)
			continue
		}
		w.used = true
		if w.found.val.Source == FromData && w.found.val.Data == have[0].Data {
			continue // the state's own field: it keeps it
		}
		fl.store(have[0].Data, w.found.val)
	}
}
