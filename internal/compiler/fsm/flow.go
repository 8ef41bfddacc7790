package fsm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/spec"
	"github.com/fsmgen/fsmgen/internal/suggest"
)

// flow works out the field flow of one rule: where its guard's and
// effect's reads come from, where its effect's results go, what it
// carries over from the source state and the event into the target state
// and its actions, and what it clears. Every field of the target state and
// of every action must be carried over (same name and same type) or set
// by the effect; anything else is an error naming the field and the row.
type flow struct {
	b *builder
	r *Rule
	// from are the states whose data the rule reads: the rule's own, or
	// every state a "*" row applies to.
	from []*State
	// placed marks the effect's results that found a destination.
	placed map[*Field]bool
	// written marks the storage the rule writes.
	written map[*Data]bool
	// taken are the local names the rule's generated code uses.
	taken map[string]bool
	// with are the rule's with: entries, by the name they bind.
	with map[string]*bound
	// consts are the rule's set: entries, by name, and constOf the
	// constant each first gave a field.
	consts  map[string]*spec.Value
	constOf map[string]*Const
}

func (fl *flow) run() {
	r := fl.r
	fl.placed, fl.written = map[*Field]bool{}, map[*Data]bool{}
	fl.taken = map[string]bool{"m": true, "ev": true, "from": true}
	if !fl.bind() {
		return
	}
	if r.Guard != nil {
		r.GuardArgs = fl.reads(r.Guard)
	}
	if r.Kind == Transition {
		fl.transition()
	}
	fl.unbound()
}

// transition works out the flow of a rule that moves or stays: its
// effect, the exits and entries it runs, the target's fields, its
// actions, and what it clears.
func (fl *flow) transition() {
	r := fl.r
	if r.Effect != nil {
		r.EffectArgs = fl.reads(r.Effect)
		for _, set := range r.Effect.Sets {
			fl.taken[set.Param] = true
		}
	}
	fl.constants()
	ctx := &runCtx{taken: fl.taken, written: fl.written, firing: r.Timer}
	for _, run := range r.Exits {
		fl.b.resolveRun(run, ctx)
	}
	if r.To != nil {
		fl.fill(r.To)
	} else {
		fl.update()
	}
	for _, e := range r.Actions {
		fl.emit(e)
	}
	if r.Effect != nil {
		for _, set := range r.Effect.Sets {
			if !fl.placed[set] {
				fl.b.errorf(r.Pos, "effect %s sets %s, but nothing on this row (%s) takes it: %s%s; drop %s from the effect's sets or use another effect here", r.Effect.Name, set.Name, r.Label, fl.nowhere(set), fl.takers(set), set.Name)
			}
		}
	}
	fl.unplaced()
	for _, run := range r.Entries {
		fl.b.resolveRun(run, ctx)
	}
	fl.leave()
}

// entrySets returns the storage that the entries of the rule fill: the
// own fields of the entered states that their entry effects set without
// reading them (a field an entry effect reads, the rule must fill first).
func (fl *flow) entrySets() map[*Data]bool {
	out := map[*Data]bool{}
	for _, run := range fl.r.Entries {
		h := run.Hook()
		if h == nil || h.Effect == nil {
			continue
		}
		for _, f := range run.State.Own {
			if h.Effect.Set(f.Name) != nil && !slices.ContainsFunc(h.Effect.Reads, func(rd *Field) bool { return rd.Name == f.Name }) {
				out[f.Data] = true
			}
		}
	}
	return out
}

// shared names the states a shared rule reads from, in messages.
func (fl *flow) shared() string {
	if fl.r.From == nil {
		return "the states \"*\" applies to"
	}
	return "the states that take " + fl.r.From.Name + "'s rule"
}

// where names the source of the rule's values in messages.
func (fl *flow) where() string {
	r := fl.r
	src := "state " + r.From.String()
	if r.Shared() {
		src = fl.shared()
	}
	if r.Event != nil {
		return "neither " + src + " nor event " + r.Event.Name + " has it"
	}
	return src + " does not have it"
}

