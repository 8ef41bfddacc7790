package diff

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/prose"
)

// match pairs the declarations of one kind across the revisions: by name,
// by an old name the new one lists in renamed_from, or by its JSON name (a
// name spelt anew, SynSent as SYN_SENT, is the same in JSON). It returns
// the pairs, in the new revision's order, and the old declarations left.
func (d *differ) match(kind string, old, new []*fsm.Decl) (pairs [][2]*fsm.Decl, removed []*fsm.Decl) {
	byName, bySnake := map[string]*fsm.Decl{}, map[string]*fsm.Decl{}
	for _, o := range old {
		byName[o.Name] = o
		bySnake[o.Snake] = o
	}
	used := map[*fsm.Decl]bool{}
	if d.renamed == nil {
		d.renamed = map[string]map[string]string{}
	}
	if d.renamed[kind] == nil {
		d.renamed[kind] = map[string]string{}
	}
	for _, n := range new {
		o := byName[n.Name]
		for _, prev := range n.RenamedFrom {
			if o == nil && byName[prev] != nil {
				o = byName[prev]
			}
		}
		if o == nil && !n.Builtin {
			o = bySnake[n.Snake]
		}
		if o != nil && !used[o] {
			used[o] = true
			d.renamed[kind][o.Name] = n.Name
		} else {
			o = nil
		}
		pairs = append(pairs, [2]*fsm.Decl{o, n})
	}
	for _, o := range old {
		if !used[o] {
			removed = append(removed, o)
		}
	}
	return pairs, removed
}

// goRenamed is the change of a declaration whose Go name changed while its
// spec name did not (a go_name, or the spec's initialisms).
func goRenamed(kind string, o, n *fsm.Decl) *Change {
	return &Change{Subject: kind + " " + n.Name, What: fmt.Sprintf("Go name now %s, was %s", n.GoName, o.GoName), Old: o.Pos, New: n.Pos}
}

// renamedFunc records the new name of an old guard or effect.
func (d *differ) renamedFunc(kind, old, new string) {
	if d.renamed == nil {
		d.renamed = map[string]map[string]string{}
	}
	if d.renamed[kind] == nil {
		d.renamed[kind] = map[string]string{}
	}
	d.renamed[kind][old] = new
}

// rename returns the new name of an old state, event, action, guard or
// effect.
func (d *differ) rename(kind, name string) string {
	if n, ok := d.renamed[kind][name]; ok {
		return n
	}
	return name
}

// decls compares the events, or the actions, and their fields.
func (d *differ) decls(kind string, old, new any) {
	od, nd := declsOf(old), declsOf(new)
	pairs, removed := d.match(kind, od, nd)
	log := "an event log of the old revision"
	for _, o := range removed {
		c := &Change{Subject: kind + " " + o.Name, What: "removed", Old: declPos(d.old, o)}
		if o.Builtin {
			c.verdict(EventLog, Breaks, fmt.Sprintf("%s that holds %s %s no longer loads: the machine has no timer now", log, prose.Article(kind), o.Name))
			d.add(c)
			continue
		}
		c.verdict(EventLog, Breaks, fmt.Sprintf("%s that holds %s %s no longer loads: its kind is unknown (keep the %s, or give its new name renamed_from: %s)", log, prose.Article(kind), o.Name, kind, o.Name))
		if kind == "action" && d.old.HasHandler() && !d.new.HasHandler() {
			c.verdict(Code, Breaks, "the machine has no action left: Config has no Handler field, and code that sets it no longer compiles")
		}
		d.add(c)
	}
	for _, p := range pairs {
		o, n := p[0], p[1]
		if n.Builtin && o != nil {
			continue
		}
		if o == nil {
			c := &Change{Subject: kind + " " + n.Name, What: "added", New: declPos(d.new, n)}
			if kind == "action" {
				c.verdict(Code, Breaks, fmt.Sprintf("the Handler has a new method, %s, which every Handler must implement", n.GoName))
			} else {
				d.newEvent(c, n)
			}
			d.add(c)
			continue
		}
		if o.Name != n.Name {
			c := &Change{Subject: kind + " " + n.Name, What: "renamed from " + o.Name, Old: o.Pos, New: n.Pos}
			c.verdict(EventLog, OK, "")
			if kind == "action" && o.GoName != n.GoName {
				c.verdict(Code, Breaks, fmt.Sprintf("the Handler's method %s is now %s", o.GoName, n.GoName))
			} else if o.GoName != n.GoName {
				c.verdict(Code, Review, renamedType(o.GoName, n.GoName))
			}
			d.add(c)
		} else if o.GoName != n.GoName {
			c := goRenamed(kind, o, n)
			if kind == "action" {
				c.verdict(Code, Breaks, fmt.Sprintf("the Handler's method %s is now %s", o.GoName, n.GoName))
			} else {
				c.verdict(Code, Review, renamedType(o.GoName, n.GoName))
			}
			d.add(c)
		}
		d.fields(kind, o, n, EventLog, log)
		if kind == "action" && !sameSignature(o.Fields, n.Fields) {
			c := &Change{Subject: "action " + n.Name, What: "given other fields", Old: o.Pos, New: n.Pos}
			if alikeSignature(o.Fields, n.Fields) {
				c.What = "given values of other types"
				c.verdict(Code, Review, fmt.Sprintf("the Handler's method %s takes values of other types, alike in JSON (%s): code that implements it no longer compiles until it is updated", n.GoName, retypes(o.Fields, n.Fields)))
			} else {
				c.verdict(Code, Breaks, fmt.Sprintf("the Handler's method %s is now %s(%s), was %s(%s)", n.GoName, n.GoName, signature(n.Fields), o.GoName, signature(o.Fields)))
			}
			d.add(c)
		}
	}
}

