package agentflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/agent/temporal/agentflow"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/temporal/fsmtemporal"
)

const testKey = "sk-ant-test-0123456789abcdef"

// session is a session's workflow on the SDK's test environment, its
// worker calling a fake LLM server and working in a temporary workspace.
type session struct {
	env *testsuite.TestWorkflowEnvironment
	srv *fakellm.Server
	ws  string
	// states are the states the query answered, in the order asked.
	states []agent.State
}

// newSession registers the workflow and x's activities (nil: the worker's).
func newSession(t *testing.T, x func(s *session, w *agentflow.Worker) agentflow.Activities, dc converter.DataConverter, replies ...fakellm.Reply) *session {
	t.Helper()
	s := &session{srv: fakellm.New(t, fakellm.Anthropic, replies...), ws: t.TempDir()}
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	s.env = suite.NewTestWorkflowEnvironment()
	// A workflow task may pause for more than the SDK's second on two busy
	// cores without blocking; workflowcheck checks that nothing blocks.
	s.env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	if dc != nil {
		s.env.SetDataConverter(dc)
	}
	b, err := agentflow.Behavior(agentflow.SessionConfig{Model: "fake-model", System: "You are a test."})
	require.NoError(t, err)
	w, err := agentflow.NewWorker(agentflow.WorkerConfig{Provider: "anthropic", APIKey: testKey, BaseURL: s.srv.BaseURL(), Workspace: s.ws})
	require.NoError(t, err)
	var acts agentflow.Activities = w
	if x != nil {
		acts = x(s, w)
	}
	def := agentflow.Def(b)
	fsmtemporal.RegisterWorkflow(s.env, def, agentflow.Options("workspace-host", time.Minute))
	fsmtemporal.RegisterActivities(s.env, def, acts)
	return s
}

// at sends ev to the workflow as a signal at d from the start.
func (s *session) at(t *testing.T, d time.Duration, ev agent.Event) {
	t.Helper()
	data, err := json.Marshal(ev)
	require.NoError(t, err)
	s.env.RegisterDelayedCallback(func() { s.env.SignalWorkflow(fsmtemporal.EventSignal, json.RawMessage(data)) }, d)
}

// queryAt asks the workflow's state at d from the start.
func (s *session) queryAt(t *testing.T, d time.Duration) {
	s.env.RegisterDelayedCallback(func() {
		v, err := s.env.QueryWorkflow(fsmtemporal.StateQuery)
		require.NoError(t, err)
		var data json.RawMessage
		require.NoError(t, v.Get(&data))
		st, err := agent.UnmarshalState(data)
		require.NoError(t, err)
		s.states = append(s.states, st)
	}, d)
}

// run runs the workflow to its end: a shutdown at the end of test time.
func (s *session) run(t *testing.T) {
	t.Helper()
	s.at(t, 24*time.Hour, &agent.ShutdownRequested{})
	s.env.ExecuteWorkflow(agentflow.Name, fsmtemporal.Input{})
	require.True(t, s.env.IsWorkflowCompleted())
	require.NoError(t, s.env.GetWorkflowError())
}

// messages returns a state's conversation as role: text lines.
func messages(st agent.State) []string {
	c, _ := agent.ConversationOf(st)
	var out []string
	for _, m := range c.Messages() {
		line := string(m.Role) + ": " + m.Content
		for _, tc := range m.ToolCalls {
			line += " [" + tc.Name + "]"
		}
		if m.IsError {
			line += " (error)"
		}
		out = append(out, line)
	}
	return out
}

func userInput(text string) *agent.UserInput {
	m := chat.UserMessage(text)
	m.ID = "u-" + strings.ReplaceAll(text, " ", "-")
	return &agent.UserInput{Message: m}
}

