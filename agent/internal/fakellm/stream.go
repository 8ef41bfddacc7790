package fakellm

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// deltas splits text into pieces of about three words, spaces kept.
func deltas(text string) []string {
	var out []string
	words := strings.SplitAfter(text, " ")
	for i := 0; i < len(words); i += 3 {
		out = append(out, strings.Join(words[i:min(i+3, len(words))], ""))
	}
	return out
}

// argPieces splits a JSON argument text into a few fragments.
func argPieces(args string) []string {
	if args == "" {
		return nil
	}
	n := max(1, len(args)/3)
	var out []string
	for i := 0; i < len(args); i += n {
		out = append(out, args[i:min(i+n, len(args))])
	}
	return out
}

// sse writes server-sent events, flushing after each.
type sse struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// start sends the stream's headers.
func startSSE(w http.ResponseWriter, reply Reply) *sse {
	for k, v := range reply.Header {
		w.Header().Set(k, v)
	}
	ct := reply.ContentType
	if ct == "" {
		ct = "text/event-stream; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &sse{w: w, rc: http.NewResponseController(w)}
}

// event writes one event; name may be empty (OpenAI sends data only).
func (s *sse) event(name, data string) {
	if name != "" {
		_, _ = io.WriteString(s.w, "event: "+name+"\n")
	}
	_, _ = io.WriteString(s.w, "data: "+data+"\n\n")
	_ = s.rc.Flush()
}

// jsonText encodes v as JSON text.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps of plain values are encoded
	}
	return string(b)
}

// abort drops the connection mid-body.
func abort() { panic(http.ErrAbortHandler) }

// stall waits for the client to go away.
func stall(r *http.Request) { <-r.Context().Done() }

// forever calls send with the pieces in turn, round and round, one every
// every (without pause when 0), until the client goes away.
func forever(r *http.Request, every time.Duration, pieces []string, send func(string)) {
	if len(pieces) == 0 {
		pieces = []string{""}
	}
	var tick <-chan time.Time
	if every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	for i := 0; r.Context().Err() == nil; i++ {
		if tick != nil {
			select {
			case <-tick:
			case <-r.Context().Done():
				return
			}
		}
		send(pieces[i%len(pieces)])
	}
}

// defaultPingEvery is how often Pings sends a keep-alive when Every is 0.
const defaultPingEvery = 10 * time.Millisecond

// pings sends the keep-alives in turn, one every reply.Every, until the
// client goes away.
func (s *sse) pings(r *http.Request, reply Reply, keepAlives ...string) {
	every := reply.Every
	if every <= 0 {
		every = defaultPingEvery
	}
	forever(r, every, keepAlives, func(k string) {
		_, _ = io.WriteString(s.w, k)
		_ = s.rc.Flush()
	})
}

// usageOr returns the reply's usage, or the default one.
func usageOr(u *chat.Usage) chat.Usage {
	if u == nil {
		return chat.Usage{InputTokens: 10, OutputTokens: 20}
	}
	return *u
}

