package emit

import (
	"fmt"
	"slices"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// This file emits what a parallel state inside a region adds (see
// internal/compiler/fsm/parinreg.go): its regions have slots of m.rgn
// after their host region's, holding their leaves while the host is in
// it and zero otherwise; a rule of the host that enters it sets them and
// enters its regions after its entry, one that leaves it leaves its
// regions before its exit and zeroes them; an event goes to its regions
// first, and the host's rule for it is taken only when none of them has
// one (SCXML 1.0 §3.13: a descendant's transition preempts its
// ancestor's).

// hosting reports whether run enters or leaves a parallel state inside a
// region.
func hosting(run *fsm.Run) bool { return run.State.Region != nil && run.State.Regions != nil }

// hostedUnder returns the regions of parallel state q, a state inside a
// region, and those of the parallel states inside them, in document order.
func (g *goGen) hostedUnder(q *fsm.State) []*fsm.Region {
	var out []*fsm.Region
	for _, reg := range g.m.Regions {
		if reg.Within == q || slices.Contains(out, reg.Host) {
			out = append(out, reg)
		}
	}
	return out
}

// hostedLefts returns, for a region's rule r that leaves parallel states
// inside its region, the locals that keep their regions' leaves for
// their exits: leftEditing := m.rgn. seen holds those already declared.
func (g *goGen) hostedLefts(r *fsm.Rule, seen map[string]bool) []jen.Code {
	var out []jen.Code
	for _, run := range r.Exits {
		if !hosting(run) || seen[leftName(run.State)] {
			continue
		}
		c, _ := g.regionLeave(run.State, nil)
		if len(c) > 0 {
			seen[leftName(run.State)] = true
			out = append(out, c...)
		}
	}
	return out
}

// hostedSlots returns what region rule r does to the slots of the regions
// of the parallel states inside its region that it leaves (zeroed) and
// enters (their initial leaves):
//
//	m.rgn[1], m.rgn[2] = 0, 0
//	m.rgn[1] = StateTyping
func (g *goGen) hostedSlots(r *fsm.Rule) []jen.Code {
	var out []jen.Code
	for _, run := range r.Exits {
		if !hosting(run) {
			continue
		}
		var slots, zeros []jen.Code
		for _, reg := range g.hostedUnder(run.State) {
			slots, zeros = append(slots, rgn(reg)), append(zeros, jen.Lit(0))
		}
		out = append(out, g.hostedRemember(run.State)...)
		out = append(out, jen.List(slots...).Op("=").List(zeros...))
	}
	for _, run := range r.Entries {
		if hosting(run) {
			// Its regions' initial leaves, or those a deep history
			// resumes.
			out = append(out, g.regionRun(run, nil, true)...)
		}
	}
	return out
}

// hostedRemember returns what leaving q, a parallel state inside a
// region, remembers before its regions' slots are zeroed: for each
// composite state with a history inside its regions, the region's leaf
// when it is inside the state (SCXML 1.0 §3.13, exitStates), and for a
// deep one the leaves of the regions of a parallel state it holds (see
// hostedMemories):
//
//	if m.rgn[1] >= StateF1 && m.rgn[1] <= StateF2 {
//		m.hist[0] = m.rgn[1]
//	}
func (g *goGen) hostedRemember(q *fsm.State) []jen.Code {
	var out []jen.Code
	for _, s := range g.m.Histories {
		if s.Region == nil || !slices.Contains(g.hostedUnder(q), s.Region) {
			continue
		}
		leaf := rgn(s.Region)
		set := append([]jen.Code{jen.Id("m").Dot("hist").Index(jen.Lit(s.Hist)).Op("=").Add(leaf.Clone())}, g.hostedMemories(s, leaf)...)
		out = append(out, jen.If(within(leaf.Clone(), s)).Block(set...))
	}
	return out
}

// preempted returns the test that no region of inv inside a parallel
// state in region reg picked a rule, under which reg picks its own; nil
// when no region of inv is inside reg:
//
//	tText < 0 && tPreview < 0
func preempted(reg *fsm.Region, inv []*fsm.Region) jen.Code {
	var tests []*jen.Statement
	for _, o := range inv {
		inside := false
		for h := o.Host; h != nil; h = h.Host {
			inside = inside || h == reg
		}
		if inside {
			tests = append(tests, jen.Id(local("t", o)).Op("<").Lit(0))
		}
	}
	return allOf(tests)
}

// hostedPut returns what put checks of region reg of a parallel state
// inside another region: it names a leaf exactly while its host region
// is in that parallel state.
//
//	if s.Work == StateEditing {
//		if s.Text < StateTyping || s.Text > StateSaved { return nil, fmt.Errorf(...) }
//	} else if s.Text != 0 { return nil, fmt.Errorf(...) }
func (g *goGen) hostedPut(p *fsm.State, reg *fsm.Region) []jen.Code {
	v := jen.Id("s").Dot(reg.Field)
	first, last := reg.Leaves[0], reg.Leaves[len(reg.Leaves)-1]
	in := jen.Id("s").Dot(reg.Host.Field).Op("==").Id(reg.Within.KindName)
	bad := fmt.Sprintf("%s: cannot restore %s: region %s of %s is in %%s, not one of %s", g.m.Package, p.Name, reg.Root.Name, reg.Within.Name, leafNames(reg))
	idle := fmt.Sprintf("%s: cannot restore %s: region %s of %s is in %%v, but region %s is not in %s: give it no state", g.m.Package, p.Name, reg.Root.Name, reg.Within.Name, reg.Host.Root.Name, reg.Within.Name)
	return []jen.Code{
		jen.If(in).Block(
			jen.If(v.Clone().Op("<").Id(first.KindName).Op("||").Add(v.Clone()).Op(">").Id(last.KindName)).Block(
				jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit(bad), jen.Qual(pkgFsmrt, "InState").Call(v.Clone())))),
		).Else().If(v.Clone().Op("!=").Lit(0)).Block(
			jen.Return(jen.Nil(), jen.Qual("fmt", "Errorf").Call(jen.Lit(idle), v.Clone()))),
		rgn(reg).Op("=").Add(v.Clone()),
	}
}

// hostedDoc is the doc of the field of a parallel state's value that
// holds region reg of a parallel state inside another region.
func hostedDoc(reg *fsm.Region) string {
	return fmt.Sprintf("%s is the state region %s of %s is in while region %s is in %s: one of %s; zero otherwise.", reg.Field, reg.Root.Name, reg.Within.Name, reg.Host.Root.Name, reg.Within.Name, leafNames(reg))
}
