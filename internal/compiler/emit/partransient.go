package emit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// This file emits the transient states inside regions (see
// internal/compiler/fsm/parallel.go, State.Eventless): a region never
// rests in one, but leaves it by its eventless rules in the step that
// enters it. As SCXML 1.0 §3.13 (selectEventlessTransitions) and XState
// v5's always do, the eventless rules of every region then in a transient
// state are taken together, as one microstep, and again until no region
// is in one.

// eventlessMethod names the method that takes the eventless rules of the
// transient states inside the regions of parallel state p: eventlessOn.
func eventlessMethod(p *fsm.State) string { return "eventless" + p.GoName }

// hasEventless reports whether some region of parallel state p has a
// transient state, the regions of the parallel states inside its
// regions included.
func hasEventless(p *fsm.State) bool {
	return len(eventlessRegions(p)) > 0
}

// eventlessRegions returns the regions of parallel state p with a
// transient state, in document order, the regions of the parallel
// states inside its regions included (p.Flat): SCXML 1.0 §3.13 takes the
// eventless transitions of every atomic state of the configuration.
func eventlessRegions(p *fsm.State) []*fsm.Region {
	if p == nil {
		return nil
	}
	var out []*fsm.Region
	for _, reg := range p.Flat {
		if slices.ContainsFunc(reg.Leaves, (*fsm.State).Eventless) {
			out = append(out, reg)
		}
	}
	return out
}

// eventlessLoop emits the microsteps that follow a step of the regions of
// parallel state p that may enter a transient state:
//
//	// Transient states: their eventless rules.
//	for m.eventlessOn() {
//	}
//
// or, when an eventless rule of a region leaves p (see quietLeaves):
//
//	for {
//		took, left := m.eventlessOn()
//		if left >= 0 {
//			return m.leaveOn(left)
//		}
//		if !took {
//			break
//		}
//	}
func eventlessLoop(p *fsm.State) jen.Code {
	c := jen.Comment("// Transient states: their eventless rules, a microstep at a time.").Line()
	if p.WaitsIn() {
		c = jen.Comment("// States that wait and transient states: their eventless rules, a microstep at a").Line().
			Comment("// time, until none is taken.").Line()
		if !slices.ContainsFunc(p.Flat, func(reg *fsm.Region) bool {
			return slices.ContainsFunc(reg.Leaves, func(s *fsm.State) bool { return s.Transient })
		}) {
			c = jen.Comment("// States that wait: their eventless rules, a microstep at a time, until none is taken.").Line()
		}
	}
	if len(eventlessLeaves(p)) == 0 {
		return c.For(jen.Id("m").Dot(eventlessMethod(p)).Call()).Block()
	}
	return c.Add(leavingLoop(eventlessMethod(p), p))
}

// leavingLoop emits the calls of method until it takes nothing: it
// reports whether it took a rule, and the index of one that leaves
// parallel state p, which leaveOn takes (-1 for none).
func leavingLoop(method string, p *fsm.State) *jen.Statement {
	return jen.For().Block(
		jen.List(jen.Id("took"), jen.Id("left")).Op(":=").Id("m").Dot(method).Call(),
		jen.If(jen.Id("left").Op(">=").Lit(0)).Block(jen.Return(leaveCall(p))),
		jen.If(jen.Op("!").Id("took")).Block(jen.Break()))
}

// leaveCall is the call of leaveOn, which takes rule left when more than
// one of p's regions' eventless rules and done transitions may leave p
// (see genQuietLeaves).
func leaveCall(p *fsm.State) jen.Code {
	var arg []jen.Code
	if len(quietLeaves(p)) > 1 {
		arg = []jen.Code{jen.Id("left")}
	}
	return jen.Id("m").Dot(quietMethod(p)).Call(arg...)
}

// eventlessLeaves returns the rules of parallel state p that eventless
// rules of its regions' transient states leave it by (Rule.Leaves), in
// rule order: eventlessOn then returns the index of the one it picked.
func eventlessLeaves(p *fsm.State) []*fsm.Rule {
	var out []*fsm.Rule
	for _, reg := range eventlessRegions(p) {
		for _, r := range eventlessRules(reg) {
			if r.Leaves != nil && !slices.Contains(out, r.Leaves) {
				out = append(out, r.Leaves)
			}
		}
	}
	return out
}

// quietMethod names the method that takes an eventless rule of a region
// of parallel state p that leaves p: leaveOn.
func quietMethod(p *fsm.State) string { return "leave" + p.GoName }