// TestSession: a turn as a workflow — the model's tool call runs in the
// workspace (bash, sandboxed), its result goes back to the model, whose
// answer ends the turn; the conversation is in the state query, the
// key is never in it, and a second message goes on in the same
// conversation.
func TestSession(t *testing.T) {
	t.Parallel()
	s := newSession(t, nil, nil,
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "bash", Args: `{"command":"printf hi > f.txt; echo key=` + testKey + `"}`}}},
		fakellm.Reply{Text: "Wrote f.txt."},
		fakellm.Reply{Text: "It says hi."})
	s.at(t, time.Second, userInput("Write f.txt."))
	s.queryAt(t, time.Hour)
	s.at(t, 2*time.Hour, userInput("What does it say?"))
	s.queryAt(t, 3*time.Hour)
	s.run(t)

	data, err := os.ReadFile(filepath.Join(s.ws, "f.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hi", string(data), "the tool ran in the workspace")
	require.Len(t, s.states, 2)
	assert.Equal(t, agent.StateWaitingForUserInput, s.states[0].Kind())
	first := messages(s.states[0])
	require.Len(t, first, 4, "%q", first)
	assert.Equal(t, "user: Write f.txt.", first[0])
	assert.Equal(t, "assistant:  [bash]", first[1])
	assert.Contains(t, first[2], "key=[REDACTED]", "the tool's output, redacted")
	assert.Equal(t, "assistant: Wrote f.txt.", first[3])
	assert.Equal(t, append(first, "user: What does it say?", "assistant: It says hi."), messages(s.states[1]))
	reqs := s.srv.Requests()
	require.Len(t, reqs, 3)
	assert.Len(t, reqs[2].Messages, 5, "the second turn sends the whole conversation")
	for _, st := range s.states {
		raw, err := json.Marshal(st)
		require.NoError(t, err)
		assert.NotContains(t, string(raw), testKey)
	}
}

// lostTools is a worker whose tools' host is lost: the activity fails.
type lostTools struct{ *agentflow.Worker }

func (lostTools) ExecuteTools(context.Context, []chat.ToolCall) error {
	return errors.New("the workspace's host went away")
}

// TestToolsHostLost: the tools' activity is not retried (a command may
// have run); the turn is stopped, as when the user stops it, and the
// session takes the next message.
func TestToolsHostLost(t *testing.T) {
	t.Parallel()
	s := newSession(t, func(_ *session, w *agentflow.Worker) agentflow.Activities { return lostTools{w} }, nil,
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "bash", Args: `{"command":"true"}`}}},
		fakellm.Reply{Text: "Again, then."})
	s.at(t, time.Second, userInput("Run it."))
	s.queryAt(t, time.Hour)
	s.at(t, 2*time.Hour, userInput("Try again."))
	s.queryAt(t, 3*time.Hour)
	s.run(t)
	require.Len(t, s.states, 2)
	assert.Equal(t, agent.StateWaitingForUserInput, s.states[0].Kind(), "the turn was stopped")
	assert.Equal(t, "assistant: Again, then.", messages(s.states[1])[len(messages(s.states[1]))-1])
	assert.Len(t, s.srv.Requests(), 2)
}

// countingStore is a DirStore that counts the blobs put.
type countingStore struct {
	fsmtemporal.DirStore
	puts int
}

func (c *countingStore) Put(key string, data []byte) error {
	c.puts++
	return c.DirStore.Put(key, data)
}

// TestLargeConversation: a conversation past the claim check's limit is
// passed by reference (here 4 KiB, Temporal's being 2 MB): the session
// goes on, the model gets the whole conversation.
func TestLargeConversation(t *testing.T) {
	t.Parallel()
	store := &countingStore{DirStore: fsmtemporal.DirStore(t.TempDir())}
	dc := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), fsmtemporal.ClaimCheck(store, 4<<10))
	long := strings.Repeat("a long message ", 2000)
	s := newSession(t, nil, dc, fakellm.Reply{Text: "Read it."}, fakellm.Reply{Text: "Still here."})
	s.at(t, time.Second, userInput(long))
	s.at(t, time.Hour, userInput("And?"))
	s.queryAt(t, 2*time.Hour)
	s.run(t)
	assert.Positive(t, store.puts, "the large payloads went to the store")
	require.Len(t, s.states, 1)
	got := messages(s.states[0])
	require.Len(t, got, 4)
	assert.True(t, got[0] == "user: "+long, "the long message whole")
	assert.Equal(t, []string{"assistant: Read it.", "user: And?", "assistant: Still here."}, got[1:])
	reqs := s.srv.Requests()
	require.Len(t, reqs, 2)
	assert.True(t, reqs[1].Messages[0].Text == long, "the model got the long message whole")
}

