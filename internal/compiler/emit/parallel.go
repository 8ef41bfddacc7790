package emit

import (
	"fmt"
	"slices"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// This file emits what parallel states add to the machine (see
// internal/compiler/fsm/parallel.go): the machine keeps, beside its
// current state, the leaf each region is in (m.rgn); a parallel state's
// value names them; entering a parallel state enters every region, and
// leaving it leaves them; an event the machine receives in a parallel
// state is offered to its regions first, region by region in document
// order, and only when none has a rule for it to the parallel state's own
// rules (SCXML 1.0 §3.13: a descendant's transition preempts its
// ancestor's).

// rgn is the slot of region reg: m.rgn[i].
func rgn(reg *fsm.Region) *jen.Statement {
	return jen.Id("m").Dot("rgn").Index(jen.Lit(reg.Index))
}

// kindDecls returns the declarations whose kinds the machine numbers: the
// states (its leaves, then the leaves of its regions), events or actions.
func kindDecls(m *fsm.Machine, what string) []*fsm.Decl {
	ds := decls(m, what)
	if what == "state" {
		for _, s := range m.RegionLeaves() {
			ds = append(ds, &s.Decl)
		}
	}
	return ds
}

// parallelOf returns the state a state declaration declares when it is a
// parallel state; nil otherwise.
func (g *goGen) parallelOf(d *fsm.Decl) *fsm.State {
	for _, s := range g.m.States {
		if &s.Decl == d && s.Regions != nil {
			return s
		}
	}
	return nil
}

// leafNames lists the names of a region's leaves.
func leafNames(reg *fsm.Region) string {
	var names []string
	for _, s := range restingLeaves(reg) {
		names = append(names, s.Name)
	}
	return list(names)
}

// restingLeaves returns the leaves of region reg it may rest in: not its
// transient states, which it leaves in the step that enters them (a state
// that waits rests there until a guard of its eventless rules holds).
func restingLeaves(reg *fsm.Region) []*fsm.State {
	return slices.DeleteFunc(slices.Clone(reg.Leaves), func(s *fsm.State) bool { return s.Eventless() && !s.Waits })
}

// regionFields returns the fields a parallel state's type has for its
// regions, after its own:
//
//	// Playback is the state region Playback is in: one of Stopped, Playing and Paused.
//	Playback StateKind `json:"playback"`
func (g *goGen) regionFields(d *fsm.Decl) []jen.Code {
	p := g.parallelOf(d)
	if p == nil {
		return nil
	}
	var out []jen.Code
	for _, reg := range p.Flat {
		doc := fmt.Sprintf("%s is the state region %s is in: one of %s.", reg.Field, reg.Root.Name, leafNames(reg))
		if rest := restingLeaves(reg); len(rest) == 1 {
			doc = fmt.Sprintf("%s is the state region %s is in: %s.", reg.Field, reg.Root.Name, rest[0].Name)
		}
		tag := reg.JSON
		if reg.Host != nil {
			// Zero, and not saved, while its parallel state is not active.
			doc, tag = hostedDoc(reg), tag+",omitempty"
		}
		out = append(out, jen.Add(comment("", doc)).Line().Id(reg.Field).Id("StateKind").Tag(map[string]string{"json": tag}))
	}
	return out
}

// regionMachineField returns the Machine's field for the regions' leaves.
func (g *goGen) regionMachineField() []jen.Code {
	if !g.m.Regional() {
		return nil
	}
	out := []jen.Code{
		jen.Comment("// rgn holds, while the machine is in a parallel state, the leaf each of its"),
		jen.Comment("// regions is in (see Region)."),
		jen.Id("rgn").Index(jen.Lit(len(g.m.Regions))).Id("StateKind"),
	}
	composite, hosted := slices.ContainsFunc(g.m.Regions, restsIn), slices.ContainsFunc(g.m.Regions, hostRests)
	if composite || hosted {
		var doc []jen.Code
		switch {
		case !hosted:
			doc = []jen.Code{
				jen.Comment("// doneRaised is set, within a step, for a region that entered a final state whose"),
				jen.Comment("// composite state's done transition is still to be tested; false at rest."),
			}
		case !composite:
			doc = []jen.Code{
				jen.Comment("// doneRaised is set, within a step, for a region in a parallel state whose regions"),
				jen.Comment("// the step made all final, whose done transition is still to be tested; false at rest."),
			}
		default:
			doc = []jen.Code{
				jen.Comment("// doneRaised is set, within a step, for a region that entered a final state whose"),
				jen.Comment("// composite state's done transition is still to be tested, or that is in a parallel"),
				jen.Comment("// state whose regions the step made all final, whose done transition is; false at rest."),
			}
		}
		out = append(append(out, doc...), jen.Id("doneRaised").Index(jen.Lit(len(g.m.Regions))).Bool())
	}
	return out
}

// regionValues returns the members of a parallel state's value that name
// its regions' leaves: Playback: m.rgn[0].
func regionValues(s *fsm.State) []jen.Code {
	var out []jen.Code
	for _, reg := range s.Flat {
		out = append(out, kv(reg.Field, rgn(reg)))
	}
	return out
}

// regionPut returns what put does for a parallel state's value: it
// checks that each region names one of its leaves, and keeps them.
//
//	if s.Playback < StateStopped || s.Playback > StatePaused {
//		return nil, fmt.Errorf("player: cannot restore On: its region Playback is in %s, not one of Stopped, Playing and Paused", fsmrt.InState(s.Playback))
//	}
//	m.rgn[0] = s.Playback
func (g *goGen) regionPut(s *fsm.State) []jen.Code {
	var out []jen.Code
	for _, reg := range s.Flat {
		if reg.Host != nil {
			out = append(out, g.hostedPut(s, reg)...)
			out = append(out, g.restlessPut(s, reg)...)
			if q := hostedDone(reg); q != nil && reg == q.Regions[len(q.Regions)-1] && !q.RestsFinal() {
				out = append(out, g.hostedPutDone(s, q)...)
			}
			continue
		}
		v := jen.Id("s").Dot(reg.Field)
		first, last := reg.Leaves[0], reg.Leaves[len(reg.Leaves)-1]
		msg := fmt.Sprintf("%s: cannot restore %s: its region %s is in %%s, not one of %s", g.m.Package, s.Name, reg.Root.Name, leafNames(reg))
		out = append(out,
			jen.If(v.Clone().Op("<").Id(first.KindName).Op("||").Add(v.Clone()).Op(">").Id(last.KindName)).Block(
				jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit(msg), jen.Qual(pkgFsmrt, "InState").Call(v.Clone())))),
			rgn(reg).Op("=").Add(v.Clone()))
		out = append(out, g.restlessPut(s, reg)...)
	}
	if s.Completion != nil && !s.RestsFinal() {
		// Every region final: the done transition was taken in the step
		// that made the last one final, so the machine never rests so.
		msg := fmt.Sprintf("%s: cannot restore %s: every region is in a final state, in which %s takes its done transition at once: the machine never rests there", g.m.Package, s.Name, s.Name)
		out = append(out, jen.If(allFinal(s, nil)).Block(jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit(msg)))))
	}
	for _, q := range s.Nested() {
		if q.Completion == nil || q.RestsFinal() {
			continue // (one that may rest so is restored so)
		}
		// Its done transition, which always leaves s, was taken in the
		// step that made the last of its regions final.
		msg := fmt.Sprintf("%s: cannot restore %s: every region of %s is in a final state, in which %s takes its done transition at once: the machine never rests there", g.m.Package, s.Name, q.Name, q.Name)
		out = append(out, jen.If(allFinal(q, nil)).Block(jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit(msg)))))
	}
	return out
}

