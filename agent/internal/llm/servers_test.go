package llm

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
)

func TestReplySizeLimit(t *testing.T) {
	const limit = 1000
	exact := strings.Repeat("x", limit)
	tests := []struct {
		name  string
		reply fakellm.Reply
		// ok says the reply fits.
		ok     bool
		msgHas []string
	}{
		{"text of exactly the limit", fakellm.Reply{Text: exact}, true, nil},
		{"text one byte over", fakellm.Reply{Text: exact + "y"}, false, []string{"1000 bytes of text and tool call arguments", "-llm-max-reply"}},
		{"text and arguments together over", fakellm.Reply{Text: strings.Repeat("x", 600),
			ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "edit_file", Args: `{"new_str":"` + strings.Repeat("y", 500) + `"}`}}},
			false, []string{"1000 bytes", "-llm-max-reply"}},
		{"text without end", fakellm.Reply{Text: "all work and no play ", Forever: true}, false, []string{"1000 bytes", "-llm-max-reply"}},
		{"empty deltas without end", fakellm.Reply{Forever: true}, false, []string{"more than 64000 bytes for one reply", "-llm-max-reply (now 1000 bytes)"}},
	}
	for _, p := range fakeProviders {
		for _, tt := range tests {
			t.Run(string(p)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				srv := fakellm.New(t, p, tt.reply)
				prov := newFakeProvider(t, srv, p, Config{MaxReplyBytes: limit})
				rec, err := streamOutcome(t, prov, context.Background(), simpleRequest())
				require.NoError(t, err)
				if tt.ok {
					c, ok := rec.terminal(t).(Completed)
					require.True(t, ok)
					assert.Equal(t, exact, c.Response.Message.Content)
					return
				}
				e := failedOf(t, rec)
				assert.Equal(t, chat.ErrOther, e.Kind, e.Message)
				assert.False(t, e.Retryable())
				for _, s := range tt.msgHas {
					assert.Contains(t, e.Message, s)
				}
				assert.LessOrEqual(t, len(strings.Join(rec.texts(), "")), limit, "no text past the limit is passed on")
			})
		}
	}
}

func TestServerThatIsNoLLMAPI(t *testing.T) {
	type want struct {
		status int
		what   string // the status and content type the message names
	}
	tests := []struct {
		name  string
		reply fakellm.Reply
		want  want
	}{
		{"web server refusing POST (python -m http.server)", fakellm.Reply{Page: 501}, want{501, "HTTP 501, text/html"}},
		{"web server without the path", fakellm.Reply{Page: 404}, want{404, "HTTP 404, text/html"}},
		{"web server refusing the method", fakellm.Reply{Page: 405}, want{405, "HTTP 405, text/html"}},
		{"web app answering any path", fakellm.Reply{Page: 200}, want{0, "HTTP 200, text/html"}},
		{"proxy's page for a bad request", fakellm.Reply{Page: 400}, want{400, "HTTP 400, text/html"}},
		{"plain text", fakellm.Reply{Body: "Hello, world!\n"}, want{0, `HTTP 200, text/plain: "Hello, world!"`}},
		{"Go's 404 (Ollama without /v1)", fakellm.Reply{Status: 404, Body: "404 page not found\n"}, want{404, `HTTP 404, text/plain: "404 page not found"`}},
		{"FastAPI's 404 (vLLM without /v1)", fakellm.Reply{Status: 404, Body: `{"detail":"Not Found"}`, ContentType: "application/json"},
			want{404, "HTTP 404, application/json"}},
		{"empty 404", fakellm.Reply{Status: 404, Body: " "}, want{404, "HTTP 404, text/plain"}},
		{"no content type", fakellm.Reply{Body: "ok", ContentType: " "}, want{0, `HTTP 200, no content type: "ok"`}},
		{"control characters", fakellm.Reply{Status: 501, Body: "\x1b[31mnot\x07 here\x1b[0m\r\n\u202Egnp.exe"},
			want{501, `HTTP 501, text/plain: "[31mnot here[0m gnp.exe"`}},
	}
	for _, p := range fakeProviders {
		for _, tt := range tests {
			t.Run(string(p)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				srv := fakellm.New(t, p, tt.reply)
				prov := newFakeProvider(t, srv, p, Config{})
				rec, err := streamOutcome(t, prov, context.Background(), simpleRequest())
				require.NoError(t, err)
				e := failedOf(t, rec)
				assert.Equal(t, chat.ErrInvalidRequest, e.Kind, e.Message)
				assert.False(t, e.Retryable())
				assert.Equal(t, tt.want.status, e.StatusCode)
				api, env := "an Anthropic Messages API endpoint", "ANTHROPIC_BASE_URL"
				base := srv.URL
				if p == fakellm.OpenAI {
					api, env, base = "an OpenAI chat completions API endpoint", "OPENAI_BASE_URL", srv.URL+"/v1"
				}
				assert.Contains(t, e.Message, "the base URL "+base+" does not look like "+api+" ("+tt.want.what)
				assert.Contains(t, e.Message, "check -base-url or "+env)
				assert.Contains(t, e.Message, "-provider")
				for _, markup := range []string{"<", ">", "font-family", "console.log", "DOCTYPE", "\x1b", "\u202E"} {
					assert.NotContains(t, e.Message, markup, "the page is not shown beyond a short excerpt of its text")
				}
				assert.LessOrEqual(t, len(e.Message), 600)
				assert.Len(t, srv.Requests(), 1)
			})
		}
	}
}