// declPos is where a declaration is: for the event and actions of timers,
// which the spec does not declare, the machine's first timer.
func declPos(m *fsm.Machine, d *fsm.Decl) diag.Pos {
	if d.Builtin && len(m.Timers) > 0 {
		return m.Timers[0].Pos
	}
	return d.Pos
}

// newEvent notes, for a new event, the states that take it through
// "ignore: *" or "reject: *" rather than by a rule written for it.
func (d *differ) newEvent(c *Change, e *fsm.Decl) {
	var through []string
	for _, r := range d.new.Rules {
		if r.Others && r.Event != nil && r.Event.Name == e.Name {
			through = append(through, fmt.Sprintf("%s %ss it through %q", r.From.Name, r.Kind, r.Kind.String()+": *"))
		}
	}
	if len(through) > 0 {
		c.verdict(Behaviour, Review, strings.Join(through, "; ")+": if that is wrong, give the state a rule for "+e.Name)
	}
}

// fields compares the fields of a state, event or action matched across
// the revisions; area is what they are saved in, and saved names it.
func (d *differ) fields(kind string, o, n *fsm.Decl, area Area, saved string) {
	byName, byJSON := map[string]*fsm.Field{}, map[string]*fsm.Field{}
	for _, f := range o.Fields {
		byName[f.Name] = f
		byJSON[f.JSONName] = f
	}
	used := map[*fsm.Field]bool{}
	for _, nf := range n.Fields {
		of := byName[nf.Name]
		for _, prev := range nf.RenamedFrom {
			if of == nil && byName[prev] != nil {
				of = byName[prev]
			}
		}
		if of == nil {
			of = byJSON[nf.JSONName] // spelt anew, the same in JSON
		}
		subject := fmt.Sprintf("field %s.%s", n.Name, nf.Name)
		switch {
		case of == nil:
			c := &Change{Subject: subject, What: "added", New: nf.Pos}
			c.verdict(area, OK, fmt.Sprintf("%s of %s %s loads with %s as its zero value", saved, kind, n.Name, nf.Name))
			d.add(c)
			continue
		case used[of]:
			continue
		}
		used[of] = true
		if of.Name != nf.Name {
			c := &Change{Subject: subject, What: "renamed from " + of.Name, Old: of.Pos, New: nf.Pos}
			c.verdict(area, OK, fmt.Sprintf("%s loads %s under its new name", saved, of.Name))
			if of.GoName != nf.GoName {
				c.verdict(Code, Review, fmt.Sprintf("the Go field %s.%s is now %s.%s: code that names it no longer compiles until it is updated", n.GoName, of.GoName, n.GoName, nf.GoName))
			}
			d.add(c)
		} else if of.GoName != nf.GoName {
			c := &Change{Subject: subject, What: fmt.Sprintf("Go name now %s, was %s", nf.GoName, of.GoName), Old: of.Pos, New: nf.Pos}
			c.verdict(Code, Review, fmt.Sprintf("the Go field %s.%s is now %s.%s: code that names it no longer compiles until it is updated", n.GoName, of.GoName, n.GoName, nf.GoName))
			d.add(c)
		}
		if ot, nt := of.GoType.Canonical(), nf.GoType.Canonical(); ot != nt {
			oldType, newType := typeNames(of, nf)
			c := &Change{Subject: subject, What: fmt.Sprintf("retyped from %s to %s", oldType, newType), Old: of.TypePos, New: nf.TypePos}
			holds := fmt.Sprintf("%s of %s %s holds %s as %s", saved, kind, n.Name, nf.Name, oldType)
			switch v, why := retyped(of, nf); v {
			case Breaks:
				c.verdict(area, Breaks, fmt.Sprintf("%s, which may not load as %s: %s (keep the type, or declare the break)", holds, newType, why))
			default:
				c.verdict(area, v, fmt.Sprintf("%s, which loads as %s: %s", holds, newType, why))
				c.verdict(Code, Review, fmt.Sprintf("the Go field %s.%s is now %s %s: code that uses it as %s %s no longer compiles until it is updated", n.GoName, nf.GoName, prose.Article(newType), newType, prose.Article(oldType), oldType))
			}
			d.add(c)
		}
	}
	for _, of := range o.Fields {
		if used[of] {
			continue
		}
		c := &Change{Subject: fmt.Sprintf("field %s.%s", n.Name, of.Name), What: "removed", Old: of.Pos}
		c.verdict(area, Breaks, fmt.Sprintf("%s of %s %s with %s no longer loads: the field is unknown (keep it, or give its new name renamed_from: %s)", saved, kind, n.Name, of.Name, of.Name))
		d.add(c)
	}
}