// restlessPut returns what put checks of region reg of parallel state s
// besides its range: it is in no leaf the machine never rests in, a
// transient state or a final state whose composite state takes its done
// transition at once.
func (g *goGen) restlessPut(s *fsm.State, reg *fsm.Region) []jen.Code {
	var out []jen.Code
	v := jen.Id("s").Dot(reg.Field)
	name := "its region " + reg.Root.Name
	if reg.Host != nil {
		name = "region " + reg.Root.Name + " of " + reg.Within.Name
	}
	var settlings, transients []*jen.Statement
	for _, l := range reg.Leaves {
		switch {
		case l.Eventless() && !l.Waits:
			transients = append(transients, v.Clone().Op("==").Id(l.KindName))
		case l.Settles() && !l.Rests(): // (one that may rest is a leaf as any other)
			settlings = append(settlings, v.Clone().Op("==").Id(l.KindName))
		}
	}
	settling, transient := anyOf(settlings), anyOf(transients)
	if transient != nil {
		// A transient state is left in the step that enters it.
		msg := fmt.Sprintf("%s: cannot restore %s: %s is in %%v, a transient state: the machine never rests there", g.m.Package, s.Name, name)
		out = append(out, jen.If(transient).Block(jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit(msg), v.Clone()))))
	}
	if settling != nil {
		// A final state whose composite state has a done transition
		// is left in the step that enters it.
		msg := fmt.Sprintf("%s: cannot restore %s: %s is in %%v, a final state whose composite state takes its done transition at once: the machine never rests there", g.m.Package, s.Name, name)
		out = append(out, jen.If(settling).Block(jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit(msg), v.Clone()))))
	}
	return out
}

