package llm

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
)

// newTestAnthropic returns a provider that talks to srv.
func newTestAnthropic(t *testing.T, srv *fakeServer) *Anthropic {
	t.Helper()
	p, err := NewAnthropic(Config{APIKey: testKey, BaseURL: srv.URL})
	require.NoError(t, err)
	return p
}

// simpleRequest is a minimal valid request.
func simpleRequest() chat.Request {
	return chat.Request{Model: "test-model", MaxTokens: 1024, Messages: []chat.Message{chat.UserMessage("Hi")}}
}

// anthropicErrorBody is an error body as the Messages API sends it.
func anthropicErrorBody(typ, msg string) string {
	b, _ := json.Marshal(map[string]any{
		"type":       "error",
		"error":      map[string]string{"type": typ, "message": msg},
		"request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
	})
	return string(b)
}

func TestAnthropicStream(t *testing.T) {
	text := loadEvents(t, "anthropic_text.sse")
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
				stop:    "end_turn",
				usage:   chat.Usage{InputTokens: 25, OutputTokens: 15},
			},
		},
		{
			name:    "two tool calls streamed in pieces",
			respond: serveSSE(streamScript{events: loadEvents(t, "anthropic_tools.sse")}),
			want: wantOutcome{
				texts:   []string{"Let me look ", "at both."},
				content: "Let me look at both.",
				calls: []chat.ToolCall{
					{ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Name: "read_file", Arguments: json.RawMessage(`{"path": "main.go"}`)},
					{ID: "toolu_02Bq9cXnJ3kLmN7pQrStUvWx", Name: "list_dir", Arguments: json.RawMessage(`{"dir": ".", "depth": 2}`)},
				},
				stop:  "tool_use",
				usage: chat.Usage{InputTokens: 472 + 10 + 5, OutputTokens: 89, CacheCreationInputTokens: 10, CacheReadInputTokens: 5},
			},
		},
		{
			name:    "tool call without arguments gets {}",
			respond: serveSSE(streamScript{events: loadEvents(t, "anthropic_tool_noargs.sse")}),
			want: wantOutcome{
				calls: []chat.ToolCall{{ID: "toolu_01NoArgs", Name: "git_status", Arguments: json.RawMessage(`{}`)}},
				stop:  "tool_use",
				usage: chat.Usage{InputTokens: 40, OutputTokens: 12},
			},
		},
		{
			name:    "tool arguments cut by max_tokens",
			respond: serveSSE(streamScript{events: loadEvents(t, "anthropic_tool_cut_by_max_tokens.sse")}),
			// The call is answered with an error; the rest of the reply goes on.
			want: wantOutcome{
				calls: []chat.ToolCall{{ID: "toolu_01Cut", Name: "write_file", Arguments: json.RawMessage(`"{\"path\": \"a.go\", \"content\": \"package ma"`),
					Malformed: "were cut off: the reply reached its token limit (stop reason max_tokens)"}},
				stop:  "max_tokens",
				usage: chat.Usage{InputTokens: 40, OutputTokens: 16},
			},
		},
		{
			name: "429 with retry-after seconds",
			respond: serveError(429, map[string]string{"retry-after": "7", "request-id": "req_429"},
				anthropicErrorBody("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit")),
			want: wantOutcome{kind: chat.ErrRateLimited, status: 429, retryAfter: 7 * time.Second,
				msgHas: []string{"rate_limit_error", "per-minute rate limit", "req_429", "wait before retrying"}},
		},
		{
			name:    "429 with retry-after-ms",
			respond: serveError(429, map[string]string{"retry-after-ms": "1500", "retry-after": "2"}, anthropicErrorBody("rate_limit_error", "slow down")),
			want:    wantOutcome{kind: chat.ErrRateLimited, status: 429, retryAfter: 1500 * time.Millisecond},
		},
		{
			name:    "529 overloaded",
			respond: serveError(529, nil, anthropicErrorBody("overloaded_error", "Overloaded")),
			want:    wantOutcome{kind: chat.ErrOverloaded, status: 529, msgHas: []string{"overloaded_error: Overloaded"}},
		},
		{
			name:    "500 api_error",
			respond: serveError(500, nil, anthropicErrorBody("api_error", "Internal server error")),
			want:    wantOutcome{kind: chat.ErrServer, status: 500, msgHas: []string{"Internal server error"}},
		},
		{
			name:    "503 from a proxy with an HTML body",
			respond: serveError(503, map[string]string{"Content-Type": "text/html"}, "<html><body>\n<h1>503 Service Unavailable</h1>\n</body></html>"),
			want:    wantOutcome{kind: chat.ErrServer, status: 503, msgHas: []string{"503 Service Unavailable"}},
		},
		{
			name:    "401 bad key",
			respond: serveError(401, nil, anthropicErrorBody("authentication_error", "invalid x-api-key")),
			want:    wantOutcome{kind: chat.ErrAuth, status: 401, msgHas: []string{"invalid x-api-key", "ANTHROPIC_API_KEY"}},
		},
		{
			name:    "403 permission",
			respond: serveError(403, nil, anthropicErrorBody("permission_error", "no access to this model")),
			want:    wantOutcome{kind: chat.ErrAuth, status: 403},
		},
		{
			name:    "400 invalid request",
			respond: serveError(400, nil, anthropicErrorBody("invalid_request_error", "messages: at least one message is required")),
			want:    wantOutcome{kind: chat.ErrInvalidRequest, status: 400, msgHas: []string{"at least one message is required", "fix the request"}},
		},
		{
			name:    "404 unknown model",
			respond: serveError(404, nil, anthropicErrorBody("not_found_error", "model: claude-nope")),
			want:    wantOutcome{kind: chat.ErrInvalidRequest, status: 404},
		},
		{
			name:    "408 timeout",
			respond: serveError(408, nil, anthropicErrorBody("timeout_error", "Request timed out")),
			want:    wantOutcome{kind: chat.ErrTimeout, status: 408},
		},
		{
			name:    "402 billing is not retried",
			respond: serveError(402, nil, anthropicErrorBody("billing_error", "credit balance too low")),
			want:    wantOutcome{kind: chat.ErrOther, status: 402},
		},
		{
			name:    "connection dropped after some deltas",
			respond: serveSSE(streamScript{events: text, cutAfter: 5, abort: true}),
			want:    wantOutcome{kind: chat.ErrNetwork, texts: []string{"Hello", ", wor"}},
		},
		{
			name:    "stream ended cleanly without message_stop",
			respond: serveSSE(streamScript{events: text, cutAfter: 5}),
			want:    wantOutcome{kind: chat.ErrNetwork, texts: []string{"Hello", ", wor"}, msgHas: []string{"before message_stop"}},
		},
		{
			name:    "overloaded_error event inside the stream",
			respond: serveSSE(streamScript{events: loadEvents(t, "anthropic_error_overloaded.sse")}),
			want:    wantOutcome{kind: chat.ErrOverloaded, texts: []string{"Hel"}, msgHas: []string{"overloaded_error: Overloaded"}},
		},
		{
			name:    "unparseable event",
			respond: serveSSE(streamScript{events: loadEvents(t, "anthropic_malformed.sse")}),
			want:    wantOutcome{kind: chat.ErrMalformed},
		},
		{
			name:    "delta for a block that never started",
			respond: serveSSE(streamScript{events: loadEvents(t, "anthropic_bad_index.sse")}),
			want:    wantOutcome{kind: chat.ErrMalformed, msgHas: []string{"content_block_delta"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, tt.respond)
			rec, err := streamOutcome(t, newTestAnthropic(t, srv), context.Background(), simpleRequest())
			require.NoError(t, err)
			tt.want.check(t, rec)
			assert.Len(t, srv.requests(), 1, "exactly one HTTP request: the SDK must not retry")
		})
	}
}