// quietLeaves returns the rules of parallel state p that eventless rules
// of its regions' transient states, and the done transitions of the
// composite states inside them, leave it by (Rule.Leaves), in rule
// order, and p's own eventless rules that macroOn picks (see ownFirst).
func quietLeaves(p *fsm.State) []*fsm.Rule {
	out := append(eventlessLeaves(p), ownRules(p)...)
	add := func(r *fsm.Rule) {
		if r.Leaves != nil && !slices.Contains(out, r.Leaves) {
			out = append(out, r.Leaves)
		}
	}
	for _, reg := range p.Flat {
		for _, s := range reg.Leaves {
			if completes(s) {
				for _, r := range s.Choice.Rules {
					add(r)
				}
			}
		}
	}
	return out
}

// genQuietLeaves emits, for each parallel state some eventless rule of
// whose regions leaves it, the method that takes the rule (see
// eventlessLoop): p's rule for it, which exits every region of p and p.
func (g *goGen) genQuietLeaves() {
	for _, p := range g.m.States {
		rules := quietLeaves(p)
		if len(rules) == 0 || p.Region != nil {
			continue
		}
		var body []jen.Code
		var cases []jen.Code
		for _, r := range rules[:len(rules)-1] {
			cases = append(cases, jen.Case(jen.Lit(r.Index)).Block(append([]jen.Code{comment("", r.Label)}, g.ruleBody(r)...)...))
		}
		if len(cases) > 0 {
			body = append(body, jen.Switch(jen.Id("left")).Block(cases...))
		}
		last := rules[len(rules)-1]
		body = append(body, comment("", last.Label))
		body = append(body, g.ruleBody(last)...)
		// With one such rule there is nothing to choose: no parameter.
		var params []jen.Code
		if len(rules) > 1 {
			params = []jen.Code{jen.Id("left").Int()}
		}
		g.f.Add(paragraphs(quietDoc(p, rules)))
		g.f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id(quietMethod(p)).Params(params...).Error().Block(body...)
	}
}

// quietDoc is the doc comment of leaveOn, which takes rules, the
// eventless rules of transient states inside the regions of p and the
// done transitions of composite states inside them that leave p.
func quietDoc(p *fsm.State, rules []*fsm.Rule) string {
	if ownFirst(p) {
		kinds := []string{"an eventless rule of " + p.Name + " itself, which " + macroMethod(p) + " picks before a done event"}
		if slices.ContainsFunc(rules, func(r *fsm.Rule) bool { return r.Done == nil && !slices.Contains(p.Choice.Rules, r) }) {
			kinds = append(kinds, "one of a transient state inside its regions")
		}
		if slices.ContainsFunc(rules, func(r *fsm.Rule) bool { return r.Done != nil }) {
			kinds = append(kinds, "the done transition of a composite state inside one")
		}
		which := "rule left, which leaves " + p.Name + ": " + strings.Join(kinds, ", or ")
		if len(rules) == 1 {
			which = "the eventless rule of " + p.Name + ", which " + macroMethod(p) + " picks before a done event"
		}
		return fmt.Sprintf("%s takes %s. It exits every region of %s and %s itself (SCXML 1.0 §3.13).", quietMethod(p), which, p.Name, p.Name)
	}
	done := slices.ContainsFunc(rules, func(r *fsm.Rule) bool { return r.Done != nil })
	eventless := slices.ContainsFunc(rules, func(r *fsm.Rule) bool { return r.Done == nil })
	which := func(article, what string) string { // article: when it is one of several
		if len(rules) > 1 {
			return "rule left, " + article + " " + what
		}
		return "the " + what
	}
	switch {
	case done && eventless:
		return fmt.Sprintf("%s takes rule left, an eventless rule of a transient state inside a region of %s or the done "+
			"transition of a composite state inside one, that leaves %s: it exits every region of %s and %s itself "+
			"(SCXML 1.0 §3.13).", quietMethod(p), p.Name, p.Name, p.Name, p.Name)
	case done:
		return fmt.Sprintf("%s takes %s that leaves %s, in the microstep of its done event: it exits every region of %s "+
			"and %s itself (SCXML 1.0 §3.13); the done events that wait then are dropped with the states that raised them.",
			quietMethod(p), which("the", "done transition of a composite state inside a region of "+p.Name), p.Name, p.Name, p.Name)
	}
	return fmt.Sprintf("%s takes %s that leaves %s, in the microstep %s picked it in: it exits every region of %s and %s "+
		"itself (SCXML 1.0 §3.13, removeConflictingTransitions: it conflicts with every other eventless rule of the microstep).",
		quietMethod(p), which("an", "eventless rule of a transient state inside a region of "+p.Name), p.Name, eventlessMethod(p), p.Name, p.Name)
}

