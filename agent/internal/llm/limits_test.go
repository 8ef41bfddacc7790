package llm

import (
	"context"
	"net/http"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
)

// fakeProviders are the wire formats every test here runs against.
var fakeProviders = []fakellm.Provider{fakellm.Anthropic, fakellm.OpenAI}

// short are time limits short enough for a test, and far longer than a
// local server takes to answer. The tests of time limits run in synctest
// bubbles, with servers of fakellm.NewInMemory, where a limit passes only
// once nothing in the bubble can move: however busy the machine, the
// server has sent what it will send by then.
const short = 150 * time.Millisecond

// newFakeProvider returns a provider of srv's wire format that talks to
// srv, configured by cfg (its key and base URL are filled in, and, unless
// set, its HTTP client: the server's, the only way into an in-memory one).
func newFakeProvider(t *testing.T, srv *fakellm.Server, p fakellm.Provider, cfg Config) Provider {
	t.Helper()
	cfg.APIKey = testKey
	cfg.BaseURL = srv.BaseURL()
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = srv.Client()
	}
	prov, err := New(string(p), cfg)
	require.NoError(t, err)
	return prov
}

// failedOf returns the Failed event a call ended with.
func failedOf(t *testing.T, rec *recorder) chat.LLMError {
	t.Helper()
	f, ok := rec.terminal(t).(Failed)
	require.Truef(t, ok, "want Failed, got %#v", rec.events[len(rec.events)-1])
	assertUserTerms(t, f.Err.Message)
	return f.Err
}

// assertUserTerms checks that a message speaks of flags and environment
// variables, never of the Go fields behind them, and shows no control
// character.
func assertUserTerms(t *testing.T, msg string) {
	t.Helper()
	for _, goName := range []string{"Config.", "Request.", "ToolSpec.", "APIKey", "BaseURL", "MaxTokens"} {
		assert.NotContains(t, msg, goName, "a message names a Go field")
	}
	for _, r := range msg {
		assert.Falsef(t, r < 0x20 || r == 0x7f, "control character %q in %q", r, msg)
	}
}

func TestSilentServerTimesOut(t *testing.T) {
	tests := []struct {
		name   string
		reply  fakellm.Reply
		texts  []string
		msgHas []string
	}{
		{"no response headers", fakellm.Reply{NoHeaders: true}, nil,
			[]string{"response headers", "-llm-header-timeout", "150ms"}},
		{"headers, then nothing", fakellm.Reply{HeadersOnly: true}, nil,
			[]string{"first byte of the reply after its headers", "-llm-idle-timeout", "150ms"}},
		{"some text, then nothing", fakellm.Reply{Text: "Thinking very hard", Stall: true}, []string{"Thinking very hard"},
			[]string{"stream stalled", "-llm-idle-timeout"}},
	}
	for _, p := range fakeProviders {
		for _, tt := range tests {
			t.Run(string(p)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				synctest.Test(t, func(t *testing.T) {
					srv := fakellm.NewInMemory(t, p, tt.reply)
					prov := newFakeProvider(t, srv, p, Config{HeaderTimeout: short, IdleTimeout: short})
					rec, err := streamOutcome(t, prov, context.Background(), simpleRequest())
					require.NoError(t, err)
					e := failedOf(t, rec)
					assert.Equal(t, chat.ErrTimeout, e.Kind, e.Message)
					assert.True(t, e.Retryable())
					for _, s := range tt.msgHas {
						assert.Contains(t, e.Message, s)
					}
					assert.Equal(t, tt.texts, rec.texts())
					assert.Len(t, srv.Requests(), 1)
				})
			})
		}
	}
}

// TestIdleClockStopsWhileTheCallerWorks checks that the idle timeout counts
// the server's silence only: a caller slower than the limit with an event
// does not fail a stream whose next bytes arrived meanwhile. The server
// pauses after the first text delta for less than the limit, so that the
// call must read again after the caller's work.
func TestIdleClockStopsWhileTheCallerWorks(t *testing.T) {
	tests := []struct {
		provider string
		fixture  string
		// firstText is the number of events up to the first text delta.
		firstText int
	}{
		{NameAnthropic, "anthropic_text.sse", 4},
		{NameOpenAI, "openai_text.sse", 2},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				p := fakellm.Provider(tt.provider)
				srv := fakellm.NewInMemory(t, p, fakellm.Reply{Handler: serveSSE(streamScript{events: loadEvents(t, tt.fixture), pauseAfter: tt.firstText, pause: short / 3})})
				prov := newFakeProvider(t, srv, p, Config{HeaderTimeout: short, IdleTimeout: short})
				rec := &recorder{}
				slow := true
				err := prov.Stream(context.Background(), simpleRequest(), func(ev Event) {
					rec.emit(ev)
					if _, ok := ev.(TextDelta); ok && slow {
						slow = false
						time.Sleep(3 * short)
					}
				})
				require.NoError(t, err)
				c, ok := rec.terminal(t).(Completed)
				require.Truef(t, ok, "want Completed, got %#v", rec.events[len(rec.events)-1])
				assert.Equal(t, "Hello, world!", c.Response.Message.Content)
			})
		})
	}
}

