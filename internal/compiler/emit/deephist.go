package emit

import (
	"slices"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// This file emits the deep histories over parallel states (see
// fsm/deephist.go): the machine's memory array holds, after each
// history's leaf, the leaf of each region a deep history remembers; a rule
// that leaves the history's state from the parallel state writes them,
// and a rule into the history enters the parallel state with each region
// resumed down to its leaf.

// memoryDescs describes what the deep histories remember of the regions
// of the parallel states they hold, after the histories (see fsm.Memory):
//
//	{State: "on", Region: "playback", First: StateStopped, Leaves: []string{"stopped", "playing"}, Parallel: StateOn, Of: 0}
func memoryDescs(m *fsm.Machine) []jen.Code {
	var out []jen.Code
	for _, mem := range m.Memories {
		h, reg := mem.History, mem.Region
		var leaves []jen.Code
		var renamed []jen.Code
		for _, l := range reg.Leaves {
			leaves = append(leaves, jen.Lit(l.Snake))
			for _, old := range l.RenamedFrom {
				renamed = append(renamed, jen.Lit(fsm.SnakeName(old)).Op(":").Lit(l.Snake))
			}
		}
		fields := []jen.Code{kv("State", jen.Lit(h.Snake)), kv("First", jen.Id(reg.Leaves[0].KindName)), kv("Leaves", jen.Index().String().Values(leaves...))}
		if len(h.RenamedFrom) > 0 {
			fields = append(fields, kv("Was", jen.Index().String().Values(snakes(h.RenamedFrom)...)))
		}
		if len(renamed) > 0 {
			fields = append(fields, kv("LeavesWas", jen.Map(jen.String()).String().Values(renamed...)))
		}
		fields = append(fields, kv("Region", jen.Lit(reg.JSON)))
		if len(reg.Root.RenamedFrom) > 0 {
			fields = append(fields, kv("RegionWas", jen.Index().String().Values(snakes(reg.Root.RenamedFrom)...)))
		}
		fields = append(fields, kv("Parallel", jen.Id(reg.Owner().KindName)), kv("Of", jen.Lit(h.Hist)))
		var restless []jen.Code
		for _, l := range reg.Leaves {
			// (A final state the region may rest in is remembered, and
			// resuming it raises its done event again: see resumeDone; so
			// is a transient state an eventless rule leaves the parallel
			// state from, whose rules resuming it tests again.)
			if l.Settles() && !l.Rests() && !fsm.Recalls(h, l) {
				restless = append(restless, jen.Lit(l.Snake))
			}
		}
		if len(restless) > 0 {
			fields = append(fields, kv("Restless", jen.Index().String().Values(restless...)))
		}
		if p := reg.Owner(); p.Completion != nil && len(reg.Finals) > 0 && !m.RemembersFinal(h, p) {
			// (A history the done transition leaves may remember every
			// region final: see fsm.RemembersFinal.)
			var finals []jen.Code
			for _, l := range reg.Finals {
				finals = append(finals, jen.Lit(l.Snake))
			}
			fields = append(fields, kv("Finals", jen.Index().String().Values(finals...)))
		}
		out = append(out, jen.Values(fields...))
	}
	return out
}

// snakes returns the JSON names of spec names, as literals.
func snakes(names []string) []jen.Code {
	var out []jen.Code
	for _, n := range names {
		out = append(out, jen.Lit(fsm.SnakeName(n)))
	}
	return out
}

// memoryRemembers emits what rule r, leaving a deep history's state from
// parallel state p, remembers of p's regions: the leaf of each, kept in
// the memory array after the histories' leaves.
//
//	m.hist[2] = m.rgn[0]
func (g *goGen) memoryRemembers(rem fsm.Remember, p *fsm.State) []jen.Code {
	var out []jen.Code
	for _, mem := range g.m.MemoriesOf(rem.State, p) {
		out = append(out, jen.Id("m").Dot("hist").Index(jen.Lit(mem.Slot)).Op("=").Add(rgn(mem.Region)))
	}
	return out
}

// regionResume returns what entering parallel state s through the deep
// history of h computes (each region resumes the leaf h remembers, or
// starts in its initial leaf) and hands out (the entries of each region
// down to its leaf, in document order):
//
//	m.rgn[0] = m.hist[2]
//	if m.rgn[0] == 0 {
//		m.rgn[0] = StateStopped
//	}
//	if m.rgn[0] == StatePulled { // a final state it may rest in (resumeDone)
//		m.doneRaised[0] = true
//	}
//	...
//	switch m.rgn[0] {
//	case StatePlaying:
//		<the entries down to Playing>
//	default:
//		<the entries down to Stopped>
//	}
func (g *goGen) regionResume(s, h *fsm.State) (compute, acts []jen.Code) {
	for _, mem := range g.m.MemoriesOf(h, s) {
		reg := mem.Region
		compute = append(compute, rgn(reg).Op("=").Id("m").Dot("hist").Index(jen.Lit(mem.Slot)),
			jen.If(rgn(reg).Op("==").Lit(0)).Block(rgn(reg).Op("=").Id(reg.Initial.KindName)))
		compute = append(compute, resumeDone(reg)...)
		// The parallel states nested as regions that reg is the first of
		// are entered before it, whatever leaf it resumes.
		groups := groupRuns(reg)
		acts = append(acts, g.enterActions(reg.Start[:groups])...)
		def := g.enterActions(reg.Start[groups:])
		var cases, quiet []jen.Code
		for _, l := range reg.Leaves {
			if l == reg.Initial || l.Settles() && !l.Rests() {
				// The initial leaf is the default; a region never rests in
				// a settling one, but a final state whose done transition's
				// guards end without else (Rests), entered with its
				// composite states before the done transition is tested.
				continue
			}
			if body := g.enterActions(l.Enter[groups:]); len(body) > 0 {
				cases = append(cases, jen.Case(jen.Id(l.KindName)).Block(body...))
			} else if len(def) > 0 {
				quiet = append(quiet, jen.Id(l.KindName)) // nothing to do, but not the default
			}
		}
		if len(quiet) > 0 {
			cases = append(cases, jen.Case(quiet...))
		}
		if len(def) > 0 {
			cases = append(cases, jen.Default().Block(def...))
		}
		if len(cases) > 0 {
			acts = append(acts, jen.Switch(rgn(reg)).Block(cases...))
		}
	}
	return compute, acts
}

// groupRuns returns how many of the first entries of region reg (its
// Start, and each leaf's Enter) enter parallel states nested as regions
// (see fsm.Region.Groups), which reg is the first region of.
func groupRuns(reg *fsm.Region) int {
	n := 0
	for n < len(reg.Start) && slices.Contains(reg.Groups, reg.Start[n].State) {
		n++
	}
	return n
}

// enterActions emits the actions of entries.
func (g *goGen) enterActions(runs []*fsm.Run) []jen.Code {
	var out []jen.Code
	for _, run := range runs {
		out = append(out, g.inlineRun(run)...)
	}
	return out
}

// rememberLeaves emits what rule r, which remembers rem, remembers of
// the regions of the parallel states inside rem.State that it may leave
// (from is the leaf it leaves): for a rule of a parallel state, its
// regions' leaves; for a rule of a composite state, under a test of the
// leaf.
func (g *goGen) rememberLeaves(r *fsm.Rule, rem fsm.Remember, from *jen.Statement) []jen.Code {
	if len(g.m.Memories) == 0 {
		return nil
	}
	if !r.Shared() {
		if r.From.Regions == nil {
			return nil
		}
		return g.memoryRemembers(rem, r.From)
	}
	var out []jen.Code
	for _, p := range g.m.States {
		if set := g.memoryRemembers(rem, p); len(set) > 0 && (r.From == nil || r.From.Contains(p)) {
			out = append(out, jen.If(from.Clone().Op("==").Id(p.KindName)).Block(set...))
		}
	}
	return out
}
