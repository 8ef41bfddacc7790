package behavior_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
)

// TestInterruptTools checks that a stopped round keeps the outcomes of the
// calls that completed and gives the others behavior.UserStopped, in the
// LLM's order, and that the hook gets the whole round.
func TestInterruptTools(t *testing.T) {
	t.Parallel()
	b, err := behavior.New(behavior.DefaultConfig())
	require.NoError(t, err)
	stopped := behavior.UserStopped()
	assert.True(t, stopped.IsError)
	assert.True(t, strings.HasPrefix(stopped.Content, behavior.UserStoppedPrefix), stopped.Content)

	conv := chat.NewConversation("T").Append(chat.UserMessage("edit it"),
		chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{call("a", "read_file"), call("b", "bash")}})
	round := conv.StartRound(conv.Messages()[1].ToolCalls)
	round = b.RecordOutcome(round, "a", chat.ToolOutcome{Content: "A"})

	got, hook := b.InterruptToolsWithHook(conv, round)
	msgs := got.Messages()[conv.Len():]
	require.Len(t, msgs, 2)
	assert.Equal(t, chat.Message{Role: chat.RoleTool, Content: "A", ToolCallID: "a", ToolName: "read_file"}, msgs[0])
	assert.Equal(t, chat.Message{Role: chat.RoleTool, Content: stopped.Content, IsError: true, ToolCallID: "b", ToolName: "bash"}, msgs[1])
	assert.Equal(t, []chat.CompletedTool{{CallID: "a", ToolName: "read_file", Succeeded: true}, {CallID: "b", ToolName: "bash"}}, hook.Completed())
	assert.True(t, b.InterruptTools(conv, round).Equal(got), "InterruptTools appends what InterruptToolsWithHook does")
}
