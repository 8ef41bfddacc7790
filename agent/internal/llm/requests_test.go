package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
)

// providerFor returns a provider of the kind srv speaks.
func providerFor(t *testing.T, p fakellm.Provider, srv *fakellm.Server) Provider {
	t.Helper()
	prov, err := New(string(p), Config{APIKey: testKey, BaseURL: srv.BaseURL()})
	require.NoError(t, err)
	return prov
}

// complete streams req and returns the completed response.
func complete(t *testing.T, p Provider, req chat.Request) chat.Response {
	t.Helper()
	rec, err := streamOutcome(t, p, context.Background(), req)
	require.NoError(t, err)
	done, ok := rec.terminal(t).(Completed)
	require.True(t, ok, "the call failed: %#v", rec.terminal(t))
	return done.Response
}

// TestThinkingRoundTrip checks that Anthropic's thinking blocks are kept
// in the assistant message, signatures intact, kept out of the text, and
// sent back before the text and tool calls with the tool results; and
// that the budget reaches the request.
func TestThinkingRoundTrip(t *testing.T) {
	srv := fakellm.New(t, fakellm.Anthropic,
		fakellm.Reply{Thinking: "The user wants the files. I will list them.", RedactedThinking: "ENCRYPTED==",
			Text: "Listing.", ToolCalls: []fakellm.ToolCall{{ID: "toolu_1", Name: "list_files", Args: `{}`}}},
		fakellm.Reply{Text: "Two files."})
	p := providerFor(t, fakellm.Anthropic, srv)
	req := chat.Request{Model: "claude-sonnet-4-5", MaxTokens: 4096, Thinking: 2048,
		Messages: []chat.Message{chat.UserMessage("What files are there?")}}
	resp := complete(t, p, req)
	want := []chat.Thinking{
		{Text: "The user wants the files. I will list them.", Signature: fakellm.Signature("The user wants the files. I will list them.")},
		{Redacted: "ENCRYPTED=="},
	}
	assert.Equal(t, want, resp.Message.Thinking)
	assert.Equal(t, "Listing.", resp.Message.Content, "thinking is not the answer")

	req.Messages = append(req.Messages, resp.Message,
		chat.Message{Role: chat.RoleTool, ToolCallID: "toolu_1", ToolName: "list_files", Content: "a.go\nb.go"})
	resp = complete(t, p, req)
	assert.Equal(t, "Two files.", resp.Message.Content)
	assert.Empty(t, resp.Message.Thinking)

	reqs := srv.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, 2048, reqs[0].Thinking)
	assert.Equal(t, 4096, reqs[0].MaxTokens)
	require.Len(t, reqs[1].Messages, 3)
	assert.Equal(t, want, reqs[1].Messages[1].Thinking, "the thinking goes back with the tool results")
	var body struct {
		Messages []struct {
			Content []struct {
				Type string `json:"type"`
			} `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(reqs[1].Body, &body))
	var types []string
	for _, c := range body.Messages[1].Content {
		types = append(types, c.Type)
	}
	assert.Equal(t, []string{"thinking", "redacted_thinking", "text", "tool_use"}, types, "thinking first, in order")
}

// TestThinkingBudgetChecked refuses a budget the API would refuse, naming
// the flags, before anything is sent.
func TestThinkingBudgetChecked(t *testing.T) {
	srv := fakellm.New(t, fakellm.Anthropic)
	rec, err := streamOutcome(t, providerFor(t, fakellm.Anthropic, srv), context.Background(),
		chat.Request{Model: "m", MaxTokens: 1024, Thinking: 1024, Messages: []chat.Message{chat.UserMessage("hi")}})
	require.NoError(t, err)
	f, ok := rec.terminal(t).(Failed)
	require.True(t, ok)
	assert.Equal(t, chat.ErrInvalidRequest, f.Err.Kind)
	assert.Contains(t, f.Err.Message, "-thinking")
	assert.Contains(t, f.Err.Message, "-max-tokens")
	assert.Empty(t, srv.Requests())
}

// TestOpenAIReasoningIsNotTheAnswer keeps the reasoning an OpenAI-
// compatible server streams (reasoning_content) out of the text.
func TestOpenAIReasoningIsNotTheAnswer(t *testing.T) {
	srv := fakellm.New(t, fakellm.OpenAI, fakellm.Reply{Thinking: "Let me think about this.", Text: "Four."})
	rec, err := streamOutcome(t, providerFor(t, fakellm.OpenAI, srv), context.Background(),
		chat.Request{Model: "m", MaxTokens: 100, Messages: []chat.Message{chat.UserMessage("2+2?")}})
	require.NoError(t, err)
	done, ok := rec.terminal(t).(Completed)
	require.True(t, ok)
	assert.Equal(t, "Four.", done.Response.Message.Content)
	assert.Equal(t, "Four.", strings.Join(rec.texts(), ""))
}

// TestCacheBreakpoints checks where the Anthropic requests of a turn put
// their cache_control marks, round after round: never more than four, the
// last message's end among them, and the end of the request before; none
// for a request marked NoCache.
func TestCacheBreakpoints(t *testing.T) {
	tools := []chat.ToolSpec{{Name: "read_file"}, {Name: "list_files"}}
	msgs := []chat.Message{chat.UserMessage("Read everything.")}
	round := func(k, calls int) []chat.Message {
		asst := chat.Message{Role: chat.RoleAssistant, Content: fmt.Sprintf("Round %d.", k)}
		out := []chat.Message{{}}
		for i := range calls {
			id := fmt.Sprintf("t%d_%d", k, i)
			asst.ToolCalls = append(asst.ToolCalls, chat.ToolCall{ID: id, Name: "read_file", Arguments: json.RawMessage(`{}`)})
			out = append(out, chat.Message{Role: chat.RoleTool, ToolCallID: id, Content: "x"})
		}
		out[0] = asst
		return out
	}
	tests := []struct {
		name    string
		system  string
		tools   []chat.ToolSpec
		msgs    []chat.Message
		noCache bool
		want    []string
	}{
		{"the first request", "sys", tools, msgs, false, []string{"tools[1]", "system[0]", "messages[0].content[0]"}},
		{"no tools, no system prompt", "", nil, msgs, false, []string{"messages[0].content[0]"}},
		{"after a round", "sys", tools, append(append([]chat.Message{}, msgs...), round(1, 1)...), false,
			[]string{"tools[1]", "system[0]", "messages[0].content[0]", "messages[2].content[0]"}},
		{"after a round of 30 calls", "sys", tools, append(append(append([]chat.Message{}, msgs...), round(1, 1)...), round(2, 30)...), false,
			[]string{"tools[1]", "system[0]", "messages[2].content[0]", "messages[4].content[29]"}},
		{"NoCache (a summary request)", "sys", tools, append(append([]chat.Message{}, msgs...), round(1, 1)...), true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakellm.New(t, fakellm.Anthropic, fakellm.Reply{Text: "ok"})
			complete(t, providerFor(t, fakellm.Anthropic, srv), chat.Request{Model: "m", MaxTokens: 100, System: tt.system, Tools: tt.tools, Messages: tt.msgs, NoCache: tt.noCache})
			reqs := srv.Requests()
			require.Len(t, reqs, 1)
			assert.Equal(t, tt.want, reqs[0].Breakpoints)
			assert.Equal(t, !tt.noCache, strings.Contains(string(reqs[0].Body), "cache_control"), "the body has cache_control marks unless NoCache")
		})
	}
}

// TestUnsignedThinkingIsNotSentBack leaves out thinking cut before its
// signature came (the API would refuse it), and keeps the rest.
func TestUnsignedThinkingIsNotSentBack(t *testing.T) {
	srv := fakellm.New(t, fakellm.Anthropic, fakellm.Reply{Text: "ok"})
	complete(t, providerFor(t, fakellm.Anthropic, srv), chat.Request{Model: "m", MaxTokens: 4096, Thinking: 1024, Messages: []chat.Message{
		chat.UserMessage("Think hard."),
		{Role: chat.RoleAssistant, Thinking: []chat.Thinking{{Text: "signed", Signature: "sig-1"}, {Text: "cut in the mid"}}, Content: "So"},
		chat.UserMessage("Go on."),
	}})
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	require.Len(t, reqs[0].Messages, 3)
	assert.Equal(t, []chat.Thinking{{Text: "signed", Signature: "sig-1"}}, reqs[0].Messages[1].Thinking)
}

// TestCallIDsFitTheAPI sends a conversation holding the tool call IDs of
// both providers and of local servers to each: an ID the API takes goes
// as it is; one it does not (a character Anthropic refuses, past
// OpenAI's 40 characters) goes as a stand-in that it takes, the same for
// the call and its result.
func TestCallIDsFitTheAPI(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 41)
	ids := []string{"toolu_01AbC", "call_Xy9", "fn:1/2", long}
	var msgs []chat.Message
	msgs = append(msgs, chat.UserMessage("Go."))
	for _, id := range ids {
		msgs = append(msgs,
			chat.Message{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: id, Name: "list_files", Arguments: json.RawMessage(`{}`)}}},
			chat.Message{Role: chat.RoleTool, ToolCallID: id, ToolName: "list_files", Content: "a.go"})
	}
	msgs = append(msgs, chat.UserMessage("And?"))
	for _, tt := range []struct {
		provider fakellm.Provider
		want     []string
	}{
		{fakellm.Anthropic, []string{"toolu_01AbC", "call_Xy9", standInCallID("fn:1/2"), long}},
		{fakellm.OpenAI, []string{"toolu_01AbC", "call_Xy9", "fn:1/2", standInCallID(long)}},
	} {
		t.Run(string(tt.provider), func(t *testing.T) {
			t.Parallel()
			srv := fakellm.New(t, tt.provider, fakellm.Reply{Text: "Done."})
			complete(t, providerFor(t, tt.provider, srv), chat.Request{Model: "m", MaxTokens: 100, Messages: msgs})
			sent := srv.Requests()[0].Messages
			var calls, results []string
			for _, m := range sent {
				for _, c := range m.ToolCalls {
					calls = append(calls, c.ID)
				}
				if m.ToolCallID != "" {
					results = append(results, m.ToolCallID)
				}
			}
			assert.Equal(t, tt.want, calls)
			assert.Equal(t, tt.want, results, "each result names its call")
		})
	}
	assert.Regexp(t, `^call_[0-9a-f]{32}$`, standInCallID("fn:1/2"), "both APIs take a stand-in")
}
