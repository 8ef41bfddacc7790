package agentflow_test

import (
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/fsmgen/fsmgen/agent/temporal/agentflow"
	"github.com/fsmgen/fsmgen/temporal/fsmtemporal"
)

// TestReplay: the history of a session recorded on a real server
// (agent/temporal/realserver's TestSession, with -update) replays against
// the current code, which takes the same steps: the agent's machine, its
// behaviour and the adapter are deterministic. A change of the machine that
// running sessions cannot follow fails here until the spec declares it (a
// new revision) and the history is recorded again.
func TestReplay(t *testing.T) {
	t.Parallel()
	b, err := agentflow.Behavior(agentflow.SessionConfig{Model: "fake-model", System: "You are a test."})
	require.NoError(t, err)
	r := worker.NewWorkflowReplayer()
	fsmtemporal.RegisterWorkflow(r, agentflow.Def(b), agentflow.Options("workspace-host", time.Minute))
	quiet := log.NewStructuredLogger(slog.New(slog.DiscardHandler))
	require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(quiet, filepath.Join("testdata", "session.json")))
}
