package emit

import (
	"fmt"
	"strings"

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
	for _, s := range reg.Leaves {
		names = append(names, s.Name)
	}
	return list(names)
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
	for _, reg := range p.Regions {
		doc := fmt.Sprintf("%s is the state region %s is in: one of %s.", reg.Field, reg.Root.Name, leafNames(reg))
		if len(reg.Leaves) == 1 {
			doc = fmt.Sprintf("%s is the state region %s is in: %s.", reg.Field, reg.Root.Name, reg.Leaves[0].Name)
		}
		out = append(out, jen.Add(comment("", doc)).Line().Id(reg.Field).Id("StateKind").Tag(map[string]string{"json": reg.JSON}))
	}
	return out
}

// regionMachineField returns the Machine's field for the regions' leaves.
func (g *goGen) regionMachineField() []jen.Code {
	if !g.m.Regional() {
		return nil
	}
	return []jen.Code{
		jen.Comment("// rgn holds, while the machine is in a parallel state, the leaf each of its"),
		jen.Comment("// regions is in (see Region)."),
		jen.Id("rgn").Index(jen.Lit(len(g.m.Regions))).Id("StateKind"),
	}
}

// regionValues returns the members of a parallel state's value that name
// its regions' leaves: Playback: m.rgn[0].
func regionValues(s *fsm.State) []jen.Code {
	var out []jen.Code
	for _, reg := range s.Regions {
		out = append(out, kv(reg.Field, rgn(reg)))
	}
	return out
}

// regionPut returns what put does for a parallel state's value: it
// checks that each region names one of its leaves, and keeps them.
//
//	if s.Playback < StateStopped || s.Playback > StatePaused {
//		return nil, fmt.Errorf("player: cannot restore On: its region Playback is in %v, not one of its states", s.Playback)
//	}
//	m.rgn[0] = s.Playback
func (g *goGen) regionPut(s *fsm.State) []jen.Code {
	var out []jen.Code
	for _, reg := range s.Regions {
		v := jen.Id("s").Dot(reg.Field)
		first, last := reg.Leaves[0], reg.Leaves[len(reg.Leaves)-1]
		msg := fmt.Sprintf("%s: cannot restore %s: its region %s is in %%v, not one of %s", g.m.Package, s.Name, reg.Root.Name, leafNames(reg))
		out = append(out,
			jen.If(v.Clone().Op("<").Id(first.KindName).Op("||").Add(v.Clone()).Op(">").Id(last.KindName)).Block(
				jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit(msg), v.Clone()))),
			rgn(reg).Op("=").Add(v.Clone()))
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
	for _, d := range kindDecls(g.m, "state") {
		snakes = append(snakes, d.Snake)
	}
	g.f.Comment("// MarshalText encodes the kind as its state's JSON kind (\"playing\"): the value")
	g.f.Comment("// of a parallel state names the states of its regions so.")
	g.f.Func().Params(jen.Id("k").Id("StateKind")).Id("MarshalText").Params().Params(jen.Index().Byte(), jen.Error()).Block(
		jen.If(jen.Id("k").Op("==").Lit(0).Op("||").Int().Call(jen.Id("k")).Op(">").Len(jen.Id("fsmStateKinds"))).Block(
			jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit(g.m.Package+": no state has kind %d"), jen.Id("k")))),
		jen.Return(jen.Index().Byte().Call(jen.Id("fsmStateKinds").Index(jen.Id("k").Op("-").Lit(1))), jen.Nil()))
	g.f.Comment("// UnmarshalText decodes a kind MarshalText encoded.")
	g.f.Func().Params(jen.Id("k").Op("*").Id("StateKind")).Id("UnmarshalText").Params(jen.Id("text").Index().Byte()).Error().Block(
		jen.For(jen.List(jen.Id("i"), jen.Id("name")).Op(":=").Range().Id("fsmStateKinds")).Block(
			jen.If(jen.Id("name").Op("==").String().Call(jen.Id("text"))).Block(
				jen.Op("*").Id("k").Op("=").Id("StateKind").Call(jen.Id("i").Op("+").Lit(1)),
				jen.Return(jen.Nil()))),
		jen.Return(jen.Qual("fmt", "Errorf").Call(jen.Lit(g.m.Package+": unknown state %q"), jen.Id("text"))))
	g.f.Comment("// fsmStateKinds are the JSON kinds of the states, in kind order.")
	g.f.Var().Id("fsmStateKinds").Op("=").Index(jen.Op("...")).String().ValuesFunc(filled(snakes))
}