func TestNegativeTimeoutsAreNoLimit(t *testing.T) {
	assert.Equal(t, limits{header: DefaultHeaderTimeout, idle: DefaultIdleTimeout, reply: DefaultReplyTimeout, maxReply: DefaultMaxReplyBytes}, limitsOf(Config{}))
	assert.Equal(t, limits{}, limitsOf(Config{HeaderTimeout: -1, IdleTimeout: -1, ReplyTimeout: -1, MaxReplyBytes: -1}))
	assert.Equal(t, limits{header: time.Second, idle: 2 * time.Second, reply: 3 * time.Second, maxReply: 10},
		limitsOf(Config{HeaderTimeout: time.Second, IdleTimeout: 2 * time.Second, ReplyTimeout: 3 * time.Second, MaxReplyBytes: 10}))

	for _, p := range fakeProviders {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				srv := fakellm.NewInMemory(t, p, fakellm.Reply{HeadersOnly: true})
				prov := newFakeProvider(t, srv, p, Config{HeaderTimeout: -1, IdleTimeout: -1, ReplyTimeout: -1})
				ctx, cancel := context.WithTimeout(context.Background(), 3*short)
				defer cancel()
				rec := &recorder{}
				require.NoError(t, prov.Stream(ctx, simpleRequest(), rec.emit))
				e := failedOf(t, rec)
				assert.Equal(t, chat.ErrTimeout, e.Kind)
				assert.NotContains(t, e.Message, "-llm-idle-timeout", "the caller's deadline passed, not a limit of the provider")
			})
		})
	}
}

// goroutinesOf returns the stacks of the goroutines of the caller's
// synctest bubble that run code of the named functions, once every other
// goroutine of the bubble is blocked or gone. The runtime's goroutine dump
// names each goroutine's bubble: goroutines of tests running in parallel
// do not count.
func goroutinesOf(t *testing.T, names ...string) []string {
	t.Helper()
	synctest.Wait()
	self := bubbleOf.FindStringSubmatch(stacks(false))
	require.NotNil(t, self, "the goroutine dump names no synctest bubble: call this in synctest.Test")
	var out []string
	for _, g := range strings.Split(stacks(true), "\n\n") {
		if m := bubbleOf.FindStringSubmatch(g); m == nil || m[1] != self[1] {
			continue
		}
		for _, n := range names {
			if strings.Contains(g, n) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// bubbleOf matches the header of a goroutine in a goroutine dump, such as
// "goroutine 7 [chan receive (durable), synctest bubble 3]:", and captures
// the goroutine's bubble.
var bubbleOf = regexp.MustCompile(`(?m)^goroutine \d+ \[.*, synctest bubble (\d+)[\] ]`)

// stacks returns the goroutine dump of the calling goroutine, or of all.
func stacks(all bool) string {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, all)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// TestCancelLeavesNoGoroutine cancels calls at every stage and checks that
// nothing of the call is left running: not the watchdog, not the HTTP
// connection, not the fake server's handler. Each runs in a synctest
// bubble: a call is cancelled once it waits for what the server will never
// send, and the goroutines are those of the bubble once all are blocked.
func TestCancelLeavesNoGoroutine(t *testing.T) {
	tests := []struct {
		name  string
		reply fakellm.Reply
		// cancelOnDelta cancels at the first text delta; otherwise the
		// call is cancelled while it waits.
		cancelOnDelta bool
	}{
		{"while waiting for the headers", fakellm.Reply{NoHeaders: true}, false},
		{"while waiting for the first byte", fakellm.Reply{HeadersOnly: true}, false},
		{"in a stream without end", fakellm.Reply{Text: "la la la", Forever: true}, true},
		{"in a stalled stream", fakellm.Reply{Text: "Hmm", Stall: true}, true},
	}
	watched := []string{"llm.(*watchdog)", "llm.(*watchedBody)", "llm.(*call)", "fakellm.stall", "fakellm.forever", "net/http.(*persistConn)"}
	for _, p := range fakeProviders {
		for _, tt := range tests {
			t.Run(string(p)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				synctest.Test(t, func(t *testing.T) {
					srv := fakellm.NewInMemory(t, p, tt.reply)
					transport := srv.Client().Transport.(*http.Transport).Clone()
					transport.DisableKeepAlives = true
					defer transport.CloseIdleConnections()
					prov := newFakeProvider(t, srv, p, Config{HTTPClient: &http.Client{Transport: transport}, HeaderTimeout: time.Hour, IdleTimeout: time.Hour})
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					if !tt.cancelOnDelta {
						go func() {
							// Cancel once the server holds the request
							// (polled on the bubble's clock), and the call
							// waits for what the server will never send.
							for len(srv.Requests()) == 0 && ctx.Err() == nil {
								time.Sleep(time.Millisecond)
							}
							synctest.Wait()
							cancel()
						}()
					}
					rec := &recorder{}
					err := prov.Stream(ctx, simpleRequest(), func(ev Event) {
						rec.emit(ev)
						if _, ok := ev.(TextDelta); ok && tt.cancelOnDelta {
							cancel()
						}
					})
					require.ErrorIs(t, err, context.Canceled)
					for _, ev := range rec.events {
						switch ev.(type) {
						case TextDelta, Usage:
						default:
							t.Errorf("no Failed or Completed after a cancel, got %#v", ev)
						}
					}
					assert.Empty(t, goroutinesOf(t, watched...), "goroutines left")
				})
			})
		}
	}
}
