package diff

import (
	"fmt"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// purity compares, for every action of both revisions, whether the spec
// marks it pure. A pure action runs inside a durable engine's workflow,
// any other as an activity, so a change either way alters what a running
// workflow's history must hold: a change of behaviour. Where the spec
// generates Temporal glue, the change also moves the action's method
// between the glue's Activities and Pure interfaces.
func (d *differ) purity() {
	byName := map[string]*fsm.Action{}
	for _, a := range d.new.Actions {
		byName[a.Name] = a
	}
	for _, o := range d.old.Actions {
		n := byName[d.rename("action", o.Name)]
		if n == nil || n.Builtin || o.Pure == n.Pure {
			continue
		}
		c := &Change{Subject: "action " + n.Name, Old: o.Pos, New: n.Pos}
		from, to := "as an activity", "inside the workflow"
		into, outOf := "Pure", "Activities"
		c.What = "now pure"
		if !n.Pure {
			from, to = to, from
			into, outOf = outOf, into
			c.What = "no longer pure"
		}
		c.verdict(Behaviour, Breaks, fmt.Sprintf("a durable engine now runs %s %s, not %s: the history of a workflow running the old revision does not match the new code's steps (on Temporal, a non-determinism error when it replays); runtime/loop and the server perform it through the Handler as before", n.Name, to, from))
		if d.new.Output.TemporalDir != "" {
			c.verdict(Code, Breaks, fmt.Sprintf("the Temporal glue's %s interface gains the method %s and %s loses it: code that implements %s no longer compiles until it has the method", into, n.GoName, outOf, into))
		}
		d.add(c)
	}
}
