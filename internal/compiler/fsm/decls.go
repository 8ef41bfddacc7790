package fsm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/spec"
	"github.com/fsmgen/fsmgen/internal/suggest"
)

// fields checks a list of typed fields: identifiers, reserved and
// duplicate names, and the syntax of their types. what names their owner
// in messages, e.g. "state" or "effect startTurn's reads".
func (b *builder) fields(what string, list []spec.Field) []*Field {
	var out []*Field
	byGo := map[string]*Field{}
	for _, sf := range list {
		fd := &Field{Name: sf.Name.Value, Pos: sf.Name.Pos, Type: sf.Type.Value, TypePos: sf.Type.Pos, Doc: strings.TrimSpace(sf.Doc.Value)}
		if !identRE.MatchString(fd.Name) {
			b.errorf(fd.Pos, "field name %q is not an identifier: use letters, digits and underscores, starting with a letter", fd.Name)
			continue
		}
		fd.GoName, fd.JSONName = b.goName("field "+fd.Name, fd.Name, sf.GoName), SnakeName(fd.Name)
		fd.Param = b.names.ParamName(fd.Name, b.m.Imports)
		if sf.GoName.Set {
			fd.Param = b.names.ParamName(fd.GoName, b.m.Imports)
		}
		if fd.JSONName == "kind" {
			b.errorf(fd.Pos, "field name %q is reserved: \"kind\" tells the %ss apart in JSON", fd.Name, what)
			continue
		}
		if member, ok := Members[fd.GoName]; ok {
			b.errorf(fd.Pos, "field %q is %s in Go, which is %s: rename it or give it a go_name", fd.Name, fd.GoName, member)
			continue
		}
		if prev, ok := byGo[fd.GoName]; ok {
			b.errorf(fd.Pos, "field %q and field %q (%s) are both %s in Go: rename one or give one a go_name", fd.Name, prev.Name, prev.Pos, fd.GoName)
			continue
		}
		byGo[fd.GoName] = fd
		fd.RenamedFrom = b.oldNames("field "+fd.Name, fd.JSONName, sf.RenamedFrom)
		if b.parseType(sf.Type) {
			fd.Type = normaliseType(fd.Type)
			fd.GoType = b.goCode(fd.Type)
		}
		out = append(out, fd)
	}
	return out
}

func (b *builder) decl(kind string, name, doc, goName spec.String, fields []spec.Field, renamed []spec.String, index int) Decl {
	d := Decl{Name: name.Value, Pos: name.Pos, Index: index, Doc: strings.TrimSpace(doc.Value)}
	if !identRE.MatchString(name.Value) {
		b.errorf(name.Pos, "%s name %q is not an identifier: use letters, digits and underscores, starting with a letter", kind, name.Value)
		return d
	}
	d.GoName = b.goName(kind+" "+name.Value, name.Value, goName)
	d.Snake = SnakeName(name.Value)
	d.KindName = strings.ToUpper(kind[:1]) + kind[1:] + d.GoName
	d.Fields = b.fields(kind, fields)
	d.RenamedFrom = b.oldNames(kind+" "+d.Name, d.Snake, renamed)
	return d
}

// oldNames checks the names a state, event, action or field had before
// (renamed_from) and returns them; current is the name's JSON form now,
// which an old name must differ from.
func (b *builder) oldNames(what, current string, renamed []spec.String) []string {
	var out []string
	for _, old := range renamed {
		switch {
		case !identRE.MatchString(old.Value):
			b.errorf(old.Pos, "%s: renamed_from %q is not a name", what, old.Value)
		case SnakeName(old.Value) == current:
			b.errorf(old.Pos, "%s: renamed_from %q is its name now (in JSON, %s): give the name it had before", what, old.Value, current)
		case slices.Contains(out, old.Value):
			b.errorf(old.Pos, "%s: renamed_from lists %q twice", what, old.Value)
		default:
			out = append(out, old.Value)
		}
	}
	return out
}

func (b *builder) decls() {
	f, m := b.f, b.m
	b.states, b.events, b.actions = map[string]*State{}, map[string]*Event{}, map[string]*Action{}
	b.specOf = map[*State]*spec.State{}
	b.readStates()
	b.histories()
	b.finals()
	for i, se := range f.Events {
		e := &Event{Decl: b.decl("event", se.Name, se.Doc, se.GoName, se.Fields, se.RenamedFrom, i)}
		if e.GoName != "" {
			b.events[e.Name] = e
		}
		m.Events = append(m.Events, e)
	}
	for i, sa := range f.Actions {
		a := &Action{Decl: b.decl("action", sa.Name, sa.Doc, sa.GoName, sa.Fields, sa.RenamedFrom, i), Pure: sa.Pure.Value}
		if a.GoName != "" {
			b.actions[a.Name] = a
		}
		m.Actions = append(m.Actions, a)
	}
	if hasTimers(f.States) || b.par.timed() || b.par != nil && len(b.par.leaveTimers) > 0 {
		b.timerDecls()
	}
}