// TestPlainWebServer points both providers at a plain web server.
func TestPlainWebServer(t *testing.T) {
	for _, p := range fakeProviders {
		t.Run(string(p), func(t *testing.T) {
			srv := fakellm.NewWebServer(t, http.StatusNotImplemented)
			prov, err := New(string(p), Config{APIKey: testKey, BaseURL: srv.URL})
			require.NoError(t, err)
			rec, err := streamOutcome(t, prov, context.Background(), simpleRequest())
			require.NoError(t, err)
			e := failedOf(t, rec)
			assert.Equal(t, chat.ErrInvalidRequest, e.Kind)
			assert.Contains(t, e.Message, "does not look like")
			assert.Contains(t, e.Message, "(HTTP 501, text/html: \"501 Not Implemented fakellm web server: no page for POST")
			require.Len(t, srv.Requests(), 1, "not retried")
			assert.Contains(t, []string{"/v1/messages", "/chat/completions"}, srv.Requests()[0].Path)
		})
	}
}

// TestAPIServersKeepTheirMeaning checks that what a real API (or a proxy in
// front of it) answers is not taken for a server that does not speak it.
func TestAPIServersKeepTheirMeaning(t *testing.T) {
	tests := []struct {
		name  string
		reply fakellm.Reply
		kind  chat.ErrorKind
		// msgHas is in the message; "does not look like" never is.
		msgHas string
	}{
		{"404 of the API: unknown model", fakellm.Reply{Status: 404, ErrorMessage: "model: claude-nope"}, chat.ErrInvalidRequest, "model: claude-nope"},
		{"405 of the API", fakellm.Reply{Status: 405, ErrorMessage: "use POST"}, chat.ErrOther, "use POST"},
		{"502 page of a proxy", fakellm.Reply{Page: 502}, chat.ErrServer, "502 Bad Gateway"},
		{"503 page of a proxy", fakellm.Reply{Page: 503}, chat.ErrServer, "503 Service Unavailable"},
		{"429 page of a proxy", fakellm.Reply{Page: 429}, chat.ErrRateLimited, "429 Too Many Requests"},
		{"stream with a plain text content type", fakellm.Reply{Text: "Hello there", ContentType: "text/plain; charset=utf-8"}, "", ""},
	}
	for _, p := range fakeProviders {
		for _, tt := range tests {
			t.Run(string(p)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				srv := fakellm.New(t, p, tt.reply)
				prov := newFakeProvider(t, srv, p, Config{})
				rec, err := streamOutcome(t, prov, context.Background(), simpleRequest())
				require.NoError(t, err)
				if tt.kind == "" {
					c, ok := rec.terminal(t).(Completed)
					require.Truef(t, ok, "want Completed, got %#v", rec.events[len(rec.events)-1])
					assert.Equal(t, "Hello there", c.Response.Message.Content)
					return
				}
				e := failedOf(t, rec)
				assert.Equal(t, tt.kind, e.Kind, e.Message)
				assert.Contains(t, e.Message, tt.msgHas)
				assert.NotContains(t, e.Message, "does not look like")
				assert.NotContains(t, e.Message, "<")
			})
		}
	}
}

