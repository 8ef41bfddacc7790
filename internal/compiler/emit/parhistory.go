package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// This file emits the histories of composite states inside regions (see
// fsm/parhistory.go): a region's rule into a history picks its variant by
// what the machine remembers, or by the region's leaf when it leaves the
// composite state itself; a region's rule that leaves a composite state
// with a history remembers the region's leaf; leaving the parallel state
// remembers every region's.

// regionHistory emits a region's rule into a history, as historyBody does
// a flat machine's, the region's leaf in place of the machine's state:
//
//	switch m.hist[1] {
//	case StateFast:
//		<the rule, into Fast>
//	default:
//		<the rule, into the initial child>
//	}
func (g *goGen) regionHistory(reg *fsm.Region, r *fsm.Rule) []jen.Code {
	return historyVariants(reg, r, func(v *fsm.Rule) []jen.Code { return g.regionRule(reg, v) })
}

// historyVariants emits region rule r into a history as body emits each
// of its variants, picked by what the history remembers (see
// regionHistKey), the rule itself, into the initial child, by default.
func historyVariants(reg *fsm.Region, r *fsm.Rule, body func(*fsm.Rule) []jen.Code) []jen.Code {
	pre, key, read := regionHistKey(reg, r)
	def := *r
	def.Variants = nil
	return pickVariant(pre, key, read, r, body, body(&def))
}

// throughVariants returns a body for the rules of region reg that emits
// a rule into a history through its variants (historyVariants), each as
// one emits it, and any other rule as one does.
func throughVariants(reg *fsm.Region, one func(*fsm.Rule) []jen.Code) func(*fsm.Rule) []jen.Code {
	return func(r *fsm.Rule) []jen.Code {
		if len(r.Variants) == 0 {
			return one(r)
		}
		return historyVariants(reg, r, one)
	}
}

// regionHistKey returns what region rule r into a history picks its
// variant by (see Rule.Key), the statements that read it into h before,
// and whether it is the memory itself, which pickVariant reads into h
// when it tests it more than once.
func regionHistKey(reg *fsm.Region, r *fsm.Rule) ([]jen.Code, *jen.Statement, bool) {
	mem := jen.Id("m").Dot("hist").Index(jen.Lit(r.History.Hist))
	switch leaves, always := r.Key(); {
	case leaves && always:
		return nil, rgn(reg), false
	case leaves:
		return []jen.Code{jen.Id("h").Op(":=").Add(mem),
			jen.If(within(rgn(reg), r.History)).Block(jen.Id("h").Op("=").Add(rgn(reg)))}, jen.Id("h"), false
	default:
		return nil, mem, true
	}
}

// regionPick emits how regionsTogether picks region rule r: the rule's
// index, or, for a rule into a history, its variant's, by what the
// machine remembers before any region moves.
func (g *goGen) regionPick(reg *fsm.Region, r *fsm.Rule) []jen.Code {
	t := jen.Id(local("t", reg))
	if len(r.Variants) == 0 {
		return []jen.Code{t.Op("=").Lit(r.Index)}
	}
	pre, key, read := regionHistKey(reg, r)
	out := pickVariant(pre, key, read, r, func(v *fsm.Rule) []jen.Code {
		return []jen.Code{jen.Id(local("t", reg)).Op("=").Lit(v.Index)}
	}, []jen.Code{jen.Id(local("t", reg)).Op("=").Lit(r.Index)})
	if len(out) == 1 {
		return out
	}
	// (h, in a block of its own: the other regions pick theirs beside.)
	return []jen.Code{jen.Block(out...)}
}

// withVariants returns rules, each followed by its variants into a
// history: the rules a region may take.
func withVariants(rules []*fsm.Rule) []*fsm.Rule {
	var out []*fsm.Rule
	for _, r := range rules {
		out = append(append(out, r), r.Variants...)
	}
	return out
}

// regionRemembers emits what region rule r remembers before it moves the
// region: the region's leaf, for each composite state with a history the
// rule leaves (and, for a deep one, the leaves of the regions of a
// parallel state inside the region it holds, see hostedMemories).
//
//	if m.rgn[0] >= StateSlow && m.rgn[0] <= StateFast {
//		m.hist[1] = m.rgn[0]
//	}
func (g *goGen) regionRemembers(reg *fsm.Region, r *fsm.Rule) []jen.Code {
	var out []jen.Code
	for _, rem := range r.Remembers {
		set := append([]jen.Code{jen.Id("m").Dot("hist").Index(jen.Lit(rem.State.Hist)).Op("=").Add(rgn(reg))}, g.hostedMemories(rem.State, rgn(reg))...)
		if rem.When {
			set = []jen.Code{jen.If(within(rgn(reg), rem.State)).Block(set...)}
		}
		out = append(out, set...)
	}
	return out
}

// hostedMemories emits what deep history h, remembering leaf (its
// region's), remembers of the regions of the parallel states inside the
// region it holds: the leaf of each, when leaf is that parallel state
// (SCXML 1.0 §3.10: a deep history records every active atomic
// descendant), always when h is the parallel state's own history.
//
//	if m.rgn[0] == StateEditing {
//		m.hist[3], m.hist[4] = m.rgn[1], m.rgn[2]
//	}
func (g *goGen) hostedMemories(h *fsm.State, leaf *jen.Statement) []jen.Code {
	var out []jen.Code
	for _, q := range g.m.RegionLeaves() {
		var slots, leaves []jen.Code
		for _, mem := range g.m.MemoriesOf(h, q) {
			slots = append(slots, jen.Id("m").Dot("hist").Index(jen.Lit(mem.Slot)))
			leaves = append(leaves, rgn(mem.Region))
		}
		switch {
		case len(slots) == 0:
		case h == q:
			// q's own history: its leaf is q whenever it remembers.
			out = append(out, jen.List(slots...).Op("=").List(leaves...))
		default:
			out = append(out, jen.If(leaf.Clone().Op("==").Id(q.KindName)).Block(jen.List(slots...).Op("=").List(leaves...)))
		}
	}
	return out
}

// regionRemember emits what leaving parallel state p (run) remembers,
// before the machine changes state: for each composite state with a
// history inside a region, the region's leaf when it is inside the state.
// from is the leaf the rule leaves, which the run's condition tests.
func (g *goGen) regionRemember(run *fsm.Run, from jen.Code) []jen.Code {
	var out []jen.Code
	for _, s := range g.m.RegionHistories(run.State) {
		leaf := rgn(s.Region)
		set := append([]jen.Code{jen.Id("m").Dot("hist").Index(jen.Lit(s.Hist)).Op("=").Add(leaf.Clone())}, g.hostedMemories(s, leaf)...)
		out = append(out, jen.If(within(leaf.Clone(), s)).Block(set...))
	}
	if run.When != nil && len(out) > 0 {
		return []jen.Code{jen.If(within(from, run.When)).Block(out...)}
	}
	return out
}