// genKindText emits, for a machine with parallel states, the text
// encoding of StateKind, with which a parallel state's value names the
// leaves of its regions in JSON: {"kind": "on", "playback": "playing"}.
func (g *goGen) genKindText() {
	if !g.m.Regional() {
		return
	}
	var snakes []string
	var was []jen.Code
	for _, d := range kindDecls(g.m, "state") {
		snakes = append(snakes, d.Snake)
		for _, old := range d.RenamedFrom {
			was = append(was, jen.Lit(fsm.SnakeName(old)).Op(":").Id(d.KindName))
		}
	}
	g.f.Comment("// MarshalText encodes the kind as its state's JSON kind (\"playing\"): the value")
	g.f.Comment("// of a parallel state names the states of its regions so.")
	g.f.Func().Params(jen.Id("k").Id("StateKind")).Id("MarshalText").Params().Params(jen.Index().Byte(), jen.Error()).Block(
		jen.If(jen.Id("k").Op("==").Lit(0).Op("||").Int().Call(jen.Id("k")).Op(">").Len(jen.Id("fsmStateKinds"))).Block(
			jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit(g.m.Package+": no state has kind %d"), jen.Id("k")))),
		jen.Return(jen.Index().Byte().Call(jen.Id("fsmStateKinds").Index(jen.Id("k").Op("-").Lit(1))), jen.Nil()))
	body := []jen.Code{
		jen.For(jen.List(jen.Id("i"), jen.Id("name")).Op(":=").Range().Id("fsmStateKinds")).Block(
			jen.If(jen.Id("name").Op("==").String().Call(jen.Id("text"))).Block(
				jen.Op("*").Id("k").Op("=").Id("StateKind").Call(jen.Id("i").Op("+").Lit(1)),
				jen.Return(jen.Nil()))),
	}
	doc := "// UnmarshalText decodes a kind MarshalText encoded."
	if len(was) > 0 {
		doc = "// UnmarshalText decodes a kind MarshalText encoded, or the kind a state had\n// before it was renamed (renamed_from)."
		body = append(body, jen.If(jen.List(jen.Id("now"), jen.Id("ok")).Op(":=").Id("fsmStateKindsWas").Index(jen.String().Call(jen.Id("text"))), jen.Id("ok")).Block(
			jen.Op("*").Id("k").Op("=").Id("now"),
			jen.Return(jen.Nil())))
	}
	body = append(body, jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit(g.m.Package+": unknown state %q"), jen.Id("text"))))
	g.f.Comment(doc)
	g.f.Func().Params(jen.Id("k").Op("*").Id("StateKind")).Id("UnmarshalText").Params(jen.Id("text").Index().Byte()).Error().Block(body...)
	g.f.Comment("// fsmStateKinds are the JSON kinds of the states, in kind order.")
	g.f.Var().Id("fsmStateKinds").Op("=").Index(jen.Op("...")).String().ValuesFunc(filled(snakes))
	if len(was) > 0 {
		g.f.Comment("// fsmStateKindsWas are the kinds of the states by their JSON kinds before")
		g.f.Comment("// they were renamed.")
		g.f.Var().Id("fsmStateKindsWas").Op("=").Map(jen.String()).Id("StateKind").ValuesFunc(table(was))
	}
}

