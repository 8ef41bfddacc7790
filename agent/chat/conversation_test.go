package chat_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
)

func texts(c chat.Conversation) []string {
	var out []string
	for _, m := range c.Messages() {
		out = append(out, m.Content)
	}
	return out
}

func TestConversationAppendOnly(t *testing.T) {
	var zero chat.Conversation
	assert.Equal(t, 0, zero.Len())
	assert.Nil(t, zero.Messages())
	_, ok := zero.Last()
	assert.False(t, ok)

	a := chat.NewConversation("T-1").Append(chat.UserMessage("one"))
	b := a.Append(chat.UserMessage("two"))
	c := a.Append(chat.UserMessage("three")) // a copy appending after another did
	d := b.Append(chat.UserMessage("four"))

	assert.Equal(t, []string{"one"}, texts(a))
	assert.Equal(t, []string{"one", "two"}, texts(b))
	assert.Equal(t, []string{"one", "three"}, texts(c))
	assert.Equal(t, []string{"one", "two", "four"}, texts(d))
	assert.Equal(t, "T-1", d.ID())
	last, ok := d.Last()
	require.True(t, ok)
	assert.Equal(t, "four", last.Content)

	// Appending to what Messages returns never reaches the conversation.
	msgs := b.Messages()
	_ = append(msgs, chat.UserMessage("sneaky"))
	assert.Equal(t, []string{"one", "two", "four"}, texts(d))
	assert.Equal(t, b, b.Append())
}

func TestConversationJSON(t *testing.T) {
	tests := []chat.Conversation{
		{},
		chat.NewConversation("T-2"),
		chat.NewConversation("T-3").Append(
			chat.UserMessage("hi"),
			chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "c", Name: "read_file", Arguments: json.RawMessage(`{"path":"a"}`)}}},
			chat.Message{Role: chat.RoleTool, Content: "x", ToolCallID: "c", ToolName: "read_file", IsError: true},
		),
	}
	for _, c := range tests {
		data, err := json.Marshal(c)
		require.NoError(t, err)
		var got chat.Conversation
		require.NoError(t, json.Unmarshal(data, &got))
		assert.True(t, c.Equal(got), "round trip of %s", data)
		assert.Equal(t, c, got)
	}
	var bad chat.Conversation
	assert.Error(t, json.Unmarshal([]byte(`{"messages": 3}`), &bad))
}

func TestConversationEqual(t *testing.T) {
	a := chat.NewConversation("T").Append(chat.UserMessage("x"))
	assert.True(t, a.Equal(chat.NewConversation("T").Append(chat.UserMessage("x"))))
	assert.False(t, a.Equal(chat.NewConversation("U").Append(chat.UserMessage("x"))))
	assert.False(t, a.Equal(chat.NewConversation("T").Append(chat.UserMessage("y"))))
	assert.False(t, a.Equal(a.Append(chat.UserMessage("z"))))
}

func TestLLMErrorRetryable(t *testing.T) {
	tests := []struct {
		kind chat.ErrorKind
		want bool
	}{
		{chat.ErrRateLimited, true}, {chat.ErrOverloaded, true}, {chat.ErrServer, true},
		{chat.ErrTimeout, true}, {chat.ErrNetwork, true}, {chat.ErrMalformed, true},
		{chat.ErrAuth, false}, {chat.ErrInvalidRequest, false}, {chat.ErrOther, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, chat.LLMError{Kind: tt.kind}.Retryable(), tt.kind)
	}
	assert.Equal(t, "rate_limited (HTTP 429): slow down", chat.LLMError{Kind: chat.ErrRateLimited, StatusCode: 429, Message: "slow down"}.Error())
	assert.Equal(t, "network: reset", chat.LLMError{Kind: chat.ErrNetwork, Message: "reset"}.Error())
}

func TestConversationGrow(t *testing.T) {
	a := chat.NewConversation("T-4").Append(chat.UserMessage("one"))
	b := a.Append(chat.UserMessage("two"))
	g := a.Grow(100) // a is not at the end of its storage: g gets its own
	assert.Equal(t, []string{"one"}, texts(g))
	assert.Equal(t, "T-4", g.ID())
	c := g
	for range 100 {
		c = c.Append(chat.UserMessage("x"))
	}
	assert.Equal(t, 101, c.Len())
	assert.Same(t, &g.Messages()[0], &c.Messages()[0], "appending what Grow made room for does not move the storage")
	assert.Equal(t, []string{"one", "two"}, texts(b), "growing a copy leaves the others alone")
	assert.Equal(t, g, g.Grow(0))
	h := chat.NewConversation("T-4").Grow(20).Append(chat.UserMessage("y"))
	assert.Equal(t, h, h.Grow(10), "room already there: nothing to do")
	assert.NotSame(t, &h.Messages()[0], &h.Grow(20).Messages()[0], "room for 19 messages only: new storage")

	var zero chat.Conversation
	assert.Equal(t, 0, zero.Grow(3).Len())
}