// streamAnthropic streams reply as Messages API events.
func streamAnthropic(w http.ResponseWriter, r *http.Request, reply Reply) {
	s := startSSE(w, reply)
	u := usageOr(reply.Usage)
	startUsage := map[string]any{"input_tokens": u.InputTokens - u.CacheCreationInputTokens - u.CacheReadInputTokens, "output_tokens": 1}
	if reply.Usage != nil {
		startUsage["cache_creation_input_tokens"] = u.CacheCreationInputTokens
		startUsage["cache_read_input_tokens"] = u.CacheReadInputTokens
	}
	s.event("message_start", jsonText(map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_fake", "type": "message", "role": "assistant", "content": []any{}, "model": "fake-model",
		"stop_reason": nil, "stop_sequence": nil, "usage": startUsage,
	}}))
	s.event("ping", `{"type": "ping"}`)
	index := 0
	if reply.Thinking != "" {
		s.event("content_block_start", jsonText(map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}}))
		for _, d := range deltas(reply.Thinking) {
			s.event("content_block_delta", jsonText(map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "thinking_delta", "thinking": d}}))
		}
		s.event("content_block_delta", jsonText(map[string]any{"type": "content_block_delta", "index": index,
			"delta": map[string]any{"type": "signature_delta", "signature": Signature(reply.Thinking)}}))
		s.event("content_block_stop", jsonText(map[string]any{"type": "content_block_stop", "index": index}))
		index++
	}
	if reply.RedactedThinking != "" {
		s.event("content_block_start", jsonText(map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "redacted_thinking", "data": reply.RedactedThinking}}))
		s.event("content_block_stop", jsonText(map[string]any{"type": "content_block_stop", "index": index}))
		index++
	}
	if reply.Text != "" || reply.CutAfter > 0 || reply.Malformed || reply.Forever {
		s.event("content_block_start", jsonText(map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "text", "text": ""}}))
		for i, d := range deltas(reply.Text) {
			if reply.CutAfter > 0 && i == reply.CutAfter {
				abort()
			}
			s.event("content_block_delta", jsonText(map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "text_delta", "text": d}}))
		}
		if reply.CutAfter > 0 {
			abort()
		}
		if reply.Forever {
			forever(r, reply.Every, deltas(reply.Text), func(d string) {
				s.event("content_block_delta", jsonText(map[string]any{"type": "content_block_delta", "index": index,
					"delta": map[string]any{"type": "text_delta", "text": d}}))
			})
			return
		}
		if reply.Malformed {
			s.event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"oops`)
		}
		s.event("content_block_stop", jsonText(map[string]any{"type": "content_block_stop", "index": index}))
		index++
	}
	if reply.StreamError != "" {
		s.event("error", jsonText(map[string]any{"type": "error", "error": map[string]any{"type": reply.StreamError, "message": "fakellm: " + reply.StreamError}}))
		return
	}
	if reply.Stall {
		stall(r)
		return
	}
	if reply.Pings {
		s.pings(r, reply, "event: ping\ndata: {\"type\": \"ping\"}\n\n", ": ping\n\n")
		return
	}
	for _, tc := range reply.ToolCalls {
		s.event("content_block_start", jsonText(map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": map[string]any{}}}))
		for _, p := range argPieces(tc.Args) {
			s.event("content_block_delta", jsonText(map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": p}}))
		}
		s.event("content_block_stop", jsonText(map[string]any{"type": "content_block_stop", "index": index}))
		index++
	}
	stop := "end_turn"
	switch {
	case reply.AtLimit:
		stop = "max_tokens"
	case len(reply.ToolCalls) > 0:
		stop = "tool_use"
	}
	endUsage := map[string]any{"output_tokens": u.OutputTokens}
	if u.ReasoningTokens != 0 {
		endUsage["output_tokens_details"] = map[string]any{"thinking_tokens": u.ReasoningTokens}
	}
	s.event("message_delta", jsonText(map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": endUsage}))
	s.event("message_stop", `{"type":"message_stop"}`)
}

// streamOpenAI streams reply as chat completion chunks.
func streamOpenAI(w http.ResponseWriter, r *http.Request, reply Reply) {
	s := startSSE(w, reply)
	chunk := func(delta map[string]any, finish any) string {
		return jsonText(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1700000000,
			"model": "fake-model", "choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
	}
	s.event("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	for _, d := range deltas(reply.Thinking) {
		s.event("", chunk(map[string]any{"reasoning_content": d}, nil))
	}
	for i, d := range deltas(reply.Text) {
		if reply.CutAfter > 0 && i == reply.CutAfter {
			abort()
		}
		s.event("", chunk(map[string]any{"content": d}, nil))
	}
	if reply.CutAfter > 0 {
		abort()
	}
	if reply.Forever {
		forever(r, reply.Every, deltas(reply.Text), func(d string) { s.event("", chunk(map[string]any{"content": d}, nil)) })
		return
	}
	if reply.Malformed {
		s.event("", `{"id":"chatcmpl-fake","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"oops`)
	}
	if reply.Stall {
		stall(r)
		return
	}
	if reply.Pings {
		s.pings(r, reply, ": ping\n\n")
		return
	}
	for i, tc := range reply.ToolCalls {
		s.event("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": tc.ID, "type": "function",
			"function": map[string]any{"name": tc.Name, "arguments": ""}}}}, nil))
		for _, p := range argPieces(tc.Args) {
			s.event("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i,
				"function": map[string]any{"arguments": p}}}}, nil))
		}
	}
	finish := "stop"
	switch {
	case reply.AtLimit:
		finish = "length"
	case len(reply.ToolCalls) > 0:
		finish = "tool_calls"
	}
	s.event("", chunk(map[string]any{}, finish))
	u := usageOr(reply.Usage)
	usage := map[string]any{"prompt_tokens": u.InputTokens, "completion_tokens": u.OutputTokens, "total_tokens": u.InputTokens + u.OutputTokens}
	if reply.Usage != nil {
		prompt := map[string]any{"cached_tokens": u.CacheReadInputTokens}
		if u.CacheCreationInputTokens != 0 {
			prompt["cache_write_tokens"] = u.CacheCreationInputTokens
		}
		usage["prompt_tokens_details"] = prompt
		usage["completion_tokens_details"] = map[string]any{"reasoning_tokens": u.ReasoningTokens}
	}
	s.event("", jsonText(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1700000000,
		"model": "fake-model", "choices": []any{}, "usage": usage}))
	s.event("", "[DONE]")
}