// regionEnter returns what entering parallel state s by run computes
// (each region starts in its initial leaf) and hands out (the entries of
// each region, in document order, after s's own). For a rule into a state
// inside one of s's regions (Run.Into; SCXML 1.0 §3.13, enterStates),
// that region enters the target's ancestors inside it down to the leaf it
// is entered in instead (Run.IntoLeaf).
//
// A parallel state inside a region that a region enters (first, or on
// the way to the target) is entered after its entry, its regions so in
// turn; the other regions of parallel states inside s's regions are in
// no state (zero).
//
//	m.rgn[0] = StatePlaying
//	m.rgn[1] = StateNormal
//	m.rgn[2] = 0
//	m.h.StartAudio()
//	<Playing's timer started>
//	m.h.Normalised()
func (g *goGen) regionEnter(s *fsm.State, run *fsm.Run) (compute, acts []jen.Code) {
	set := map[*fsm.Region]bool{}
	var enter func(s *fsm.State)
	enter = func(s *fsm.State) {
		for _, reg := range s.Regions {
			set[reg] = true
			leaf, runs := reg.Initial, reg.Start
			into := run.IntoLeaf(reg)
			if into != nil {
				leaf, runs = into, into.Enter
			}
			compute = append(compute, rgn(reg).Op("=").Id(leaf.KindName))
			if into != nil {
				// A final state the region may rest in: the step raised
				// its done event, which it tests once.
				compute = append(compute, raiseDone(reg, into)...)
			}
			for _, x := range runs {
				acts = append(acts, g.inlineRun(x)...)
				switch {
				case hosting(x) && run.IntoResume != nil && x.State == run.Into:
					// Resumed by a deep history (fsm.Run.IntoResume).
					c, a := g.regionResume(x.State, run.IntoResume)
					compute, acts = append(compute, c...), append(acts, a...)
					for _, in := range x.State.Regions {
						set[in] = true
					}
				case hosting(x):
					enter(x.State)
				}
			}
		}
	}
	enter(s)
	for _, reg := range s.Flat {
		if !set[reg] && s.Region == nil {
			compute = append(compute, rgn(reg).Op("=").Lit(0))
		}
	}
	return compute, acts
}

// leftName names the local that keeps the leaves of the regions of
// parallel state s that a rule leaves: leftOn.
func leftName(s *fsm.State) string { return "left" + s.GoName }

