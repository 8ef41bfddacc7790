package agentexec_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/gen/agent"
)

// TestLogRefsFitTheActions runs the agent machine through a round and
// reduces the actions it performs under LogRefs: every member LogRefs
// names exists and becomes a reference, and the rest of the request stays
// inline. A field renamed in the spec fails here rather than silently
// putting the conversation back in the log.
func TestLogRefsFitTheActions(t *testing.T) {
	t.Parallel()
	cfg := behavior.DefaultConfig()
	cfg.System = "You are a test."
	cfg.Tools = realisticTools()
	b, err := behavior.New(cfg)
	require.NoError(t, err)
	rec := &agent.Recorder{}
	m, err := agent.New(agent.Config{Behavior: b, Handler: rec, Initial: agent.WaitingForUserInput{Conversation: chat.NewConversation("T-refs")}})
	require.NoError(t, err)
	edit := chat.ToolCall{ID: "c1", Name: "edit_file", Arguments: json.RawMessage(`{"path":"a.go"}`)}
	for _, ev := range []agent.Event{
		&agent.UserInput{Message: chat.UserMessage("Change a.go.")},
		&agent.LLMCompleted{Response: chat.Response{Message: chat.Message{Role: chat.RoleAssistant, Content: "Editing.", ToolCalls: []chat.ToolCall{edit}}}},
		&agent.ToolCompleted{CallID: "c1", Outcome: chat.ToolOutcome{Content: strings.Repeat("edited\n", 100)}},
		&agent.PostToolsHookCompleted{ActionTaken: true},
	} {
		require.NoError(t, m.HandleEvent(ev))
	}

	refs := agentexec.LogRefs()
	byKind := map[string][]json.RawMessage{}
	for _, act := range rec.Actions {
		whole, err := json.Marshal(act)
		require.NoError(t, err)
		red, err := refs.Reduce(whole)
		require.NoError(t, err)
		var head struct {
			Kind string `json:"kind"`
		}
		require.NoError(t, json.Unmarshal(red, &head))
		byKind[head.Kind] = append(byKind[head.Kind], red)
	}
	require.Len(t, byKind["send_llm_request"], 2, "the request after the user's message and the one after the hook")
	require.Len(t, byKind["run_post_tools_hook"], 1)
	for kind, paths := range refs.Fields {
		for _, red := range byKind[kind] {
			for _, path := range paths {
				v := lookup(t, red, path)
				assert.Contains(t, string(v), `"$digest":"sha256:`, "%s %s is recorded by reference", kind, path)
			}
		}
	}
	var req struct {
		Request struct {
			Model     string `json:"model"`
			MaxTokens int    `json:"max_tokens"`
			Messages  struct {
				Count int `json:"count"`
			} `json:"messages"`
		} `json:"request"`
	}
	require.NoError(t, json.Unmarshal(byKind["send_llm_request"][1], &req))
	assert.Equal(t, cfg.Model, req.Request.Model, "the model stays inline")
	assert.Equal(t, cfg.MaxTokens, req.Request.MaxTokens)
	assert.Equal(t, 3, req.Request.Messages.Count, "the user's message, the reply and the tool result")
	assert.Less(t, len(byKind["send_llm_request"][1]), 600, "a request is a few hundred bytes, whatever the conversation")
}

// lookup returns the JSON value at the dotted path of the object obj.
func lookup(t *testing.T, obj json.RawMessage, path string) json.RawMessage {
	t.Helper()
	v := obj
	for seg := range strings.SplitSeq(path, ".") {
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(v, &m), "%s: %s", path, v)
		next, ok := m[seg]
		require.True(t, ok, "the action has no %s: %s", path, obj)
		v = next
	}
	return v
}
