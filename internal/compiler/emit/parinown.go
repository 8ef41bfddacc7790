package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// inTest is the test of guard In(in) of rule r: the leaf in's region is
// in, and for a rule of a composite state around in's parallel state,
// which its other leaves share, or a "*" row, that the machine is in the
// parallel state first, since the regions keep their last leaves once it is left
// (see fsm's parinown.go):
//
//	m.core.State == StateOn && m.rgn[0] == StatePlaying
func inTest(r *fsm.Rule, in *fsm.State) jen.Code {
	test := within(rgn(in.Region), in)
	p := in.Region.Parallel
	if r.From == p || r.From != nil && r.From.Region != nil {
		return test
	}
	return core().Dot("State").Op("==").Id(p.KindName).Op("&&").Add(test)
}
