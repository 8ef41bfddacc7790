package emit

import (
	"slices"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// This file emits an event that several regions of a parallel state have
// rules for: taken together as one step, in SCXML's order (see
// regionsTogether).

// local names a local of region reg in regionsTogether: "t" and
// "Playback" give tPlayback.
func local(prefix string, reg *fsm.Region) string { return prefix + reg.Field }

// regionsTogether emits an event that several regions have rules for.
// Each region picks its rule first (the guards are tested before
// anything changes; a region that rejects the event refuses it for the
// machine); then the rules are taken as one step, as SCXML takes the set
// of transitions one event enables (§3.13, microstep): every region's
// new leaf and the observer's steps, then the exits of all the rules in
// reverse document order, their actions in document order, and their
// entries in document order.
//
//	tPlayback, tVolume := -1, -1
//	switch m.rgn[0] { case StatePlaying: tPlayback = 12 }
//	switch m.rgn[1] { case StateMuted: tVolume = 14 }
//	if tPlayback >= 0 || tVolume >= 0 {
//		fromPlayback, fromVolume := m.rgn[0], m.rgn[1]
//		switch tPlayback { case 12: m.rgn[0] = StateStopped; m.core.Start(12, StateOn) }
//		...
//		return m.core.Finish()
//	}
func (g *goGen) regionsTogether(inv []*fsm.Region, e *fsm.Event) []jen.Code {
	var ts, none, froms, fromVals []jen.Code
	var out []jen.Code
	ignores, moves := false, false
	// The regions that may take the event: not those that only defer it
	// or leave the parallel state on it.
	takers := slices.DeleteFunc(slices.Clone(inv), func(reg *fsm.Region) bool { return takesNone(reg, e) })
	for _, reg := range takers {
		ts = append(ts, jen.Id(local("t", reg)))
		none = append(none, jen.Lit(-1))
		if g.readsFrom(reg, e) {
			froms = append(froms, jen.Id(local("from", reg)))
			fromVals = append(fromVals, rgn(reg))
		}
	}
	held := defersOn(inv, e)
	if held {
		// The deferral of the first region that defers the event.
		ts, none = append(ts, jen.Id("held")), append(none, jen.Lit(-1))
	}
	if len(ts) > 0 {
		// (none when every region's rule for e leaves the parallel state)
		out = append(out, jen.List(ts...).Op(":=").List(none...))
	}
	var leaving []*fsm.Rule
	var from []*fsm.Region // the region of each rule of leaving
	at := len(out)
	for _, reg := range fsm.PickOrder(inv) {
		cells, leaves := regionCells(reg, e)
		var cases []jen.Code
		for _, c := range cells {
			var ks []jen.Code
			for _, s := range leaves[c] {
				ks = append(ks, jen.Id(s.KindName))
			}
			pick := func(r *fsm.Rule) []jen.Code {
				if r.Leaves != nil {
					// A branch that leaves the parallel state: its rule,
					// where no region before this one took the event.
					if !slices.Contains(leaving, r.Leaves) {
						// (a composite state's rule, reached from several
						// of its leaves, once)
						leaving, from = append(leaving, r.Leaves), append(from, reg)
					}
					set := jen.Id("left").Op("=").Lit(r.Leaves.Index)
					if test, lets := leadTest(inv, reg, e); test != nil {
						why := "No region before " + reg.Root.Name + " took a transition."
						if lets != "" {
							why = "No region before " + reg.Root.Name + " took a transition (" + lets + " drops nothing)."
						}
						return []jen.Code{jen.If(test).Block(jen.Comment(why), set)}
					}
					return []jen.Code{set}
				}
				switch r.Kind {
				case fsm.Reject:
					return []jen.Code{refusal(r)}
				case fsm.Defer:
					return []jen.Code{jen.If(jen.Id("held").Op("<").Lit(0)).Block(jen.Id("held").Op("=").Lit(r.Index))}
				}
				ignores = ignores || r.Kind == fsm.Ignore
				moves = moves || r.Kind == fsm.Transition
				return g.regionPick(reg, r)
			}
			cases = append(cases, jen.Case(ks...).Block(g.regionCell(reg, c, pick)...))
		}
		sw := jen.Switch(rgn(reg)).Block(cases...)
		if test := preempted(reg, inv); test != nil {
			// A rule of a region of a parallel state inside reg preempts
			// reg's.
			sw = jen.If(test).Block(sw)
		}
		out = append(out, sw)
	}
	picked := len(out)
	var tests []*jen.Statement
	for _, reg := range takers {
		tests = append(tests, jen.Id(local("t", reg)).Op(">=").Lit(0))
	}
	some := anyOf(tests)
	var take []jen.Code
	lefts := map[string]bool{}
	for _, reg := range inv {
		g.ruleSwitch(reg, e, func(r *fsm.Rule) []jen.Code {
			if r.Kind == fsm.Transition {
				take = append(take, g.hostedLefts(r, lefts)...)
			}
			return nil
		})
	}
	if len(froms) > 0 {
		// The leaves the rules leave, which their exits test.
		take = append(take, jen.List(froms...).Op(":=").List(fromVals...))
	}
	// The new leaves and the observer's steps, a region's ignore among
	// them.
	for _, reg := range inv {
		take = append(take, g.ruleSwitch(reg, e, func(r *fsm.Rule) []jen.Code {
			if r.Kind == fsm.Ignore && r.Leaves == nil {
				return []jen.Code{core().Dot("Beside").Call(jen.Lit(r.Index))}
			}
			if r.Kind != fsm.Transition {
				return nil
			}
			c := g.regionRemembers(reg, r)
			if r.To != nil {
				c = append(c, rgn(reg).Op("=").Id(r.To.KindName))
				c = append(c, raiseDone(reg, r.To)...)
			}
			c = append(c, g.hostedSlots(r)...)
			return append(c, core().Dot("Start").Call(jen.Lit(r.Index), jen.Id(reg.Parallel.KindName)))
		})...)
	}
	p := inv[0].Parallel
	if ignores && p.Awaits() {
		// The states that wait test their eventless rules after the
		// ignores too (see waitMethod).
		if !moves {
			take = []jen.Code{core().Dot("Start").Call(jen.Id(local("t", takers[0])), jen.Id(p.KindName))}
			if len(takers) > 1 {
				take = []jen.Code{core().Dot("IgnoreAll").Call(picks(takers)...)}
			}
			take = append(take, jen.Return(waitCall(p, nil)))
		}
	} else if ignores {
		if !moves {
			// Every region with a rule for the event ignores it.
			take = []jen.Code{jen.Return(core().Dot("Ignore").Call(jen.Id(local("t", takers[0]))))}
			if len(takers) > 1 {
				take = []jen.Code{jen.Return(core().Dot("IgnoreAll").Call(picks(takers)...))}
			}
		} else {
			// No region took a transition: the regions' ignores, told
			// to the observer above, are all.
			take = append(take, jen.If(jen.Op("!").Add(core()).Dot("Busy")).Block(jen.Return(jen.Nil())))
		}
	}
	for _, part := range []string{"exits", "actions", "entries"} {
		order := inv
		if part == "exits" {
			order = reversed(inv)
		}
		for _, reg := range order {
			take = append(take, g.ruleSwitch(reg, e, func(r *fsm.Rule) []jen.Code {
				if r.Kind != fsm.Transition {
					return nil
				}
				return g.regionActs(r, jen.Id(local("from", reg)), part, true)
			})...)
		}
	}
	if p.Awaits() {
		if moves || !ignores {
			take = append(take, jen.Return(waitCall(p, orNil(anyOf(tookEnding(p, inv, e))))))
		}
		if some != nil {
			out = append(out, jen.If(some).Block(take...))
		}
		return g.regionsTail(out, at, picked, leaving, from, inv, e, held)
	}
	var settling []*fsm.Region
	for _, reg := range inv {
		if settlesOn(reg, e) {
			settling = append(settling, reg)
		}
	}
	ends := false
	hosts := hostsEnding(inv, e)
	switch {
	case ordered(p) && (len(settling) > 0 || len(hosts) > 0):
		// The done events the step raised, the parallel states' inside
		// regions among them, in the order SCXML raised them.
		take = append(take, macroLoop(p))
		ends = hostsMayEnd(p)
	case len(settling) > 0:
		take = append(take, settleLoop(settling))
		ends = hostsMayEnd(p) // see regionRule
	}
	for _, q := range hosts {
		if ordered(p) {
			ends = ends || hostEnds(q) // taken in macroOn
			continue
		}
		// The done transitions of the parallel states inside regions
		// whose last region the step may end, in document order.
		take = append(take, g.hostCompletion(q, nil)...)
		ends = ends || hostEnds(q)
	}
	if ends || slices.ContainsFunc(inv, func(reg *fsm.Region) bool { return endsOn(reg, e) }) {
		// Some region may have entered its final state: the last one
		// completes the parallel state. When only the regions' own rules
		// can have ended one (no done transition inside them that may),
		// the parallel state's done event is raised only in a step that
		// took one of those: a step of other rules (one without a target,
		// say) leaves a parallel state resting with every region final
		// at rest. So it is where the regions' eventless rules may have
		// ended one too, unless every region was final before the step
		// (a region in a final state takes no eventless rule).
		own := !ends && len(hosts) == 0 && len(settling) == 0
		var was jen.Code
		if !ends && len(hosts) == 0 && len(settling) > 0 && !ordered(p) && p.RestsFinal() {
			own, was = true, jen.Id("wasFinal")
			take = slices.Insert(take, 0, jen.Code(jen.Id("wasFinal").Op(":=").Add(allFinal(p, nil))))
		}
		take = append(take, g.completionOf(p, nil, func(q *fsm.State) jen.Code {
			took := tookEnding(q, inv, e)
			switch {
			case q == p && was != nil && len(took) == 0:
				return jen.Op("!").Add(was)
			case q == p && was != nil:
				return jen.Parens(jen.Add(anyOf(took)).Op("||").Op("!").Add(was))
			case len(took) == 0:
				return nil
			case len(took) == 1:
				return took[0]
			}
			return jen.Parens(anyOf(took))
		}, own))
	}
	if moves || !ignores {
		take = append(take, jen.Return(core().Dot("Finish").Call()))
	}
	if some != nil {
		out = append(out, jen.If(some).Block(take...))
	}
	return g.regionsTail(out, at, picked, leaving, from, inv, e, held)
}

// picks returns the locals that hold the rules regions regs picked, in
// order: tPlayback, tVolume.
func picks(regs []*fsm.Region) []jen.Code {
	var out []jen.Code
	for _, reg := range regs {
		out = append(out, jen.Id(local("t", reg)))
	}
	return out
}

// regionsTail ends regionsTogether's code out: a deferral when held, and
// the rules that leave the parallel state (see leavingFirst).
func (g *goGen) regionsTail(out []jen.Code, at, picked int, leaving []*fsm.Rule, from, inv []*fsm.Region, e *fsm.Event, held bool) []jen.Code {
	if held {
		// No region takes the event, and one defers it: a transition
		// takes precedence over a deferral (UML 2.5.1 §14.2.3.9).
		out = append(out, jen.If(jen.Id("held").Op(">=").Lit(0)).Block(jen.Return(jen.Id("m").Dot("push").Call(jen.Id("held"), jen.Id("ev")))))
	}
	// When no region has a rule, the event goes on to the parallel
	// state's own.
	return g.leavingFirst(out, at, picked, leaving, from, inv, e)
}

// leavingFirst inserts into out, regionsTogether's code, the local left at
// at and, at picked, after the regions' picks, the rules leaving (of the
// regions from, of inv, for e): where a region's chain stopped at a
// branch that leaves the parallel state and no region before it took a
// transition with a target, the parallel state's rule for the branch,
// before the regions' rules with a target, which it drops (SCXML 1.0
// §3.13, removeConflictingTransitions), and with those without one,
// which it takes beside it (see parbeside.go).
func (g *goGen) leavingFirst(out []jen.Code, at, picked int, leaving []*fsm.Rule, from, inv []*fsm.Region, e *fsm.Event) []jen.Code {
	if len(leaving) == 0 {
		return out
	}
	var cases []jen.Code
	for i, r := range leaving {
		g.beside = newBeside(g, r, from[i], inv, e)
		cases = append(cases, jen.Case(jen.Lit(r.Index)).Block(append([]jen.Code{comment("", r.Label)}, g.ruleBody(r)...)...))
		g.beside = nil
	}
	out = slices.Insert(out, picked, jen.Code(jen.Switch(jen.Id("left")).Block(cases...)))
	return slices.Insert(out, at, jen.Code(jen.Id("left").Op(":=").Lit(-1)))
}

// ruleSwitch emits a switch over the rule region reg picked for e, with
// a case for each rule body gives code for; nothing when it gives none.
func (g *goGen) ruleSwitch(reg *fsm.Region, e *fsm.Event, body func(*fsm.Rule) []jen.Code) []jen.Code {
	cells, _ := regionCells(reg, e)
	var cases []jen.Code
	seen := map[*fsm.Rule]bool{}
	var walk func(c *fsm.Cell)
	walk = func(c *fsm.Cell) {
		for ; c != nil && !c.Out(); c = c.Fallback {
			for _, r := range withVariants(c.Rules) {
				if seen[r] {
					continue
				}
				seen[r] = true
				if b := body(r); len(b) > 0 {
					cases = append(cases, jen.Case(jen.Lit(r.Index)).Block(append([]jen.Code{comment("", r.Label)}, b...)...))
				}
			}
		}
	}
	for _, c := range cells {
		walk(c)
	}
	if len(cases) == 0 {
		return nil
	}
	return []jen.Code{jen.Switch(jen.Id(local("t", reg))).Block(cases...)}
}

// leadTest is the test under which a branch of region reg's chain for e
// that leaves the parallel state (Rule.Leaves) is taken: no region of inv
// picked before reg took a transition with a target or stopped at such a
// branch (a rule without a target, an ignore or a deferral conflicts with
// none); nil when none may. It says what of a region's the test lets
// through: "an ignore", "a rule without a target", or "".
//
//	if tPump < 0 { left = 5 }
func leadTest(inv []*fsm.Region, reg *fsm.Region, e *fsm.Event) (jen.Code, string) {
	var tests []*jen.Statement
	leaves, lets := false, ""
	for _, o := range fsm.PickOrder(inv) {
		if o == reg {
			break
		}
		var moves bool
		var ignores []*jen.Statement
		let := "" // what of o's ignores lets through
		cells, _ := regionCells(o, e)
		for _, c := range cells {
			for ; c != nil && !c.Out(); c = c.Fallback {
				for _, r := range withVariants(c.Rules) {
					switch {
					case r.Leaves != nil:
						leaves = true
					case r.Kind == fsm.Transition && r.To != nil:
						moves = true
					case r.Kind == fsm.Transition:
						ignores = append(ignores, jen.Id(local("t", o)).Op("==").Lit(r.Index))
						let = "a rule without a target"
					case r.Kind == fsm.Ignore:
						ignores = append(ignores, jen.Id(local("t", o)).Op("==").Lit(r.Index))
						if let == "" {
							let = "an ignore"
						}
					}
				}
			}
		}
		if !moves {
			continue
		}
		none := jen.Id(local("t", o)).Op("<").Lit(0)
		if len(ignores) > 0 {
			none = jen.Parens(anyOf(append([]*jen.Statement{none}, ignores...)))
			if lets == "" || let == "a rule without a target" {
				lets = let
			}
		}
		tests = append(tests, none)
	}
	if leaves {
		tests = append([]*jen.Statement{jen.Id("left").Op("<").Lit(0)}, tests...)
	}
	return allOf(tests), lets
}

func reversed(regs []*fsm.Region) []*fsm.Region {
	out := make([]*fsm.Region, len(regs))
	for i, r := range regs {
		out[len(regs)-1-i] = r
	}
	return out
}

// readsFrom reports whether a rule of region reg for e runs an exit or
// entry only from some of its states, which tests the leaf it leaves.
func (g *goGen) readsFrom(reg *fsm.Region, e *fsm.Event) bool {
	cells, _ := regionCells(reg, e)
	for _, c := range cells {
		for ; c != nil && !c.Out(); c = c.Fallback {
			for _, r := range withVariants(c.Rules) {
				for _, run := range append(append([]*fsm.Run{}, r.Exits...), r.Entries...) {
					if g.readsLeaf(run) {
						return true
					}
				}
			}
		}
	}
	return false
}

// tookEnding returns the tests that the rule a region of q among inv
// picked for e (its local t) enters a final leaf of it, one per such
// rule (any of them tells): none when no rule may.
func tookEnding(q *fsm.State, inv []*fsm.Region, e *fsm.Event) []*jen.Statement {
	var tests []*jen.Statement
	seen := map[*fsm.Rule]bool{} // (a fallback's rules may be in several chains)
	for _, reg := range inv {
		if !slices.Contains(q.Regions, reg) {
			continue
		}
		cells, _ := regionCells(reg, e)
		for _, c := range cells {
			for ; c != nil && !c.Out(); c = c.Fallback {
				for _, r := range withVariants(c.Rules) {
					if r.Kind != fsm.Transition || r.To == nil || !r.To.Ends() || seen[r] {
						continue
					}
					seen[r] = true
					tests = append(tests, jen.Id(local("t", reg)).Op("==").Lit(r.Index))
				}
			}
		}
	}
	return tests
}

// orNil returns test as a jen.Code, nil when it is nil.
func orNil(test *jen.Statement) jen.Code {
	if test == nil {
		return nil
	}
	return test
}
