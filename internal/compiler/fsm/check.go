package fsm

import (
	"fmt"
	"slices"
	"strings"
)

// successors returns, for each state, the states its rules can move it
// to, "*" rows included.
func (b *builder) successors() map[*State][]*State {
	return b.successorsBy(func(*Rule) bool { return true })
}

// successorsBy is successors through the rules keep keeps only.
func (b *builder) successorsBy(keep func(*Rule) bool) map[*State][]*State {
	succ := map[*State][]*State{}
	add := func(from *State, r *Rule) {
		if r.Kind == Transition && r.To != nil && keep(r) {
			succ[from] = append(succ[from], r.To)
		}
	}
	for _, r := range b.m.Rules {
		if r.From != nil && !r.Shared() && r.Timer == nil {
			add(r.From, r)
		}
	}
	for _, c := range b.m.Shared {
		for _, s := range b.users[c] {
			for _, r := range c.Rules {
				add(s, r)
			}
		}
	}
	var left []*Timer
	if b.par != nil {
		left = b.par.leftTimers // see parleave.go
	}
	for _, t := range append(slices.Clone(b.m.Timers), left...) {
		for _, s := range b.m.States {
			if t.State.Contains(s) {
				for _, r := range t.Cell.Rules {
					add(s, r)
				}
			}
		}
	}
	return succ
}