// states compares the leaf states (what is saved) and their fields.
func (d *differ) states() {
	var od, nd []*fsm.Decl
	for _, s := range d.old.States {
		od = append(od, &s.Decl)
	}
	for _, s := range d.new.States {
		nd = append(nd, &s.Decl)
	}
	// Composite states are matched too, for rules written on them.
	for _, s := range d.old.Composites {
		od = append(od, &s.Decl)
	}
	for _, s := range d.new.Composites {
		nd = append(nd, &s.Decl)
	}
	pairs, removed := d.match("state", od, nd)
	// The states inside regions are matched for their new names only:
	// what adding or removing one does to saved machines is the regions'
	// to say (see regionLeaves).
	var ord, nrd []*fsm.Decl
	for _, s := range regionStates(d.old) {
		ord = append(ord, &s.Decl)
	}
	for _, s := range regionStates(d.new) {
		nrd = append(nrd, &s.Decl)
	}
	d.match("state", ord, nrd)
	oldLeaf, newLeaf := leaves(d.old), leaves(d.new)
	saved := "a state saved by the old revision"
	for _, o := range removed {
		c := &Change{Subject: "state " + o.Name, What: "removed", Old: o.Pos}
		if s := oldLeaf[o]; s != nil && !s.Transient {
			c.verdict(SavedStates, Breaks, fmt.Sprintf("a machine saved in %s no longer loads (keep the state, or give its new name renamed_from: %s)", o.Name, o.Name))
		}
		d.add(c)
	}
	for _, p := range pairs {
		o, n := p[0], p[1]
		ns := newLeaf[n]
		if o == nil {
			d.add(&Change{Subject: "state " + n.Name, What: "added", New: n.Pos})
			continue
		}
		os := oldLeaf[o]
		if o.Name != n.Name {
			c := &Change{Subject: "state " + n.Name, What: "renamed from " + o.Name, Old: o.Pos, New: n.Pos}
			c.verdict(SavedStates, OK, "a machine saved in "+o.Name+" loads in "+n.Name)
			if o.GoName != n.GoName {
				c.verdict(Code, Review, renamedType(o.GoName, n.GoName))
			}
			d.add(c)
		} else if o.GoName != n.GoName {
			c := goRenamed("state", o, n)
			c.verdict(Code, Review, renamedType(o.GoName, n.GoName))
			d.add(c)
		}
		d.history(o, n)
		switch {
		case os != nil && os.Transient && ns.Rests():
			// A done transition that lost its else: nothing was saved in
			// the final state, which the machine may now rest in.
			c := &Change{Subject: "state " + n.Name, What: fmt.Sprintf("may rest now: the done transition of %s may be refused by every guard", ns.Completes.Name), Old: o.Pos, New: n.Pos}
			c.verdict(SavedStates, OK, fmt.Sprintf("no machine saved by the old revision is in %s, and every one loads; a machine now rests in %s when no guard of the done transition of %s holds, and the old revision cannot load it", o.Name, n.Name, ns.Completes.Name))
			d.add(c)
			continue
		case os == nil || os.Transient:
			// A composite or transient state before: nothing of it was saved.
			continue
		case ns == nil:
			c := &Change{Subject: "state " + n.Name, What: "made composite", Old: o.Pos, New: n.Pos}
			c.verdict(SavedStates, Breaks, "a machine saved in "+o.Name+" no longer loads: the machine is never in a composite state itself")
			d.add(c)
			continue
		case ns.Transient && os.Rests() && ns.Completes != nil:
			// A done transition that gained its else.
			c := &Change{Subject: "state " + n.Name, What: fmt.Sprintf("left at once: the done transition of %s now has an else", ns.Completes.Name), Old: o.Pos, New: n.Pos}
			c.verdict(SavedStates, Breaks, fmt.Sprintf("a machine saved in %s (where no guard of the done transition of %s held) no longer loads: the machine never rests there now (declare the break if no saved machine is so)", o.Name, os.Completes.Name))
			d.add(c)
			continue
		case ns.Transient:
			c := &Change{Subject: "state " + n.Name, What: "made transient", Old: o.Pos, New: n.Pos}
			c.verdict(SavedStates, Breaks, "a machine saved in "+o.Name+" no longer loads: a transient state is never at rest")
			d.add(c)
			continue
		}
		d.fields("state", o, n, SavedStates, saved)
		d.timers(os, ns, os.Name)
	}
}

