package export_test

import (
	"slices"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// leavingGuards returns the guards that the rules of machine m that leave
// a parallel state from inside a region test after In(State) (see
// fsm.Rule.SourceIn), in rule order: XState asks them where the Go
// machine does not (see run.mjs).
func leavingGuards(m *fsm.Machine) []string {
	var out []string
	for _, r := range m.Rules {
		if r.SourceIn != nil && !slices.Contains(out, r.Guard.Name) {
			out = append(out, r.Guard.Name)
		}
	}
	return out
}
