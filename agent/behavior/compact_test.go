package behavior_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/gen/agent"
)

// Messages of the compaction tests.
var (
	u1      = chat.UserMessage("fix the test")
	a1      = chat.Message{Role: chat.RoleAssistant, Content: "fixed"}
	u2      = chat.UserMessage("now the docs")
	aCall   = chat.Message{Role: chat.RoleAssistant, Content: "reading", ToolCalls: []chat.ToolCall{call("c1", "read_file"), call("c2", "list_files")}}
	r1      = chat.Message{Role: chat.RoleTool, ToolCallID: "c1", ToolName: "read_file", Content: "package main"}
	r2      = chat.Message{Role: chat.RoleTool, ToolCallID: "c2", ToolName: "list_files", Content: "main.go"}
	a2      = chat.Message{Role: chat.RoleAssistant, Content: "done"}
	stopped = chat.UserMessage(chat.UserStoppedNote)
	summary = chat.Message{Role: chat.RoleUser, Summary: true, Content: behavior.SummaryHeading + "\n\nearlier work"}
	cut1    = chat.Message{Role: chat.RoleAssistant, Content: "the first piece"}
	cut2    = chat.Message{Role: chat.RoleAssistant, Content: "the second piece"}
	cont    = chat.UserMessage(chat.ContinueNote)
	aQuery  = chat.Message{Role: chat.RoleAssistant, Content: "let me look <read_file path=\"a\"/>"}
	qResult = chat.UserMessage(behavior.FormatQueryResult(chat.Query{Kind: chat.QueryRead, Path: "a"}, chat.ToolOutcome{Content: "package a"}))
	huge    = chat.Message{Role: chat.RoleAssistant, Content: strings.Repeat("h", 70<<10)}
)

// TestCompact checks what compaction keeps whole (the last message the
// user typed and the tail: the pending tool round, the last reply, or the
// new message) and that the result starts with the summary message.
func TestCompact(t *testing.T) {
	tests := []struct {
		name     string
		msgs     []chat.Message
		can      bool
		wantKept []chat.Message
	}{
		{"a new message after an exchange", []chat.Message{u1, a1, u2}, true, []chat.Message{u2}},
		{"a pending tool round", []chat.Message{u1, a1, u2, aCall, r1, r2}, true, []chat.Message{u2, aCall, r1, r2}},
		{"rounds after the user's message", []chat.Message{u1, aCall, r1, r2, aCall, r1, r2}, true, []chat.Message{u1, aCall, r1, r2}},
		{"between turns", []chat.Message{u1, a1, u2, a2}, true, []chat.Message{u2, a2}},
		{"a stopped turn keeps the typed message", []chat.Message{u1, a1, u2, aCall, r1, r2, stopped}, true, []chat.Message{u2, stopped}},
		{"a continuation keeps the reply it continues", []chat.Message{u1, a1, u2, cut1, cont}, true, []chat.Message{u2, cut1, cont}},
		{"a chain of continuations is kept", []chat.Message{u1, a1, u2, cut1, cont, cut2, cont}, true, []chat.Message{u2, cut1, cont, cut2, cont}},
		{"a long chain keeps what fits", []chat.Message{u1, a1, u2, huge, cont, cut1, cont, cut2, cont}, true, []chat.Message{u2, cut1, cont, cut2, cont}},
		{"the last piece is kept however long", []chat.Message{u1, a1, u2, cut1, cont, huge, cont}, true, []chat.Message{u2, huge, cont}},
		{"between turns, the continued reply is kept whole", []chat.Message{u1, a1, u2, cut1, cont, cut2}, true, []chat.Message{u2, cut1, cont, cut2}},
		{"a query's result keeps the reply that asked it", []chat.Message{u1, a1, u2, aQuery, qResult}, true, []chat.Message{u2, aQuery, qResult}},
		{"the turn's queries are kept whole", []chat.Message{u1, a1, u2, huge, qResult, aQuery, qResult, cut1, cont}, true, []chat.Message{u2, huge, qResult, aQuery, qResult, cut1, cont}},
		{"a continuation after a tool round", []chat.Message{u1, a1, u2, aCall, r1, r2, cut1, cont}, true, []chat.Message{u2, cut1, cont}},
		{"an earlier summary alone is not compacted again", []chat.Message{summary, u2, a2}, false, nil},
		{"an earlier summary with more", []chat.Message{summary, u1, a1, u2, a2}, true, []chat.Message{u2, a2}},
		{"one exchange", []chat.Message{u1, a1}, false, nil},
		{"one message", []chat.Message{u1}, false, nil},
		{"empty", nil, false, nil},
	}
	b := newAgent(t, config(nil))
	resp := chat.Response{Message: chat.Message{Role: chat.RoleAssistant, Content: " the summary \n"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := chat.NewConversation("T-1").Append(tt.msgs...)
			require.Equal(t, tt.can, b.CanCompact(c))
			if !tt.can {
				return
			}
			got := b.Compact(c, resp)
			assert.Equal(t, "T-1", got.ID())
			msgs := got.Messages()
			require.Len(t, msgs, len(tt.wantKept)+1)
			assert.Equal(t, chat.Message{Role: chat.RoleUser, Summary: true, Content: behavior.SummaryHeading + "\n\nthe summary"}, msgs[0])
			assert.Equal(t, tt.wantKept, msgs[1:])
			assert.Equal(t, tt.msgs, c.Messages(), "the conversation compacted is unchanged")
		})
	}
}