// history compares the history of a composite state matched across the
// revisions: what a saved machine remembers of it.
func (d *differ) history(o, n *fsm.Decl) {
	find := func(m *fsm.Machine, dc *fsm.Decl) *fsm.State {
		for _, s := range append(append(slices.Clone(m.Composites), regionStates(m)...), m.States...) {
			if &s.Decl == dc && (s.Composite() || s.Region != nil || s.Regions != nil) {
				return s
			}
		}
		return nil
	}
	os, ns := find(d.old, o), find(d.new, n)
	was, is := fsm.HistoryNone, fsm.HistoryNone
	if os != nil {
		was = os.History
	}
	if ns != nil {
		is = ns.History
	}
	switch {
	case was == is:
	case was == fsm.HistoryNone:
		c := &Change{Subject: "state " + n.Name, What: "gained a " + is.String() + " history", Old: o.Pos, New: n.Pos}
		entry := "its initial child"
		if ns != nil && ns.Regions != nil {
			entry = "its regions' initial states" // a parallel state's own
		}
		c.verdict(SavedStates, OK, "a machine saved by the old revision remembers nothing of "+n.Name+": it loads, and a transition to "+n.Name+".history enters "+entry+" until the machine has left "+n.Name+" once")
		d.add(c)
	case is == fsm.HistoryNone:
		c := &Change{Subject: "state " + n.Name, What: "lost its " + was.String() + " history", Old: o.Pos, New: n.Pos}
		c.verdict(SavedStates, Breaks, "a machine saved after it left "+o.Name+" remembers a leaf of it, and no longer loads: the machine has no history to put it in (keep the history, or declare the break)")
		d.add(c)
	default:
		c := &Change{Subject: "state " + n.Name, What: "history made " + is.String() + " (was " + was.String() + ")", Old: o.Pos, New: n.Pos}
		if p := d.old.MemoryOf(os); p != nil && is == fsm.HistoryShallow {
			// A deep history over a parallel state saved its regions'
			// leaves, which a shallow history has no place for.
			c.verdict(SavedStates, Breaks, "a machine saved after it left "+o.Name+" from parallel state "+p.Name+" remembers the leaf of each of its regions, which a shallow history does not keep: it no longer loads (keep the history deep, or declare the break)")
		} else {
			c.verdict(SavedStates, OK, "a saved machine remembers the leaf it was in either way: it loads")
		}
		c.verdict(Behaviour, Breaks, "a transition to "+n.Name+".history now resumes "+map[fsm.History]string{fsm.HistoryShallow: "the child of " + n.Name + " the machine was in, from its initial child", fsm.HistoryDeep: "the very leaf the machine was in"}[is])
		d.add(c)
	}
	if was != fsm.HistoryNone && is != fsm.HistoryNone {
		d.forgotten(os, ns)
	}
}