// interruptingUser is a worker whose user interrupts the turn as its
// tools start: the signal is queued before the activity can end.
type interruptingUser struct {
	*agentflow.Worker
	s *session
	t *testing.T
}

func (x interruptingUser) ExecuteTools(ctx context.Context, calls []chat.ToolCall) error {
	data, err := json.Marshal(&agent.Interrupt{})
	require.NoError(x.t, err)
	x.s.env.SignalWorkflow(fsmtemporal.EventSignal, json.RawMessage(data))
	return x.Worker.ExecuteTools(ctx, calls)
}

// TestInterruptDuringTools: the user's interrupt, sent while a command
// runs, is taken as soon as the command's activity ends, before its
// result: the turn stops there (the model is not called again) instead
// of at the end of the turn.
func TestInterruptDuringTools(t *testing.T) {
	t.Parallel()
	s := newSession(t, func(s *session, w *agentflow.Worker) agentflow.Activities { return interruptingUser{w, s, t} }, nil,
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "bash", Args: `{"command":"echo ran"}`}}},
		fakellm.Reply{Text: "Never sent."})
	s.at(t, time.Second, userInput("Run it."))
	s.queryAt(t, time.Hour)
	s.run(t)
	require.Len(t, s.states, 1)
	assert.Equal(t, agent.StateWaitingForUserInput, s.states[0].Kind())
	assert.Len(t, s.srv.Requests(), 1, "the model is not called after the interrupt")
	got := messages(s.states[0])
	assert.Contains(t, got[len(got)-1], "stopped", "%q", got)
}

// typingUser is a worker whose user types a message as the turn's tools
// start: the signal is queued before the activity can end.
type typingUser struct {
	*agentflow.Worker
	s *session
	t *testing.T
}

func (x typingUser) ExecuteTools(ctx context.Context, calls []chat.ToolCall) error {
	data, err := json.Marshal(userInput("And now?"))
	require.NoError(x.t, err)
	x.s.env.SignalWorkflow(fsmtemporal.EventSignal, json.RawMessage(data))
	return x.Worker.ExecuteTools(ctx, calls)
}

// TestInputDuringTurn: a message the user sends while a command runs is
// held by the machine (its busy states defer UserInput): the turn goes
// on to its reply, and the message then starts the next turn.
func TestInputDuringTurn(t *testing.T) {
	t.Parallel()
	s := newSession(t, func(s *session, w *agentflow.Worker) agentflow.Activities { return typingUser{w, s, t} }, nil,
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "bash", Args: `{"command":"echo ran"}`}}},
		fakellm.Reply{Text: "Ran it."},
		fakellm.Reply{Text: "Second answer."})
	s.at(t, time.Second, userInput("Run it."))
	s.queryAt(t, time.Hour)
	s.run(t)
	require.Len(t, s.states, 1)
	assert.Equal(t, agent.StateWaitingForUserInput, s.states[0].Kind())
	got := messages(s.states[0])
	require.Len(t, got, 6, "%q", got)
	assert.Equal(t, []string{"user: Run it.", "assistant:  [bash]"}, got[:2])
	assert.Equal(t, []string{"assistant: Ran it.", "user: And now?", "assistant: Second answer."}, got[3:])
	assert.Len(t, s.srv.Requests(), 3)
}
