package fsm

import (
	"slices"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
)

// This file resolves the In(State) guards of the rules of the machine's
// build other than those that leave a parallel state from inside a region
// (see parleave.go): a rule of a parallel state P, its timer's and its
// done transition's included, of a composite state around P, or a "*"
// row, testing a state inside one of P's regions at any depth (SCXML 1.0
// §5.9.1: In() holds for any active state; XState v5's stateIn too). The
// generated code tests the leaf the region is in, as for the guards of
// the rules inside regions, and, for a rule other states share, that the
// machine is in P; the witness paths put the regions in a configuration
// that answers the guard as the way does (see inConfig). A state that is
// never active while the rule's state is would make the guard false in
// every step: refused.

// ownedIns resolves the In(State) guards owned (the machine's build's,
// see parHook.owned) of m's rules, inRegion the states inside regions by
// name, refusing those that test nothing the rule's source can be in.
func ownedIns(m *Machine, owned []*Func, inRegion map[string]*State, diags *diag.List) {
	if len(owned) == 0 {
		return
	}
	users := map[*Func][]*Rule{}
	for _, r := range m.Rules {
		for _, v := range append([]*Rule{r}, r.Variants...) {
			if v.Guard != nil && v.Guard.InName != "" {
				users[v.Guard] = append(users[v.Guard], v)
			}
		}
	}
	outer := map[string]*State{}
	for _, s := range m.States {
		outer[s.Name] = s
	}
	for _, s := range m.Composites {
		outer[s.Name] = s
	}
	for _, fn := range owned {
		rules := users[fn]
		if len(rules) == 0 {
			continue // no rule tests it (refused elsewhere)
		}
		t := inRegion[fn.InName]
		if t == nil {
			if o := outer[fn.InName]; o != nil {
				diags.Errorf(fn.Pos, "In(%s) names %s, a state outside the regions of every parallel state: fsmgen tests In() of the states inside regions only; name a state inside a region of a parallel state the rule's state is or holds", fn.InName, fn.InName)
			} else {
				diags.Errorf(fn.Pos, "In(%s) names no state inside a region of a parallel state: name a state inside a region of a parallel state the rule's state is or holds", fn.InName)
			}
			continue
		}
		if !inOwnedOK(fn, t, rules, diags) {
			continue
		}
		fn.In = t
	}
}

// inOwnedOK checks In(t), the guard fn of rules of the machine's build:
// t is a state a region of a parallel state may rest in, and each rule's
// state is that parallel state or holds it, or the rule is a "*" row.
func inOwnedOK(fn *Func, t *State, rules []*Rule, diags *diag.List) bool {
	switch {
	case t.Region == nil:
		diags.Errorf(fn.Pos, "In(%s) names parallel state %s, which groups regions of %s and is active whenever they are: name a state of one of its regions", fn.InName, fn.InName, t.Parent.Name)
		return false
	case t.Eventless() && !t.Waits:
		diags.Errorf(fn.Pos, "In(%s) names transient state %s, which region %s leaves in the step that enters it: the region is never there when a guard is tested; name a state its eventless transitions lead to", fn.InName, fn.InName, t.Region.Root.Name)
		return false
	case t.Settles() && !t.Rests():
		diags.Errorf(fn.Pos, "In(%s) names a final state whose composite state %s takes its done transition in the step that enters it: region %s is never in %s when a guard is tested; name %s, or the state its done transition leads to", fn.InName, t.Completes.Name, t.Region.Root.Name, fn.InName, t.Completes.Name)
		return false
	}
	p := t.Region.Parallel
	for _, r := range rules {
		if from := r.From; from != nil && !from.Contains(p) {
			// (A "*" row applies to the parallel state too.)
			diags.Errorf(fn.Pos, "In(%s) on a rule of %s is never true: %s is a state inside region %s of parallel state %s, and %s is outside %s and does not hold it, so it is never active beside %s; test In(%s) on the rules of %s or of a state around it, or on those of another region of %s", fn.InName, from.Name, fn.InName, t.Region.Root.Name, p.Name, from.Name, p.Name, fn.InName, fn.InName, p.Name, p.Name)
			return false
		}
	}
	return true
}

// completed returns way cw, which continues way w of parallel state p by
// a rule of its done transition, through the transient state it may lead
// to, each with its trace and the configuration after it.
func (m *Machine) completed(p *State, w *Way, cw Way) []regionWay {
	var out []regionWay
	for _, cw := range throughChoices(cw) {
		cw.Trace = m.trace(&cw, p, w.Config)
		var next []*State
		if cw.To.Regions != nil && enters(&cw, cw.To) {
			next = m.enteredConfig(&cw)
		}
		out = append(out, regionWay{way: &cw, after: next})
	}
	return out
}

// inHolds reports whether In(t) holds in leaf from of the machine, its
// regions in cfg: from is t's parallel state, and t's region is in t.
func inHolds(t, from *State, cfg []*State) bool {
	return from != nil && from == t.Region.Parallel && cfg != nil && t.Contains(cfg[t.Region.Index])
}