// regionLeave returns what leaving parallel state s computes (it keeps
// the regions' leaves, which entries may change) and hands out: the exits
// of every region, in reverse document order (SCXML 1.0 §3.13, exitStates),
// each innermost first, before s's own.
//
// when is, for a rule that leaves s only from some of its states, the test
// that it does: the exits' effects run under it.
func (g *goGen) regionLeave(s *fsm.State, when jen.Code) (compute, acts []jen.Code) {
	if !g.regionExits(s) {
		return nil, nil
	}
	// Left by its own done transition, every region is in a final state
	// right inside it: only those exits can run.
	done := g.completing == s && !slices.ContainsFunc(s.Regions, func(reg *fsm.Region) bool { return len(reg.GroupExits()) > 0 })
	// The regions' leaves are read only where an exit depends on them (a
	// leaf's, or a composite state's below a region's own state): a
	// variable no exit reads would not compile.
	if (done && slices.ContainsFunc(s.Regions, g.finalExitsVary)) || (!done && slices.ContainsFunc(s.Regions, g.leafExits)) {
		compute = append(compute, jen.Id(leftName(s)).Op(":=").Id("m").Dot("rgn"))
	}
	decls, body := g.leaveCompute(s, leftName(s))
	compute = append(compute, decls...)
	if when != nil && len(body) > 0 {
		body = []jen.Code{jen.If(when).Block(body...)}
	}
	compute = append(compute, body...)
	for i := len(s.Regions) - 1; i >= 0; i-- {
		if done {
			acts = append(acts, g.leaveFinal(s.Regions[i], leftName(s))...)
		} else {
			acts = append(acts, g.leaveRegion(s.Regions[i], leftName(s))...)
		}
	}
	return compute, acts
}

// finalExitsVary reports whether region reg, resting in a final state,
// leaves it with exits that depend on which: it has several, one with an
// exit.
func (g *goGen) finalExitsVary(reg *fsm.Region) bool {
	return len(reg.Finals) > 1 && slices.ContainsFunc(reg.Finals, func(f *fsm.State) bool { return len(g.leaveState(f)) > 0 })
}

// leaveFinal returns the exits of region reg, resting in one of its final
// states (its parallel state's done transition leaves it): that state's,
// chosen by the slot of reg in the local left when it has several, then
// the region's own state's.
func (g *goGen) leaveFinal(reg *fsm.Region, left string) []jen.Code {
	var out []jen.Code
	if g.finalExitsVary(reg) {
		var cases []jen.Code
		for _, f := range reg.Finals {
			if x := g.leaveState(f); len(x) > 0 {
				cases = append(cases, jen.Case(jen.Id(f.KindName)).Block(x...))
			}
		}
		out = append(out, jen.Switch(jen.Id(left).Index(jen.Lit(reg.Index))).Block(cases...))
	} else if len(reg.Finals) == 1 {
		out = append(out, g.leaveState(reg.Finals[0])...)
	}
	if slices.Contains(reg.Composites, reg.Root) {
		out = append(out, g.leaveState(reg.Root)...)
	}
	return out
}

// regionExits reports whether some state of a region of s has an exit.
func (g *goGen) regionExits(s *fsm.State) bool {
	return slices.ContainsFunc(s.Regions, func(reg *fsm.Region) bool { return g.exitsIn(reg, nil) })
}

// leafExits reports whether the exits of region reg depend on its leaf:
// a leaf of it that it may be in (see leavesOf), or a composite state
// other than its own state, has one.
func (g *goGen) leafExits(reg *fsm.Region) bool { return g.exitsIn(reg, reg.Root) }

// exitsIn reports whether a state of region reg other than except has an
// exit, or a timer, which its exit cancels: of its leaves, those it may
// be in (see leavesOf), a parallel state among them when its regions
// have one, and its composite states. With except nil, the exit of a
// parallel state nested as a region counts too, after reg's.
func (g *goGen) exitsIn(reg *fsm.Region, except *fsm.State) bool {
	has := func(t *fsm.State) bool {
		inner := t.Regions != nil && slices.ContainsFunc(t.Regions, func(o *fsm.Region) bool { return g.exitsIn(o, nil) })
		return (t.Exit != nil || len(t.Timers) > 0 || inner) && t != except
	}
	if except == nil && len(reg.GroupExits()) > 0 {
		return true
	}
	return slices.ContainsFunc(g.leavesOf(reg), has) || slices.ContainsFunc(reg.Composites, has)
}

