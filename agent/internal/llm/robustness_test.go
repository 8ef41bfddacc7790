package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// TestOddServerInput feeds both providers replies no real server should
// send: each call must end with exactly one Failed, without panicking.
func TestOddServerInput(t *testing.T) {
	aStart := loadEvents(t, "anthropic_text.sse")[0]
	oFirst := loadEvents(t, "openai_text.sse")[1]
	sse := func(events ...string) http.HandlerFunc { return serveSSE(streamScript{events: events}) }
	tests := []struct {
		name     string
		provider string
		respond  http.HandlerFunc
		kind     chat.ErrorKind
	}{
		{"anthropic: JSON array as event", NameAnthropic, sse(aStart, "event: content_block_delta\ndata: []\n\n"), chat.ErrMalformed},
		{"anthropic: string as event", NameAnthropic, sse(aStart, "event: message_delta\ndata: \"x\"\n\n"), chat.ErrMalformed},
		{"anthropic: negative block index", NameAnthropic, sse(aStart,
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":-1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"), chat.ErrMalformed},
		{"anthropic: stop for a block never started", NameAnthropic, sse(aStart,
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":7}\n\n"), chat.ErrMalformed},
		{"anthropic: JSON instead of a stream", NameAnthropic, serveError(200, nil, `{"id":"msg_1","type":"message","content":[]}`), chat.ErrMalformed},
		{"anthropic: empty stream", NameAnthropic, sse(), chat.ErrNetwork},
		{"openai: number as chunk", NameOpenAI, sse(oFirst, "data: 42\n\n"), chat.ErrMalformed},
		{"openai: null choices then cut", NameOpenAI, sse("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":null}\n\n"), chat.ErrNetwork},
		{"openai: JSON instead of a stream", NameOpenAI, serveError(200, nil, `{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`), chat.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, tt.respond)
			var p Provider
			if tt.provider == NameAnthropic {
				p = newTestAnthropic(t, srv)
			} else {
				p = newTestOpenAI(t, srv)
			}
			var rec *recorder
			var err error
			require.NotPanics(t, func() { rec, err = streamOutcome(t, p, context.Background(), simpleRequest()) })
			require.NoError(t, err)
			f, ok := rec.terminal(t).(Failed)
			require.Truef(t, ok, "want Failed, got %#v", rec.events)
			assert.Equal(t, tt.kind, f.Err.Kind, "message: %s", f.Err.Message)
			assert.Len(t, srv.requests(), 1)
		})
	}
}

// TestMalformedToolCall checks that a tool call whose arguments are not a
// JSON object does not fail the reply: the reply completes, with the
// other calls as they were and that call marked Malformed, its arguments
// kept as a JSON string, for the agent to answer with an error.
func TestMalformedToolCall(t *testing.T) {
	aStart := loadEvents(t, "anthropic_text.sse")[0]
	sse := func(events ...string) http.HandlerFunc { return serveSSE(streamScript{events: events}) }
	aTool := func(i int, id, name, input string) []string {
		return []string{
			fmt.Sprintf("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":%d,\"content_block\":{\"type\":\"tool_use\",\"id\":%q,\"name\":%q,\"input\":{}}}\n\n", i, id, name),
			fmt.Sprintf("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":%d,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":%s}}\n\n", i, strconv.Quote(input)),
			fmt.Sprintf("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":%d}\n\n", i),
		}
	}
	tests := []struct {
		name     string
		provider string
		respond  http.HandlerFunc
		calls    []chat.ToolCall
	}{
		{"anthropic: tool input that is not JSON, between two good calls", NameAnthropic, sse(slices.Concat([]string{aStart},
			aTool(0, "t0", "read_file", `{"path":"a"}`), aTool(1, "t1", "x", "{oops"), aTool(2, "t2", "read_file", `{"path":"b"}`),
			[]string{"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"})...),
			[]chat.ToolCall{
				{ID: "t0", Name: "read_file", Arguments: json.RawMessage(`{"path":"a"}`)},
				{ID: "t1", Name: "x", Arguments: json.RawMessage(`"{oops"`), Malformed: "are not a JSON object"},
				{ID: "t2", Name: "read_file", Arguments: json.RawMessage(`{"path":"b"}`)},
			}},
		{"openai: negative tool index and no id", NameOpenAI, sse(
			"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":-5,\"function\":{\"arguments\":\"{nope\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n",
			"data: [DONE]\n\n"),
			[]chat.ToolCall{{ID: "call_0", Arguments: json.RawMessage(`"{nope"`), Malformed: "are not a JSON object"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeServer(t, tt.respond)
			var p Provider
			if tt.provider == NameAnthropic {
				p = newTestAnthropic(t, srv)
			} else {
				p = newTestOpenAI(t, srv)
			}
			rec, err := streamOutcome(t, p, context.Background(), simpleRequest())
			require.NoError(t, err)
			c, ok := rec.terminal(t).(Completed)
			require.Truef(t, ok, "want Completed, got %#v", rec.events)
			assert.Equal(t, tt.calls, c.Response.Message.ToolCalls)
		})
	}
}
