package fsm

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResumeEveryRegionFinal checks the witness search through a deep
// history that remembers every region of a parallel state final (chart
// till: Shift's deep history around Tally, whose done transition may
// leave Shift, and Desk's own deep history beside its done transition):
// the step that resumes them goes on through the done transition, each
// branch, its trace the entries, then the regions' exits and the done's
// actions; what the done transition leaves is remembered again.
func TestResumeEveryRegionFinal(t *testing.T) {
	t.Parallel()
	m := builtFile(t, "../export/testdata/refused/till/till.yaml")
	state := func(name string) *State { return machineState(t, m, name) }
	shift, tally, desk := state("Shift"), state("Tally"), state("Desk")
	assert.True(t, m.RemembersFinal(shift, tally), "Tally's done may leave Shift")
	assert.True(t, m.RemembersFinal(desk, desk), "Desk's done leaves Desk")

	// A memory with every region of Tally and of Desk final.
	hist := make([]*State, m.HistSlots())
	hist[shift.Hist], hist[desk.Hist] = tally, desk
	for _, mem := range m.Memories {
		hist[mem.Slot] = mem.Region.Finals[0]
	}
	labels := func(w *Way) []string {
		var out []string
		for _, r := range w.Rules {
			out = append(out, r.Label)
		}
		return out
	}
	actions := func(tr Trace) []string {
		var out []string
		for _, a := range tr.Actions {
			out = append(out, a.Name)
		}
		return out
	}
	resume := func(label string) (ways []*Way, mems [][]*State) {
		var rule *Rule
		for _, r := range m.Rules {
			if r.Label == label {
				rule = r
			}
		}
		require.NotNil(t, rule, label)
		w := &Way{From: rule.From, Event: rule.Event, Rules: []*Rule{rule}, To: rule.To}
		rw, mem := m.resolveRegional(regionWay{way: w}, hist)
		require.NotNil(t, rw.way.Resumed, "%s resumes the regions", label)
		settled, mems := m.settleAll(rw, mem)
		for _, rw := range settled {
			tr, _ := m.step(rw.way, restored(rw.way.From))
			rw.way.Trace = tr
			ways = append(ways, rw.way)
		}
		return ways, mems
	}

	ways, mems := resume("Off --Power--> Shift.history")
	require.Len(t, ways, 2, "one way per branch of Tally's done")
	assert.Equal(t, []string{"Off --Power--> Shift.history", "Tally --done [balanced]--> Off / Seal"}, labels(ways[0]))
	assert.Equal(t, "Off", ways[0].To.Name)
	assert.Equal(t, []string{"ShiftIn", "TallyIn", "D2In", "P2In", "TallyOut", "ShiftOut", "Seal"}, actions(ways[0].Trace))
	assert.Equal(t, hist, mems[0], "leaving Shift again, it remembers every region final again")
	assert.Equal(t, []string{"Off --Power--> Shift.history", "Tally --done [else]--> Audit / Flag"}, labels(ways[1]))
	assert.Equal(t, "Audit", ways[1].To.Name)
	assert.Equal(t, []string{"ShiftIn", "TallyIn", "D2In", "P2In", "TallyOut", "Flag", "AuditIn"}, actions(ways[1].Trace))

	ways, mems = resume("Off --Open--> Desk.history")
	require.Len(t, ways, 1)
	assert.Equal(t, []string{"Off --Open--> Desk.history", "Desk --done--> Off / Done"}, labels(ways[0]))
	assert.Equal(t, []string{"DeskIn", "C2In", "S2In", "DeskOut", "Done"}, actions(ways[0].Trace))
	assert.Equal(t, hist, mems[0])

	// Remembering one region final only, the regions rest where resumed.
	part := slices.Clone(hist)
	for _, mem := range m.Memories {
		if mem.Region.Parallel == desk && mem.Region.Index == desk.Regions[0].Index {
			part[mem.Slot] = mem.Region.Initial
		}
	}
	hist = part
	ways, _ = resume("Off --Open--> Desk.history")
	require.Len(t, ways, 1)
	assert.Equal(t, []string{"Off --Open--> Desk.history"}, labels(ways[0]))
	assert.Equal(t, "Desk", ways[0].To.Name)
}