// forgotten reports the transient states (and final states whose done
// transition follows at once) that the history of os remembers in the
// old revision and that of ns never does in the new one (see
// fsm.Machine.Unremembered): a machine saved remembering one no longer
// loads.
func (d *differ) forgotten(os, ns *fsm.State) {
	oldNot, newNot := d.old.Unremembered(os), d.new.Unremembered(ns)
	for _, l := range append(slices.Clone(d.old.States), d.old.RegionLeaves()...) {
		if !os.Contains(l) || !(l.Transient || l.Settles()) || slices.Contains(oldNot, l) {
			continue
		}
		name := d.rename("state", l.Name)
		if !slices.ContainsFunc(newNot, func(n *fsm.State) bool { return n.Name == name }) {
			continue
		}
		c := &Change{Subject: "state " + ns.Name, What: "history no longer remembers " + name, Old: os.Pos, New: ns.Pos}
		c.verdict(SavedStates, Breaks, "a machine saved after it left "+os.Name+" from "+l.Name+", which the machine never rests in, remembers it, and no longer loads: the new revision never resumes "+name+" through the history of "+ns.Name+" (keep a rule that leaves "+ns.Name+" from "+name+" and one into "+ns.Name+".history, or declare the break if no saved machine is so)")
		d.add(c)
	}
}

// timers compares the timers running in a leaf matched across the
// revisions: those of the state and of its ancestors (inside its region,
// for a region's leaf). A saved machine in it is "saved in where".
func (d *differ) timers(os, ns *fsm.State, where string) {
	olds, news := timerStates(os), timerStates(ns)
	for _, t := range olds {
		if !slices.ContainsFunc(news, func(n timerKey) bool { return n.state == d.rename("state", t.state) && n.id == t.id }) {
			c := &Change{Subject: "state " + ns.Name, What: "lost " + t.String(), Old: os.Pos, New: ns.Pos}
			c.verdict(SavedStates, Breaks, fmt.Sprintf("a machine saved in %s with %s running no longer loads", where, t))
			d.add(c)
		}
	}
	for _, t := range news {
		found := false
		for _, o := range olds {
			found = found || d.rename("state", o.state) == t.state && o.id == t.id
		}
		if !found {
			c := &Change{Subject: "state " + ns.Name, What: "gained " + t.String(), Old: os.Pos, New: ns.Pos}
			c.verdict(SavedStates, Breaks, fmt.Sprintf("a machine saved in %s loads without %s running: it would never fire", where, t))
			d.add(c)
		}
	}
}

// timerKey is a timer as saved data names it: its state and its id among
// the state's timers (empty for the one without).
type timerKey struct {
	state, id string
}

// String names the timer: "the timer of S", or "timer reminder of S".
func (k timerKey) String() string {
	if k.id == "" {
		return "the timer of " + k.state
	}
	return "timer " + k.id + " of " + k.state
}

// timerStates lists the timers that run in leaf s: those of its states.
func timerStates(s *fsm.State) []timerKey {
	var out []timerKey
	for _, a := range s.Path() {
		for _, t := range a.Timers {
			out = append(out, timerKey{a.Name, t.ID})
		}
	}
	return out
}

// leaves maps the declarations of a machine's leaf states to the states.
func leaves(m *fsm.Machine) map[*fsm.Decl]*fsm.State {
	out := map[*fsm.Decl]*fsm.State{}
	for _, s := range m.States {
		out[&s.Decl] = s
	}
	return out
}

