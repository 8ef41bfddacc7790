package agentflow_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/fsmgen/fsmgen/agent/temporal/agentflow"
	"github.com/fsmgen/fsmgen/temporal/fsmtemporal"
)

// TestReplay: the history of a session recorded on a real server
// (agent/temporal/realserver's TestSession, with -update) replays against
// the current code, which takes the same steps: the agent's machine, its
// behaviour and the adapter are deterministic. Once the spec declares a
// break (docs/tutorial.md's new guard, say), the code no longer continues
// sessions of the recorded revision: their replay is refused, by name, as
// workers refuse them, until the history is recorded again.
func TestReplay(t *testing.T) {
	t.Parallel()
	b, err := agentflow.Behavior(agentflow.SessionConfig{Model: "fake-model", System: "You are a test."})
	require.NoError(t, err)
	r := worker.NewWorkflowReplayer()
	fsmtemporal.RegisterWorkflow(r, agentflow.Def(b), agentflow.Options("workspace-host", time.Minute))
	quiet := log.NewStructuredLogger(slog.New(slog.DiscardHandler))
	path := filepath.Join("testdata", "session.json")
	err = r.ReplayWorkflowHistoryFromJSONFile(quiet, path)
	if recorded := recordedRevision(t, path); recorded < agentflow.MinRevision {
		require.Error(t, err, "a session of revision %d, which this code no longer continues", recorded)
		assert.ErrorContains(t, err, fmt.Sprintf(`removed support of version %d. for "fsmgen/%s"`, recorded, agentflow.Name))
		return
	}
	require.NoError(t, err)
}

// recordedRevision returns the revision of the spec the recorded session
// ran: the version its GetVersion marker holds.
func recordedRevision(t *testing.T, path string) workflow.Version {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	require.NoError(t, err)
	for _, ev := range h.GetEvents() {
		m := ev.GetMarkerRecordedEventAttributes()
		if m == nil || m.GetMarkerName() != "Version" {
			continue
		}
		var v workflow.Version
		require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(m.GetDetails()["version"], &v))
		return v
	}
	t.Fatalf("%s holds no revision marker", path)
	return 0
}
