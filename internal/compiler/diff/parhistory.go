package diff

import "github.com/fsmgen/fsmgen/internal/compiler/fsm"

// regionHistories compares the histories of the composite states inside
// a region matched across the revisions, as history does the machine's
// own: a history gained loads the machines saved before (they remember
// nothing of it), one lost no longer loads those that remember a leaf of
// it, and one made deep or shallow resumes another state.
func (d *differ) regionHistories(o, n *fsm.Region) {
	for _, ns := range n.Composites {
		for _, os := range o.Composites {
			if d.rename("state", os.Name) == ns.Name {
				d.history(&os.Decl, &ns.Decl)
			}
		}
	}
}
