package export_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/internal/compiler/export"
	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// leavingGuards returns the guards that the rules of machine m that leave
// a parallel state from inside a region test after In(State) (see
// fsm.Rule.SourceIn), in rule order, its regions' rules too (those that
// leave a parallel state inside a region's state for a state of that
// region, random chart 50119): XState asks them where the Go machine
// does not (see run.mjs), which the runner is told (jsMachine).
func leavingGuards(m *fsm.Machine) []string {
	var out []string
	for _, r := range m.AllRules() {
		if r.SourceIn != nil && !slices.Contains(out, r.Guard.Name) {
			out = append(out, r.Guard.Name)
		}
	}
	return out
}

// ownGuards returns the guards of the eventless rules of machine m's
// parallel states that wait, but In(State): XState asks them once for
// each region without an eventless rule of its own enabled, also in a
// microstep a region's rule preempts them, where the Go machine asks them
// once, after the regions settled (see run.mjs), which the runner is told
// (jsMachine).
func ownGuards(m *fsm.Machine) []string {
	var out []string
	for _, s := range m.States {
		if s.Regions == nil || !s.Waits {
			continue
		}
		for _, r := range s.Choice.Rules {
			if r.Guard.In == nil && !slices.Contains(out, r.Guard.Name) {
				out = append(out, r.Guard.Name)
			}
		}
	}
	return out
}

// extraGuards checks the guards a target asked where the Go machine did
// not (see run.cjs and run.mjs), on a step of machine m: SCION, those of
// a rule of a parallel state or around one; XState, those of a rule that
// leaves a parallel state from inside a region, or of a parallel state's
// eventless rule.
func extraGuards(t *testing.T, tg target, m *fsm.Machine, name string, extra []string) bool {
	ok := true
	for _, g := range extra {
		if tg.format == export.XState {
			ok = assert.Contains(t, append(leavingGuards(m), ownGuards(m)...), g, "%s: XState asked guard %s, which no rule that leaves a parallel state from inside a region has, nor a parallel state's eventless rule", name, g) && ok
			continue
		}
		ok = assert.True(t, parallelGuard(m, g), "%s: SCION asked guard %s, which no rule of a parallel state or around one has", name, g) && ok
	}
	return ok
}
