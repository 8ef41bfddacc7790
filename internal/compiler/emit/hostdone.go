package emit

import (
	"fmt"
	"slices"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// This file emits the done transition of a parallel state inside a region
// (see internal/compiler/fsm/parinregpaths.go, hostDone): a rule of its
// host region, taken in the step that puts the last of its regions in a
// final leaf, after that step's transient states (SCXML 1.0 §3.4 and
// §3.13, done.state.ID), and before the done transition of the parallel
// state around, which its target may complete.

// hostDoneMethod names the method that takes the done transition of q, a
// parallel state inside a region: doneEditing.
func hostDoneMethod(q *fsm.State) string { return "done" + q.GoName }

// hostedDone returns the parallel state inside a region whose regions
// include reg, when it has a done transition; nil otherwise.
func hostedDone(reg *fsm.Region) *fsm.State {
	if q := reg.Within; q != nil && q.Completion != nil {
		return q
	}
	return nil
}

// endsHosted reports whether region rule r enters a final leaf of a
// region of a parallel state inside a region that has a done transition.
func endsHosted(r *fsm.Rule) bool {
	return r.Kind == fsm.Transition && r.To != nil && r.To.Region != nil && hostedDone(r.To.Region) != nil && slices.Contains(r.To.Region.Finals, r.To)
}

// hostEnds reports whether the done transition of q, a parallel state
// inside a region, may end its host region, whose parallel state has a
// done transition: it is to be tested after q's.
func hostEnds(q *fsm.State) bool {
	return slices.ContainsFunc(q.Completion.Rules, func(r *fsm.Rule) bool {
		return r.To != nil && r.To.Ends() && r.To.Region.Parallel.Completion != nil
	})
}

// hostCompletion emits the test, after a step of the regions of q that
// may put the last of them in a final leaf, that takes q's done
// transition; moved is the region of q the step moved into a final leaf,
// or nil when several regions moved (then q's host is tested too):
//
//	// Every region of Editing final: Editing is done.
//	if m.rgn[2] == StateApproved {
//		m.doneEditing()
//	}
func (g *goGen) hostCompletion(q *fsm.State, moved *fsm.Region) []jen.Code {
	test := hostRaised(q)
	if moved != nil && !q.RestsFinal() {
		test = allFinal(q, moved)
	}
	take := []jen.Code{jen.Id("m").Dot(hostDoneMethod(q)).Call()}
	host := q.Regions[0].Host
	if slices.ContainsFunc(q.Completion.Rules, func(r *fsm.Rule) bool { return r.To != nil && (r.To.Settles() || r.EntersRestless()) }) {
		// Its target is transient, or a final state whose composite
		// state's done follows, or a parallel state whose regions start
		// in a transient state.
		take = append(take, settleLoop([]*fsm.Region{host}))
	}
	return []jen.Code{jen.Comment("// Every region of " + q.Name + " final: " + q.Name + " is done.").Line().
		If(test).Block(take...)}
}

// hostRaised is the test that the done event of q, a parallel state
// inside a region, was raised: its host region is in q, every region of q
// final, and, when q may rest so (fsm.State.RestsFinal), the step made
// them so (doneRaised).
func hostRaised(q *fsm.State) *jen.Statement {
	test := rgn(q.Region).Op("==").Id(q.KindName).Op("&&").Add(allFinal(q, nil))
	if q.RestsFinal() {
		test = test.Op("&&").Add(doneRaised(q.Region))
	}
	return test
}

// genHostDone emits, for each parallel state inside a region with a done
// transition, the method that takes it (see hostCompletion): a rule of
// the host region, leaving the parallel state's regions and the
// parallel state, in a microstep of its own.
func (g *goGen) genHostDone() {
	for _, reg := range g.m.Regions {
		q := hostedDone(reg)
		if q == nil || reg != q.Regions[0] {
			continue
		}
		host := reg.Host
		one := func(r *fsm.Rule) []jen.Code {
			inline := inPlace(r)
			var out []jen.Code
			if !inline {
				out = g.regionCompute(r)
			}
			out = append(out, g.regionRemembers(host, r)...)
			out = append(out, g.hostedLefts(r, map[string]bool{})...)
			out = append(out, rgn(host).Op("=").Id(r.To.KindName))
			out = append(out, raiseDone(host, r.To)...)
			out = append(out, g.hostedSlots(r)...)
			out = append(out, core().Dot("Start").Call(jen.Lit(r.Index), jen.Id(host.Parallel.KindName)))
			from := jen.Id(q.KindName)
			out = append(out, g.regionActs(r, from, "exits", inline)...)
			out = append(out, g.regionActs(r, from, "actions", inline)...)
			return append(out, g.regionActs(r, from, "entries", inline)...)
		}
		doc := fmt.Sprintf("%s takes the done transition of the parallel state %s, inside region %s, in the "+
			"step that puts the last of its regions in a final state (SCXML 1.0 §3.4, done.state.%s): a rule of region %s, "+
			"a microstep of its own.", hostDoneMethod(q), q.Name, host.Root.Name, q.Name, host.Root.Name)
		// Into a history of the host region's state: the variant by what
		// it remembers.
		take := g.regionCell(host, q.Completion, throughVariants(host, one))
		if q.RestsFinal() {
			doc += fmt.Sprintf(" When no guard holds, the done event is dropped (SCXML 1.0 §3.13) and every region of %s rests final.", q.Name)
			take = append([]jen.Code{doneRaised(host).Op("=").False()}, take...)
		}
		g.f.Add(paragraphs(doc))
		g.f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id(hostDoneMethod(q)).Params().Block(take...)
	}
}

// hostedPutDone returns what put checks of the regions of q, a parallel
// state inside a region with a done transition that always leaves it (not
// RestsFinal), once they are kept: they are not all final while the host
// region is in q, since the done transition leaves q in the step that
// makes the last one final.
func (g *goGen) hostedPutDone(p, q *fsm.State) []jen.Code {
	msg := fmt.Sprintf("%s: cannot restore %s: every region of %s is in a final state, in which %s takes its done transition at once: the machine never rests there", g.m.Package, p.Name, q.Name, q.Name)
	test := rgn(q.Region).Op("==").Id(q.KindName).Op("&&").Add(allFinal(q, nil))
	return []jen.Code{jen.If(test).Block(jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit(msg))))}
}

