package agentexec

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/llm"
	"github.com/fsmgen/fsmgen/agent/internal/thread"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// idleProvider is a provider that is never called.
type idleProvider struct{}

func (idleProvider) Stream(context.Context, chat.Request, func(llm.Event)) error { return nil }
func (idleProvider) Name() string                                                { return "idle" }

// TestJournalKeepsEveryState saves the machine in each state it rests in
// through the thread's journal, twice (the second save appends the
// messages added since), and loads it back: the state reads back
// identical, and the journal's records hold each message once.
func TestJournalKeepsEveryState(t *testing.T) {
	t.Parallel()
	b, err := behavior.New(behavior.DefaultConfig())
	require.NoError(t, err)
	user := chat.UserMessage("fix the test UNIQUE-USER-TEXT")
	calls := []chat.ToolCall{{ID: "c1", Name: "bash", Arguments: json.RawMessage(`{"command":"go test"}`)}, {ID: "c2", Name: "read_file", Arguments: json.RawMessage(`{"path":"a.go"}`)}}
	reply := chat.Message{Role: chat.RoleAssistant, Content: "Looking.", ToolCalls: calls}
	conv := chat.NewConversation("T1").Append(user, reply)
	round := conv.StartRound(calls)
	round = round.Complete(0, chat.ToolOutcome{Content: "ok"})
	done := round.Complete(1, chat.ToolOutcome{Content: "package a", IsError: true})
	after := conv.AppendToolResults(done)
	tests := []struct {
		name string
		st   agent.State
	}{
		{"waiting", agent.WaitingForUserInput{Conversation: conv}},
		{"calling", agent.CallingLLM{Conversation: conv, Retries: 2}},
		{"executing", agent.ExecutingTools{Conversation: conv, Executions: round}},
		{"post-tools hook", agent.PostToolsHook{Conversation: after, PendingRequest: b.BuildRequest(after), CompletedTools: done}},
		{"stopping the turn", agent.StoppingTurn{Conversation: after, CompletedTools: done}},
		{"running a query", agent.RunningQuery{Conversation: conv.Append(chat.Message{Role: chat.RoleAssistant, Content: "I need to read a.go."}), Query: chat.Query{Kind: chat.QueryRead, Path: "a.go"}}},
		{"error", agent.Error{Conversation: conv, Error: chat.LLMError{Kind: chat.ErrorKind("overloaded"), Message: "busy", StatusCode: 529}, Retries: 1, Origin: chat.OriginLLM}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store, err := thread.NewStore(t.TempDir())
			require.NoError(t, err)
			th := &threadwire.Thread{Version: threadwire.Version, ID: "t1"}
			a, err := New(Config{Behavior: b, Provider: idleProvider{}, Tools: &tools.Set{}, Thread: th, Store: store})
			require.NoError(t, err)
			// First the user's message alone, then the state.
			a.m, err = agent.Restore(agent.Config{Behavior: b, Handler: a}, agent.WaitingForUserInput{Conversation: chat.NewConversation("T1").Append(user)})
			require.NoError(t, err)
			require.NoError(t, a.capture())
			require.NoError(t, a.save())
			a.m, err = agent.Restore(agent.Config{Behavior: b, Handler: a}, tt.st)
			require.NoError(t, err)
			require.NoError(t, a.capture())
			require.NoError(t, a.save())
			require.NoError(t, a.Journal().Close())

			loaded, err := store.Load("t1")
			require.NoError(t, err)
			got, err := ThreadState(loaded)
			require.NoError(t, err)
			want, err := json.Marshal(tt.st)
			require.NoError(t, err)
			have, err := json.Marshal(got)
			require.NoError(t, err)
			assert.JSONEq(t, string(want), string(have))

			raw, err := os.ReadFile(store.Path("t1"))
			require.NoError(t, err)
			// The thread's first prompt is written once too, beside it
			// (threadwire.Thread.FirstPrompt), not with every step.
			const first = `"first_prompt":"fix the test UNIQUE-USER-TEXT",`
			assert.Equal(t, 1, strings.Count(string(raw), first), "the first prompt, once: %s", raw)
			assert.Equal(t, 1, strings.Count(strings.Replace(string(raw), first, "", 1), "UNIQUE-USER-TEXT"), "the journal holds the user's message once: %s", raw)
		})
	}
}
