package behavior_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/gen/agent"
)

func TestTurnStartAndUndo(t *testing.T) {
	u := chat.UserMessage
	a := func(text string) chat.Message { return chat.Message{Role: chat.RoleAssistant, Content: text} }
	tool := chat.Message{Role: chat.RoleTool, ToolCallID: "c1", Content: "ok"}
	for _, tc := range []struct {
		name string
		msgs []chat.Message
		want []chat.Message // after undo
	}{
		{"no turn", nil, nil},
		{"one turn", []chat.Message{u("fix it"), a("done")}, []chat.Message{}},
		{"the last of two", []chat.Message{u("one"), a("1"), u("two"), a(""), tool, a("2")}, []chat.Message{u("one"), a("1")}},
		{"a stopped turn, its note included", []chat.Message{u("one"), a("1"), u("two"), u(chat.UserStoppedNote)}, []chat.Message{u("one"), a("1")}},
		{"only a note", []chat.Message{u(chat.UserStoppedNote)}, []chat.Message{u(chat.UserStoppedNote)}},
		{"a summary is no turn", []chat.Message{{Role: chat.RoleUser, Content: "summary", Summary: true}, u("two"), a("2")}, []chat.Message{{Content: "summary"}}},
		{"a turn of queries", []chat.Message{u("one"), a("1"), u("two"), a("I need to read go.mod."), u(behavior.FormatQueryResult(chat.Query{Kind: "read", Path: "go.mod"}, chat.ToolOutcome{Content: "module m"})), a("2")}, []chat.Message{u("one"), a("1")}},
		{"a continued reply", []chat.Message{u("one"), a("1"), u("two"), a("half"), u(chat.ContinueNote), a("rest")}, []chat.Message{u("one"), a("1")}},
		{"only a summary", []chat.Message{{Role: chat.RoleUser, Content: "summary", Summary: true}, a("2")}, []chat.Message{{Content: "summary"}, {Content: "2"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := behavior.New(behavior.DefaultConfig())
			require.NoError(t, err)
			conv := chat.NewConversation("T-1").Append(tc.msgs...)
			got := b.UndoTurn(conv)
			assert.Equal(t, len(tc.want), got.Len())
			for i, m := range tc.want {
				assert.Equal(t, m.Content, got.Messages()[i].Content)
			}
			assert.Equal(t, len(tc.msgs), conv.Len(), "the conversation undone is unchanged")
		})
	}
}

// cut is a reply cut at the token limit, with the provider's stop reason.
func cut(text, reason string, calls ...chat.ToolCall) agent.Event {
	return &agent.LLMCompleted{Response: chat.Response{Message: chat.Message{Role: chat.RoleAssistant, Content: text, ToolCalls: calls}, StopReason: reason}}
}

// TestContinuation checks that a reply cut at its token limit is kept and
// continued, a bounded number of times in a turn, and that a reply cut
// inside a tool call goes to its tools (the cut call is answered with an
// error the model reads).
func TestContinuation(t *testing.T) {
	continued := func(want ...string) step {
		return step{state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest, check: func(t *testing.T, m *agent.Machine, act agent.Action) {
			assert.Equal(t, want, contents(sent(t, act).Messages))
			assert.Equal(t, 0, m.State().(agent.CallingLLM).Retries)
		}}
	}
	note := "user:" + chat.ContinueNote
	tests := []struct {
		name  string
		cfg   behavior.Config
		steps []step
	}{
		{"an Anthropic reply cut in its text is continued, then ends", config(nil), []step{
			{event: user("write"), state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest},
			withEvent(continued("user:write", "assistant:The first half", note), cut("The first half", "max_tokens")),
			{event: reply(" and the rest."), state: agent.StateWaitingForUserInput, action: agent.ActionWaitForInput, check: func(t *testing.T, m *agent.Machine, _ agent.Action) {
				assert.Equal(t, []string{"user:write", "assistant:The first half", note, "assistant: and the rest."}, contents(messages(t, m)))
			}},
		}},
		{"an OpenAI reply cut at length is continued", config(nil), []step{
			{event: user("write"), state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest},
			withEvent(continued("user:write", "assistant:part", note), cut("part", "length")),
		}},
		{"continuations are bounded in a turn", config(func(c *behavior.Config) { c.MaxContinuations = 2 }), []step{
			{event: user("write"), state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest},
			withEvent(continued("user:write", "assistant:a", note), cut("a", "max_tokens")),
			withEvent(continued("user:write", "assistant:a", note, "assistant:b", note), cut("b", "max_tokens")),
			{event: cut("c", "max_tokens"), state: agent.StateWaitingForUserInput, action: agent.ActionWaitForInput},
			{event: user("again"), state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest},
			withEvent(continued("user:write", "assistant:a", note, "assistant:b", note, "assistant:c", "user:again", "assistant:d", note), cut("d", "max_tokens")),
		}},
		{"no continuations when they are off", config(func(c *behavior.Config) { c.MaxContinuations = 0 }), []step{
			{event: user("write"), state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest},
			{event: cut("a", "max_tokens"), state: agent.StateWaitingForUserInput, action: agent.ActionWaitForInput},
		}},
		{"a reply cut inside a tool call runs its tools", config(nil), []step{
			{event: user("edit"), state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest},
			{event: cut("Editing.", "max_tokens", chat.ToolCall{ID: "c1", Name: "edit_file", Arguments: json.RawMessage(`"{\"path\":"`), Malformed: "were cut off"}),
				state: agent.StateExecutingTools, action: agent.ActionExecuteTools},
		}},
		{"a reply that ended is not continued", config(nil), []step{
			{event: user("write"), state: agent.StateCallingLLM, action: agent.ActionSendLLMRequest},
			{event: cut("done", "end_turn"), state: agent.StateWaitingForUserInput, action: agent.ActionWaitForInput},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { run(t, tt.cfg, tt.steps) })
	}
}

// withEvent returns s with its event set.
func withEvent(s step, ev agent.Event) step {
	s.event = ev
	return s
}

func TestIsAgentNote(t *testing.T) {
	tests := []struct {
		m    chat.Message
		want bool
	}{
		{chat.UserMessage(chat.ContinueNote), true},
		{chat.UserMessage(chat.UserStoppedNote), true},
		{chat.Message{Role: chat.RoleUser, Content: "the summary", Summary: true}, true},
		{chat.UserMessage(behavior.FormatQueryResult(chat.Query{Kind: "read", Path: "go.mod"}, chat.ToolOutcome{Content: "module m"})), true},
		{chat.UserMessage("[query mine]"), false},
		{chat.UserMessage("go on"), false},
		{chat.Message{Role: chat.RoleAssistant, Content: chat.ContinueNote}, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, chat.IsAgentNote(tt.m), tt.m.Content)
	}
}

func TestTurnKey(t *testing.T) {
	typed := func(id, text string) chat.Message { m := chat.UserMessage(text); m.ID = id; return m }
	for _, tc := range []struct {
		name string
		msgs []chat.Message
		want string
		ok   bool
	}{
		{"none", nil, "", false},
		{"the message's ID", []chat.Message{typed("a1", "one"), {Role: chat.RoleAssistant, Content: "1"}, typed("b2", "two")}, "b2", true},
		{"saved without an ID: its index", []chat.Message{chat.UserMessage("one"), {Role: chat.RoleAssistant, Content: "1"}, chat.UserMessage("two")}, "2", true},
		{"a note is no turn", []chat.Message{typed("a1", "one"), chat.UserMessage(chat.UserStoppedNote)}, "a1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := behavior.TurnKey(tc.msgs)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}
