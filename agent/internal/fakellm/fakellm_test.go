package fakellm

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// providers are the wire formats the servers speak.
var providers = []Provider{Anthropic, OpenAI}

// endpoint is the URL of the API a server of provider p serves.
func endpoint(s *Server, p Provider) string {
	if p == OpenAI {
		return s.BaseURL() + "/chat/completions"
	}
	return s.BaseURL() + "/v1/messages"
}

// post sends a request to the API of s, which speaks p, under ctx.
func post(ctx context.Context, t *testing.T, s *Server, p Provider) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint(s, p), strings.NewReader(`{"model":"m","messages":[]}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	return s.Client().Do(req)
}

// quiet is how long a test waits to see that a server sends nothing: on
// the clock of a synctest bubble, on an in-memory server, so that it
// passes only once nothing in the bubble can send anything any more.
const quiet = 100 * time.Millisecond

func TestBrokenServers(t *testing.T) {
	tests := []struct {
		name  string
		reply Reply
		check func(t *testing.T, p Provider, res *http.Response, err error)
	}{
		{"NoHeaders sends nothing", Reply{NoHeaders: true}, func(t *testing.T, _ Provider, res *http.Response, err error) {
			require.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Nil(t, res)
		}},
		{"HeadersOnly sends the headers, then nothing", Reply{HeadersOnly: true}, func(t *testing.T, _ Provider, res *http.Response, err error) {
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, res.StatusCode)
			assert.Equal(t, "text/event-stream; charset=utf-8", res.Header.Get("Content-Type"))
			n, err := res.Body.Read(make([]byte, 1))
			assert.Zero(t, n)
			assert.ErrorIs(t, err, context.DeadlineExceeded)
		}},
		{"Forever streams text without end", Reply{Text: "la la", Forever: true}, func(t *testing.T, _ Provider, res *http.Response, err error) {
			require.NoError(t, err)
			body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
			require.NoError(t, err)
			assert.Len(t, body, 1<<20)
			assert.Greater(t, strings.Count(string(body), `"la la"`), 1000)
		}},
		{"Forever without text streams empty deltas", Reply{Forever: true}, func(t *testing.T, p Provider, res *http.Response, err error) {
			require.NoError(t, err)
			body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
			require.NoError(t, err)
			empty := `"text":""`
			if p == OpenAI {
				empty = `"content":""`
			}
			assert.Greater(t, strings.Count(string(body), empty), 1000)
		}},
		{"Page answers with a web page", Reply{Page: 501}, func(t *testing.T, _ Provider, res *http.Response, err error) {
			require.NoError(t, err)
			assert.Equal(t, http.StatusNotImplemented, res.StatusCode)
			assert.Equal(t, "text/html; charset=utf-8", res.Header.Get("Content-Type"))
			body, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			assert.Contains(t, string(body), "<title>501 Not Implemented</title>")
			assert.Contains(t, string(body), "no page for POST /")
		}},
		{"Body answers as it is", Reply{Status: 404, Body: "404 page not found\n"}, func(t *testing.T, _ Provider, res *http.Response, err error) {
			require.NoError(t, err)
			assert.Equal(t, http.StatusNotFound, res.StatusCode)
			assert.Equal(t, "text/plain; charset=utf-8", res.Header.Get("Content-Type"))
			body, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			assert.Equal(t, "404 page not found\n", string(body))
		}},
		{"ContentType replaces a stream's", Reply{Text: "Hi", ContentType: "text/plain"}, func(t *testing.T, _ Provider, res *http.Response, err error) {
			require.NoError(t, err)
			assert.Equal(t, "text/plain", res.Header.Get("Content-Type"))
			body, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			assert.Contains(t, string(body), "data: ")
			assert.Contains(t, string(body), "Hi")
		}},
	}
	for _, p := range providers {
		for _, tt := range tests {
			t.Run(string(p)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				synctest.Test(t, func(t *testing.T) {
					s := NewInMemory(t, p, tt.reply)
					ctx, cancel := context.WithTimeout(context.Background(), quiet)
					defer cancel()
					res, err := post(ctx, t, s, p)
					if res != nil {
						defer func() { _ = res.Body.Close() }()
					}
					tt.check(t, p, res, err)
					assert.Len(t, s.Requests(), 1)
					assert.Empty(t, s.Unexpected())
				})
			})
		}
	}
}

// events reads a stream's data lines as JSON objects, up to [DONE].
func events(t *testing.T, body io.Reader) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var ev map[string]any
		require.NoError(t, json.Unmarshal([]byte(data), &ev), data)
		out = append(out, ev)
	}
	require.NoError(t, sc.Err())
	return out
}

// TestUsageOnTheWire checks the usage figures as each provider writes them.
func TestUsageOnTheWire(t *testing.T) {
	u := &chat.Usage{InputTokens: 1000, OutputTokens: 50, CacheCreationInputTokens: 100, CacheReadInputTokens: 800, ReasoningTokens: 20}
	tests := []struct {
		provider Provider
		usage    *chat.Usage
		want     []string // JSON of the usage objects of the stream, in order
	}{
		{Anthropic, u, []string{
			`{"input_tokens":100,"cache_creation_input_tokens":100,"cache_read_input_tokens":800,"output_tokens":1}`,
			`{"output_tokens":50,"output_tokens_details":{"thinking_tokens":20}}`,
		}},
		{Anthropic, nil, []string{`{"input_tokens":10,"output_tokens":1}`, `{"output_tokens":20}`}},
		{OpenAI, u, []string{`{"prompt_tokens":1000,"completion_tokens":50,"total_tokens":1050,
			"prompt_tokens_details":{"cached_tokens":800,"cache_write_tokens":100},"completion_tokens_details":{"reasoning_tokens":20}}`}},
		{OpenAI, nil, []string{`{"prompt_tokens":10,"completion_tokens":20,"total_tokens":30}`}},
	}
	for _, tt := range tests {
		t.Run(string(tt.provider), func(t *testing.T) {
			t.Parallel()
			s := New(t, tt.provider, Reply{Text: "Hi", Usage: tt.usage})
			res, err := post(context.Background(), t, s, tt.provider)
			require.NoError(t, err)
			defer func() { _ = res.Body.Close() }()
			var got []string
			for _, ev := range events(t, res.Body) {
				usage, ok := ev["usage"]
				if msg, isStart := ev["message"].(map[string]any); isStart {
					usage, ok = msg["usage"]
				}
				if ok && usage != nil {
					b, err := json.Marshal(usage)
					require.NoError(t, err)
					got = append(got, string(b))
				}
			}
			require.Len(t, got, len(tt.want))
			for i := range got {
				assert.JSONEq(t, tt.want[i], got[i])
			}
		})
	}
}

func TestNewWebServer(t *testing.T) {
	s := NewWebServer(t, http.StatusNotImplemented)
	tests := []struct{ method, path string }{
		{http.MethodPost, "/v1/messages"},
		{http.MethodPost, "/chat/completions"},
		{http.MethodGet, "/"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, s.URL+tt.path, nil)
			require.NoError(t, err)
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer func() { _ = res.Body.Close() }()
			assert.Equal(t, http.StatusNotImplemented, res.StatusCode)
			assert.Equal(t, "text/html; charset=utf-8", res.Header.Get("Content-Type"))
			body, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			assert.Contains(t, string(body), "no page for "+tt.method+" "+tt.path)
		})
	}
	assert.Len(t, s.Requests(), len(tests))
	assert.Empty(t, s.Unexpected())
	assert.Equal(t, s.URL, s.BaseURL())
}

// readLines reads a stream's lines until it has seen n keep-alives (ping
// events or comment lines) and returns the lines read.
func readLines(t *testing.T, body io.Reader, n int) []string {
	t.Helper()
	var lines []string
	keepAlives := 0
	sc := bufio.NewScanner(body)
	for keepAlives < n && sc.Scan() {
		line := sc.Text()
		lines = append(lines, line)
		if line == "event: ping" || strings.HasPrefix(line, ":") {
			keepAlives++
		}
	}
	require.NoError(t, sc.Err())
	require.Equal(t, n, keepAlives, "the stream ended after %d keep-alives: %q", keepAlives, lines)
	return lines
}

func TestPingsWithoutEnd(t *testing.T) {
	tests := []struct {
		name     string
		provider Provider
		reply    Reply
		// want are lines the stream holds; never a line holding one of
		// notWant.
		want    []string
		notWant []string
	}{
		{"pings", Anthropic, Reply{Pings: true}, []string{"event: message_start", "event: ping", ": ping"},
			[]string{"content_block_delta", "message_delta", "message_stop"}},
		{"text, then pings", Anthropic, Reply{Text: "Thinking", Pings: true, Every: time.Millisecond},
			[]string{"event: message_start", `data: {"delta":{"text":"Thinking","type":"text_delta"},"index":0,"type":"content_block_delta"}`, "event: ping", ": ping"},
			[]string{"message_delta", "message_stop"}},
		{"pings", OpenAI, Reply{Pings: true}, []string{": ping"}, []string{`"content":"T`, "finish_reason\":\"", "[DONE]"}},
		{"text, then pings", OpenAI, Reply{Text: "Thinking", Pings: true, Every: time.Millisecond}, []string{": ping"},
			[]string{"finish_reason\":\"", "[DONE]"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.provider)+"/"+tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				s := NewInMemory(t, tt.provider, tt.reply)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				res, err := post(ctx, t, s, tt.provider)
				require.NoError(t, err)
				defer func() { _ = res.Body.Close() }()
				lines := readLines(t, res.Body, 20)
				for _, w := range tt.want {
					assert.Contains(t, lines, w)
				}
				for _, line := range lines {
					for _, nw := range tt.notWant {
						assert.NotContains(t, line, nw)
					}
				}
				if tt.provider == OpenAI && tt.reply.Text != "" {
					assert.Contains(t, strings.Join(lines, "\n"), `"content":"Thinking"`)
				}
			})
		})
	}
}