// inWay returns way w, from a leaf of the machine with its regions in cfg
// (nil for a leaf that is no parallel state), without the In(State)
// guards it tests, which cfg answers: a copy when it tests some, nil when
// cfg answers them otherwise than w does.
func inWay(w *Way, cfg []*State) *Way {
	if !slices.ContainsFunc(w.Tests, leaveTest) {
		return w
	}
	cp := *w
	cp.Tests = slices.Clone(w.Tests)
	if !inAgrees(&cp, cfg) {
		return nil
	}
	return &cp
}

// hostedInConfig is inConfig for a way w of parallel state p whose
// In(State) guards test a state of a region of a parallel state inside
// one of p's regions (see parinreg.go): it returns cfg with each region
// of p in a leaf that leaves w's event to p and answers those guards as w
// does, a host region in the parallel state inside it that holds a
// region whose state must hold; nil when no configuration does, or when
// w tests no such state (inConfig's).
func (m *Machine) hostedInConfig(p *State, w *Way, cfg []*State) []*State {
	hosted := func(t Test) bool { return leaveTest(t) && t.Guard.In.Region.Host != nil }
	if cfg == nil || !slices.ContainsFunc(w.Tests, hosted) {
		return nil
	}
	out := slices.Clone(cfg)
	for _, reg := range p.Regions {
		if !fitRegion(out, reg, w) {
			return nil
		}
	}
	p.restHosts(out)
	if p.completes(out) || !inAgrees(w, out) {
		return nil
	}
	return out
}

// fitRegion puts region reg in cfg in a leaf that leaves way w's event to
// the states around it and answers the In(State) guards w tests as w
// does, the regions of a parallel state it puts reg in too (the leaf it
// is in first, then one that is not final), and reports whether it found
// one.
func fitRegion(cfg []*State, reg *Region, w *Way) bool {
	fits := func(l *State) bool {
		if c := l.Cell(w.Event); c != nil && !c.Out() || l.Settles() {
			return false
		}
		for _, t := range w.Tests {
			if !leaveTest(t) {
				continue
			}
			in := t.Guard.In
			if in.Region == reg && in.Contains(l) != t.Holds {
				return false
			}
			for h := in.Region; h.Host != nil && t.Holds; h = h.Host {
				if h.Host == reg && h.Within != l {
					return false // a state inside another parallel state
				}
			}
		}
		return true
	}
	var order []*State
	if l := cfg[reg.Index]; l != nil {
		order = append(order, l)
	}
	for _, final := range []bool{false, true} {
		for _, l := range reg.Leaves {
			if l.Final == final {
				order = append(order, l)
			}
		}
	}
	for _, l := range order {
		if !fits(l) {
			continue
		}
		cfg[reg.Index] = l
		ok := true
		for _, h := range l.Regions {
			ok = ok && fitRegion(cfg, h, w)
		}
		if ok {
			return true
		}
	}
	return false
}

// inHome returns way w, of a rule of a composite state that its leaves
// share, from the parallel state around which w's In(State) guards hold
// (In's, inside the composite state, which takes the rule too) when w
// starts elsewhere, where they cannot hold: the generated tests take it
// from there. Nil when w tests none that holds, or starts there already.
func inHome(w *Way) *Way {
	i := slices.IndexFunc(w.Tests, func(t Test) bool { return leaveTest(t) && t.Holds })
	if i < 0 || len(w.Rules) == 0 {
		return nil
	}
	p, r := w.Tests[i].Guard.In.Region.Parallel, w.Rules[0]
	if p == w.From || r.From != nil && !r.From.Contains(p) {
		return nil
	}
	taken := false
	for c := p.Cell(w.Event); c != nil && !taken; c = c.Fallback {
		taken = slices.Contains(c.Rules, r)
	}
	if !taken {
		return nil
	}
	cp := *w
	if len(w.Rules) == 1 && r.Stays() {
		cp.To = p
	}
	cp.From = p
	return &cp
}

// inNever reports, as an error of b, rule r when it fires on no path
// the search found (see parallelPaths) though the parallel state its
// In(State) guard asks about is reached (rested): in no configuration
// reached is that state active while the regions leave r's event to the
// rule and no earlier guard decides.
func inNever(b *builder, r *Rule, rested map[*State]bool) bool {
	if r.Guard == nil || r.Guard.In == nil || r.Source != nil || r.From != nil && r.From.Region != nil {
		return false
	}
	in := r.Guard.In
	p := in.Region.Parallel
	if !rested[p] {
		return false
	}
	what := "its event"
	if r.Event != nil && !r.Event.Builtin {
		what = r.Event.Name
	}
	b.errorf(r.Pos, "rule %s can never fire: %s is reached, but in no configuration the machine reaches is %s active while no region of %s takes %s (SCXML 1.0 §3.13: a region's transition preempts its parallel state's and those around it) and no earlier guard decides; test In() of a state in which the regions leave %s to %s, or remove the rule", r.Label, p.Name, in.Name, p.Name, what, what, p.Name)
	return true
}
