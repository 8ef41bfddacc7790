package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// regionInto returns what entering parallel state s computes (the leaf
// of each region) and hands out (the regions' entries, in document
// order), for run, the entry of a rule into a state inside one of its
// regions (Run.Into; SCXML 1.0 §3.13, enterStates): that region enters
// the target's ancestors inside it down to the leaf it is entered in,
// the others their initial leaves, as regionEnter does, and a parallel
// state among them (the target, one on the way to it, or one a region
// starts in) its regions so in turn (Run.IntoLeaf); the regions of the
// parallel states inside regions that are not entered hold no leaf.
//
//	m.rgn[0] = StatePlaying
//	m.rgn[1] = StateNormal
//	m.rgn[2] = 0
//	m.h.StartAudio()
//	<Playing's timer started>
//	m.h.Normalised()
func (g *goGen) regionInto(s *fsm.State, run *fsm.Run) (compute, acts []jen.Code) {
	set := map[*fsm.Region]bool{}
	var enter func(reg *fsm.Region)
	enter = func(reg *fsm.Region) {
		set[reg] = true
		leaf, runs := reg.Initial, reg.Start
		if l := run.IntoLeaf(reg); l != nil {
			leaf, runs = l, l.Enter
		}
		compute = append(compute, rgn(reg).Op("=").Id(leaf.KindName))
		for _, x := range runs {
			acts = append(acts, g.inlineRun(x)...)
			if hosting(x) {
				// A parallel state inside the region, entered with it.
				for _, in := range x.State.Regions {
					enter(in)
				}
			}
		}
	}
	for _, reg := range s.Regions {
		enter(reg)
	}
	for _, reg := range s.Flat {
		if !set[reg] {
			compute = append(compute, rgn(reg).Op("=").Lit(0))
		}
	}
	return compute, acts
}
