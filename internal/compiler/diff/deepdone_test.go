package diff_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/diff"
)

// TestDoneUnderDeepHistory checks that a done transition given to a
// parallel state a deep history holds says that a saved memory with every
// region final no longer loads either.
func TestDoneUnderDeepHistory(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../export/testdata/refused/ledger/ledger.yaml")
	require.NoError(t, err)
	withDone := string(src)
	start := strings.Index(withDone, "        done:\n")
	end := strings.Index(withDone, "        states:\n          Left:")
	require.True(t, start > 0 && end > start)
	noDone := withDone[:start] + withDone[end:]
	noDone = strings.Replace(noDone, "  Fin: {}\n  Redo: {}\n", "", 1)
	noDone = strings.Replace(noDone, "guards:\n  audited: {}\n", "", 1)
	noDone = strings.Replace(noDone, "  - {from: Off, on: Power, to: Live.history}\n", "  - {from: Off, on: Power, to: Live.history}\n  - {from: Work, on: Reopen, to: Filed}\n", 1)
	noDone = strings.Replace(noDone, "        ignore: [Reopen, Credit, Debit]\n", "        ignore: [Credit, Debit]\n", 1)
	rep := diff.Compare(machine(t, "old.yaml", noDone), machine(t, "new.yaml", withDone))
	var why string
	for _, c := range rep.Changes {
		if c.Subject == "state Work" && c.What == "gained a done transition" {
			why = c.Why[diff.SavedStates]
		}
	}
	assert.Contains(t, why, "nor one whose deep history remembers every region of Work final")
}

// TestDoneBesideOwnDeepHistory checks that a done transition given to a
// parallel state with a deep history of its own does not say a saved
// memory with every region final no longer loads: the done transition
// leaves the history's state, which then remembers every region final,
// and resuming it completes the parallel state again.
func TestDoneBesideOwnDeepHistory(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../export/testdata/refused/till/till.yaml")
	require.NoError(t, err)
	withDone := string(src)
	noDone := strings.Replace(withDone, "    done:\n      to: Off\n      action: Done\n", "", 1)
	require.NotEqual(t, withDone, noDone)
	noDone = strings.Replace(noDone, "  Done: {}\n", "", 1)
	rep := diff.Compare(machine(t, "old.yaml", noDone), machine(t, "new.yaml", withDone))
	var why string
	for _, c := range rep.Changes {
		if c.Subject == "state Desk" && c.What == "gained a done transition" {
			why = c.Why[diff.SavedStates]
		}
	}
	require.NotEmpty(t, why)
	assert.NotContains(t, why, "deep history remembers every region")
}

// TestDoneNoLongerLeavesDeepHistory checks that a done transition made to
// stay inside the state of a deep history around its parallel state says
// that a saved memory with every region final no longer loads: the
// history remembered that when the done transition left its state.
func TestDoneNoLongerLeavesDeepHistory(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../export/testdata/refused/till/till.yaml")
	require.NoError(t, err)
	leaves := string(src)
	stays := strings.Replace(leaves, "            - if: balanced\n              to: Off\n", "            - if: balanced\n              to: Audit\n", 1)
	require.NotEqual(t, leaves, stays)
	find := func(rep *diff.Report) string {
		for _, c := range rep.Changes {
			if c.Subject == "state Tally" && c.What == "done transition no longer leaves Shift" {
				return c.Why[diff.SavedStates]
			}
		}
		return ""
	}
	why := find(diff.Compare(machine(t, "old.yaml", leaves), machine(t, "new.yaml", stays)))
	assert.Contains(t, why, "remembers every region of Tally final")
	assert.Empty(t, find(diff.Compare(machine(t, "old.yaml", stays), machine(t, "new.yaml", leaves))), "a memory the old revision never kept")
}
