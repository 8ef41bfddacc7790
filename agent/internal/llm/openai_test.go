package llm

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
)

// newTestOpenAI returns a provider that talks to srv as a local
// OpenAI-compatible server.
func newTestOpenAI(t *testing.T, srv *fakeServer) *OpenAI {
	t.Helper()
	p, err := NewOpenAI(Config{APIKey: testKey, BaseURL: srv.URL + "/v1"})
	require.NoError(t, err)
	return p
}

// openAIErrorBody is an error body as OpenAI sends it.
func openAIErrorBody(typ, code, msg string) string {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}})
	return string(b)
}

func TestOpenAIStream(t *testing.T) {
	text := loadEvents(t, "openai_text.sse")
	tests := []struct {
		name    string
		respond http.HandlerFunc
		want    wantOutcome
	}{
		{
			name:    "text streams in order",
			respond: serveSSE(streamScript{events: text}),
			want: wantOutcome{
				texts:   []string{"Hello", ", wor", "ld!"},
				content: "Hello, world!",
				stop:    "stop",
				usage:   chat.Usage{InputTokens: 19, OutputTokens: 10},
			},
		},
		{
			name:    "two tool calls streamed in pieces",
			respond: serveSSE(streamScript{events: loadEvents(t, "openai_tools.sse")}),
			want: wantOutcome{
				texts:   []string{"Let me look ", "at both."},
				content: "Let me look at both.",
				calls: []chat.ToolCall{
					{ID: "call_DdmO9pD3xa9XTPNJ32zg2hcA", Name: "read_file", Arguments: json.RawMessage(`{"path": "main.go"}`)},
					{ID: "call_vQ3T1d2kYy0aVb9HqR5sZx7W", Name: "list_dir", Arguments: json.RawMessage(`{"dir": ".", "depth": 2}`)},
				},
				stop:  "tool_calls",
				usage: chat.Usage{InputTokens: 120, OutputTokens: 45},
			},
		},
		{
			name:    "whole tool calls all at index 0, as Ollama sends them",
			respond: serveSSE(streamScript{events: loadEvents(t, "openai_tools_same_index.sse")}),
			want: wantOutcome{
				calls: []chat.ToolCall{
					{ID: "call_a1", Name: "read_file", Arguments: json.RawMessage(`{"path":"main.go"}`)},
					{ID: "call_b2", Name: "git_status", Arguments: json.RawMessage(`{}`)},
				},
				stop: "tool_calls",
			},
		},
		{
			name:    "tool arguments cut by the length limit",
			respond: serveSSE(streamScript{events: loadEvents(t, "openai_tool_cut_by_length.sse")}),
			// The call is answered with an error; the rest of the reply goes on.
			want: wantOutcome{
				calls: []chat.ToolCall{{ID: "call_len", Name: "write_file", Arguments: json.RawMessage(`"{\"path\": \"a.go\", \"content\": \"package ma"`),
					Malformed: "were cut off: the reply reached its token limit (stop reason length)"}},
				stop: "length",
			},
		},
		{
			name:    "finish_reason arrived, then the stream ended without [DONE]",
			respond: serveSSE(streamScript{events: text, cutAfter: 5}),
			want: wantOutcome{
				texts:   []string{"Hello", ", wor", "ld!"},
				content: "Hello, world!",
				stop:    "stop",
			},
		},
		{
			name: "429 with retry-after seconds",
			respond: serveError(429, map[string]string{"retry-after": "3", "x-request-id": "req_oai"},
				openAIErrorBody("requests", "rate_limit_exceeded", "Rate limit reached for gpt-4.1 on requests per min (RPM)")),
			want: wantOutcome{kind: chat.ErrRateLimited, status: 429, retryAfter: 3 * time.Second,
				msgHas: []string{"Rate limit reached", "rate_limit_exceeded", "req_oai"}},
		},
		{
			name:    "429 for a used-up quota is not retried",
			respond: serveError(429, nil, openAIErrorBody("insufficient_quota", "insufficient_quota", "You exceeded your current quota")),
			want:    wantOutcome{kind: chat.ErrOther, status: 429, msgHas: []string{"current quota"}},
		},
		{
			name:    "500 from llama.cpp with a numeric code",
			respond: serveError(500, nil, `{"error":{"code":500,"message":"failed to load model","type":"server_error"}}`),
			want:    wantOutcome{kind: chat.ErrServer, status: 500, msgHas: []string{"server_error: failed to load model"}},
		},
		{
			name:    "529 overloaded",
			respond: serveError(529, nil, `{"error":{"message":"overloaded","type":"overloaded_error"}}`),
			want:    wantOutcome{kind: chat.ErrOverloaded, status: 529},
		},
		{
			name:    "503 with an empty body",
			respond: serveError(503, nil, ""),
			want:    wantOutcome{kind: chat.ErrServer, status: 503, msgHas: []string{"Service Unavailable"}},
		},
		{
			name: "401 bad key",
			respond: serveError(401, nil, openAIErrorBody("invalid_request_error", "invalid_api_key",
				"Incorrect API key provided: sk-test-****5b4a. You can find your API key at https://platform.openai.com/account/api-keys.")),
			want: wantOutcome{kind: chat.ErrAuth, status: 401, msgHas: []string{"Incorrect API key", "OPENAI_API_KEY"}},
		},
		{
			name: "400 from vLLM with its top-level error shape",
			respond: serveError(400, nil,
				`{"object":"error","message":"This model's maximum context length is 8192 tokens.","type":"BadRequestError","param":null,"code":400}`),
			want: wantOutcome{kind: chat.ErrInvalidRequest, status: 400, msgHas: []string{"maximum context length"}},
		},
		{
			name:    "404 unknown model",
			respond: serveError(404, nil, openAIErrorBody("invalid_request_error", "model_not_found", "The model `gpt-nope` does not exist")),
			want:    wantOutcome{kind: chat.ErrInvalidRequest, status: 404},
		},
		{
			name:    "422 unprocessable",
			respond: serveError(422, nil, `{"detail":"bad field"}`),
			want:    wantOutcome{kind: chat.ErrInvalidRequest, status: 422, msgHas: []string{"bad field"}},
		},
		{
			name:    "408 timeout",
			respond: serveError(408, nil, ""),
			want:    wantOutcome{kind: chat.ErrTimeout, status: 408},
		},
		{
			name:    "connection dropped after some deltas",
			respond: serveSSE(streamScript{events: text, cutAfter: 3, abort: true}),
			want:    wantOutcome{kind: chat.ErrNetwork, texts: []string{"Hello", ", wor"}},
		},
		{
			name:    "stream ended cleanly before a finish_reason",
			respond: serveSSE(streamScript{events: text, cutAfter: 3}),
			want:    wantOutcome{kind: chat.ErrNetwork, texts: []string{"Hello", ", wor"}, msgHas: []string{"finish_reason"}},
		},
		{
			name:    "error chunk inside the stream",
			respond: serveSSE(streamScript{events: loadEvents(t, "openai_error_event.sse")}),
			want:    wantOutcome{kind: chat.ErrServer, texts: []string{"Hel"}, msgHas: []string{"server_error"}},
		},
		{
			name: "error chunk with an HTTP-like code, as llama.cpp sends it",
			respond: serveSSE(streamScript{events: []string{text[1],
				"data: {\"error\":{\"code\":429,\"message\":\"too many parallel requests\",\"type\":\"unavailable_error\"}}\n\n"}}),
			want: wantOutcome{kind: chat.ErrRateLimited, texts: []string{"Hello"}, msgHas: []string{"too many parallel requests"}},
		},
		{
			name:    "unparseable chunk",
			respond: serveSSE(streamScript{events: loadEvents(t, "openai_malformed.sse")}),
			want:    wantOutcome{kind: chat.ErrMalformed, texts: []string{"Hel"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, tt.respond)
			rec, err := streamOutcome(t, newTestOpenAI(t, srv), context.Background(), simpleRequest())
			require.NoError(t, err)
			tt.want.check(t, rec)
			assert.Len(t, srv.requests(), 1, "exactly one HTTP request: the SDK must not retry")
		})
	}
}

