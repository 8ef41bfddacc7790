package chat_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
)

func calls(ids ...string) []chat.ToolCall {
	out := make([]chat.ToolCall, len(ids))
	for i, id := range ids {
		out[i] = chat.ToolCall{ID: id, Name: "tool_" + id, Arguments: json.RawMessage(`{}`)}
	}
	return out
}

func statuses(r chat.ToolRound) []chat.ToolStatus {
	var out []chat.ToolStatus
	for _, e := range r.Executions() {
		out = append(out, e.Status)
	}
	return out
}

func TestToolRound(t *testing.T) {
	r := chat.NewToolRound(calls("a", "b", "a"))
	assert.Equal(t, 3, r.Len())
	assert.Equal(t, 3, r.PendingCount())
	assert.Equal(t, 0, r.Pending("a"))
	assert.Equal(t, -1, r.Pending("zzz"))

	running := r.Progress(1, chat.ToolProgress{Fraction: 0.5, Message: "half"})
	assert.Equal(t, chat.ToolRunning, running.Execution(1).Status)
	assert.Equal(t, "half", running.Execution(1).Progress.Message)
	assert.Equal(t, 3, running.PendingCount(), "running is not completed")

	one := running.Complete(running.Pending("a"), chat.ToolOutcome{Content: "first"})
	two := one.Complete(one.Pending("a"), chat.ToolOutcome{Content: "second", IsError: true})
	assert.Equal(t, []chat.ToolStatus{chat.ToolCompleted, chat.ToolRunning, chat.ToolCompleted}, statuses(two), "a repeated ID completes the first still-pending call")
	assert.Equal(t, "second", two.Execution(2).Outcome.Content)
	assert.Equal(t, 1, two.PendingCount())
	assert.Equal(t, -1, two.Pending("a"))
	done := two.Complete(1, chat.ToolOutcome{Content: "B"})
	assert.Equal(t, []chat.CompletedTool{
		{CallID: "a", ToolName: "tool_a", Succeeded: true},
		{CallID: "b", ToolName: "tool_b", Succeeded: true},
		{CallID: "a", ToolName: "tool_a", Succeeded: false},
	}, done.Completed())

	// Every earlier value is unchanged.
	assert.Equal(t, []chat.ToolStatus{chat.ToolPending, chat.ToolPending, chat.ToolPending}, statuses(r))
	assert.Equal(t, []chat.ToolStatus{chat.ToolPending, chat.ToolRunning, chat.ToolPending}, statuses(running))
	assert.Equal(t, []chat.ToolStatus{chat.ToolCompleted, chat.ToolRunning, chat.ToolPending}, statuses(one))
}

// TestToolRoundBranches reports on an old round after a newer one was
// written: the old one takes storage of its own, and neither changes the
// other.
func TestToolRoundBranches(t *testing.T) {
	base := chat.NewToolRound(calls("a", "b")).Complete(0, chat.ToolOutcome{Content: "A"})
	left := base.Complete(1, chat.ToolOutcome{Content: "left"})
	right := base.Complete(1, chat.ToolOutcome{Content: "right"})
	assert.Equal(t, "left", left.Execution(1).Outcome.Content)
	assert.Equal(t, "right", right.Execution(1).Outcome.Content)
	assert.Equal(t, chat.ToolPending, base.Execution(1).Status)
	assert.False(t, left.Equal(right))
	assert.True(t, left.Equal(base.Complete(1, chat.ToolOutcome{Content: "left"})))
}

// TestToolRoundShareConversationStorage checks that rounds started one
// after another from a conversation allocate nothing once the storage has
// grown, and that each round stays as it was.
func TestToolRoundShareConversationStorage(t *testing.T) {
	conv := chat.NewConversation("T").Append(chat.UserMessage("hi"))
	cs := calls("a", "b")
	var kept []chat.ToolRound
	round := func() {
		r := conv.StartRound(cs)
		r = r.Progress(0, chat.ToolProgress{Fraction: 0.1})
		r = r.Complete(1, chat.ToolOutcome{Content: "B"})
		r = r.Complete(0, chat.ToolOutcome{Content: "A"})
		kept = append(kept, r)
	}
	for range 100 {
		round()
	}
	kept = make([]chat.ToolRound, 0, 1000)
	allocs := testing.AllocsPerRun(100, round)
	assert.Less(t, allocs, 0.1, "allocations per round")
	for _, r := range kept {
		require.Equal(t, 0, r.PendingCount())
		assert.Equal(t, "A", r.Execution(0).Outcome.Content)
		assert.Equal(t, "B", r.Execution(1).Outcome.Content)
	}
}

func TestToolRoundJSON(t *testing.T) {
	r := chat.NewToolRound(calls("a", "b", "c")).Progress(1, chat.ToolProgress{Message: "busy"}).Complete(2, chat.ToolOutcome{Content: "C", IsError: true})
	data, err := json.Marshal(r)
	require.NoError(t, err)
	var got chat.ToolRound
	require.NoError(t, json.Unmarshal(data, &got))
	assert.True(t, r.Equal(got), "%s", data)
	assert.Equal(t, r.Executions(), got.Executions())

	empty, err := json.Marshal(chat.ToolRound{})
	require.NoError(t, err)
	assert.Equal(t, "[]", string(empty))
	assert.Error(t, json.Unmarshal([]byte(`[{"call":{"id":"a"},"status":"lost"}]`), &got))
	assert.Error(t, json.Unmarshal([]byte(`{}`), &got))
}