// TestSummaryRequest checks the summary request: no tools, the summary
// system prompt, a transcript of what is summarised (the pending round's
// results left out, as they are kept) and the instructions.
func TestSummaryRequest(t *testing.T) {
	b := newAgent(t, config(func(c *behavior.Config) {
		c.Tools = []chat.ToolSpec{{Name: "read_file"}}
		c.System = "the agent's prompt"
	}))
	c := chat.NewConversation("T-1").Append(summary, u1, a1, u2, aCall, r1, r2)
	req := b.SummaryRequest(c)
	assert.Empty(t, req.Tools, "no tools are offered")
	assert.NotEqual(t, "the agent's prompt", req.System)
	assert.Equal(t, behavior.DefaultModel, req.Model)
	require.Len(t, req.Messages, 1)
	text := req.Messages[0].Content
	for _, want := range []string{"[earlier summary]\nearlier work", "[user]\nfix the test", "[assistant]\nfixed", "[user]\nnow the docs", "Task:", "Decisions:", "Files:"} {
		assert.Contains(t, text, want)
	}
	assert.NotContains(t, text, "package main", "the pending round is kept, not summarised")
}

// TestTranscriptBudget checks that a summary request stays under the
// threshold however long the conversation: long messages are cut, and
// then the oldest after the first are left out.
func TestTranscriptBudget(t *testing.T) {
	tests := []struct {
		name  string
		msgs  int
		size  int
		wants []string
	}{
		{"long messages are cut", 20, 20_000, []string{"bytes left out"}},
		{"many messages are left out", 2000, 200, []string{"messages left out here"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newAgent(t, config(func(c *behavior.Config) { c.ContextWindow = 10_000 }))
			c := chat.NewConversation("T-1").Append(chat.UserMessage("the task"))
			for i := range tt.msgs {
				c = c.Append(chat.Message{Role: chat.RoleAssistant, Content: strings.Repeat("é", tt.size/2) + string(rune('a'+i%26))})
			}
			c = c.Append(u2)
			require.True(t, b.NeedsCompaction(c))
			req := b.SummaryRequest(c)
			size := len(req.System)
			for _, m := range req.Messages {
				size += len(m.Content)
			}
			assert.LessOrEqual(t, size/behavior.BytesPerToken+req.MaxTokens, 10_000-b.Margin(), "the transcript and the summary fit the window")
			assert.Equal(t, 2500, req.MaxTokens, "the summary's limit is a quarter of a small window")
			assert.True(t, req.NoCache, "the summary request writes nothing to the prompt cache")
			for _, w := range tt.wants {
				assert.Contains(t, req.Messages[0].Content, w)
			}
			assert.Contains(t, req.Messages[0].Content, "the task", "the first message is kept")
			assert.True(t, strings.ToValidUTF8(req.Messages[0].Content, "?") == req.Messages[0].Content, "no UTF-8 sequence is split")
		})
	}
}