// TestFailureIsLoggedOnce checks that a failure the provider reports as
// Failed is not logged above debug level: the caller shows it.
func TestFailureIsLoggedOnce(t *testing.T) {
	tests := []struct {
		name  string
		reply fakellm.Reply
	}{
		{"server error", fakellm.Reply{Status: 500}},
		{"bad key", fakellm.Reply{Status: 401}},
		{"silence", fakellm.Reply{HeadersOnly: true}},
		{"web server", fakellm.Reply{Page: 501}},
		{"reply too large", fakellm.Reply{Text: "and on ", Forever: true}},
		{"cut mid-stream", fakellm.Reply{Text: "one two three four", CutAfter: 1}},
	}
	for _, p := range fakeProviders {
		for _, tt := range tests {
			t.Run(string(p)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				synctest.Test(t, func(t *testing.T) {
					for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
						srv := fakellm.NewInMemory(t, p, tt.reply)
						var logs bytes.Buffer
						logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: level}))
						prov := newFakeProvider(t, srv, p, Config{Logger: logger, IdleTimeout: short, MaxReplyBytes: 1000})
						rec, err := streamOutcome(t, prov, context.Background(), simpleRequest())
						require.NoError(t, err)
						e := failedOf(t, rec)
						if level == slog.LevelInfo {
							assert.Empty(t, logs.String(), "nothing logged without debug")
							continue
						}
						assert.Equal(t, 1, strings.Count(logs.String(), "llm call failed"), logs.String())
						assert.Contains(t, logs.String(), "level=DEBUG msg=\"llm call failed\"")
						assert.Contains(t, logs.String(), "kind="+string(e.Kind))
					}
				})
			})
		}
	}
}

func TestUsageFromTheStream(t *testing.T) {
	full := chat.Usage{InputTokens: 1200, OutputTokens: 300, CacheCreationInputTokens: 200, CacheReadInputTokens: 900, ReasoningTokens: 120}
	tests := []struct {
		name  string
		usage *chat.Usage
		want  chat.Usage
	}{
		{"every figure", &full, full},
		{"no cache used", &chat.Usage{InputTokens: 50, OutputTokens: 7}, chat.Usage{InputTokens: 50, OutputTokens: 7}},
		{"cache read only", &chat.Usage{InputTokens: 5000, OutputTokens: 10, CacheReadInputTokens: 4990},
			chat.Usage{InputTokens: 5000, OutputTokens: 10, CacheReadInputTokens: 4990}},
		{"server without cache figures", nil, chat.Usage{InputTokens: 10, OutputTokens: 20}},
	}
	for _, p := range fakeProviders {
		for _, tt := range tests {
			t.Run(string(p)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				srv := fakellm.New(t, p, fakellm.Reply{Text: "Cached.", Usage: tt.usage})
				rec, err := streamOutcome(t, newFakeProvider(t, srv, p, Config{}), context.Background(), simpleRequest())
				require.NoError(t, err)
				c, ok := rec.terminal(t).(Completed)
				require.Truef(t, ok, "want Completed, got %#v", rec.events[len(rec.events)-1])
				assert.Equal(t, tt.want, c.Response.Usage)
			})
		}
	}
}