func TestAnthropicRequestMapping(t *testing.T) {
	// Credentials in the environment must not reach the wire: the provider
	// uses its Config only.
	t.Setenv("ANTHROPIC_API_KEY", "sk-env-key-must-not-be-sent")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "env-token-must-not-be-sent")
	srv := newFakeServer(t, serveSSE(streamScript{events: loadEvents(t, "anthropic_text.sse")}))
	temp := 0.25
	req := chat.Request{
		Model:       "claude-sonnet-4-5",
		System:      "You are terse.",
		MaxTokens:   2048,
		Temperature: &temp,
		Messages: []chat.Message{
			chat.UserMessage("List the files and read x."),
			{Role: chat.RoleAssistant, Content: "Looking.", ToolCalls: []chat.ToolCall{
				{ID: "toolu_1", Name: "list_dir", Arguments: json.RawMessage(`{"dir":"."}`)},
				{ID: "toolu_2", Name: "read_file", Arguments: json.RawMessage(`{"path":"x"}`)},
			}},
			{Role: chat.RoleTool, ToolCallID: "toolu_1", ToolName: "list_dir", Content: "a.go\nb.go"},
			{Role: chat.RoleTool, ToolCallID: "toolu_2", ToolName: "read_file", Content: "no such file", IsError: true},
			{Role: chat.RoleAssistant, ToolCalls: []chat.ToolCall{{ID: "toolu_3", Name: "git_status"}}},
			{Role: chat.RoleTool, ToolCallID: "toolu_3", ToolName: "git_status", Content: ""},
			chat.UserMessage("Thanks."),
		},
		Tools: []chat.ToolSpec{
			{Name: "read_file", Description: "Read a file.", InputSchema: json.RawMessage(
				`{"type":"object","properties":{"path":{"type":"string","description":"file path"},"limit":{"type":"integer","maximum":9007199254740993}},"required":["path"],"additionalProperties":false}`)},
			{Name: "git_status", Description: "Show git status."},
		},
	}
	rec, err := streamOutcome(t, newTestAnthropic(t, srv), context.Background(), req)
	require.NoError(t, err)
	_, ok := rec.terminal(t).(Completed)
	require.True(t, ok)

	reqs := srv.requests()
	require.Len(t, reqs, 1)
	got := reqs[0]
	assert.Equal(t, http.MethodPost, got.Method)
	assert.Equal(t, "/v1/messages", got.Path)
	assert.Equal(t, testKey, got.Header.Get("x-api-key"))
	assert.Equal(t, "2023-06-01", got.Header.Get("anthropic-version"))
	assert.Contains(t, got.Header.Get("content-type"), "application/json")
	assert.Empty(t, got.Header.Get("authorization"))

	var body map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(got.Body, &body), "body: %s", got.Body)
	assert.JSONEq(t, `"claude-sonnet-4-5"`, string(body["model"]))
	assert.JSONEq(t, `2048`, string(body["max_tokens"]))
	assert.JSONEq(t, `0.25`, string(body["temperature"]))
	assert.JSONEq(t, `true`, string(body["stream"]))
	// The prompt cache's breakpoints: the tools, the system prompt, the
	// conversation's end and where the request before it ended.
	assert.JSONEq(t, `[{"type":"text","text":"You are terse.","cache_control":{"type":"ephemeral"}}]`, string(body["system"]))
	assert.JSONEq(t, `[
		{"role":"user","content":[{"type":"text","text":"List the files and read x."}]},
		{"role":"assistant","content":[
			{"type":"text","text":"Looking."},
			{"type":"tool_use","id":"toolu_1","name":"list_dir","input":{"dir":"."}},
			{"type":"tool_use","id":"toolu_2","name":"read_file","input":{"path":"x"}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"toolu_1","is_error":false,"content":[{"type":"text","text":"a.go\nb.go"}]},
			{"type":"tool_result","tool_use_id":"toolu_2","is_error":true,"content":[{"type":"text","text":"no such file"}],"cache_control":{"type":"ephemeral"}}]},
		{"role":"assistant","content":[{"type":"tool_use","id":"toolu_3","name":"git_status","input":{}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"toolu_3","is_error":false},
			{"type":"text","text":"Thanks.","cache_control":{"type":"ephemeral"}}]}
	]`, string(body["messages"]))
	assert.JSONEq(t, `[
		{"name":"read_file","description":"Read a file.","input_schema":
			{"type":"object","properties":{"path":{"type":"string","description":"file path"},"limit":{"type":"integer","maximum":9007199254740993}},"required":["path"],"additionalProperties":false}},
		{"name":"git_status","description":"Show git status.","input_schema":{"type":"object","properties":{}},"cache_control":{"type":"ephemeral"}}
	]`, string(body["tools"]))
	assert.Contains(t, string(got.Body), "9007199254740993", "schema numbers are sent exactly")
}