// TestNeedsCompaction checks the threshold: off without a context window
// or with CompactAt 0, on past CompactAt of the window (system prompt and
// tools counted), and never when there is nothing to summarise.
func TestNeedsCompaction(t *testing.T) {
	big := chat.Message{Role: chat.RoleAssistant, Content: strings.Repeat("x", 3000)}
	long := chat.NewConversation("T-1").Append(u1, big, u2)
	short := chat.NewConversation("T-1").Append(u1, a1, u2)
	alone := chat.NewConversation("T-1").Append(chat.UserMessage(strings.Repeat("x", 3000)))
	tests := []struct {
		name string
		cfg  func(*behavior.Config)
		conv chat.Conversation
		want bool
	}{
		{"no window", nil, long, false},
		{"off", func(c *behavior.Config) { c.ContextWindow, c.CompactAt = 1000, 0 }, long, false},
		{"past the threshold", func(c *behavior.Config) { c.ContextWindow = 1000 }, long, true},
		{"under it", func(c *behavior.Config) { c.ContextWindow = 1000 }, short, false},
		{"the system prompt counts", func(c *behavior.Config) { c.ContextWindow, c.System = 1000, strings.Repeat("s", 3000) }, short, true},
		{"nothing to summarise", func(c *behavior.Config) { c.ContextWindow = 1000 }, alone, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, newAgent(t, config(tt.cfg)).NeedsCompaction(tt.conv))
		})
	}
}

// TestThresholdLeavesRoomForTheReply checks that the threshold, a
// request's max_tokens and the summary request's leave room in the
// window for the reply: a request's estimated input, its max_tokens and
// the margin never pass the window.
func TestThresholdLeavesRoomForTheReply(t *testing.T) {
	tests := []struct {
		name                      string
		window, maxTokens         int
		threshold, summaryMax     int
		thinking, clampedThinking int
	}{
		{"claude-sonnet-4-5", 200_000, 64_000, 132_000, 8192, 0, 0},
		{"a small reply: CompactAt decides", 200_000, 4096, 160_000, 4096, 0, 0},
		{"a reply as long as the window counts half", 20_000, 64_000, 9600, 5000, 0, 0},
		{"thinking is cut with the reply", 200_000, 64_000, 132_000, 8192, 32_000, 32_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newAgent(t, config(func(c *behavior.Config) {
				c.ContextWindow, c.MaxTokens, c.Thinking = tt.window, tt.maxTokens, tt.thinking
				c.Tools = []chat.ToolSpec{{Name: "read_file"}}
			}))
			assert.Equal(t, tt.threshold, b.Threshold())
			for _, size := range []int{10, tt.threshold / 2, tt.threshold, tt.window} {
				c := chat.NewConversation("T-1").Append(u1, chat.Message{Role: chat.RoleAssistant, Content: strings.Repeat("x", size*behavior.BytesPerToken)}, u2)
				req := b.BuildRequest(c)
				tokens := b.EstimateTokens(c)
				if tokens+b.Margin() < tt.window {
					assert.LessOrEqual(t, tokens+req.MaxTokens+b.Margin(), tt.window, "%d tokens: the reply fits the window", tokens)
				}
				assert.Positive(t, req.MaxTokens)
				assert.LessOrEqual(t, req.MaxTokens, tt.maxTokens)
				assert.True(t, req.Thinking == 0 || req.Thinking < req.MaxTokens, "the thinking budget %d is less than max_tokens %d", req.Thinking, req.MaxTokens)
				if tokens <= b.Threshold() {
					assert.GreaterOrEqual(t, req.MaxTokens, min(tt.maxTokens, tt.window/2), "under the threshold the reply keeps its limit")
				}
				if size == 10 && tt.maxTokens < tt.window/2 {
					assert.Equal(t, tt.maxTokens, req.MaxTokens)
					assert.Equal(t, tt.thinking, req.Thinking)
				}
				sum := b.SummaryRequest(c)
				assert.Equal(t, tt.summaryMax, sum.MaxTokens)
				assert.LessOrEqual(t, (len(sum.System)+len(sum.Messages[0].Content))/behavior.BytesPerToken+sum.MaxTokens+b.Margin(), tt.window, "the summary request fits the window")
			}
		})
	}
}