// nowhere says why an effect's result has no destination.
func (fl *flow) nowhere(set *Field) string {
	r := fl.r
	var parts []string
	switch {
	case r.To != nil:
		parts = append(parts, "state "+r.To.Name)
	case !r.Shared():
		parts = append(parts, "state "+r.From.Name)
	default:
		parts = append(parts, "not every one of "+fl.shared())
	}
	for _, e := range r.Actions {
		parts = append(parts, "action "+e.Action.Name)
	}
	return joinOr(parts) + " has no field " + set.Name + " " + set.Type
}

// takers returns a "did you mean" for an effect's result that nothing
// on the row takes: the closest name among the fields that take results
// on it (the target's, or the state's for a row that stays, and the
// actions'), leaving out what the effect sets already.
func (fl *flow) takers(set *Field) string {
	r := fl.r
	var fields [][]*Field
	if r.To != nil {
		fields = append(fields, r.To.Fields)
	} else {
		for _, s := range fl.from {
			fields = append(fields, s.Fields)
		}
	}
	for _, e := range r.Actions {
		fields = append(fields, e.Action.Fields)
	}
	return didYouMean(set.Name, r.Effect.Sets, fields...)
}

// didYouMean returns ` (did you mean "x"?)` for the name among fields
// closest to name, leaving out the names of skip (the other names of the
// same list), or "".
func didYouMean(name string, skip []*Field, fields ...[]*Field) string {
	var names []string
	for _, fs := range fields {
		for _, f := range fs {
			if !slices.Contains(names, f.Name) && !slices.ContainsFunc(skip, func(s *Field) bool { return s.Name == f.Name }) {
				names = append(names, f.Name)
			}
		}
	}
	return suggest.DidYouMean(name, names)
}