func TestOpenAIRequestMapping(t *testing.T) {
	srv := newFakeServer(t, serveSSE(streamScript{events: loadEvents(t, "openai_text.sse")}))
	temp := 0.5
	req := chat.Request{
		Model:       "qwen2.5-coder:7b",
		System:      "You are terse.",
		MaxTokens:   2048,
		Temperature: &temp,
		Messages: []chat.Message{
			chat.UserMessage("List the files and read x."),
			{Role: chat.RoleAssistant, Content: "Looking.", ToolCalls: []chat.ToolCall{
				{ID: "call_1", Name: "list_dir", Arguments: json.RawMessage(`{"dir":"."}`)},
				{ID: "call_2", Name: "read_file", Arguments: json.RawMessage(`{"path":"x"}`)},
			}},
			{Role: chat.RoleTool, ToolCallID: "call_1", ToolName: "list_dir", Content: "a.go\nb.go"},
			{Role: chat.RoleTool, ToolCallID: "call_2", ToolName: "read_file", Content: "no such file", IsError: true},
			{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "call_3", Name: "git_status"}}},
			{Role: chat.RoleTool, ToolCallID: "call_3", ToolName: "git_status", Content: ""},
			chat.UserMessage("Thanks."),
		},
		Tools: []chat.ToolSpec{
			{Name: "read_file", Description: "Read a file.", InputSchema: json.RawMessage(
				`{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer","maximum":9007199254740993}},"required":["path"]}`)},
			{Name: "git_status", Description: "Show git status."},
		},
	}
	rec, err := streamOutcome(t, newTestOpenAI(t, srv), context.Background(), req)
	require.NoError(t, err)
	_, ok := rec.terminal(t).(Completed)
	require.True(t, ok)

	reqs := srv.requests()
	require.Len(t, reqs, 1)
	got := reqs[0]
	assert.Equal(t, http.MethodPost, got.Method)
	assert.Equal(t, "/v1/chat/completions", got.Path)
	assert.Equal(t, "Bearer "+testKey, got.Header.Get("authorization"))
	assert.Contains(t, got.Header.Get("content-type"), "application/json")

	var body map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(got.Body, &body), "body: %s", got.Body)
	assert.JSONEq(t, `"qwen2.5-coder:7b"`, string(body["model"]))
	assert.JSONEq(t, `2048`, string(body["max_tokens"]), "compatible servers get max_tokens")
	assert.NotContains(t, body, "max_completion_tokens")
	assert.JSONEq(t, `0.5`, string(body["temperature"]))
	assert.JSONEq(t, `true`, string(body["stream"]))
	assert.JSONEq(t, `{"include_usage":true}`, string(body["stream_options"]))
	assert.JSONEq(t, `[
		{"role":"system","content":"You are terse."},
		{"role":"user","content":"List the files and read x."},
		{"role":"assistant","content":"Looking.","tool_calls":[
			{"id":"call_1","type":"function","function":{"name":"list_dir","arguments":"{\"dir\":\".\"}"}},
			{"id":"call_2","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"x\"}"}}]},
		{"role":"tool","tool_call_id":"call_1","content":"a.go\nb.go"},
		{"role":"tool","tool_call_id":"call_2","content":"Error: no such file"},
		{"role":"assistant","tool_calls":[{"id":"call_3","type":"function","function":{"name":"git_status","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"call_3","content":""},
		{"role":"user","content":"Thanks."}
	]`, string(body["messages"]))
	assert.JSONEq(t, `[
		{"type":"function","function":{"name":"read_file","description":"Read a file.","parameters":
			{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer","maximum":9007199254740993}},"required":["path"]}}},
		{"type":"function","function":{"name":"git_status","description":"Show git status.","parameters":{"type":"object","properties":{}}}}
	]`, string(body["tools"]))
	assert.Contains(t, string(got.Body), "9007199254740993", "schema numbers are sent exactly")
}