func TestAnthropicTemperatureUnset(t *testing.T) {
	srv := newFakeServer(t, serveSSE(streamScript{events: loadEvents(t, "anthropic_text.sse")}))
	_, err := streamOutcome(t, newTestAnthropic(t, srv), context.Background(), simpleRequest())
	require.NoError(t, err)
	var body map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(srv.requests()[0].Body, &body))
	assert.NotContains(t, body, "temperature")
	assert.NotContains(t, body, "system")
	assert.NotContains(t, body, "tools")
}

func TestAnthropicBadRequestIsNotSent(t *testing.T) {
	tests := []struct {
		name   string
		req    chat.Request
		msgHas string
	}{
		{"no model", chat.Request{MaxTokens: 10, Messages: []chat.Message{chat.UserMessage("x")}}, "name one with -model"},
		{"no max tokens", chat.Request{Model: "m", Messages: []chat.Message{chat.UserMessage("x")}}, "positive max tokens"},
		{"schema not an object", chat.Request{Model: "m", MaxTokens: 10, Tools: []chat.ToolSpec{{Name: "t", InputSchema: json.RawMessage(`[1]`)}}}, "input schema"},
		{"unknown role", chat.Request{Model: "m", MaxTokens: 10, Messages: []chat.Message{{Role: "robot", Content: "x"}}}, "unknown role"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, serveSSE(streamScript{events: loadEvents(t, "anthropic_text.sse")}))
			rec, err := streamOutcome(t, newTestAnthropic(t, srv), context.Background(), tt.req)
			require.NoError(t, err)
			f, ok := rec.terminal(t).(Failed)
			require.True(t, ok)
			assert.Equal(t, chat.ErrInvalidRequest, f.Err.Kind)
			assert.Contains(t, f.Err.Message, tt.msgHas)
			assert.Empty(t, srv.requests())
		})
	}
}