// TestEveryPacesForever checks that Every holds Forever's deltas back: with
// an hour between them, nothing comes after the reply's text for a second
// short of an hour (of a synctest bubble's clock).
func TestEveryPacesForever(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				s := NewInMemory(t, p, Reply{Text: "la", Forever: true, Every: time.Hour})
				ctx, cancel := context.WithTimeout(context.Background(), time.Hour-time.Second)
				defer cancel()
				res, err := post(ctx, t, s, p)
				require.NoError(t, err)
				defer func() { _ = res.Body.Close() }()
				body, err := io.ReadAll(res.Body)
				require.ErrorIs(t, err, context.DeadlineExceeded)
				assert.Equal(t, 1, strings.Count(string(body), `"la"`), "only the text's own delta: %s", body)
			})
		})
	}
}

// TestContextWindow checks the window check: a request whose input and
// max_tokens fit is answered, one that passes is refused with the
// provider's 400, recorded as refused, and not given to Respond.
func TestContextWindow(t *testing.T) {
	body := func(p Provider, text string, maxTokens int) string {
		var content any = text
		if p == Anthropic {
			content = []any{map[string]any{"type": "text", "text": text}}
		}
		b, _ := json.Marshal(map[string]any{"model": "m", "max_tokens": maxTokens,
			"messages": []any{map[string]any{"role": "user", "content": content}}})
		return string(b)
	}
	text := strings.Repeat("abcd", 100) // 100 tokens and the framing
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			tests := []struct {
				name      string
				maxTokens int
				refused   bool
			}{
				{"fits", 100, false},
				{"passes with max_tokens", 250, true},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					s := New(t, p)
					s.ContextWindow(300)
					seen := 0
					s.Respond(func(Request) Reply { seen++; return Reply{Text: "ok"} })
					res, err := http.Post(endpoint(s, p), "application/json", strings.NewReader(body(p, text, tt.maxTokens)))
					require.NoError(t, err)
					defer res.Body.Close()
					out, _ := io.ReadAll(res.Body)
					reqs := s.Requests()
					require.Len(t, reqs, 1)
					assert.Greater(t, reqs[0].InputTokens, 100)
					assert.Less(t, reqs[0].InputTokens, 120)
					assert.Equal(t, tt.refused, reqs[0].Refused, "input %d, max %d", reqs[0].InputTokens, reqs[0].MaxTokens)
					if !tt.refused {
						assert.Equal(t, http.StatusOK, res.StatusCode)
						assert.Equal(t, 1, seen)
						return
					}
					assert.Equal(t, http.StatusBadRequest, res.StatusCode)
					assert.Contains(t, string(out), "invalid_request_error")
					assert.Contains(t, string(out), "300")
					assert.Zero(t, seen, "Respond does not see a refused request")
				})
			}
		})
	}
}