func TestConfigErrorsNameFlagsAndVariables(t *testing.T) {
	tests := []struct {
		name     string
		provider string
		cfg      Config
		want     error
		msgHas   []string
	}{
		{"anthropic without a key", NameAnthropic, Config{}, ErrNoAPIKey,
			[]string{"set ANTHROPIC_API_KEY", "-provider openai", "OPENAI_API_KEY"}},
		{"openai without a key", NameOpenAI, Config{}, ErrNoAPIKey,
			[]string{"set OPENAI_API_KEY", "-base-url or OPENAI_BASE_URL", "-provider anthropic"}},
		{"anthropic base URL without a scheme", NameAnthropic, Config{APIKey: "k", BaseURL: "localhost:8080"}, ErrBadBaseURL,
			[]string{"fix -base-url or ANTHROPIC_BASE_URL", "http://localhost:8080/v1"}},
		{"openai base URL of another scheme", NameOpenAI, Config{BaseURL: "ftp://x"}, ErrBadBaseURL,
			[]string{"fix -base-url or OPENAI_BASE_URL"}},
		{"base URL that does not parse", NameOpenAI, Config{BaseURL: "http://[::1"}, ErrBadBaseURL,
			[]string{"fix -base-url or OPENAI_BASE_URL"}},
		{"base URL with a password", NameOpenAI, Config{BaseURL: "gopher://me:hunter2@host"}, ErrBadBaseURL,
			[]string{"fix -base-url"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.provider == NameAnthropic {
				_, err = NewAnthropic(tt.cfg)
			} else {
				_, err = NewOpenAI(tt.cfg)
			}
			require.ErrorIs(t, err, tt.want)
			for _, s := range tt.msgHas {
				assert.Contains(t, err.Error(), s)
			}
			assertUserTerms(t, err.Error())
			assert.NotContains(t, err.Error(), "hunter2")
		})
	}
}

// TestToolNameAndIDLimits checks that a tool call's name and ID are
// capped, each alone and in the reply's size, and that an oversized one
// is never passed on.
func TestToolNameAndIDLimits(t *testing.T) {
	huge := strings.Repeat("n", 3<<20)
	tests := []struct {
		name string
		call fakellm.ToolCall
		cfg  Config
		// msgHas is in the message; "" means the call completes.
		msgHas string
	}{
		{"a name of the limit", fakellm.ToolCall{ID: "c1", Name: strings.Repeat("n", MaxToolNameBytes), Args: "{}"}, Config{}, ""},
		{"an ID of the limit", fakellm.ToolCall{ID: strings.Repeat("i", MaxCallIDBytes), Name: "list_files", Args: "{}"}, Config{}, ""},
		{"a name one byte over", fakellm.ToolCall{ID: "c1", Name: strings.Repeat("n", MaxToolNameBytes+1), Args: "{}"}, Config{},
			`the reply has a tool call whose name is 257 bytes long ("nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn…"), more than the 256 bytes a tool call name may have`},
		{"an ID one byte over", fakellm.ToolCall{ID: strings.Repeat("i", MaxCallIDBytes+1), Name: "list_files", Args: "{}"}, Config{},
			"the reply has a tool call whose ID is 257 bytes long"},
		{"a name of 3 MB", fakellm.ToolCall{ID: "c1", Name: huge, Args: "{}"}, Config{}, "whose name is 3145728 bytes long"},
		{"an ID of 3 MB", fakellm.ToolCall{ID: huge, Name: "list_files", Args: "{}"}, Config{}, "whose ID is 3145728 bytes long"},
		{"name and ID count towards the reply's size", fakellm.ToolCall{ID: strings.Repeat("i", 250), Name: strings.Repeat("n", 250),
			Args: `{"s":"` + strings.Repeat("a", 550) + `"}`}, Config{MaxReplyBytes: 1000}, "the reply passed the limit of 1000 bytes"},
	}
	for _, p := range fakeProviders {
		for _, tt := range tests {
			t.Run(string(p)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				srv := fakellm.New(t, p, fakellm.Reply{ToolCalls: []fakellm.ToolCall{tt.call}})
				rec, err := streamOutcome(t, newFakeProvider(t, srv, p, tt.cfg), context.Background(), simpleRequest())
				require.NoError(t, err)
				for _, ev := range rec.events {
					if d, ok := ev.(ToolCallDelta); ok {
						assert.LessOrEqual(t, len(d.ToolName), MaxToolNameBytes, "an oversized name is not passed on")
						assert.LessOrEqual(t, len(d.CallID), MaxCallIDBytes, "an oversized ID is not passed on")
					}
				}
				if tt.msgHas == "" {
					c, ok := rec.terminal(t).(Completed)
					require.Truef(t, ok, "want Completed, got %#v", rec.events[len(rec.events)-1])
					require.Len(t, c.Response.Message.ToolCalls, 1)
					assert.Equal(t, tt.call.Name, c.Response.Message.ToolCalls[0].Name)
					assert.Equal(t, tt.call.ID, c.Response.Message.ToolCalls[0].ID)
					return
				}
				e := failedOf(t, rec)
				assert.Equal(t, chat.ErrOther, e.Kind, e.Message)
				assert.False(t, e.Retryable())
				assert.Contains(t, e.Message, tt.msgHas)
				assert.LessOrEqual(t, len(e.Message), 600, "the message quotes only the start of a name or ID")
			})
		}
	}
}

