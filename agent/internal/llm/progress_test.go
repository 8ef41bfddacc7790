package llm

import (
	"context"
	"fmt"
	"io"
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

// keepAlivesOnly answers with a stream's headers, then only SSE comments,
// one a millisecond, until the client goes away: a proxy that keeps the
// connection open while nothing of the reply ever starts.
func keepAlivesOnly(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	for {
		_, _ = io.WriteString(w, ": processing\n\n")
		_ = rc.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-time.After(time.Millisecond):
		}
	}
}

// TestKeepAlivesAreNotProgress checks that the idle timeout measures the
// reply's progress, not bytes: a server that keeps sending pings, comments
// or empty deltas, and nothing of the reply, fails the call with a
// retryable timeout that says so.
func TestKeepAlivesAreNotProgress(t *testing.T) {
	tests := []struct {
		name  string
		reply fakellm.Reply
		texts []string
		// msgHas is in the message, after the common part.
		msgHas string
		// usage is the usage the Failed event carries: Anthropic reports
		// the prompt's tokens as the reply starts.
		anthropicUsage chat.Usage
	}{
		{"pings forever after the reply's start", fakellm.Reply{Pings: true, Every: time.Millisecond}, nil,
			"waited for more of the reply (the stream stalled)", chat.Usage{InputTokens: 10, OutputTokens: 1}},
		{"some text, then pings forever", fakellm.Reply{Text: "Let me think", Pings: true, Every: time.Millisecond}, []string{"Let me think"},
			"waited for more of the reply (the stream stalled)", chat.Usage{InputTokens: 10, OutputTokens: 3}},
		{"empty deltas forever", fakellm.Reply{Forever: true, Every: time.Millisecond}, nil,
			"waited for more of the reply (the stream stalled)", chat.Usage{InputTokens: 10, OutputTokens: 1}},
		{"comments only, the reply never starts", fakellm.Reply{Handler: keepAlivesOnly}, nil,
			"waited for the start of the reply", chat.Usage{}},
	}
	for _, p := range fakeProviders {
		for _, tt := range tests {
			t.Run(string(p)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				synctest.Test(t, func(t *testing.T) {
					srv := fakellm.NewInMemory(t, p, tt.reply)
					prov := newFakeProvider(t, srv, p, Config{HeaderTimeout: time.Hour, IdleTimeout: short})
					rec, err := streamOutcome(t, prov, context.Background(), simpleRequest())
					require.NoError(t, err)
					e := failedOf(t, rec)
					assert.Equal(t, chat.ErrTimeout, e.Kind, e.Message)
					assert.True(t, e.Retryable())
					assert.Contains(t, e.Message, "the server sent nothing of the reply for 150ms, only keep-alives (pings, comments or empty deltas), while the call "+tt.msgHas)
					assert.Contains(t, e.Message, "retry, or allow more time with -llm-idle-timeout (now 150ms)")
					assert.Equal(t, tt.texts, rec.texts())
					want := tt.anthropicUsage
					if p == fakellm.OpenAI {
						// OpenAI reports usage only at the end: the output is
						// estimated from the text received.
						want = chat.Usage{OutputTokens: tt.anthropicUsage.OutputTokens}
						if tt.texts == nil {
							want.OutputTokens = 0
						}
					}
					assert.Equal(t, want, e.Usage)
					assert.Len(t, srv.Requests(), 1)
				})
			})
		}
	}
}

// slowStream answers with events, pausing between any two for pause: a
// model that works slowly but steadily.
func slowStream(events []string, pause time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		for i, ev := range events {
			if i > 0 {
				select {
				case <-r.Context().Done():
					return
				case <-time.After(pause):
				}
			}
			_, _ = io.WriteString(w, ev)
			_ = rc.Flush()
		}
	}
}

