package realserver_test

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/server/temporaltest"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/agent/temporal/agentflow"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/temporal/fsmtemporal"
)

var update = flag.Bool("update", false, "write the history recorded here to ../agentflow/testdata, for agentflow's replay test")

// quiet is the logger of the server's clients and workers.
var quiet = log.NewStructuredLogger(slog.New(slog.DiscardHandler))

// The task queues: the workflow's and the LLM's, and the workspace's host.
const (
	sessionQueue   = "agent"
	workspaceQueue = "workspace-host"
)

// session is the configuration the replay test replays with too.
var session = agentflow.SessionConfig{Model: "fake-model", System: "You are a test."}

// TestSession runs a turn on a real server: the model asks for a command,
// which runs on the workspace's worker (its own task queue), then answers.
// The history holds the activities the turn needs and no marker but the
// revision's; the current code replays it.
func TestSession(t *testing.T) {
	t.Parallel()
	ts := temporaltest.NewServer(temporaltest.WithT(t), temporaltest.WithBaseClientOptions(client.Options{Logger: quiet}))
	c := ts.GetDefaultClient()
	ctx := context.Background()
	srv := fakellm.New(t, fakellm.Anthropic,
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "bash", Args: `{"command":"printf hi > f.txt"}`}}},
		fakellm.Reply{Text: "Wrote f.txt."})
	ws := t.TempDir()
	b, err := agentflow.Behavior(session)
	require.NoError(t, err)
	wk, err := agentflow.NewWorker(agentflow.WorkerConfig{Provider: "anthropic", APIKey: "sk-ant-test-0123456789", BaseURL: srv.BaseURL(), Workspace: ws})
	require.NoError(t, err)
	def := agentflow.Def(b)
	opts := agentflow.Options(workspaceQueue, time.Minute)
	for _, q := range []string{sessionQueue, workspaceQueue} {
		w := worker.New(c, q, worker.Options{})
		if q == sessionQueue {
			fsmtemporal.RegisterWorkflow(w, def, opts)
		}
		fsmtemporal.RegisterActivities[*agent.Machine, agent.Event, agent.Action, agentflow.Activities](w, def, wk)
		require.NoError(t, w.Start())
		t.Cleanup(w.Stop)
	}

	const id = "session-1"
	run, err := fsmtemporal.Start(ctx, c, client.StartWorkflowOptions{ID: id, TaskQueue: sessionQueue}, agentflow.Name, nil)
	require.NoError(t, err)
	msg := chat.UserMessage("Write f.txt.")
	msg.ID = "u1"
	_, err = fsmtemporal.Send(ctx, c, id, &agent.UserInput{Message: msg})
	require.NoError(t, err, "the message is taken")
	var last agent.State
	require.Eventually(t, func() bool {
		data, err := fsmtemporal.State(ctx, c, id)
		if err != nil {
			return false
		}
		st, err := agent.UnmarshalState(data)
		if err != nil {
			return false
		}
		last = st
		conv, _ := agent.ConversationOf(st)
		return st.Kind() == agent.StateWaitingForUserInput && conv.Len() == 4
	}, time.Minute, 20*time.Millisecond, "the turn ends")
	conv, _ := agent.ConversationOf(last)
	assert.Equal(t, "Wrote f.txt.", conv.Messages()[3].Content)
	data, err := os.ReadFile(filepath.Join(ws, "f.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hi", string(data))

	require.NoError(t, fsmtemporal.Signal(ctx, c, id, &agent.ShutdownRequested{}))
	require.NoError(t, run.Get(ctx, nil))
	h := history(t, c, id)
	var scheduled []string
	for _, ev := range h.Events {
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			scheduled = append(scheduled, a.GetActivityType().GetName()+"@"+a.GetTaskQueue().GetName())
		}
	}
	assert.Equal(t, []string{
		"Agent.SendLlmRequest@" + sessionQueue,
		"Agent.ExecuteTools@" + workspaceQueue,
		"Agent.RunPostToolsHook@" + workspaceQueue,
		"Agent.SendLlmRequest@" + sessionQueue,
	}, scheduled, "the LLM calls on the session's queue, the tools on the workspace's")
	markers := 0
	for _, ev := range h.Events {
		if ev.GetEventType() == enumspb.EVENT_TYPE_MARKER_RECORDED {
			markers++
		}
	}
	assert.Equal(t, 1, markers, "the revision's marker alone")
	record(t, h, def, opts)
}

// history returns the workflow's whole history.
func history(t *testing.T, c client.Client, id string) *historypb.History {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		h.Events = append(h.Events, ev)
	}
	return h
}

// record replays h against the current code, and with -update writes it to
// ../agentflow/testdata/session.json.
func record(t *testing.T, h *historypb.History, def *fsmtemporal.Def[*agent.Machine, agent.Event, agent.Action, agentflow.Activities], opts fsmtemporal.Options[agent.Event, agent.Action]) {
	t.Helper()
	r := worker.NewWorkflowReplayer()
	fsmtemporal.RegisterWorkflow(r, def, opts)
	require.NoError(t, r.ReplayWorkflowHistory(quiet, h), "the current code replays the history it recorded")
	if !*update {
		return
	}
	data, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(h)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join("..", "agentflow", "testdata", "session.json"), append(data, '\n'), 0o644))
}