// genEventless emits, for each parallel state whose regions have
// transient states, the method that takes one microstep of their
// eventless rules (see eventlessLoop): each region in a transient state
// picks its rule first (the guards are tested before anything changes),
// then every region's new leaf and the observer's steps, the exits of
// the rules in reverse document order, their actions and their entries
// in document order, as regionsTogether takes an event.
func (g *goGen) genEventless() {
	for _, p := range g.m.States {
		regs := eventlessRegions(p)
		if len(regs) == 0 || p.Region != nil {
			continue
		}
		var ts, none, froms, fromVals []jen.Code
		var body []jen.Code
		for _, reg := range regs {
			ts = append(ts, jen.Id(local("t", reg)))
			none = append(none, jen.Lit(-1))
			if g.eventlessReadsFrom(reg) {
				froms = append(froms, jen.Id(local("from", reg)))
				fromVals = append(fromVals, rgn(reg))
			}
		}
		leaves := len(eventlessLeaves(p)) > 0
		if leaves {
			ts, none = append(ts, jen.Id("left")), append(none, jen.Lit(-1))
		}
		body = append(body, jen.List(ts...).Op(":=").List(none...))
		firstLeave := true
		for i, reg := range regs {
			var cases []jen.Code
			sawLeave := false
			for _, s := range reg.Leaves {
				if !s.Eventless() {
					continue
				}
				cases = append(cases, jen.Case(jen.Id(s.KindName)).Block(g.regionCell(reg, s.Choice, func(r *fsm.Rule) []jen.Code {
					if r.Leaves != nil {
						sawLeave = true
						return quietPick(regs[:i], r, firstLeave)
					}
					return g.regionPick(reg, r)
				})...))
			}
			body = append(body, jen.Switch(rgn(reg)).Block(cases...))
			firstLeave = firstLeave && !sawLeave
		}
		if leaves {
			body = append(body, jen.If(jen.Id("left").Op(">=").Lit(0)).Block(
				jen.Comment("// A rule that leaves "+p.Name+", which drops those of the regions after it."),
				jen.Return(jen.False(), jen.Id("left"))))
		}
		var none2 jen.Code
		for i, reg := range regs {
			test := jen.Id(local("t", reg)).Op("<").Lit(0)
			if i == 0 {
				none2 = test
			} else {
				none2 = jen.Add(none2).Op("&&").Add(test)
			}
		}
		ret := func(b bool) jen.Code {
			if leaves {
				return jen.Return(jen.Lit(b), jen.Lit(-1))
			}
			return jen.Return(jen.Lit(b))
		}
		body = append(body, jen.If(none2).Block(ret(false)))
		if len(froms) > 0 {
			// The leaves the rules leave, which their exits test.
			body = append(body, jen.List(froms...).Op(":=").List(fromVals...))
		}
		lefts := map[string]bool{}
		for _, reg := range regs {
			// The leaves of the parallel states inside regions the rules
			// leave, which their exits test.
			for _, r := range eventlessRules(reg) {
				body = append(body, g.hostedLefts(r, lefts)...)
			}
		}
		move := func(reg *fsm.Region, r *fsm.Rule) []jen.Code {
			c := g.regionRemembers(reg, r)
			c = append(c, rgn(reg).Op("=").Id(r.To.KindName))
			c = append(c, raiseDone(reg, r.To)...)
			c = append(c, g.hostedSlots(r)...)
			return append(c, core().Dot("Start").Call(jen.Lit(r.Index), jen.Id(p.KindName)))
		}
		parts := []string{"exits", "actions", "entries"}
		if len(regs) == 1 {
			// One region: its rule moves it, then runs its exits,
			// actions and entries, in one switch.
			reg := regs[0]
			body = append(body, eventlessSwitch(reg, func(r *fsm.Rule) []jen.Code {
				c := move(reg, r)
				for _, part := range parts {
					c = append(c, g.regionActs(r, jen.Id(local("from", reg)), part, true)...)
				}
				return c
			})...)
			parts = nil
		} else {
			for _, reg := range regs {
				body = append(body, eventlessSwitch(reg, func(r *fsm.Rule) []jen.Code { return move(reg, r) })...)
			}
		}
		// Several regions: every region moves, then the exits of all, the
		// actions of all, the entries of all (SCXML 1.0 §3.13).
		for _, part := range parts {
			order := regs
			if part == "exits" {
				order = reversed(regs)
			}
			for _, reg := range order {
				body = append(body, eventlessSwitch(reg, func(r *fsm.Rule) []jen.Code {
					return g.regionActs(r, jen.Id(local("from", reg)), part, true)
				})...)
			}
		}
		body = append(body, ret(true))
		doc := ""
		results := jen.Bool()
		if leaves {
			results = jen.Parens(jen.List(jen.Bool(), jen.Int()))
			doc = fmt.Sprintf(" A rule that leaves %s is taken when no region before its own takes one in the microstep "+
				"(SCXML 1.0 §3.13, removeConflictingTransitions), by %s: %s returns its index, moving nothing, and -1 otherwise.",
				p.Name, quietMethod(p), eventlessMethod(p))
		}
		what := fmt.Sprintf("%s takes, as one microstep, the eventless rules of every region of %s in a transient "+
			"state, and reports whether it took any: a region never rests in a transient state, but leaves it in the step "+
			"that enters it (SCXML 1.0 §3.13, eventless transitions).", eventlessMethod(p), p.Name)
		if p.WaitsIn() {
			what = fmt.Sprintf("%s takes, as one microstep, the eventless rules of every region of %s in a transient state "+
				"or in a state that waits, and reports whether it took any (SCXML 1.0 §3.13, eventless transitions): a region "+
				"never rests in a transient state, and rests in a state that waits while none of its guards holds.", eventlessMethod(p), p.Name)
		}
		g.f.Add(paragraphs(what + doc))
		g.f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id(eventlessMethod(p)).Params().Add(results).Block(body...)
	}
}