// graph checks reachability, ways out, and loops among transient states.
func (b *builder) graph() {
	m := b.m
	if m.Initial == nil {
		return
	}
	succ := b.successors()
	reached := map[*State]bool{m.Initial: true}
	queue := []*State{m.Initial}
	for _, s := range b.enteredStarts() {
		// A state a rule from outside the parallel state enters.
		if !reached[s] {
			reached[s] = true
			queue = append(queue, s)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, t := range succ[s] {
			if !reached[t] {
				reached[t] = true
				queue = append(queue, t)
			}
		}
	}
	for _, s := range m.States {
		switch {
		case !reached[s] && s.Final && b.par.inRegion() && s.Depth == 1:
			b.unreachableFinal(s)
			b.unreachableNotes(s, succ, reached)
		case !reached[s]:
			b.errorf(s.Pos, "state %s is unreachable from the initial state %s", s.Name, m.Initial.Name)
			b.unreachableNotes(s, succ, reached)
		}
		if !s.Terminal && len(succ[s]) == 0 && !b.par.inRegion() {
			b.errorf(s.Pos, "state %s has no way out: add a transition to another state, or mark it \"terminal: true\"", s.Name)
		}
	}
	if b.par.inRegion() {
		b.stuckLeaves(succ, reached)
	} else {
		b.stuckRegions()
	}
	// A transient state whose eventless rules can lead back to itself
	// through transient states would loop within one step.
	var visit func(s *State, path []*State) bool
	visit = func(s *State, path []*State) bool {
		for i, p := range path {
			if p == s {
				names := make([]string, 0, len(path)-i+1)
				done, waits := false, false
				for _, q := range path[i:] {
					names = append(names, q.Name)
					done = done || q.Completes != nil
					waits = waits || q.Waits
				}
				if waits {
					b.errorf(s.Pos, "eventless transitions could loop without an event while their guards hold: %s → %s: the checker cannot tell that their guards never hold together, so name the event that moves one of them (a row with \"on\"), or lead one elsewhere", strings.Join(names, " → "), s.Name)
				} else if done {
					b.errorf(s.Pos, "transient states and done transitions could loop without an event: %s → %s", strings.Join(names, " → "), s.Name)
				} else {
					b.errorf(s.Pos, "transient states could loop without an event: %s → %s", strings.Join(names, " → "), s.Name)
				}
				return true
			}
		}
		if s.Choice == nil {
			return false
		}
		for _, r := range s.Choice.Rules {
			// A rule into a history goes on where the state it resumes
			// does: a final state it remembers is transient.
			for _, v := range append([]*Rule{r}, r.Variants...) {
				if v.Kind == Transition && v.To != nil && v.To.Choice != nil && visit(v.To, append(path, s)) {
					return true
				}
			}
		}
		return false
	}
	for _, s := range m.States {
		if s.Choice != nil && visit(s, nil) {
			break
		}
	}
}

// unused warns about declarations no rule uses, "*" rows no state leaves
// its event to, and imports no field uses.
func (b *builder) unused() {
	m := b.m
	usedEv, usedAct := map[*Event]bool{}, map[*Action]bool{}
	for _, r := range m.Rules {
		if r.Kind == Transition {
			usedEv[r.Event] = true
			for _, e := range r.Actions {
				usedAct[e.Action] = true
			}
		}
		for _, run := range append(slices.Clone(r.Exits), r.Entries...) {
			for _, e := range run.Actions {
				usedAct[e.Action] = true
			}
		}
	}
	for _, run := range m.Start {
		for _, e := range run.Actions {
			usedAct[e.Action] = true
		}
	}
	for _, r := range m.Rules {
		if r.Kind == Ignore && r.Event != nil && b.retests(r.From) {
			// Ignoring it is a step after which eventless rules are
			// tested, which may move the machine.
			usedEv[r.Event] = true
		}
	}
	for _, e := range m.Events {
		if !usedEv[e] && !e.Builtin && !b.par.uses("event "+e.Name) {
			b.diags.Warnf(e.Pos, "event %s never causes a transition: every state ignores or rejects it", e.Name)
		}
	}
	for _, a := range m.Actions {
		if !usedAct[a] && !a.Builtin && !b.par.uses("action "+a.Name) {
			b.diags.Warnf(a.Pos, "action %s is never emitted", a.Name)
		}
	}
	for _, fns := range [][]*Func{m.Guards, m.Effects} {
		for _, fn := range fns {
			if !fn.Used() && !b.par.uses(kindWord(fn.Kind)+" "+fn.Name) {
				b.diags.Warnf(fn.Pos, "%s %s is never used", kindWord(fn.Kind), fn.Name)
			}
		}
	}
	for _, imp := range b.f.Imports {
		if u := b.imports[imp.Alias.Value]; u != nil && !u.used {
			b.diags.Warnf(imp.Alias.Pos, "import %s is not used by any field type", imp.Alias.Value)
		}
	}
	m.Imports = slicesDeleteUnused(m.Imports, b.imports)
}

// slicesDeleteUnused drops the imports no field type uses.
func slicesDeleteUnused(imps []Import, uses map[string]*importUse) []Import {
	out := imps[:0]
	for _, i := range imps {
		if u := uses[i.Alias]; u != nil && u.used {
			out = append(out, i)
		}
	}
	return out
}

// unreachableNotes explains an unreachable state: what leads to it (only
// rules of states that are unreachable too, or none), and which of its
// rules can therefore never fire.
func (b *builder) unreachableNotes(s *State, succ map[*State][]*State, reached map[*State]bool) {
	var from []string
	for _, t := range b.m.States {
		if slices.Contains(succ[t], s) {
			from = append(from, t.Name)
		}
	}
	if len(from) == 0 {
		b.diags.Note("no rule leads to " + s.Name + ": give a reachable state a transition to it, or remove it")
	} else {
		b.diags.Note("the rules that lead to " + s.Name + " start only in states that are unreachable too: " + strings.Join(from, ", "))
	}
	var rules []*Rule
	for _, cs := range [][]*Cell{s.Handles, s.Refuses, s.Inherited, {s.Choice}} {
		for _, c := range cs {
			if c != nil {
				rules = append(rules, c.Rules...)
			}
		}
	}
	slices.SortFunc(rules, func(x, y *Rule) int { return x.Index - y.Index })
	var never []string
	for _, r := range rules {
		never = append(never, r.Label)
	}
	const shown = 5
	switch {
	case len(never) > shown:
		b.diags.Note(fmt.Sprintf("so these rules never fire from %s: %s and %d more", s.Name, strings.Join(never[:shown], "; "), len(never)-shown))
	case len(never) > 0:
		b.diags.Note(fmt.Sprintf("so these rules never fire from %s: %s", s.Name, strings.Join(never, "; ")))
	}
}

// retests reports whether the machine tests eventless rules after a step
// that keeps it in state s (all states for nil, a "*" row's): s or a
// state around it waits, or a parallel state around it whose regions or
// own rows wait (parHook.retests), or a state inside s waits.
func (b *builder) retests(s *State) bool {
	for x := s; x != nil; x = x.Parent {
		if x.Waits || b.par != nil && b.par.retests[x.Name] {
			return true
		}
	}
	return slices.ContainsFunc(b.m.States, func(l *State) bool {
		return l.Waits && (s == nil || s.Contains(l)) || s == nil && b.par != nil && b.par.retests[l.Name]
	})
}
