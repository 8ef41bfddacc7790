package export

import "github.com/fsmgen/fsmgen/internal/compiler/fsm"

// Unchecked writes m in format f whatever the export refuses, for
// TestRefusalsDiverge to show that the targets run what it refuses
// otherwise than the Go machine.
func Unchecked(m *fsm.Machine, f Format) []byte {
	c := build(m)
	write := writeXState
	if f == SCXML {
		write = writeSCXML
	}
	out, _, _ := write(c)
	return out
}