// funcs compares the guards, or the effects: their signatures are the
// hand-written Behavior's methods.
func (d *differ) funcs(kind string, old, new []*fsm.Func) {
	byName, byGo := map[string]*fsm.Func{}, map[string]*fsm.Func{}
	for _, f := range old {
		if f.Used() {
			byName[f.Name] = f
			byGo[f.GoName] = f
		}
	}
	seen := map[*fsm.Func]bool{}
	for _, n := range new {
		if !n.Used() {
			continue
		}
		o := byName[n.Name]
		if o == nil {
			o = byGo[n.GoName] // spelt anew, the same method
		}
		if o != nil {
			d.renamedFunc(kind, o.Name, n.Name)
		}
		seen[o] = true
		subject := kind + " " + n.Name
		switch {
		case o == nil:
			c := &Change{Subject: subject, What: "added", New: n.Pos}
			c.verdict(Code, Breaks, fmt.Sprintf("the Behavior has a new method, %s, which every Behavior must implement", n.GoName))
			d.add(c)
		case o.GoName != n.GoName:
			c := &Change{Subject: subject, What: fmt.Sprintf("Go name now %s, was %s", n.GoName, o.GoName), Old: o.Pos, New: n.Pos}
			c.verdict(Code, Breaks, fmt.Sprintf("the Behavior's method %s is now %s, which every Behavior must implement", o.GoName, n.GoName))
			d.add(c)
		case !sameSignature(o.Reads, n.Reads) || !sameSignature(o.Sets, n.Sets):
			c := &Change{Subject: subject, What: "given other reads or sets", Old: o.Pos, New: n.Pos}
			if alikeSignature(o.Reads, n.Reads) && alikeSignature(o.Sets, n.Sets) {
				c.What = "given values of other types"
				c.verdict(Code, Review, fmt.Sprintf("the Behavior's method %s reads and gives values of other types, alike in JSON (%s): code that implements it no longer compiles until it is updated", n.GoName, retypes(append(slices.Clip(o.Reads), o.Sets...), append(slices.Clip(n.Reads), n.Sets...))))
			} else {
				c.verdict(Code, Breaks, fmt.Sprintf("the Behavior's method %s now reads %s and gives %s; it read %s and gave %s", n.GoName, orNothing(signature(n.Reads)), orNothing(signature(n.Sets)), orNothing(signature(o.Reads)), orNothing(signature(o.Sets))))
			}
			d.add(c)
		}
	}
	for _, o := range old {
		if o.Used() && !seen[o] {
			c := &Change{Subject: kind + " " + o.Name, What: "removed", Old: o.Pos}
			if d.old.HasBehavior() && !d.new.HasBehavior() {
				// A method less is no break, but a Behavior less is.
				c.verdict(Code, Breaks, "the machine has no guard or effect left: Config has no Behavior field, and code that sets it no longer compiles")
			}
			d.add(c)
		}
	}
}

// sameSignature reports whether two lists of fields give the same Go
// parameters or results: the same types in the same order.
func sameSignature(a, b []*fsm.Field) bool {
	return slices.EqualFunc(a, b, func(x, y *fsm.Field) bool { return x.GoType.Canonical() == y.GoType.Canonical() })
}

// alikeSignature reports whether two lists of fields give parameters or
// results of the same names whose types are the same or alike (alike).
func alikeSignature(a, b []*fsm.Field) bool {
	return slices.EqualFunc(a, b, func(x, y *fsm.Field) bool {
		return x.Name == y.Name && (x.GoType.Canonical() == y.GoType.Canonical() || alike(x, y))
	})
}

// alike reports whether two fields' types, of other Go types, read each
// other's JSON: their shapes are known and the same (a type moved to
// another package, a named type for its underlying one).
func alike(a, b *fsm.Field) bool {
	return a.JSON != nil && b.JSON != nil && a.JSON.String() == b.JSON.String()
}

// retyped decides whether data saved with field o loads as field n, of
// another Go type (see loads); when either shape is unknown (a type of the
// generated package, say), it may not.
func retyped(o, n *fsm.Field) (Verdict, string) {
	switch {
	case o.JSON == nil:
		return Breaks, fmt.Sprintf("fsmgen does not see how %s is encoded (a type declared beside the generated code?), so it cannot tell that every value loads", o.Type)
	case n.JSON == nil:
		return Breaks, fmt.Sprintf("fsmgen does not see how %s is encoded (a type declared beside the generated code?), so it cannot tell that every value loads", n.Type)
	}
	return loads(o.JSON, n.JSON)
}

// typeNames returns how a change names the types of a retyped field: as
// the spec writes them, or, when the spec writes them alike (a package
// that moved, imported under its old name), with their packages' paths.
func typeNames(o, n *fsm.Field) (string, string) {
	if o.Type != n.Type {
		return o.Type, n.Type
	}
	return o.GoType.Canonical(), n.GoType.Canonical()
}

// retypes says which types of the fields o became which of the fields n,
// o and n alike (alikeSignature): "a.T is now b.T, …".
func retypes(o, n []*fsm.Field) string {
	var out []string
	for i, of := range o {
		ot, nt := of.GoType.Canonical(), n[i].GoType.Canonical()
		if s := ot + " is now " + nt; ot != nt && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return strings.Join(out, ", ")
}

// signature writes fields as "name type, ...".
func signature(fields []*fsm.Field) string {
	var out []string
	for _, f := range fields {
		out = append(out, f.Name+" "+f.Type)
	}
	return strings.Join(out, ", ")
}

func orNothing(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}