// TestCompactionMachine drives the machine through a compaction before a
// request, a retried summary request, and one that fails for good.
func TestCompactionMachine(t *testing.T) {
	b := newAgent(t, config(func(c *behavior.Config) { c.ContextWindow, c.Tools = 1000, []chat.ToolSpec{{Name: "read_file"}} }))
	big := chat.Message{Role: chat.RoleAssistant, Content: strings.Repeat("x", 3000)}
	start := chat.NewConversation("T-1").Append(u1, big)
	newMachine := func() (*agent.Machine, *agent.Recorder) {
		rec := &agent.Recorder{}
		m, err := agent.New(agent.Config{Behavior: b, Handler: rec, Initial: agent.WaitingForUserInput{Conversation: start}})
		require.NoError(t, err)
		return m, rec
	}
	sent := func(rec *agent.Recorder) chat.Request {
		require.NotEmpty(t, rec.Actions)
		act, ok := rec.Actions[len(rec.Actions)-1].(*agent.SendLLMRequest)
		require.True(t, ok, "the last action is %T", rec.Actions[len(rec.Actions)-1])
		return act.Request
	}

	t.Run("compacted, then the request is sent", func(t *testing.T) {
		m, rec := newMachine()
		require.NoError(t, m.HandleEvent(user("now the docs")))
		require.Equal(t, agent.StateCompacting, m.Kind())
		assert.Empty(t, sent(rec).Tools, "the summary request")
		require.NoError(t, m.HandleEvent(&agent.TextDelta{Content: "Task"}), "the summary's text is ignored")
		require.NoError(t, m.HandleEvent(reply("Task: docs.")))
		require.Equal(t, agent.StateCallingLLM, m.Kind())
		req := sent(rec)
		assert.NotEmpty(t, req.Tools)
		require.Len(t, req.Messages, 2)
		assert.True(t, req.Messages[0].Summary)
		assert.Equal(t, "now the docs", req.Messages[1].Content)
	})
	t.Run("the summary request is retried, then fails for good", func(t *testing.T) {
		m, rec := newMachine()
		require.NoError(t, m.HandleEvent(user("now the docs")))
		require.NoError(t, m.HandleEvent(llmErr(chat.ErrOverloaded)))
		require.Equal(t, agent.StateError, m.Kind())
		require.NoError(t, m.HandleEvent(&agent.RetryTimeoutFired{}))
		require.Equal(t, agent.StateCompacting, m.Kind(), "the retry is a summary request again")
		assert.Empty(t, sent(rec).Tools)
		require.NoError(t, m.HandleEvent(llmErr(chat.ErrAuth)))
		require.Equal(t, agent.StateWaitingForUserInput, m.Kind())
		disp, ok := rec.Actions[len(rec.Actions)-1].(*agent.DisplayError)
		require.True(t, ok)
		assert.Contains(t, disp.Message, "compacting the conversation failed")
		conv, _ := agent.ConversationOf(m.State())
		assert.Equal(t, 3, conv.Len(), "the conversation is kept whole")
	})
	t.Run("stopped while compacting", func(t *testing.T) {
		m, _ := newMachine()
		require.NoError(t, m.HandleEvent(user("now the docs")))
		require.NoError(t, m.HandleEvent(&agent.Interrupt{}))
		require.Equal(t, agent.StateWaitingForUserInput, m.Kind())
		conv, _ := agent.ConversationOf(m.State())
		last, _ := conv.Last()
		assert.Equal(t, chat.UserStoppedNote, last.Content)
	})
}
