package diff

import (
	"slices"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// regionHistories compares the histories of the composite states inside
// a region matched across the revisions, and of the parallel states
// inside it (leaves of the region), as history does the machine's own: a
// history gained loads the machines saved before (they remember nothing
// of it), one lost no longer loads those that remember a leaf of it, and
// one made deep or shallow resumes another state.
func (d *differ) regionHistories(o, n *fsm.Region) {
	for _, ns := range append(slices.Clone(n.Composites), n.Leaves...) {
		for _, os := range append(slices.Clone(o.Composites), o.Leaves...) {
			if d.rename("state", os.Name) == ns.Name {
				d.history(&os.Decl, &ns.Decl)
			}
		}
	}
}
