package behavior_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// Helpers that build events and responses.

func user(text string) agent.Event { return &agent.UserInput{Message: chat.UserMessage(text)} }

func reply(text string, calls ...chat.ToolCall) agent.Event {
	return &agent.LLMCompleted{Response: chat.Response{Message: chat.Message{Role: chat.RoleAssistant, Content: text, ToolCalls: calls}}}
}

func call(id, name string) chat.ToolCall {
	return chat.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(`{}`)}
}

func done(id, content string) agent.Event {
	return &agent.ToolCompleted{CallID: id, Outcome: chat.ToolOutcome{Content: content}}
}

func failed(id, content string) agent.Event {
	return &agent.ToolCompleted{CallID: id, Outcome: chat.ToolOutcome{Content: content, IsError: true}}
}

func llmErr(kind chat.ErrorKind) agent.Event {
	return &agent.LLMError{Error: chat.LLMError{Kind: kind, Message: string(kind)}}
}

// config returns the default configuration with changes applied.
func config(change func(*behavior.Config)) behavior.Config {
	cfg := behavior.DefaultConfig()
	if change != nil {
		change(&cfg)
	}
	return cfg
}

// newAgent returns the behaviour for cfg.
func newAgent(t *testing.T, cfg behavior.Config) *behavior.Agent {
	t.Helper()
	b, err := behavior.New(cfg)
	require.NoError(t, err)
	return b
}

// step is one event of a scenario and what must follow from it.
type step struct {
	event  agent.Event
	state  agent.StateKind
	action agent.ActionKind // 0: no action
	// then is the action of a message the machine held (deferred) and
	// takes in the step, after action; 0: none.
	then     agent.ActionKind
	rejected bool
	check    func(t *testing.T, m *agent.Machine, act agent.Action)
}

// kept is what a step handed out, as JSON when it was handed out: the
// action and the state, which must never change afterwards.
type kept struct {
	act, state      any
	actJSON, stJSON string
}

// newMachine returns a machine made by New in the initial state initial.
func newMachine(t *testing.T, b agent.Behavior, h agent.Handler, initial agent.WaitingForUserInput) *agent.Machine {
	t.Helper()
	m, err := agent.New(agent.Config{Behavior: b, Handler: h, Initial: initial})
	require.NoError(t, err)
	return m
}

// run feeds the steps to a fresh machine with a Recorder as its handler
// and checks each one. Every action and state handed out is kept and
// checked again at the end: later events must not have changed them.
func run(t *testing.T, cfg behavior.Config, steps []step) *agent.Machine {
	t.Helper()
	rec := &agent.Recorder{}
	m := newMachine(t, newAgent(t, cfg), rec, agent.WaitingForUserInput{Conversation: chat.NewConversation("T-test")})
	var keep []kept
	for i, s := range steps {
		before := len(rec.Actions)
		err := m.HandleEvent(s.event)
		if s.rejected {
			require.ErrorIs(t, err, fsmrt.ErrRejected, "step %d", i)
		} else {
			require.NoError(t, err, "step %d", i)
		}
		require.Equal(t, s.state, m.Kind(), "step %d: state", i)
		acts := rec.Actions[before:]
		var act agent.Action
		if s.action == 0 {
			require.Empty(t, acts, "step %d: actions", i)
		} else {
			want := []agent.ActionKind{s.action}
			if s.then != 0 {
				want = append(want, s.then)
			}
			var got []agent.ActionKind
			for _, a := range acts {
				got = append(got, a.Kind())
			}
			require.Equal(t, want, got, "step %d: actions", i)
			act = acts[0]
		}
		if s.check != nil {
			s.check(t, m, act)
		}
		st := m.State()
		keep = append(keep, kept{act: act, state: st, actJSON: jsonOf(t, act), stJSON: jsonOf(t, st)})
	}
	for i, k := range keep {
		assert.JSONEq(t, k.actJSON, jsonOf(t, k.act), "step %d: the action handed out changed later", i)
		assert.JSONEq(t, k.stJSON, jsonOf(t, k.state), "step %d: the state handed out changed later", i)
	}
	return m
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	return string(data)
}