// rewriteTransport sends every request to target, whatever its URL says.
type rewriteTransport struct{ target *url.URL }

func (rt rewriteTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host = rt.target.Scheme, rt.target.Host
	r.Host = rt.target.Host
	return http.DefaultTransport.RoundTrip(r)
}

func TestOpenAIOfficialAPIGetsMaxCompletionTokens(t *testing.T) {
	srv := newFakeServer(t, serveSSE(streamScript{events: loadEvents(t, "openai_text.sse")}))
	target, err := url.Parse(srv.URL)
	require.NoError(t, err)
	p, err := NewOpenAI(Config{APIKey: testKey, HTTPClient: &http.Client{Transport: rewriteTransport{target: target}}})
	require.NoError(t, err)
	rec, err := streamOutcome(t, p, context.Background(), simpleRequest())
	require.NoError(t, err)
	_, ok := rec.terminal(t).(Completed)
	require.True(t, ok, "events: %#v", rec.events)
	reqs := srv.requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "/v1/chat/completions", reqs[0].Path)
	var body map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(reqs[0].Body, &body))
	assert.JSONEq(t, `1024`, string(body["max_completion_tokens"]))
	assert.NotContains(t, body, "max_tokens")
	assert.NotContains(t, body, "temperature")
}

func TestOpenAILocalServerWithoutKey(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-env-must-not-be-sent")
	srv := newFakeServer(t, serveSSE(streamScript{events: loadEvents(t, "openai_text.sse")}))
	p, err := NewOpenAI(Config{BaseURL: srv.URL + "/v1"})
	require.NoError(t, err)
	rec, err := streamOutcome(t, p, context.Background(), simpleRequest())
	require.NoError(t, err)
	_, ok := rec.terminal(t).(Completed)
	require.True(t, ok)
	assert.Empty(t, srv.requests()[0].Header.Get("authorization"))
}