func (b *builder) funcs() {
	b.fnByName = map[string]*Func{}
	add := func(list []spec.Func, kind FuncKind, out *[]*Func) {
		for _, sf := range list {
			fn := &Func{Name: sf.Name.Value, Kind: kind, Doc: strings.TrimSpace(sf.Doc.Value), Pos: sf.Name.Pos}
			if !identRE.MatchString(fn.Name) {
				b.errorf(fn.Pos, "%s name %q is not an identifier", kindWord(kind), fn.Name)
				continue
			}
			fn.GoName = b.goName(kindWord(kind)+" "+fn.Name, fn.Name, sf.GoName)
			if prev, ok := b.fnByName[fn.Name]; ok {
				b.errorf(fn.Pos, "%q is declared as both a %s and a %s (%s)", fn.Name, kindWord(prev.Kind), kindWord(kind), prev.Pos)
				continue
			}
			fn.Reads = b.fields(kindWord(kind)+" "+fn.Name+"'s read", sf.Reads)
			b.uniqueParams(fn.Reads)
			switch {
			case kind == Guard && len(sf.Sets) > 0:
				b.errorf(sf.SetsPos, "guard %s sets nothing: a guard only decides; move what it computes to an effect", fn.Name)
			case kind == Effect && len(sf.Sets) == 0:
				b.errorf(fn.Pos, "effect %s sets nothing: list the fields it computes under \"sets\" (an effect returns them; the machine stores them in the target state and the actions)", fn.Name)
			default:
				fn.Sets = b.fields("effect "+fn.Name+"'s set", sf.Sets)
				b.uniqueParams(fn.Sets)
			}
			b.fnByName[fn.Name] = fn
			*out = append(*out, fn)
		}
	}
	add(b.f.Guards, Guard, &b.m.Guards)
	add(b.f.Effects, Effect, &b.m.Effects)
}

// uniqueParams makes the parameter names of a list distinct: two fields
// whose names differ only in spelling get a number.
func (b *builder) uniqueParams(fields []*Field) {
	seen := map[string]bool{}
	for _, f := range fields {
		p := f.Param
		for i := 2; seen[p]; i++ {
			p = fmt.Sprintf("%s%d", f.Param, i)
		}
		f.Param = p
		seen[p] = true
	}
}

func kindWord(k FuncKind) string {
	if k == Guard {
		return "guard"
	}
	return "effect"
}

func (b *builder) state(s spec.String) *State {
	if st, ok := b.states[s.Value]; ok {
		return st
	}
	b.errorf(s.Pos, "unknown state %q%s", s.Value, suggest.DidYouMean(s.Value, names(b.states)))
	return nil
}

func (b *builder) event(s spec.String) *Event {
	if e, ok := b.events[s.Value]; ok {
		return e
	}
	b.errorf(s.Pos, "unknown event %q%s", s.Value, suggest.DidYouMean(s.Value, names(b.events)))
	return nil
}

func (b *builder) action(s spec.String) *Action {
	if a, ok := b.actions[s.Value]; ok {
		return a
	}
	b.errorf(s.Pos, "unknown action %q%s", s.Value, suggest.DidYouMean(s.Value, names(b.actions)))
	return nil
}

func (b *builder) fn(s spec.String, kind FuncKind) *Func {
	if kind == Guard {
		if in := b.par.inGuard(b, s); in != nil {
			return in
		}
	}
	fn, ok := b.fnByName[s.Value]
	if !ok {
		var known []string
		for _, f := range b.fnByName {
			if f.Kind == kind {
				known = append(known, f.Name)
			}
		}
		slices.Sort(known)
		b.errorf(s.Pos, "unknown %s %q: declare it under %ss%s", kindWord(kind), s.Value, kindWord(kind), suggest.DidYouMean(s.Value, known))
		return nil
	}
	if fn.Kind != kind {
		b.errorf(s.Pos, "%q is a %s, not a %s", s.Value, kindWord(fn.Kind), kindWord(kind))
		return nil
	}
	return fn
}

// limits stops a spec whose table is too large to check or generate.
func (b *builder) limits() bool {
	ns, ne := len(b.m.States), len(b.m.Events)
	pos := b.f.Pos
	switch {
	case ns > MaxStates:
		b.errorf(pos, "the machine has %d states, more than the limit of %d: split it into machines that talk through actions and events", ns, MaxStates)
	case ne > MaxEvents:
		b.errorf(pos, "the machine has %d events, more than the limit of %d: split it into machines that talk through actions and events", ne, MaxEvents)
	case ns*ne > MaxPairs:
		b.errorf(pos, "the machine has %d states × %d events = %d pairs to resolve, more than the limit of %d: split it into machines that talk through actions and events", ns, ne, ns*ne, MaxPairs)
	default:
		return true
	}
	return false
}