// TestUsageOfAFailedCall checks that a call that fails once its reply
// started reports what it is known to have used: the figures the server
// sent, and the output estimated from the bytes received when the server
// had not counted it.
func TestUsageOfAFailedCall(t *testing.T) {
	prompt := &chat.Usage{InputTokens: 1000, OutputTokens: 50, CacheReadInputTokens: 600}
	tests := []struct {
		name  string
		reply fakellm.Reply
		cfg   Config
		kind  chat.ErrorKind
		// anthropic and openai are the usage each provider's Failed
		// carries: Anthropic reports the prompt as the reply starts,
		// OpenAI nothing before the reply's end.
		anthropic, openai chat.Usage
	}{
		{"cut mid-stream", fakellm.Reply{Text: "one two three four five six", CutAfter: 1, Usage: prompt}, Config{}, chat.ErrNetwork,
			// "one two three " is 14 bytes: 4 tokens.
			chat.Usage{InputTokens: 1000, OutputTokens: 4, CacheReadInputTokens: 600}, chat.Usage{OutputTokens: 4}},
		{"cut at the size limit", fakellm.Reply{Text: "0123456789 abcdefghij ", Forever: true, Usage: prompt}, Config{MaxReplyBytes: 1000}, chat.ErrOther,
			// 1012 bytes received, the delta that passed the limit
			// included: 253 tokens.
			chat.Usage{InputTokens: 1000, OutputTokens: 253, CacheReadInputTokens: 600}, chat.Usage{OutputTokens: 253}},
		{"refused with an HTTP error", fakellm.Reply{Status: 500}, Config{}, chat.ErrServer, chat.Usage{}, chat.Usage{}},
		{"stalled before any text", fakellm.Reply{Stall: true, Usage: prompt}, Config{IdleTimeout: short}, chat.ErrTimeout,
			chat.Usage{InputTokens: 1000, OutputTokens: 1, CacheReadInputTokens: 600}, chat.Usage{}},
	}
	for _, p := range fakeProviders {
		for _, tt := range tests {
			t.Run(string(p)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				synctest.Test(t, func(t *testing.T) {
					srv := fakellm.NewInMemory(t, p, tt.reply)
					rec, err := streamOutcome(t, newFakeProvider(t, srv, p, tt.cfg), context.Background(), simpleRequest())
					require.NoError(t, err)
					e := failedOf(t, rec)
					assert.Equal(t, tt.kind, e.Kind, e.Message)
					want := tt.anthropic
					if p == fakellm.OpenAI {
						want = tt.openai
					}
					assert.Equal(t, want, e.Usage)
				})
			})
		}
	}
}