func TestOpenAICancel(t *testing.T) {
	srv := newFakeServer(t, serveSSE(streamScript{events: loadEvents(t, "openai_text.sse"), cutAfter: 2, stall: true}))
	p := newTestOpenAI(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{}
	err := p.Stream(ctx, simpleRequest(), func(ev Event) {
		rec.emit(ev)
		if _, ok := ev.(TextDelta); ok {
			cancel()
		}
	})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, []Event{TextDelta{Text: "Hello"}}, rec.events, "no Failed or Completed after a cancel")
}

// TestOpenAIDeadlineIsTimeout runs in a synctest bubble: the caller's
// deadline passes once the stream has stalled.
func TestOpenAIDeadlineIsTimeout(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv := fakellm.NewInMemory(t, fakellm.OpenAI, fakellm.Reply{Handler: serveSSE(streamScript{events: loadEvents(t, "openai_text.sse"), cutAfter: 2, stall: true})})
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		rec := &recorder{}
		err := newFakeProvider(t, srv, fakellm.OpenAI, Config{}).Stream(ctx, simpleRequest(), rec.emit)
		require.NoError(t, err)
		wantOutcome{kind: chat.ErrTimeout, texts: []string{"Hello"}}.check(t, rec)
	})
}

func TestOpenAIKeyScrubbed(t *testing.T) {
	text := loadEvents(t, "openai_text.sse")
	tests := []struct {
		name    string
		respond http.HandlerFunc
		kind    chat.ErrorKind
	}{
		{"key echoed in a 401 body", serveError(401, nil,
			openAIErrorBody("invalid_request_error", "invalid_api_key", "Incorrect API key provided: "+testKey)), chat.ErrAuth},
		{"key echoed in an error chunk", serveSSE(streamScript{events: []string{text[0],
			`data: {"error":{"message":"proxy refused key ` + testKey + `","type":"server_error"}}` + "\n\n"}}), chat.ErrServer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, tt.respond)
			logger, logs := logBuffer()
			p, err := NewOpenAI(Config{APIKey: testKey, BaseURL: srv.URL + "/v1", Logger: logger})
			require.NoError(t, err)
			rec, err := streamOutcome(t, p, context.Background(), simpleRequest())
			require.NoError(t, err)
			f, ok := rec.terminal(t).(Failed)
			require.True(t, ok)
			assert.Equal(t, tt.kind, f.Err.Kind)
			assert.Contains(t, f.Err.Message, redacted, "the key's place is marked")
			assert.NotContains(t, f.Err.Message, testKey)
			assert.NotContains(t, f.Err.Error(), testKey)
			assert.Contains(t, logs.String(), "llm call failed")
			assert.NotContains(t, logs.String(), testKey)
			assert.False(t, strings.Contains(logs.String(), "sk-test-SECRET"), "no part of the key leaks either")
		})
	}
}