func TestConversationAppendGrowsByDoubling(t *testing.T) {
	c := chat.NewConversation("T-5")
	var grew int
	for i := range 10_000 {
		before := c.Messages()
		c = c.Append(chat.UserMessage("x"))
		if i > 0 && &before[0] != &c.Messages()[0] {
			grew++
		}
	}
	assert.Equal(t, 10_000, c.Len())
	assert.LessOrEqual(t, grew, 12, "storage doubles, so 10,000 appends move it about log2(10,000) times")
}

func TestConversationTruncate(t *testing.T) {
	full := chat.NewConversation("T-1").Append(chat.UserMessage("one"), chat.UserMessage("two"), chat.UserMessage("three"))
	cut := full.Truncate(1)
	again := cut.Append(chat.UserMessage("again"))
	more := full.Append(chat.UserMessage("four")) // the longer copy still appends in place

	assert.Equal(t, []string{"one"}, texts(cut))
	assert.Equal(t, []string{"one", "again"}, texts(again))
	assert.Equal(t, []string{"one", "two", "three"}, texts(full), "truncating and appending leave the original as it was")
	assert.Equal(t, []string{"one", "two", "three", "four"}, texts(more))
	assert.Equal(t, 3, full.Truncate(7).Len())
	assert.Equal(t, 0, full.Truncate(-1).Len())
	assert.Equal(t, "T-1", cut.ID())
}

func TestConversationCommon(t *testing.T) {
	base := chat.NewConversation("T-1").Append(chat.UserMessage("one"), chat.UserMessage("two"))
	grown := base.Append(chat.UserMessage("three"))
	forked := base.Truncate(1).Append(chat.UserMessage("other"))
	rebuilt := chat.NewConversation("T-1").Append(chat.UserMessage("one"), chat.UserMessage("two"), chat.UserMessage("x"))
	for _, tc := range []struct {
		name string
		c, o chat.Conversation
		want int
	}{
		{"grown from it", grown, base, 2},
		{"the same", base, base, 2},
		{"shorter", base, grown, 2},
		{"cut back and appended", forked, grown, 1},
		{"other storage, same start", rebuilt, grown, 2},
		{"empty", chat.Conversation{}, grown, 0},
		{"nothing in common", chat.NewConversation("T-1").Append(chat.UserMessage("zero")), grown, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.c.Common(tc.o))
		})
	}
}

// TestConversationSize checks that Size, kept as messages are appended,
// is what counting the messages afresh gives, whichever way they came:
// appended, appended as tool results, decoded, cut back.
func TestConversationSize(t *testing.T) {
	calls := []chat.ToolCall{{ID: "c1", Name: "read_file", Arguments: json.RawMessage(`{"path":"a"}`)}, {ID: "c2", Name: "bash"}}
	base := chat.NewConversation("T").Append(chat.UserMessage("hello"), chat.Message{Role: chat.RoleAssistant, Content: "hi", ToolCalls: calls})
	round := base.StartRound(calls)
	round = round.Complete(0, chat.ToolOutcome{Content: "file a"})
	round = round.Complete(1, chat.ToolOutcome{Content: "ok", IsError: true})
	withResults := base.AppendToolResults(round)
	msg := chat.Message{Role: chat.RoleAssistant, Content: "done"}
	appended := withResults.AppendMessage(&msg, chat.RoleAssistant)
	var decoded chat.Conversation
	b, err := json.Marshal(appended)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &decoded))
	// fresh counts the messages afresh.
	fresh := func(c chat.Conversation) int {
		return chat.NewConversation("x").Append(c.Messages()...).Size()
	}
	tests := []struct {
		name string
		c    chat.Conversation
		want int
	}{
		{"empty", chat.NewConversation("T"), 0},
		{"one message", chat.NewConversation("T").Append(chat.UserMessage("hello")), 16 + 5},
		{"appended", base, fresh(base)},
		{"tool results", withResults, fresh(withResults)},
		{"AppendMessage", appended, fresh(appended)},
		{"decoded", decoded, appended.Size()},
		{"cut back", appended.Truncate(2), base.Size()},
		{"cut to nothing", appended.Truncate(0), 0},
		{"cut to more", appended.Truncate(99), appended.Size()},
		{"thinking counts", chat.NewConversation("T").Append(chat.Message{Role: chat.RoleAssistant, Content: "a", Thinking: []chat.Thinking{{Text: "hmm", Signature: "sig"}}}), 16 + 1 + 16 + 3 + 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.c.Size())
		})
	}
	assert.Greater(t, withResults.Size(), base.Size()+len("file a")+len("ok"))
}