// thinkingEvents returns a reply that thinks in n pieces, then says "Done.".
func thinkingEvents(p fakellm.Provider, n int) []string {
	var evs []string
	if p == fakellm.Anthropic {
		ev := func(typ, data string) { evs = append(evs, "event: "+typ+"\ndata: "+data+"\n\n") }
		ev("message_start", `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"x","usage":{"input_tokens":7,"output_tokens":1}}}`)
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`)
		for range n {
			ev("ping", `{"type":"ping"}`)
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm "}}`)
		}
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"c2ln"}}`)
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
		ev("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`)
		ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Done."}}`)
		ev("content_block_stop", `{"type":"content_block_stop","index":1}`)
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":30}}`)
		ev("message_stop", `{"type":"message_stop"}`)
		return evs
	}
	chunk := func(delta string) string {
		return `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"x","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}` + "\n\n"
	}
	evs = append(evs, chunk(`{"role":"assistant","content":""}`))
	for i := range n {
		field := "reasoning_content" // llama.cpp, vLLM
		if i%2 == 1 {
			field = "reasoning" // Ollama, OpenRouter
		}
		evs = append(evs, ": keep-alive\n\n", chunk(`{"content":"","`+field+`":"hmm "}`))
	}
	evs = append(evs, chunk(`{"content":"Done."}`),
		`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"x","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n",
		`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"x","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":30,"total_tokens":37}}`+"\n\n",
		"data: [DONE]\n\n")
	return evs
}

// TestThinkingIsProgress checks that a model that thinks for longer than
// the idle timeout, steadily, is not cut off: its thinking (Anthropic's
// thinking deltas, the reasoning of OpenAI-compatible servers) is part of
// the reply, with keep-alives in between.
func TestThinkingIsProgress(t *testing.T) {
	// Each pause is a tenth of the limit (of the bubble's clock); all of
	// them together last well beyond it.
	const (
		pieces = 8
		limit  = time.Second
	)
	for _, p := range fakeProviders {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				srv := fakellm.NewInMemory(t, p, fakellm.Reply{Handler: slowStream(thinkingEvents(p, pieces), limit/10)})
				prov := newFakeProvider(t, srv, p, Config{IdleTimeout: limit})
				rec, err := streamOutcome(t, prov, context.Background(), simpleRequest())
				require.NoError(t, err)
				c, ok := rec.terminal(t).(Completed)
				require.Truef(t, ok, "want Completed, got %#v", rec.events[len(rec.events)-1])
				assert.Equal(t, "Done.", c.Response.Message.Content)
				assert.Equal(t, []string{"Done."}, rec.texts(), "thinking is not passed on as text")
			})
		})
	}
}

// TestThinkingCountsTowardsTheSizeLimit checks that the reply's size
// limit counts what a model thinks, on both wire formats.
func TestThinkingCountsTowardsTheSizeLimit(t *testing.T) {
	for _, p := range fakeProviders {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			// 8 pieces of "hmm " are 32 bytes, "Done." 5 more.
			srv := fakellm.New(t, p, fakellm.Reply{Handler: slowStream(thinkingEvents(p, 8), 0)})
			prov := newFakeProvider(t, srv, p, Config{MaxReplyBytes: 30})
			rec, err := streamOutcome(t, prov, context.Background(), simpleRequest())
			require.NoError(t, err)
			e := failedOf(t, rec)
			assert.Equal(t, chat.ErrOther, e.Kind, e.Message)
			assert.Contains(t, e.Message, "the reply passed the limit of 30 bytes")
		})
	}
}

// TestReplyTimeout checks the overall limit of one reply: a reply that
// keeps progressing, too slowly to end, is cut off and not retried; the
// time the server takes to send its headers does not count.
func TestReplyTimeout(t *testing.T) {
	tests := []struct {
		name  string
		reply fakellm.Reply
		cfg   Config
		kind  chat.ErrorKind
		// msgHas are in the message.
		msgHas []string
	}{
		{"a trickle of text without end", fakellm.Reply{Text: "la ", Forever: true, Every: short / 10},
			Config{ReplyTimeout: short, IdleTimeout: time.Hour},
			chat.ErrOther, []string{"the reply was still streaming after 150ms, the time limit of one reply, and was cut off",
				"if so long a reply is expected, allow more time with -llm-reply-timeout (now 150ms)"}},
		{"headers that never come", fakellm.Reply{NoHeaders: true},
			Config{ReplyTimeout: short, HeaderTimeout: 2 * short},
			chat.ErrTimeout, []string{"the server sent nothing for 300ms while the call waited for the response headers"}},
	}
	for _, p := range fakeProviders {
		for _, tt := range tests {
			t.Run(string(p)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				synctest.Test(t, func(t *testing.T) {
					srv := fakellm.NewInMemory(t, p, tt.reply)
					prov := newFakeProvider(t, srv, p, tt.cfg)
					rec, err := streamOutcome(t, prov, context.Background(), simpleRequest())
					require.NoError(t, err)
					e := failedOf(t, rec)
					assert.Equal(t, tt.kind, e.Kind, e.Message)
					assert.Equal(t, tt.kind == chat.ErrTimeout, e.Retryable())
					for _, s := range tt.msgHas {
						assert.Contains(t, e.Message, s)
					}
					if tt.kind == chat.ErrOther {
						assert.NotEmpty(t, rec.texts(), "the reply progressed until it was cut off")
						assert.Positive(t, e.Usage.OutputTokens, "what was written is counted")
					}
				})
			})
		}
	}
}

// TestIdleClockMessages checks what a timeout says it waited for, from the
// state of the reply's idle clock.
func TestIdleClockMessages(t *testing.T) {
	tests := []struct {
		clock idleClock
		want  string
	}{
		{idleClock{limit: time.Second}, "the server sent nothing for 1s while the call waited for the first byte of the reply after its headers"},
		{idleClock{limit: time.Second, read: 10}, "the server sent nothing for 1s while the call waited for the start of the reply"},
		{idleClock{limit: time.Second, read: 10, noise: true},
			"the server sent nothing of the reply for 1s, only keep-alives (pings, comments or empty deltas), while the call waited for the start of the reply"},
		{idleClock{limit: time.Second, read: 10, started: true}, "the server sent nothing for 1s while the call waited for more of the reply (the stream stalled)"},
		{idleClock{limit: 2 * time.Second, read: 10, started: true, noise: true},
			"the server sent nothing of the reply for 2s, only keep-alives (pings, comments or empty deltas), while the call waited for more of the reply (the stream stalled)"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%+v", tt.clock), func(t *testing.T) {
			w := tt.clock.wait()
			assert.Equal(t, tt.want, w.Error())
			assert.Equal(t, FlagIdleTimeout, w.flag)
		})
	}
	k := idleClock{limit: time.Second, waited: time.Hour, noise: true, read: 5}
	k.progress()
	assert.Equal(t, idleClock{limit: time.Second, started: true, read: 5}, k, "progress starts the clock again")
	w := k.wait()
	assert.True(t, strings.HasPrefix(w.Error(), "the server sent nothing for "), w.Error())
}