// does writes the states' names followed by what (a verb in the third
// person singular, "has it"), in the plural when there are several:
// "A has it", "A and B have it".
func does(names []string, what string) string {
	if len(names) == 1 {
		return names[0] + " " + what
	}
	verb, rest, _ := strings.Cut(what, " ")
	if verb == "has" {
		verb = "have"
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + " " + verb + " " + rest
}

// joinOr joins "a", "b" and "c" as "a, b or c".
func joinOr(parts []string) string {
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// found is where lookup found a value.
type found struct {
	val  Value
	typ  string
	desc string // e.g. "state CallingLlm's retries"
	// shadows is the event's field of the same name when the value is the
	// source state's: the rule cannot tell which one the spec means.
	shadows *Field
}

// lookup finds the value of the given name that the rule reads: where the
// row's with: says, else the source state's field (the state carries the
// context) or else the event's. It returns nil when neither has one, and
// an error message when the states of a shared rule disagree. When both
// the state and the event have the name, the state's is returned with
// the event's in shadows, which the caller reports (ambiguous).
func (fl *flow) lookup(name string) (*found, string) {
	if w := fl.with[name]; w != nil {
		w.used = true
		return w.found, ""
	}
	var ev *Field
	if fl.r.Event != nil {
		ev = fl.r.Event.Field(name)
	}
	src, with, without, problem := fl.stateField(name)
	switch {
	case problem != "":
		return nil, problem
	case src != nil:
		src.shadows = ev
		return src, ""
	case len(with) > 0 && ev != nil:
		return nil, fmt.Sprintf("only some of %s have %s (%s; %s), and event %s has it too, so the row would read the state's from some and the event's from others: take the event's on the row (with: {%s: event.%s}), or write rows of their own", fl.shared(), name, does(with, "has it"), does(without, "has not"), fl.r.Event.Name, name, name)
	case len(with) > 0:
		return nil, fmt.Sprintf("only some of %s have %s (%s; %s), so the row cannot read it from all of them: give the states the field, or write rows of their own", fl.shared(), name, does(with, "has it"), does(without, "has not"))
	case ev != nil:
		return &found{val: Value{Source: FromEvent, Field: ev}, typ: ev.Type, desc: "event " + fl.r.Event.Name + "'s " + name}, ""
	}
	return nil, ""
}

// stateField finds the source state's field of the given name: for a
// shared rule, the field every state that takes the rule has, which must
// be of one type (else problem says so). When only some of those states
// have it, with and without name them.
func (fl *flow) stateField(name string) (src *found, with, without []string, problem string) {
	var have []*Field
	for _, s := range fl.from {
		if f := s.Field(name); f != nil {
			have = append(have, f)
			with = append(with, s.Name)
		} else {
			without = append(without, s.Name)
		}
	}
	if len(have) == 0 || len(have) < len(fl.from) {
		return nil, with, without, ""
	}
	for i, f := range have {
		if f.Data != have[0].Data {
			return nil, nil, nil, fmt.Sprintf("%s have %s of different types (%s in %s, %s in %s)", fl.shared(), name, have[0].Type, fl.from[0].Name, f.Type, fl.from[i].Name)
		}
	}
	desc := "state " + fl.from[0].Name + "'s " + name
	if fl.r.Shared() {
		desc = "the " + name + " of " + fl.shared()
	}
	return &found{val: Value{Source: FromData, Data: have[0].Data}, typ: have[0].Type, desc: desc}, nil, nil, ""
}

// ambiguous reports that the rule reads a name (what says who reads it,
// e.g. "effect e reads x") that both its source state and its event
// have: taking the state's would silently ignore the event's.
func (fl *flow) ambiguous(what, name string) {
	r := fl.r
	src := "state " + r.From.String()
	if r.Shared() {
		src = fl.shared()
	}
	fl.b.errorf(r.Pos, "%s on this row (%s), but both %s and event %s have a field %s: it is ambiguous which one is meant; say which on the row, with: {%s: event.%s} for the event's or with: {%s: state.%s} for the state's", what, r.Label, src, r.Event.Name, name, name, name, name, name)
}

// reads resolves the reads of a guard or effect on this row.
func (fl *flow) reads(fn *Func) []Value {
	r := fl.r
	var out []Value
	for _, rd := range fn.Reads {
		src, problem := fl.lookup(rd.Name)
		switch {
		case problem != "":
			fl.b.errorf(r.Pos, "%s %s reads %s, but %s", kindWord(fn.Kind), fn.Name, rd.Name, problem)
		case src == nil:
			fields := [][]*Field{}
			for _, s := range fl.from {
				fields = append(fields, s.Fields)
			}
			if r.Event != nil {
				fields = append(fields, r.Event.Fields)
			}
			fl.b.errorf(r.Pos, "%s %s reads %s %s, but on this row (%s) %s%s: use it where %s is available, or add the field", kindWord(fn.Kind), fn.Name, rd.Name, rd.Type, r.Label, fl.where(), didYouMean(rd.Name, fn.Reads, fields...), rd.Name)
		case src.shadows != nil:
			fl.ambiguous(kindWord(fn.Kind)+" "+fn.Name+" reads "+rd.Name, rd.Name)
		case src.typ != rd.Type:
			fl.b.errorf(r.Pos, "%s %s reads %s as %s, but on this row (%s) %s is %s: declare the same type in both places", kindWord(fn.Kind), fn.Name, rd.Name, rd.Type, r.Label, src.desc, src.typ)
		default:
			out = append(out, src.val)
			continue
		}
		out = append(out, Value{})
	}
	return out
}

// result returns the effect's result of the given name, marked as
// placed, or nil.
func (fl *flow) result(name string) *Field {
	if fl.r.Effect == nil {
		return nil
	}
	set := fl.r.Effect.Set(name)
	if set != nil {
		fl.placed[set] = true
	}
	return set
}

// store records a storage write.
func (fl *flow) store(d *Data, v Value) {
	fl.r.Stores = append(fl.r.Stores, Store{Data: d, Value: v})
	fl.written[d] = true
}

// fill fills every field of the target state of a rule that moves.
func (fl *flow) fill(to *State) {
	r := fl.r
	byEntry := fl.entrySets()
	for _, tf := range to.Fields {
		if byEntry[tf.Data] {
			if set := fl.result(tf.Name); set != nil {
				fl.b.errorf(r.Pos, "effect %s sets %s, but the entry of the state that owns %s sets it too (%s): drop it from one of them", r.Effect.Name, set.Name, set.Name, r.Label)
			}
			if c := fl.consts[tf.Name]; c != nil {
				fl.taken[constKey(tf.Name)] = true
				fl.b.errorf(c.Name.Pos, "set: %s, but the entry of the state that owns %s sets it too (%s): drop it from one of them", tf.Name, tf.Name, r.Label)
			}
			continue
		}
		if v, given := fl.constant(tf, "state "+to.Name); given {
			if v != nil {
				fl.store(tf.Data, *v)
			}
			continue
		}
		if set := fl.result(tf.Name); set != nil {
			if set.Type != tf.Type {
				fl.b.errorf(r.Pos, "effect %s sets %s as %s, but state %s's %s is %s (%s): make the types agree", r.Effect.Name, set.Name, set.Type, to.Name, tf.Name, tf.Type, r.Label)
				continue
			}
			fl.store(tf.Data, Value{Source: FromResult, Result: set})
			continue
		}
		src, problem := fl.lookup(tf.Name)
		switch {
		case problem != "":
			fl.b.errorf(r.Pos, "field %s of state %s is not filled on this row (%s): %s", tf.Name, to.Name, r.Label, problem)
		case src == nil:
			fl.b.errorf(r.Pos, "field %s of state %s is not filled on this row (%s): %s; carry it over (a field %s %s) or name an effect that sets it", tf.Name, to.Name, r.Label, fl.where(), tf.Name, tf.Type)
		case src.shadows != nil:
			fl.ambiguous("field "+tf.Name+" of state "+to.Name+" carries over", tf.Name)
		case src.typ != tf.Type:
			fl.b.errorf(r.Pos, "field %s of state %s is %s, but %s is %s (%s): a field carries over only with the same name and type; make the types agree, or name an effect that sets it", tf.Name, to.Name, tf.Type, src.desc, src.typ, r.Label)
		case src.val.Source == FromEvent, src.val.Data != tf.Data:
			fl.store(tf.Data, src.val)
		}
		// From the source state's field of the name: the target shares
		// its storage.
	}
}

// update stores the constants, the with: entries and the effect's results
// of a rule that stays in the source state's fields of the same name.
func (fl *flow) update() {
	r := fl.r
	fl.updateConsts()
	fl.updateWith()
	if r.Effect == nil {
		return
	}
	for _, set := range r.Effect.Sets {
		var have []*Field
		for _, s := range fl.from {
			if f := s.Field(set.Name); f != nil {
				have = append(have, f)
			}
		}
		if len(have) == 0 {
			continue // an action may take it
		}
		fl.placed[set] = true
		if len(have) < len(fl.from) {
			fl.b.errorf(r.Pos, "effect %s sets %s, but only some of %s have it (%s): give them all the field, or write rows of their own", r.Effect.Name, set.Name, fl.shared(), r.Label)
			continue
		}
		ok := true
		for i, f := range have {
			if f.Type != set.Type {
				fl.b.errorf(r.Pos, "effect %s sets %s as %s, but state %s's %s is %s (%s): make the types agree", r.Effect.Name, set.Name, set.Type, fl.from[i].Name, f.Name, f.Type, r.Label)
				ok = false
				break
			}
		}
		if ok {
			fl.store(have[0].Data, Value{Source: FromResult, Result: set})
		}
	}
}

// emit fills the fields of an action the rule emits.
func (fl *flow) emit(e *Emit) {
	r := fl.r
	for _, af := range e.Action.Fields {
		if v, given := fl.constant(af, "action "+e.Action.Name); given {
			if v == nil {
				v = &Value{}
			}
			e.Args = append(e.Args, *v)
			continue
		}
		if set := fl.result(af.Name); set != nil {
			if set.Type != af.Type {
				fl.b.errorf(r.Pos, "effect %s sets %s as %s, but action %s's %s is %s (%s): make the types agree", r.Effect.Name, set.Name, set.Type, e.Action.Name, af.Name, af.Type, r.Label)
			}
			e.Args = append(e.Args, Value{Source: FromResult, Result: set})
			continue
		}
		src, problem := fl.lookup(af.Name)
		switch {
		case problem != "":
			fl.b.errorf(r.Pos, "field %s of action %s is not filled on this row (%s): %s", af.Name, e.Action.Name, r.Label, problem)
		case src == nil:
			fl.b.errorf(r.Pos, "field %s of action %s is not filled on this row (%s): %s; carry it over (a field %s %s) or name an effect that sets it", af.Name, e.Action.Name, r.Label, fl.where(), af.Name, af.Type)
		case src.shadows != nil:
			fl.ambiguous("field "+af.Name+" of action "+e.Action.Name+" carries over", af.Name)
		case src.typ != af.Type:
			fl.b.errorf(r.Pos, "field %s of action %s is %s, but %s is %s (%s): a field carries over only with the same name and type; make the types agree, or name an effect that sets it", af.Name, e.Action.Name, af.Type, src.desc, src.typ, r.Label)
		default:
			e.Args = append(e.Args, src.val)
			continue
		}
		e.Args = append(e.Args, Value{})
	}
}

// leave works out the storage a rule that moves clears (or, for "*", keeps)
// and the values its actions must read before it changes them.
func (fl *flow) leave() {
	r := fl.r
	cleared := map[*Data]bool{}
	wiped := r.Shared() && r.To != nil // a shared rule moving: all storage but the target's is zeroed
	if r.To != nil {
		if !r.Shared() {
			for _, f := range r.From.Fields {
				if !r.To.Has(f.Data) {
					r.Clears = append(r.Clears, f.Data)
					cleared[f.Data] = true
				}
			}
		} else {
			for _, f := range r.To.Fields {
				if !fl.written[f.Data] {
					r.Keeps = append(r.Keeps, f.Data)
				}
			}
		}
	}
	taken := fl.taken
	locals := map[*Data]string{}
	emits := slices.Clone(r.Actions)
	for _, run := range r.Exits {
		if !fl.b.par.inRegion() { // a region's exits run first, in place
			emits = append(emits, run.Actions...)
		}
	}
	// The values the rule reads from storage after it starts changing
	// it: its actions' fields, and the fields it stores under another
	// name (with: {a: state.b}).
	var reads []*Value
	for _, e := range emits {
		for i := range e.Args {
			reads = append(reads, &e.Args[i])
		}
	}
	for i := range r.Stores {
		reads = append(reads, &r.Stores[i].Value)
	}
	for _, v := range reads {
		if v.Source != FromData || v.Data == nil { // nil: not filled, reported
			continue
		}
		d := v.Data
		if !fl.written[d] && !cleared[d] && !(wiped && !r.To.Has(d)) {
			continue
		}
		local, ok := locals[d]
		if !ok {
			local = "prev" + GoName(d.Name)
			for n := 2; taken[local]; n++ {
				local = fmt.Sprintf("prev%s%d", GoName(d.Name), n)
			}
			taken[local] = true
			locals[d] = local
			r.Captures = append(r.Captures, Capture{Data: d, Local: local})
		}
		v.Local = local
	}
}

// String returns the state's name, or "*" for nil (a "*" rule's source).
func (s *State) String() string {
	if s == nil {
		return "*"
	}
	return s.Name
}