// shownRule returns, for rule r of a transient state's chain that stands
// for an eventless branch leaving the parallel state (Rule.Leaves), the
// parallel state's rule for it, which the table and the diagram show in
// its place, from its source; r otherwise.
func shownRule(r *fsm.Rule) *fsm.Rule {
	if r.Leaves != nil && r.Leaves.Event == nil {
		return r.Leaves
	}
	return r
}

// quietPick emits the pick of rule r, a stand-in of a region's transient
// state for a branch that leaves its parallel state (Rule.Leaves): taken
// when no region of before picked a rule in the microstep, nor an earlier
// one a rule that leaves (unless first, the first region that may).
//
//	if tPump < 0 && left < 0 {
//		left = 7
//	}
func quietPick(before []*fsm.Region, r *fsm.Rule, first bool) []jen.Code {
	var test *jen.Statement
	add := func(c *jen.Statement) {
		if test == nil {
			test = c
		} else {
			test = jen.Add(test).Op("&&").Add(c)
		}
	}
	for _, reg := range before {
		add(jen.Id(local("t", reg)).Op("<").Lit(0))
	}
	if !first {
		add(jen.Id("left").Op("<").Lit(0))
	}
	set := jen.Id("left").Op("=").Lit(r.Leaves.Index)
	if test == nil {
		return []jen.Code{set}
	}
	return []jen.Code{jen.If(test).Block(set)}
}

// eventlessRules returns the eventless rules of the transient states of
// region reg, each followed by its variants into a history.
func eventlessRules(reg *fsm.Region) []*fsm.Rule {
	var out []*fsm.Rule
	for _, s := range reg.Leaves {
		if !s.Eventless() {
			continue
		}
		for c := s.Choice; c != nil && !c.Out(); c = c.Fallback {
			for _, r := range withVariants(c.Rules) {
				if !slices.Contains(out, r) {
					out = append(out, r)
				}
			}
		}
	}
	return out
}

// eventlessSwitch emits a switch over the eventless rule region reg
// picked, with a case for each rule body gives code for; nothing when it
// gives none.
func eventlessSwitch(reg *fsm.Region, body func(*fsm.Rule) []jen.Code) []jen.Code {
	var cases []jen.Code
	for _, r := range eventlessRules(reg) {
		if r.Leaves != nil {
			continue // see quietPick
		}
		if b := body(r); len(b) > 0 {
			cases = append(cases, jen.Case(jen.Lit(r.Index)).Block(append([]jen.Code{comment("", r.Label)}, b...)...))
		}
	}
	if len(cases) == 0 {
		return nil
	}
	return []jen.Code{jen.Switch(jen.Id(local("t", reg))).Block(cases...)}
}

// eventlessReadsFrom reports whether an eventless rule of region reg runs
// an exit or entry only from some of its states, which tests the leaf it
// leaves.
func (g *goGen) eventlessReadsFrom(reg *fsm.Region) bool {
	for _, r := range eventlessRules(reg) {
		for _, run := range append(append([]*fsm.Run{}, r.Exits...), r.Entries...) {
			if g.readsLeaf(run) {
				return true
			}
		}
	}
	return false
}