// hostsEnding returns the parallel states inside regions with a done
// transition, in document order, whose regions among inv have a rule for
// e into a final leaf.
func hostsEnding(inv []*fsm.Region, e *fsm.Event) []*fsm.State {
	var out []*fsm.State
	for _, reg := range inv {
		q := hostedDone(reg)
		if q == nil || slices.Contains(out, q) {
			continue
		}
		cells, _ := regionCells(reg, e)
		for _, c := range cells {
			for ; c != nil && !c.Out(); c = c.Fallback {
				// (a variant into the history of a region's own state may
				// resume its final state)
				if slices.ContainsFunc(withVariants(c.Rules), endsHosted) && !slices.Contains(out, q) {
					out = append(out, q)
				}
			}
		}
	}
	return out
}

// restlessHosts returns the parallel states inside the regions of
// parallel state p, in document order, that have a done transition and
// regions with transient states or composite states with done
// transitions: the eventless rules and done transitions of a step may
// end their last region, and their done transition then follows in that
// macrostep (see settleLoop).
func restlessHosts(p *fsm.State) []*fsm.State {
	var out []*fsm.State
	for _, reg := range p.Flat {
		q := hostedDone(reg)
		if q == nil || slices.Contains(out, q) {
			continue
		}
		if slices.ContainsFunc(reg.Leaves, (*fsm.State).Settles) {
			out = append(out, q)
		}
	}
	return out
}

// hostDonesMethod names the method that takes the done transition of the
// first parallel state inside a region of p whose regions all ended:
// hostDoneOn.
func hostDonesMethod(p *fsm.State) string { return "hostDone" + p.GoName }

// hostsMayEnd reports whether the done transition of a parallel state
// inside a region of p that settleLoop takes may end its host region,
// after which p's own done transition is to be tested.
func hostsMayEnd(p *fsm.State) bool {
	qs := restlessHosts(p)
	if ordered(p) {
		qs = hostDones(p) // macroOn takes any
	}
	return p.Completion != nil && slices.ContainsFunc(qs, hostEnds)
}

// genHostDones emits, for each parallel state whose regions hold
// parallel states with done transitions and restless regions (see
// restlessHosts), the method settleLoop calls after the eventless rules
// and the other done transitions of a step:
//
//	func (m *Machine) hostDoneOn() bool {
//		if m.rgn[0] == StateEditing && m.rgn[1] == StateSaved && m.rgn[2] == StateSigned {
//			m.doneEditing()
//			return true
//		}
//		return false
//	}
func (g *goGen) genHostDones() {
	for _, p := range g.m.States {
		qs := restlessHosts(p)
		if p.Regions == nil || len(qs) == 0 || ordered(p) {
			continue // (macroOn takes them when ordered)
		}
		var body []jen.Code
		var names []string
		for _, q := range qs {
			names = append(names, q.Name)
			body = append(body, jen.If(hostRaised(q)).Block(jen.Id("m").Dot(hostDoneMethod(q)).Call(), jen.Return(jen.True())))
		}
		body = append(body, jen.Return(jen.False()))
		g.f.Add(paragraphs(fmt.Sprintf("%s takes the done transition of the first of %s, parallel states inside the regions of %s, "+
			"whose regions are all in a final state, and reports whether it took one: the eventless rules and done transitions "+
			"inside their regions may end the last of them (SCXML 1.0 §3.4 and §3.13, done.state.ID).", hostDonesMethod(p), list(names), p.Name)))
		g.f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id(hostDonesMethod(p)).Params().Bool().Block(body...)
	}
}