// regionEnter returns what entering parallel state s computes (each
// region starts in its initial leaf) and hands out (the entries of each
// region, in document order, after s's own).
func (g *goGen) regionEnter(s *fsm.State) (compute, acts []jen.Code) {
	for _, reg := range s.Regions {
		compute = append(compute, rgn(reg).Op("=").Id(reg.Initial.KindName))
		for _, run := range reg.Start {
			for _, e := range run.Actions {
				acts = append(acts, g.emitAction(e)...)
			}
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
func (g *goGen) regionLeave(s *fsm.State) (compute, acts []jen.Code) {
	if !g.regionExits(s) {
		return nil, nil
	}
	compute = append(compute, jen.Id(leftName(s)).Op(":=").Id("m").Dot("rgn"))
	for i := len(s.Regions) - 1; i >= 0; i-- {
		reg := s.Regions[i]
		acts = append(acts, g.leaveRegion(reg, jen.Id(leftName(s)).Index(jen.Lit(reg.Index)))...)
	}
	return compute, acts
}

// regionExits reports whether some state of a region of s has an exit.
func (g *goGen) regionExits(s *fsm.State) bool {
	for _, reg := range s.Regions {
		for _, t := range append(append([]*fsm.State{}, reg.Leaves...), reg.Composites...) {
			if t.Exit != nil {
				return true
			}
		}
	}
	return false
}

// leaveRegion returns the exits of region reg, whose leaf is k, innermost
// first:
//
//	switch k {
//	case StatePlaying:
//		m.h.StopAudio()
//	}
//	if k >= StateA && k <= StateB { <the exit of the composite state> }
func (g *goGen) leaveRegion(reg *fsm.Region, k *jen.Statement) []jen.Code {
	var out, cases []jen.Code
	for _, s := range reg.Leaves {
		if s.Exit != nil {
			cases = append(cases, jen.Case(jen.Id(s.KindName)).Block(hookCalls(s.Exit)...))
		}
	}
	if len(cases) > 0 {
		out = append(out, jen.Switch(k.Clone()).Block(cases...))
	}
	comps := append([]*fsm.State{}, reg.Composites...)
	for i := len(comps) - 1; i >= 0; i-- { // depth first: inner composites after outer
		c := comps[i]
		if c.Exit == nil {
			continue
		}
		if c == reg.Root {
			out = append(out, hookCalls(c.Exit)...)
			continue
		}
		out = append(out, jen.If(within(k.Clone(), c)).Block(hookCalls(c.Exit)...))
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

// regionsMethod names the method that offers an event to the regions of
// parallel state s: regionsOn.
func regionsMethod(s *fsm.State) string { return "regions" + s.GoName }

// involved reports whether some leaf of region reg has a rule of the
// region for e.
func involved(reg *fsm.Region, e *fsm.Event) bool {
	for _, s := range reg.Leaves {
		if c := s.Cell(e); c != nil && !c.Out() {
			return true
		}
	}
	return false
}

// regionCells returns the cells of region reg for e that the region
// resolves itself, each with the leaves that take it, in leaf order.
func regionCells(reg *fsm.Region, e *fsm.Event) ([]*fsm.Cell, map[*fsm.Cell][]*fsm.State) {
	var cells []*fsm.Cell
	leaves := map[*fsm.Cell][]*fsm.State{}
	for _, s := range reg.Leaves {
		c := s.Cell(e)
		if c == nil || c.Out() {
			continue
		}
		if leaves[c] == nil {
			cells = append(cells, c)
		}
		leaves[c] = append(leaves[c], s)
	}
	return cells, leaves
}

// readsEvent reports whether a cell, or one it falls back to, reads its
// event.
func readsEvent(c *fsm.Cell) bool {
	for ; c != nil; c = c.Fallback {
		if c.ReadsEvent {
			return true
		}
	}
	return false
}

// genRegions emits, for each parallel state, the method that offers an
// event to its regions, region by region in document order:
//
//	func (m *Machine) regionsOn(ev Event) error {
//		switch ev := ev.(type) {
//		case *Play: // one region has rules for Play
//			switch m.rgn[0] {
//			case StateStopped, StatePaused:
//				<the rule>
//			}
//		case *Reset: // several: see regionsTogether
//		case *Power: // no region has rules for Power: On's own
//			<On's rule>
//		}
//		return m.otherwise(ev) // what On ignores or rejects, or leaves to a "*" row
//	}
func (g *goGen) genRegions() {
	if len(g.m.States) <= splitAbove {
		return // HandleEvent holds the regions' rules: see genHandleEvent
	}
	for _, p := range g.m.States {
		if p.Regions == nil {
			continue
		}
		var regions []string
		for _, reg := range p.Regions {
			regions = append(regions, reg.Root.Name)
		}
		g.f.Add(paragraphs(fmt.Sprintf("%s offers ev to the regions of the parallel state %s, %s, in document order; "+
			"the rules of the regions that have one for it are taken as one step (SCXML 1.0 §3.13). When none has, "+
			"%s's own rules decide.", regionsMethod(p), p.Name, list(regions), p.Name)))
		g.f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id(regionsMethod(p)).Params(jen.Id("ev").Id("Event")).Error().Block(
			append(g.regionsDispatch(p), jen.Return(jen.Id("m").Dot("otherwise").Call(jen.Id("ev"))))...)
	}
}

// regionsDispatch returns parallel state p's switch over the events, each
// offered to the regions with rules for it, then to p's own rules (see
// genRegions).
func (g *goGen) regionsDispatch(p *fsm.State) []jen.Code {
	var evCases []jen.Code
	bound := false
	own := map[*fsm.Event]*fsm.Cell{}
	for _, c := range stateCells(p) {
		own[c.Event] = c
	}
	for _, e := range g.m.Events {
		var inv []*fsm.Region
		for _, reg := range p.Regions {
			if involved(reg, e) {
				inv = append(inv, reg)
			}
		}
		c := own[e]
		if len(inv) == 0 && c == nil {
			continue
		}
		var body []jen.Code
		reads := false
		for _, reg := range inv {
			cells, _ := regionCells(reg, e)
			for _, c := range cells {
				reads = reads || readsEvent(c)
			}
		}
		if reads {
			bound = true
			body = append(body, jen.If(jen.Id("ev").Op("==").Nil()).Block(jen.Return(core().Dot("NilEvent").Call(jen.Id("ev")))))
		}
		switch {
		case len(inv) == 1:
			body = append(body, g.regionSwitch(inv[0], e)...)
		case len(inv) > 1:
			body = append(body, g.regionsTogether(inv, e)...)
		}
		// No region has a rule: the parallel state's own (see
		// genHandleEvent).
		switch {
		case c == nil:
		case direct(c) && !g.inline(c):
			bound = true
			body = append(body, jen.Return(jen.Id("m").Dot(takeMethod(c)).Call(jen.Id("ev"))))
		default:
			bound = bound || c.ReadsEvent || c.Fallback != nil
			body = append(body, g.cellBody(c)...)
		}
		evCases = append(evCases, jen.Case(jen.Op("*").Id(e.GoName)).Block(body...))
	}
	if len(evCases) == 0 {
		return nil
	}
	subject := jen.Id("ev").Assert(jen.Type())
	if bound {
		subject = jen.Id("ev").Op(":=").Id("ev").Assert(jen.Type())
	}
	return []jen.Code{jen.Switch(subject).Block(evCases...)}
}

// regionSwitch emits the rules of the one region that has rules for e:
//
//	switch m.rgn[0] {
//	case StateStopped, StatePaused:
//		<the cell's rules, see regionCell>
//	}
func (g *goGen) regionSwitch(reg *fsm.Region, e *fsm.Event) []jen.Code {
	cells, leaves := regionCells(reg, e)
	var cases []jen.Code
	for _, c := range cells {
		var ks []jen.Code
		for _, s := range leaves[c] {
			ks = append(ks, jen.Id(s.KindName))
		}
		cases = append(cases, jen.Case(ks...).Block(g.regionCell(reg, c, func(r *fsm.Rule) []jen.Code { return g.regionRule(reg, r) })...))
	}
	return []jen.Code{jen.Switch(rgn(reg)).Block(cases...)}
}

// regionCell emits the rules of a region's cell through body: one rule,
// or a switch over its guards, then, for a chain without else, the cell
// it falls back to within the region (none: the event goes on to the
// parallel state).
func (g *goGen) regionCell(reg *fsm.Region, c *fsm.Cell, body func(*fsm.Rule) []jen.Code) []jen.Code {
	if len(c.Rules) == 1 && c.Rules[0].Guard == nil {
		return append([]jen.Code{comment("", c.Rules[0].Label)}, body(c.Rules[0])...)
	}
	var cases []jen.Code
	for _, r := range c.Rules {
		b := append([]jen.Code{comment("", r.Label)}, body(r)...)
		if r.Guard == nil {
			cases = append(cases, jen.Default().Block(b...))
			continue
		}
		cases = append(cases, jen.Case(g.guardTest(r)).Block(b...))
	}
	out := []jen.Code{jen.Switch().Block(cases...)}
	if f := c.Fallback; f != nil && !f.Out() {
		out = append(out, jen.Comment("// No guard holds: the rule of "+f.Owner.Name+"."))
		out = append(out, g.regionCell(reg, f, body)...)
	}
	return out
}

// guardTest is the test of a rule's guard: the Behavior's method, or for
// In(State) the test of the state's region.
func (g *goGen) guardTest(r *fsm.Rule) jen.Code {
	if in := r.Guard.In; in != nil {
		return within(rgn(in.Region), in)
	}
	return jen.Id("m").Dot("b").Dot(r.Guard.GoName).Call(g.values(r.GuardArgs)...)
}

// regionFrom is the leaf a region's rule leaves, which its exits and
// entries run from only some states test: its source, or, for a rule of a
// composite state, the region's leaf, read into a local when tested.
func regionFrom(reg *fsm.Region, r *fsm.Rule) (jen.Code, []jen.Code) {
	if !r.From.Composite() {
		return jen.Id(r.From.KindName), nil
	}
	for _, run := range append(append([]*fsm.Run{}, r.Exits...), r.Entries...) {
		if run.When != nil && len(run.Actions) > 0 {
			return jen.Id("from"), []jen.Code{jen.Id("from").Op(":=").Add(rgn(reg))}
		}
	}
	return nil, nil
}

// regionRule emits one rule of a region taken alone:
//
//	m.rgn[0] = StatePlaying
//	m.core.Start(7, StateStopped) // the observer's step: From the region's leaf, To the parallel state
//	m.h.StartAudio()              // exits, the rule's actions, entries
//	return m.core.Finish()
func (g *goGen) regionRule(reg *fsm.Region, r *fsm.Rule) []jen.Code {
	if r.Kind != fsm.Transition {
		return []jen.Code{refusal(r)}
	}
	from, out := regionFrom(reg, r)
	if r.To != nil {
		out = append(out, rgn(reg).Op("=").Id(r.To.KindName))
	}
	out = append(out, core().Dot("Start").Call(jen.Lit(r.Index), jen.Id(reg.Parallel.KindName)))
	out = append(out, g.regionActs(r, from, "exits")...)
	out = append(out, g.regionActs(r, from, "actions")...)
	out = append(out, g.regionActs(r, from, "entries")...)
	return append(out, jen.Return(core().Dot("Finish").Call()))
}

// regionActs emits one part of what a region's rule hands out: its
// exits, its own actions or its entries.
func (g *goGen) regionActs(r *fsm.Rule, from jen.Code, part string) []jen.Code {
	var out []jen.Code
	switch part {
	case "exits":
		for _, run := range r.Exits {
			out = append(out, g.runActions(run, from)...)
		}
	case "actions":
		for _, e := range r.Actions {
			out = append(out, g.emitAction(e)...)
		}
	default:
		for _, run := range r.Entries {
			out = append(out, g.runActions(run, from)...)
		}
	}
	return out
}

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
	ignores := false
	for _, reg := range inv {
		ts = append(ts, jen.Id(local("t", reg)))
		none = append(none, jen.Lit(-1))
		if readsFrom(reg, e) {
			froms = append(froms, jen.Id(local("from", reg)))
			fromVals = append(fromVals, rgn(reg))
		}
	}
	out = append(out, jen.List(ts...).Op(":=").List(none...))
	for _, reg := range inv {
		cells, leaves := regionCells(reg, e)
		var cases []jen.Code
		for _, c := range cells {
			var ks []jen.Code
			for _, s := range leaves[c] {
				ks = append(ks, jen.Id(s.KindName))
			}
			pick := func(r *fsm.Rule) []jen.Code {
				if r.Kind == fsm.Reject {
					return []jen.Code{refusal(r)}
				}
				ignores = ignores || r.Kind == fsm.Ignore
				return []jen.Code{jen.Id(local("t", reg)).Op("=").Lit(r.Index)}
			}
			cases = append(cases, jen.Case(ks...).Block(g.regionCell(reg, c, pick)...))
		}
		out = append(out, jen.Switch(rgn(reg)).Block(cases...))
	}
	var some jen.Code
	for i, reg := range inv {
		test := jen.Id(local("t", reg)).Op(">=").Lit(0)
		if i == 0 {
			some = test
		} else {
			some = jen.Add(some).Op("||").Add(test)
		}
	}
	var take []jen.Code
	if len(froms) > 0 {
		// The leaves the rules leave, which their exits test.
		take = append(take, jen.List(froms...).Op(":=").List(fromVals...))
	}
	// The new leaves and the observer's steps.
	for _, reg := range inv {
		take = append(take, g.ruleSwitch(reg, e, func(r *fsm.Rule) []jen.Code {
			if r.Kind != fsm.Transition {
				return nil
			}
			var c []jen.Code
			if r.To != nil {
				c = append(c, rgn(reg).Op("=").Id(r.To.KindName))
			}
			return append(c, core().Dot("Start").Call(jen.Lit(r.Index), jen.Id(reg.Parallel.KindName)))
		})...)
	}
	if ignores {
		// Every region with a rule for the event ignores it.
		var ign []jen.Code
		for i, reg := range inv {
			if i == len(inv)-1 {
				ign = append(ign, jen.Return(core().Dot("Ignore").Call(jen.Id(local("t", reg)))))
				break
			}
			ign = append(ign, jen.If(jen.Id(local("t", reg)).Op(">=").Lit(0)).Block(jen.Return(core().Dot("Ignore").Call(jen.Id(local("t", reg))))))
		}
		take = append(take, jen.If(jen.Op("!").Add(core()).Dot("Busy")).Block(ign...))
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
				return g.regionActs(r, jen.Id(local("from", reg)), part)
			})...)
		}
	}
	take = append(take, jen.Return(core().Dot("Finish").Call()))
	// When no region has a rule, the event goes on to the parallel
	// state's own.
	return append(out, jen.If(some).Block(take...))
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
			for _, r := range c.Rules {
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

func reversed(regs []*fsm.Region) []*fsm.Region {
	out := make([]*fsm.Region, len(regs))
	for i, r := range regs {
		out[len(regs)-1-i] = r
	}
	return out
}

// regionDoc describes the regions of a parallel state for its doc
// comment.
func regionDoc(s *fsm.State) string {
	if s.Regions == nil {
		return ""
	}
	var names []string
	for _, reg := range s.Regions {
		names = append(names, reg.Root.Name)
	}
	return fmt.Sprintf("It is a parallel state: its regions, %s, are all active while it is, each in one of its states.", strings.TrimSpace(list(names)))
}

// regionRun returns what a run of a parallel state adds for its regions:
// what it computes (compute) or what it hands out.
func (g *goGen) regionRun(run *fsm.Run, compute bool) []jen.Code {
	var c, a []jen.Code
	if run.Entry {
		c, a = g.regionEnter(run.State)
	} else {
		c, a = g.regionLeave(run.State)
	}
	if compute {
		return c
	}
	return a
}

// stateLit is a state's value in the generated tests, its fields zero: a
// parallel state's regions in the leaves cfg gives (by Region.Index), or
// their initial leaves.
func stateLit(s *fsm.State, cfg []*fsm.State) jen.Code {
	var vals []jen.Code
	for _, reg := range s.Regions {
		leaf := reg.Initial
		if cfg != nil && cfg[reg.Index] != nil {
			leaf = cfg[reg.Index]
		}
		vals = append(vals, kv(reg.Field, jen.Id(leaf.KindName)))
	}
	return jen.Id(s.GoName).Values(vals...)
}

// regionSamples adds to the sample fields of a parallel state's value its
// regions' initial leaves.
func regionSamples(m *fsm.Machine, d *fsm.Decl, fields jen.Dict) {
	for _, s := range m.States {
		if &s.Decl == d {
			for _, reg := range s.Regions {
				fields[jen.Id(reg.Field)] = jen.Id(reg.Initial.KindName)
			}
		}
	}
}

// regions declares a parallel state in the diagram: a block whose
// regions are concurrent sections, separated by "--" (Mermaid's
// concurrency), each entered through its initial pseudo-state.
func (d *diagram) regions(s *fsm.State, depth int) {
	ind := strings.Repeat("    ", depth)
	d.lines = append(d.lines, ind+"state "+s.Name+" {")
	for i, reg := range s.Regions {
		if i > 0 {
			d.lines = append(d.lines, ind+"    --")
		}
		d.states([]*fsm.State{reg.Root}, reg.Root, depth+1)
	}
	d.lines = append(d.lines, ind+"}")
}

// regionEdges draws the rules of the regions: each leaf's own, and each
// composite state's of a region once, from it.
func (d *diagram) regionEdges() {
	var shared []*fsm.Cell
	seen := map[*fsm.Cell]bool{}
	for _, s := range d.m.RegionLeaves() {
		d.cells(s, s.Handles)
		for _, c := range s.Inherited {
			if c.Owner != nil && !seen[c] {
				seen[c] = true
				shared = append(shared, c)
			}
		}
	}
	for _, c := range shared {
		d.cells(c.Owner, []*fsm.Cell{c})
	}
}

// addRegions adds the regions of the parallel states to the table: their
// leaves and composite states, what each leaf leaves to its parallel
// state, and their rules.
func (v *tableView) addRegions(m *fsm.Machine) {
	var shared []*fsm.Cell
	var comps []declRow
	seen := map[*fsm.Cell]bool{}
	for _, reg := range m.Regions {
		where := "region " + code(reg.Root.Name) + " of " + code(reg.Parallel.Name)
		for _, s := range reg.Leaves {
			kind := where
			if s == reg.Initial {
				kind = "initial in " + where
			}
			v.States = append(v.States, declRow{Name: s.Name, Kind: kind, Doc: mdText(s.Doc)})
			var out, up []string
			taken := map[*fsm.Region][]string{}
			var takers []*fsm.Region
			for _, c := range s.Inherited {
				switch t := fsm.TakesAll(reg.Parallel, c.Event); {
				case c.Out() && t != nil:
					if taken[t] == nil {
						takers = append(takers, t)
					}
					taken[t] = append(taken[t], code(c.Event.Name))
				case c.Out():
					out = append(out, code(c.Event.Name))
				case !seen[c]:
					seen[c] = true
					shared = append(shared, c)
					up = append(up, code(c.Event.Name)+" by "+code(c.Owner.Name))
				default:
					up = append(up, code(c.Event.Name)+" by "+code(c.Owner.Name))
				}
			}
			if len(out) > 0 {
				up = append(up, strings.Join(out, ", ")+" by "+code(reg.Parallel.Name))
			}
			for _, t := range takers {
				up = append(up, strings.Join(taken[t], ", ")+" to region "+code(t.Root.Name)+", which takes them in every state")
			}
			if len(up) > 0 {
				v.Inherits = append(v.Inherits, inheritRow{State: code(s.Name), Events: strings.Join(up, "; ")})
			}
			v.addRules(m, s)
		}
		for _, c := range reg.Composites {
			var kids []string
			for _, k := range c.Children {
				kids = append(kids, code(k.Name))
			}
			doc := c.Doc
			if c == reg.Root {
				doc = strings.TrimSpace(doc + " Region of " + reg.Parallel.Name + ".")
			} else {
				doc = strings.TrimSpace(doc + " Substate of " + c.Parent.Name + ".")
			}
			comps = append(comps, declRow{Name: c.Name, Kind: strings.Join(kids, ", "), Doc: mdText(doc)})
		}
	}
	v.addCells(m, nil, shared)
	v.Composites = append(v.Composites, comps...)
}

// readsFrom reports whether a rule of region reg for e runs an exit or
// entry only from some of its states, which tests the leaf it leaves.
func readsFrom(reg *fsm.Region, e *fsm.Event) bool {
	cells, _ := regionCells(reg, e)
	for _, c := range cells {
		for ; c != nil && !c.Out(); c = c.Fallback {
			for _, r := range c.Rules {
				for _, run := range append(append([]*fsm.Run{}, r.Exits...), r.Entries...) {
					if run.When != nil && len(run.Actions) > 0 {
						return true
					}
				}
			}
		}
	}
	return false
}
