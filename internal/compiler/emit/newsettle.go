package emit

import (
	"fmt"
	"slices"

	"github.com/dave/jennifer/jen"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// startSettles reports whether New's step must settle the regions of the
// machine's initial state p: p is a parallel state, some region of which
// starts in a transient state, and no wait method (see genWaitIn), which
// New calls otherwise, settles them.
func startSettles(p *fsm.State) bool {
	return p.Regions != nil && !p.Awaits() && slices.ContainsFunc(p.Flat, func(reg *fsm.Region) bool { return reg.Initial.Eventless() })
}

// startMethod is the name of the method that ends New's step in parallel
// state p (see genStartSettle).
func startMethod(p *fsm.State) string { return "start" + p.GoName }

// genStartSettle emits, when the machine starts in a parallel state some
// region of which starts in a transient state, the method New ends with:
// the regions' eventless rules, a microstep at a time (SCXML 1.0 §3.13
// selects the eventless transitions once the initial configuration is
// entered; XState takes always on start), then the parallel state's done
// transition when they end every region final.
//
//	func (m *Machine) startRun() error {
//		for m.eventlessRun() {
//		}
//		return m.core.Finish()
//	}
func (g *goGen) genStartSettle() {
	p := g.m.Initial
	if !startSettles(p) {
		return
	}
	doc := fmt.Sprintf("%s ends New's step in %s, whose regions start in transient states: it takes their "+
		"eventless rules, a microstep at a time (SCXML 1.0 §3.13 selects the eventless transitions once the "+
		"initial configuration is entered)", startMethod(p), p.Name)
	if len(eventlessLeaves(p)) > 0 {
		doc += fmt.Sprintf(", the one of them that leaves %s ending the step", p.Name)
	}
	body := []jen.Code{settleInner(p.Regions)}
	switch {
	case p.RestsFinal():
		// New entered every region: the step may have ended the last.
		doc += fmt.Sprintf(", then the done transition of %s when every region is final", p.Name)
		body = append(body, g.completionOf(p, nil, func(*fsm.State) jen.Code { return jen.True() }, true))
	case p.Completion != nil:
		doc += fmt.Sprintf(", then the done transition of %s when every region is final", p.Name)
		body = append(body, g.completion(p, nil))
	}
	body = append(body, jen.Return(core().Dot("Finish").Call()))
	g.f.Add(paragraphs(doc + "."))
	g.f.Func().Params(jen.Id("m").Op("*").Id("Machine")).Id(startMethod(p)).Params().Error().Block(body...)
}