// leavesOf returns the leaves region reg may be in as the rule being
// emitted leaves its parallel state: while a rule that leaves from
// inside a region is (g.leaving), for the region that holds its source
// those inside the source, or the parallel state inside the region that
// holds it; every leaf otherwise.
func (g *goGen) leavesOf(reg *fsm.Region) []*fsm.State {
	src := g.leaving
	if src == nil {
		return reg.Leaves
	}
	related := func(l *fsm.State) bool { return l == src || src.Contains(l) || l.Contains(src) }
	if !slices.ContainsFunc(reg.Leaves, related) {
		return reg.Leaves
	}
	return slices.DeleteFunc(slices.Clone(reg.Leaves), func(l *fsm.State) bool { return !related(l) })
}

// leaveRegion returns the exits of region reg, whose leaf is k, the slot
// of reg in the local left, innermost first:
//
//	switch k {
//	case StatePlaying:
//		m.h.StopAudio()
//	}
//	if k >= StateA && k <= StateB { <the exit of the composite state> }
func (g *goGen) leaveRegion(reg *fsm.Region, left string) []jen.Code {
	k := jen.Id(left).Index(jen.Lit(reg.Index))
	var out, cases []jen.Code
	for _, s := range g.leavesOf(reg) {
		var x []jen.Code
		for i := len(s.Regions) - 1; i >= 0; i-- {
			// A parallel state inside the region: its regions first.
			x = append(x, g.leaveRegion(s.Regions[i], left)...)
		}
		if x = append(x, g.leaveState(s)...); len(x) > 0 {
			cases = append(cases, jen.Case(jen.Id(s.KindName)).Block(x...))
		}
	}
	if len(cases) > 0 {
		out = append(out, jen.Switch(k.Clone()).Block(cases...))
	}
	comps := append([]*fsm.State{}, reg.Composites...)
	for i := len(comps) - 1; i >= 0; i-- { // depth first: inner composites after outer
		c := comps[i]
		x := g.leaveState(c)
		if len(x) == 0 {
			continue
		}
		if c == reg.Root {
			out = append(out, x...)
			continue
		}
		out = append(out, jen.If(within(k.Clone(), c)).Block(x...))
	}
	for _, grp := range reg.GroupExits() {
		// The parallel states nested as regions, left after their regions.
		if acts := g.leaveActs(grp); acts != nil {
			out = append(out, acts...)
			continue
		}
		out = append(out, hookCalls(grp.Exit)...)
	}
	return out
}

// leaveState returns what leaving state s of a region hands out: its
// running timers cancelled, then its exit's actions.
func (g *goGen) leaveState(s *fsm.State) []jen.Code {
	if acts := g.leaveActs(s); acts != nil {
		return acts
	}
	out := g.cancelRegionTimers(s)
	if s.Exit != nil {
		out = append(out, hookCalls(s.Exit)...)
	}
	return out
}

// hookCalls hands out the actions of an entry or exit that has no
// effect: m.h.StopAudio().
func hookCalls(h *fsm.Hook) []jen.Code {
	var out []jen.Code
	for _, a := range h.Actions {
		out = append(out, jen.Id("m").Dot("h").Dot(a.GoName).Call())
	}
	return out
}

// regionRun returns what a run of a parallel state adds for its regions:
// what it computes (compute) or what it hands out.
func (g *goGen) regionRun(run *fsm.Run, from jen.Code, compute bool) []jen.Code {
	var c, a []jen.Code
	switch {
	case run.Entry && run.Resume != nil:
		c, a = g.regionResume(run.State, run.Resume)
	case run.Entry:
		c, a = g.regionEnter(run.State, run)
	default:
		var when jen.Code
		if run.When != nil {
			when = within(from, run.When)
		}
		c, a = g.regionLeave(run.State, when)
	}
	if compute {
		return c
	}
	return a
}