func TestAnthropicCancel(t *testing.T) {
	srv := newFakeServer(t, serveSSE(streamScript{events: loadEvents(t, "anthropic_text.sse"), cutAfter: 4, stall: true}))
	p := newTestAnthropic(t, srv)
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
	assert.Equal(t, []Event{Usage{Usage: chat.Usage{InputTokens: 25, OutputTokens: 1}}, TextDelta{Text: "Hello"}}, rec.events,
		"the prompt's usage as the reply starts, and no Failed or Completed after a cancel")
}

func TestAnthropicCancelledBeforeStart(t *testing.T) {
	srv := newFakeServer(t, serveSSE(streamScript{events: loadEvents(t, "anthropic_text.sse")}))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := &recorder{}
	err := newTestAnthropic(t, srv).Stream(ctx, simpleRequest(), rec.emit)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, rec.events)
}

// TestAnthropicDeadlineIsTimeout runs in a synctest bubble: the caller's
// deadline passes once the stream has stalled.
func TestAnthropicDeadlineIsTimeout(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv := fakellm.NewInMemory(t, fakellm.Anthropic, fakellm.Reply{Handler: serveSSE(streamScript{events: loadEvents(t, "anthropic_text.sse"), cutAfter: 4, stall: true})})
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		rec := &recorder{}
		err := newFakeProvider(t, srv, fakellm.Anthropic, Config{}).Stream(ctx, simpleRequest(), rec.emit)
		require.NoError(t, err)
		wantOutcome{kind: chat.ErrTimeout, texts: []string{"Hello"}}.check(t, rec)
	})
}

func TestAnthropicConnectionRefused(t *testing.T) {
	srv := newFakeServer(t, serveSSE(streamScript{}))
	url := srv.URL
	srv.Close()
	p, err := NewAnthropic(Config{APIKey: testKey, BaseURL: url})
	require.NoError(t, err)
	rec, err := streamOutcome(t, p, context.Background(), simpleRequest())
	require.NoError(t, err)
	wantOutcome{kind: chat.ErrNetwork, msgHas: []string{"check the network"}}.check(t, rec)
}

func TestAnthropicKeyScrubbed(t *testing.T) {
	echo := anthropicErrorBody("authentication_error", "invalid x-api-key: "+testKey)
	stream := strings.Join(loadEvents(t, "anthropic_text.sse")[:2], "") +
		"event: error\ndata: " + anthropicErrorBody("api_error", "upstream rejected key "+testKey) + "\n\n"
	tests := []struct {
		name    string
		respond http.HandlerFunc
		kind    chat.ErrorKind
	}{
		{"key echoed in a 401 body", serveError(401, nil, echo), chat.ErrAuth},
		{"key echoed in an error event", serveSSE(streamScript{events: []string{stream}}), chat.ErrServer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, tt.respond)
			logger, logs := logBuffer()
			p, err := NewAnthropic(Config{APIKey: testKey, BaseURL: srv.URL, Logger: logger})
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
		})
	}
}

func TestAnthropicEmitPanicIsNotSwallowed(t *testing.T) {
	srv := newFakeServer(t, serveSSE(streamScript{events: loadEvents(t, "anthropic_text.sse")}))
	p := newTestAnthropic(t, srv)
	boom := errors.New("caller bug")
	assert.PanicsWithValue(t, boom, func() {
		_ = p.Stream(context.Background(), simpleRequest(), func(Event) { panic(boom) })
	})
}
