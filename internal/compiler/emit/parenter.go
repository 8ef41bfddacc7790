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
// leaves, as regionEnter does; the regions of the parallel states inside
// regions that are not entered hold no leaf.
//
//	m.rgn[0] = StatePlaying
//	m.rgn[1] = StateNormal
//	m.rgn[2] = 0
//	m.h.StartAudio()
//	<Playing's timer started>
//	m.h.Normalised()
func (g *goGen) regionInto(s, into *fsm.State) (compute, acts []jen.Code) {
	for _, reg := range s.Regions {
		if reg != into.Region {
			compute = append(compute, rgn(reg).Op("=").Id(reg.Initial.KindName))
			acts = append(acts, g.enterActions(reg.Start)...)
			continue
		}
		compute = append(compute, rgn(reg).Op("=").Id(into.KindName))
		acts = append(acts, g.enterActions(into.Enter)...)
	}
	for _, reg := range s.Flat {
		if reg.Host != nil {
			compute = append(compute, rgn(reg).Op("=").Lit(0))
		}
	}
	return compute, acts
}
