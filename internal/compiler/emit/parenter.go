package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// regionInto returns what entering parallel state s computes (the leaf
// of each region) and hands out (the regions' entries, in document
// order), for a rule into a state inside one of its regions, entered
// through leaf into (SCXML 1.0 §3.13, enterStates): that region enters
// into's ancestors inside it down to into, the others their initial
// leaves, as regionEnter does, and a parallel state among them (into
// itself, or one a region starts in) its regions through their initial
// leaves; the regions of the parallel states inside regions that are not
// entered hold no leaf.
//
//	m.rgn[0] = StatePlaying
//	m.rgn[1] = StateNormal
//	m.rgn[2] = 0
//	m.h.StartAudio()
//	<Playing's timer started>
//	m.h.Normalised()
func (g *goGen) regionInto(s, into *fsm.State) (compute, acts []jen.Code) {
	set := map[*fsm.Region]bool{}
	var enter func(reg *fsm.Region, leaf *fsm.State, runs []*fsm.Run)
	enter = func(reg *fsm.Region, leaf *fsm.State, runs []*fsm.Run) {
		set[reg] = true
		compute = append(compute, rgn(reg).Op("=").Id(leaf.KindName))
		for _, run := range runs {
			acts = append(acts, g.inlineRun(run)...)
			if hosting(run) {
				// A parallel state inside the region, entered with it.
				for _, in := range run.State.Regions {
					enter(in, in.Initial, in.Start)
				}
			}
		}
	}
	for _, reg := range s.Regions {
		if reg != into.Region {
			enter(reg, reg.Initial, reg.Start)
			continue
		}
		enter(reg, into, into.Enter)
	}
	for _, reg := range s.Flat {
		if !set[reg] {
			compute = append(compute, rgn(reg).Op("=").Lit(0))
		}
	}
	return compute, acts
}