// messages returns the conversation of the machine's state.
func messages(t *testing.T, m *agent.Machine) []chat.Message {
	t.Helper()
	c, ok := agent.ConversationOf(m.State())
	require.True(t, ok, "state %s has no conversation", m.Kind())
	return c.Messages()
}

func contents(ms []chat.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = string(m.Role) + ":" + m.Content
	}
	return out
}

func sent(t *testing.T, act agent.Action) chat.Request {
	t.Helper()
	a, ok := act.(*agent.SendLLMRequest)
	require.True(t, ok, "action %T is not SendLLMRequest", act)
	return a.Request
}

func TestTurns(t *testing.T) {
	cfg := config(func(c *behavior.Config) { c.Model, c.System, c.MaxTokens = "m1", "be brief", 100 })
	tests := []struct {
		name  string
		steps []step
	}{
		{"plain reply: user input, streamed text, completion", []step{
			{event: user("hi"), state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest, check: func(t *testing.T, m *agent.Machine, act agent.Action) {
				req := sent(t, act)
				assert.Equal(t, "m1", req.Model)
				assert.Equal(t, "be brief", req.System)
				assert.Equal(t, 100, req.MaxTokens)
				assert.Equal(t, []string{"user:hi"}, contents(req.Messages))
			}},
			{event: &agent.TextDelta{Content: "Hel"}, state: agent.StateCallingLLM, action: agent.ActionDisplayMessage, check: func(t *testing.T, _ *agent.Machine, act agent.Action) {
				assert.Equal(t, "Hel", act.(*agent.DisplayMessage).Content)
			}},
			{event: &agent.ToolCallDelta{CallID: "c", ToolName: "read_file", ArgumentsFragment: "{"}, state: agent.StateCallingLLM, action: agent.ActionWaitForInput},
			{event: reply("Hello"), state: agent.StateWaitingForUserInput, action: agent.ActionWaitForInput, check: func(t *testing.T, m *agent.Machine, _ agent.Action) {
				assert.Equal(t, []string{"user:hi", "assistant:Hello"}, contents(messages(t, m)), "the stored reply comes from Completed, not the deltas")
			}},
			{event: &agent.TextDelta{Content: "late"}, state: agent.StateWaitingForUserInput, rejected: true},
		}},
		{"non-mutating tool round goes straight back to the LLM", []step{
			{event: user("read a"), state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest},
			{event: reply("reading", call("r1", "read_file")), state: agent.StateExecutingTools, action: agent.ActionExecuteTools, check: func(t *testing.T, _ *agent.Machine, act agent.Action) {
				assert.Equal(t, []chat.ToolCall{call("r1", "read_file")}, act.(*agent.ExecuteTools).Calls)
			}},
			{event: done("r1", "contents"), state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest, check: func(t *testing.T, m *agent.Machine, act agent.Action) {
				req := sent(t, act)
				assert.Equal(t, []string{"user:read a", "assistant:reading", "tool:contents"}, contents(req.Messages))
				assert.Equal(t, "r1", req.Messages[2].ToolCallID)
				assert.Equal(t, 0, m.State().(agent.CallingLLM).Retries)
			}},
			{event: reply("it says contents"), state: agent.StateWaitingForUserInput, action: agent.ActionWaitForInput},
		}},
		{"parallel tools completing out of order: results in the LLM's order, hook after a mutating tool", []step{
			{event: user("go"), state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest},
			{event: reply("", call("a", "read_file"), call("b", "bash"), call("c", "read_file")), state: agent.StateExecutingTools, action: agent.ActionExecuteTools},
			{event: done("c", "C"), state: agent.StateExecutingTools, action: agent.ActionWaitForInput},
			{event: &agent.ToolProgress{CallID: "b", Progress: chat.ToolProgress{Fraction: 0.5, Message: "half"}}, state: agent.StateExecutingTools, action: agent.ActionWaitForInput, check: func(t *testing.T, m *agent.Machine, _ agent.Action) {
				ex := m.State().(agent.ExecutingTools).Executions.Executions()
				assert.Equal(t, chat.ToolPending, ex[0].Status)
				assert.Equal(t, chat.ToolRunning, ex[1].Status, "progress moves Pending to Running")
				assert.Equal(t, "half", ex[1].Progress.Message)
				assert.Equal(t, chat.ToolCompleted, ex[2].Status)
			}},
			{event: &agent.ToolProgress{CallID: "zzz"}, state: agent.StateExecutingTools},
			{event: done("a", "A"), state: agent.StateExecutingTools, action: agent.ActionWaitForInput},
			{event: user("are you done?"), state: agent.StateExecutingTools}, // held (deferred)
			{event: failed("b", "exit 1"), state: agent.StatePostToolsHook, action: agent.ActionRunPostToolsHook, check: func(t *testing.T, m *agent.Machine, act agent.Action) {
				assert.Equal(t, []chat.CompletedTool{
					{CallID: "a", ToolName: "read_file", Succeeded: true},
					{CallID: "b", ToolName: "bash", Succeeded: false},
					{CallID: "c", ToolName: "read_file", Succeeded: true},
				}, act.(*agent.RunPostToolsHook).CompletedTools.Completed(), "a failed bash still runs the hook")
				h := m.State().(agent.PostToolsHook)
				assert.Equal(t, []string{"user:go", "assistant:", "tool:A", "tool:exit 1", "tool:C"}, contents(h.Conversation.Messages()))
				assert.True(t, h.Conversation.Messages()[3].IsError)
				assert.Equal(t, contents(h.Conversation.Messages()), contents(h.PendingRequest.Messages), "the next request is frozen before the hook")
			}},
			{event: &agent.PostToolsHookCompleted{ActionTaken: true}, state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest, check: func(t *testing.T, m *agent.Machine, act agent.Action) {
				assert.Equal(t, []string{"user:go", "assistant:", "tool:A", "tool:exit 1", "tool:C"}, contents(sent(t, act).Messages))
			}},
			// The turn ends, and the message held during the tools starts the next.
			{event: reply("done"), state: agent.StateCallingLLM, action: agent.ActionWaitForInput, then: agent.ActionSendLLMRequest},
		}},
		{"unknown and duplicate completions are rejected and never overwrite a result", []step{
			{event: user("go"), state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest},
			{event: reply("", call("a", "read_file"), call("b", "read_file")), state: agent.StateExecutingTools, action: agent.ActionExecuteTools},
			{event: done("a", "first"), state: agent.StateExecutingTools, action: agent.ActionWaitForInput},
			{event: done("a", "second"), state: agent.StateExecutingTools, rejected: true},
			{event: done("nope", "x"), state: agent.StateExecutingTools, rejected: true},
			{event: done("b", "B"), state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest, check: func(t *testing.T, _ *agent.Machine, act agent.Action) {
				assert.Equal(t, []string{"user:go", "assistant:", "tool:first", "tool:B"}, contents(sent(t, act).Messages))
			}},
			{event: done("a", "late"), state: agent.StateCallingLLM, rejected: true},
		}},
		{"duplicate call ids in one reply each get their own result", []step{
			{event: user("go"), state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest},
			{event: reply("", call("x", "read_file"), call("x", "read_file")), state: agent.StateExecutingTools, action: agent.ActionExecuteTools},
			{event: done("x", "one"), state: agent.StateExecutingTools, action: agent.ActionWaitForInput},
			{event: done("x", "two"), state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest, check: func(t *testing.T, _ *agent.Machine, act agent.Action) {
				assert.Equal(t, []string{"user:go", "assistant:", "tool:one", "tool:two"}, contents(sent(t, act).Messages))
			}},
		}},
		{"a failed edit_file still runs the hook", []step{
			{event: user("edit"), state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest},
			{event: reply("", call("e", "edit_file")), state: agent.StateExecutingTools, action: agent.ActionExecuteTools},
			{event: failed("e", "no match"), state: agent.StatePostToolsHook, action: agent.ActionRunPostToolsHook},
		}},
		{"user input while busy is held, in order, and taken once the turn ends", []step{
			{event: user("one"), state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest},
			{event: user("two"), state: agent.StateCallingLLM},
			{event: llmErr(chat.ErrServer), state: agent.StateError, action: agent.ActionScheduleRetry},
			{event: user("three"), state: agent.StateError, check: func(t *testing.T, m *agent.Machine, _ agent.Action) {
				assert.Equal(t, []string{"user:one"}, contents(messages(t, m)), "held input is not added yet")
				assert.Equal(t, []agent.EventKind{agent.EventUserInput, agent.EventUserInput}, m.Deferred())
			}},
			{event: &agent.RetryTimeoutFired{}, state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest},
			{event: reply("first"), state: agent.StateCallingLLM, action: agent.ActionWaitForInput, then: agent.ActionSendLLMRequest, check: func(t *testing.T, m *agent.Machine, _ agent.Action) {
				assert.Equal(t, []string{"user:one", "assistant:first", "user:two"}, contents(messages(t, m)), "the turn ended and the oldest held message started the next")
				assert.Len(t, m.Deferred(), 1)
			}},
			{event: &agent.Interrupt{}, state: agent.StateCallingLLM, action: agent.ActionCancelTurn, then: agent.ActionSendLLMRequest, check: func(t *testing.T, m *agent.Machine, _ agent.Action) {
				got := contents(messages(t, m))
				assert.Equal(t, "user:three", got[len(got)-1], "a stopped turn ends too")
				assert.Empty(t, m.Deferred())
			}},
			{event: reply("third"), state: agent.StateWaitingForUserInput, action: agent.ActionWaitForInput},
		}},
		{"shutdown is idempotent and ShuttingDown ignores everything else", []step{
			{event: user("x"), state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest},
			{event: &agent.ShutdownRequested{}, state: agent.StateShuttingDown, action: agent.ActionShutdown},
			{event: &agent.ShutdownRequested{}, state: agent.StateShuttingDown, action: agent.ActionShutdown},
			{event: user("y"), state: agent.StateShuttingDown},
			{event: reply("late"), state: agent.StateShuttingDown},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { run(t, cfg, tt.steps) })
	}
}

func TestRetries(t *testing.T) {
	retry := func(attempt int, delay time.Duration) step {
		return step{event: llmErr(chat.ErrOverloaded), state: agent.StateError, action: agent.ActionScheduleRetry, check: func(t *testing.T, m *agent.Machine, act agent.Action) {
			a := act.(*agent.ScheduleRetry)
			assert.Equal(t, attempt, a.Attempt)
			assert.Equal(t, delay, a.Delay)
			assert.Equal(t, chat.ErrOverloaded, a.Error.Kind)
			e := m.State().(agent.Error)
			assert.Equal(t, attempt, e.Retries)
			assert.Equal(t, chat.OriginLLM, e.Origin)
		}}
	}
	fire := func(retries int) step {
		return step{event: &agent.RetryTimeoutFired{}, state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest, check: func(t *testing.T, m *agent.Machine, act agent.Action) {
			assert.Equal(t, retries, m.State().(agent.CallingLLM).Retries, "the count is kept across the retry")
			assert.Equal(t, []string{"user:hi"}, contents(sent(t, act).Messages))
		}}
	}
	giveUp := func(text string) step {
		return step{event: llmErr(chat.ErrOverloaded), state: agent.StateWaitingForUserInput, action: agent.ActionDisplayError, check: func(t *testing.T, m *agent.Machine, act agent.Action) {
			assert.Equal(t, text, act.(*agent.DisplayError).Message)
			assert.Equal(t, []string{"user:hi"}, contents(messages(t, m)), "the conversation is intact")
		}}
	}
	tests := []struct {
		name  string
		cfg   behavior.Config
		steps []step
	}{
		{"max_retries 3 means 4 attempts, backoff doubles", config(nil), []step{
			{event: user("hi"), state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest},
			retry(1, time.Second), fire(1),
			retry(2, 2*time.Second), fire(2),
			retry(3, 4*time.Second), fire(3),
			giveUp("LLM request failed after 4 attempts: overloaded: overloaded"),
		}},
		{"backoff is capped", config(func(c *behavior.Config) { c.MaxRetries, c.BaseDelay, c.MaxDelay = 5, 10*time.Second, 25*time.Second }), []step{
			{event: user("hi"), state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest},
			retry(1, 10*time.Second), fire(1),
			retry(2, 20*time.Second), fire(2),
			retry(3, 25*time.Second), fire(3),
		}},
		{"retries off: the first error is final", config(func(c *behavior.Config) { c.MaxRetries = 0 }), []step{
			{event: user("hi"), state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest},
			giveUp("LLM request failed: overloaded: overloaded (retries are off)"),
		}},
		{"non-retryable errors are not retried", config(nil), []step{
			{event: user("hi"), state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest},
			{event: &agent.LLMError{Error: chat.LLMError{Kind: chat.ErrAuth, StatusCode: 401, Message: "bad key"}}, state: agent.StateWaitingForUserInput, action: agent.ActionDisplayError, check: func(t *testing.T, _ *agent.Machine, act agent.Action) {
				assert.Equal(t, "LLM request failed: auth (HTTP 401): bad key (not retried)", act.(*agent.DisplayError).Message)
			}},
			{event: user("again"), state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest, check: func(t *testing.T, _ *agent.Machine, act agent.Action) {
				assert.Equal(t, []string{"user:hi", "user:again"}, contents(sent(t, act).Messages))
			}},
			{event: &agent.LLMError{Error: chat.LLMError{Kind: chat.ErrInvalidRequest, StatusCode: 400}}, state: agent.StateWaitingForUserInput, action: agent.ActionDisplayError},
		}},
		{"retry-after is honoured", config(nil), []step{
			{event: user("hi"), state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest},
			{event: &agent.LLMError{Error: chat.LLMError{Kind: chat.ErrRateLimited, StatusCode: 429, RetryAfter: 7 * time.Second}}, state: agent.StateError, action: agent.ActionScheduleRetry, check: func(t *testing.T, _ *agent.Machine, act agent.Action) {
				assert.Equal(t, 7*time.Second, act.(*agent.ScheduleRetry).Delay)
			}},
		}},
		{"the count restarts after a tool round", config(func(c *behavior.Config) { c.MaxRetries = 1 }), []step{
			{event: user("hi"), state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest},
			retry(1, time.Second), fire(1),
			{event: reply("", call("r", "read_file")), state: agent.StateExecutingTools, action: agent.ActionExecuteTools},
			{event: done("r", "R"), state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest},
			{event: llmErr(chat.ErrTimeout), state: agent.StateError, action: agent.ActionScheduleRetry},
			{event: &agent.RetryTimeoutFired{}, state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest, check: func(t *testing.T, _ *agent.Machine, act agent.Action) {
				msgs := sent(t, act).Messages
				assert.Equal(t, chat.RoleTool, msgs[len(msgs)-1].Role, "the retried request still ends with the tool result")
			}},
			{event: llmErr(chat.ErrTimeout), state: agent.StateWaitingForUserInput, action: agent.ActionDisplayError},
		}},
		{"a stale retry timer is rejected", config(nil), []step{
			{event: &agent.RetryTimeoutFired{}, state: agent.StateWaitingForUserInput, rejected: true},
			{event: user("hi"), state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest},
			{event: &agent.RetryTimeoutFired{}, state: agent.StateCallingLLM, rejected: true},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { run(t, tt.cfg, tt.steps) })
	}
}

func TestBackoff(t *testing.T) {
	a := newAgent(t, config(func(c *behavior.Config) {
		c.BaseDelay, c.MaxDelay, c.MaxRetryAfter = time.Second, 10*time.Second, time.Minute
	}))
	tests := []struct {
		attempt    int
		retryAfter time.Duration
		want       time.Duration
	}{
		{1, 0, time.Second},
		{2, 0, 2 * time.Second},
		{3, 0, 4 * time.Second},
		{4, 0, 8 * time.Second},
		{5, 0, 10 * time.Second},
		{60, 0, 10 * time.Second},
		{1, 3 * time.Second, 3 * time.Second},
		{1, time.Hour, time.Minute},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, a.Backoff(tt.attempt, tt.retryAfter), "attempt %d, retry-after %s", tt.attempt, tt.retryAfter)
	}
}

// TestSaveAndResume saves the machine as JSON at every step of a turn,
// restores it, and checks that the restored machine continues exactly
// like the original.
func TestSaveAndResume(t *testing.T) {
	events := []agent.Event{
		user("go"),
		reply("", call("a", "edit_file"), call("b", "read_file")),
		&agent.ToolProgress{CallID: "a", Progress: chat.ToolProgress{Fraction: 0.25}},
		done("b", "B"),
		done("a", "A"),
		&agent.PostToolsHookCompleted{ActionTaken: true},
		llmErr(chat.ErrNetwork),
		&agent.RetryTimeoutFired{},
		reply("finished"),
	}
	b := newAgent(t, config(nil))
	for cut := range events {
		origRec := &agent.Recorder{}
		orig := newMachine(t, b, origRec, agent.WaitingForUserInput{Conversation: chat.NewConversation("T-save")})
		for _, ev := range events[:cut] {
			require.NoError(t, orig.HandleEvent(ev))
		}
		data, err := json.Marshal(orig.State())
		require.NoError(t, err)
		saved, err := agent.UnmarshalState(data)
		require.NoError(t, err)
		rec := &agent.Recorder{}
		restored, err := agent.Restore(agent.Config{Behavior: b, Handler: rec}, saved)
		require.NoError(t, err)
		origRec.Actions = nil
		for i, ev := range events[cut:] {
			err1 := orig.HandleEvent(ev)
			err2 := restored.HandleEvent(ev)
			require.Equal(t, err1 == nil, err2 == nil, "cut %d event %d", cut, i)
		}
		require.JSONEq(t, jsonOf(t, origRec.Actions), jsonOf(t, rec.Actions), "cut %d: same actions after restore", cut)
		require.JSONEq(t, jsonOf(t, orig.State()), jsonOf(t, restored.State()), "cut %d: same final state", cut)
	}
}

// TestConversationIsAppendOnly checks that a request handed out earlier
// never changes when the conversation grows, and that a restored copy can
// grow independently.
func TestConversationIsAppendOnly(t *testing.T) {
	rec := &agent.Recorder{}
	b := newAgent(t, config(nil))
	m := newMachine(t, b, rec, agent.WaitingForUserInput{})
	require.NoError(t, m.HandleEvent(user("one")))
	first := sent(t, rec.Actions[0]).Messages
	require.NoError(t, m.HandleEvent(reply("r1")))
	snapshot := m.State()
	require.NoError(t, m.HandleEvent(user("two")))
	assert.Equal(t, []string{"user:one"}, contents(first))
	assert.Equal(t, []string{"user:one", "assistant:r1", "user:two"}, contents(sent(t, rec.Actions[len(rec.Actions)-1]).Messages))

	otherRec := &agent.Recorder{}
	other, err := agent.Restore(agent.Config{Behavior: b, Handler: otherRec}, snapshot)
	require.NoError(t, err)
	require.NoError(t, other.HandleEvent(user("elsewhere")))
	assert.Equal(t, []string{"user:one", "assistant:r1", "user:elsewhere"}, contents(sent(t, otherRec.Actions[0]).Messages))
	assert.Equal(t, []string{"user:one", "assistant:r1", "user:two"}, contents(messages(t, m)), "the original is untouched by the copy")
}

func TestConversationOf(t *testing.T) {
	c := chat.NewConversation("T").Append(chat.UserMessage("hi"))
	tests := []struct {
		state agent.State
		ok    bool
	}{
		{agent.WaitingForUserInput{Conversation: c}, true},
		{agent.CallingLLM{Conversation: c}, true},
		{agent.ProcessingLLMResponse{Conversation: c}, true},
		{agent.ExecutingTools{Conversation: c}, true},
		{agent.PostToolsHook{Conversation: c}, true},
		{agent.Error{Conversation: c}, true},
		{agent.StoppingTurn{Conversation: c}, true},
		{agent.ShuttingDown{}, false},
		{nil, false},
	}
	for _, tt := range tests {
		got, ok := agent.ConversationOf(tt.state)
		assert.Equal(t, tt.ok, ok, "%T", tt.state)
		if tt.ok {
			assert.True(t, c.Equal(got), "%T", tt.state)
		}
	}
}

// TestNilEvents feeds each state a nil pointer of every event type it
// reads: an error that names the event, neither a panic nor a rejection,
// and the machine is unchanged.
func TestNilEvents(t *testing.T) {
	conv := chat.NewConversation("T-nil").Append(chat.UserMessage("hi"))
	tests := []struct {
		state agent.State
		event agent.Event
	}{
		{agent.WaitingForUserInput{Conversation: conv}, (*agent.UserInput)(nil)},
		{agent.CallingLLM{Conversation: conv}, (*agent.TextDelta)(nil)},
		{agent.CallingLLM{Conversation: conv}, (*agent.LLMCompleted)(nil)},
		{agent.CallingLLM{Conversation: conv}, (*agent.LLMError)(nil)},
		{agent.ExecutingTools{Conversation: conv}, (*agent.ToolProgress)(nil)},
		{agent.ExecutingTools{Conversation: conv}, (*agent.ToolCompleted)(nil)},
	}
	for _, tt := range tests {
		t.Run(tt.state.Kind().String()+"/"+tt.event.Kind().String(), func(t *testing.T) {
			rec := &agent.Recorder{}
			m, err := agent.Restore(agent.Config{Behavior: newAgent(t, config(nil)), Handler: rec}, tt.state)
			require.NoError(t, err)
			err = m.HandleEvent(tt.event)
			require.Error(t, err)
			assert.NotErrorIs(t, err, fsmrt.ErrRejected)
			assert.Contains(t, err.Error(), fmt.Sprintf("cannot handle a nil %T", tt.event))
			assert.Empty(t, rec.Actions)
			assert.Equal(t, tt.state, m.State(), "a nil event changes nothing")
		})
	}
}

// TestConfig checks that New refuses configurations without a sensible
// value, naming the field, and that zero retries mean zero.
func TestConfig(t *testing.T) {
	tests := []struct {
		name   string
		change func(*behavior.Config)
		want   string
	}{
		{"no model", func(c *behavior.Config) { c.Model = "" }, "Config.Model"},
		{"no tokens", func(c *behavior.Config) { c.MaxTokens = 0 }, "Config.MaxTokens"},
		{"thinking over the limit", func(c *behavior.Config) { c.Thinking = c.MaxTokens }, "Config.Thinking"},
		{"negative thinking", func(c *behavior.Config) { c.Thinking = -1 }, "Config.Thinking"},
		{"negative continuations", func(c *behavior.Config) { c.MaxContinuations = -1 }, "Config.MaxContinuations"},
		{"negative retries", func(c *behavior.Config) { c.MaxRetries = -1 }, "Config.MaxRetries"},
		{"no delay", func(c *behavior.Config) { c.BaseDelay = 0 }, "Config.BaseDelay"},
		{"cap below delay", func(c *behavior.Config) { c.MaxDelay = time.Millisecond }, "Config.MaxDelay"},
		{"no retry-after cap", func(c *behavior.Config) { c.MaxRetryAfter = 0 }, "Config.MaxRetryAfter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := behavior.New(config(tt.change))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	b := newAgent(t, config(func(c *behavior.Config) { c.MaxRetries = 0 }))
	assert.False(t, b.CanRetry(chat.LLMError{Kind: chat.ErrOverloaded}, 0), "MaxRetries 0 means no retries")
	assert.Equal(t, 0, b.Config().MaxRetries)
}
