package app

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
)

// TestRoughEdges runs the agent's everyday command lines: a positional
// prompt, -version, -json, the cost of any model, a base URL ending in
// /v1, short retry lines.
func TestRoughEdges(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		replies []fakellm.Reply
		stdin   string
		args    []string
		baseURL string // appended to the fake server's base URL
		check   func(t *testing.T, e *env, r result)
	}{
		{
			name:    "a positional prompt is the first message",
			replies: []fakellm.Reply{{Text: "Fixed."}, {Text: "Also done."}},
			stdin:   "And this.\n",
			args:    []string{"fix it"},
			check: func(t *testing.T, e *env, r result) {
				assert.Equal(t, []string{"fix it", "And this."}, userMessages(e))
				assert.Equal(t, "Fixed.\nAlso done.\n", r.stdout)
			},
		},
		{
			name: "-version",
			args: []string{"-version"},
			check: func(t *testing.T, e *env, r result) {
				assert.True(t, strings.HasPrefix(r.stdout, "agent (fsmgen) "), r.stdout)
			},
		},
		{
			name: "-json prints the result last",
			replies: []fakellm.Reply{
				{Text: "Let me look.", ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "list_files", Args: `{}`}}},
				{Text: "There are no files."},
			},
			args: []string{"-p", "What is here?", "-json", "-price", "1,2"},
			check: func(t *testing.T, e *env, r result) {
				var got oneShotResult
				require.NoError(t, json.Unmarshal([]byte(lastLine(r.stdout)), &got), r.stdout)
				assert.Equal(t, e.onlyThread(t), got.Session)
				assert.Equal(t, "There are no files.", got.Answer)
				assert.Empty(t, got.Error)
				assert.Equal(t, 20, got.Usage.InputTokens)
				assert.Equal(t, 40, got.Usage.OutputTokens)
				require.NotNil(t, got.Cost)
				assert.InDelta(t, (20*1+40*2)/1e6, *got.Cost, 1e-12)
			},
		},
		{
			name:    "a known model's cost is shown",
			replies: []fakellm.Reply{{Text: "Hi."}},
			args:    []string{"-p", "Hi.", "-model", "claude-haiku-4-5-20251001"},
			check: func(t *testing.T, e *env, r result) {
				assert.Contains(t, r.stderr, "agent: thread: 10 tokens in, 20 out, $0.0001, over 1 reply")
			},
		},
		{
			name:    "an unknown model's cost is said to be unknown, once",
			replies: []fakellm.Reply{{Text: "Hi."}},
			args:    []string{"-p", "Hi."},
			check: func(t *testing.T, e *env, r result) {
				assert.Equal(t, 1, strings.Count(r.stderr, `no cost shown: model "fake-model": no price known; give it with -price`), r.stderr)
			},
		},
		{
			name:    "a base URL ending in /v1 works",
			replies: []fakellm.Reply{{Text: "Hi."}},
			args:    []string{"-p", "Hi."},
			baseURL: "/v1",
			check: func(t *testing.T, e *env, r result) {
				assert.Equal(t, "Hi.\n", r.stdout)
			},
		},
		{
			name:    "each retry is one short line",
			replies: []fakellm.Reply{{Status: 529, ErrorMessage: busy}, {Status: 529, ErrorMessage: busy}, {Text: "Hi."}},
			args:    []string{"-p", "Hi."},
			check: func(t *testing.T, e *env, r result) {
				assert.Contains(t, r.stderr, "retry 1 in")
				assert.Contains(t, r.stderr, "! overloaded (HTTP 529); retry 2 in 2ms\n")
				assert.Equal(t, 1, strings.Count(r.stderr, busy), "the server's message once:\n%s", r.stderr)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, fakellm.Anthropic, nil, tt.replies...)
			args := tt.args
			if tt.baseURL != "" {
				args = append([]string{"-base-url", e.srv.BaseURL() + tt.baseURL}, args...)
			}
			r := e.run(t, tt.stdin, args...)
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			tt.check(t, e, r)
		})
	}
}

// busy is a server's long message.
const busy = "the servers are busy right now; please come back in a few minutes, and thank you for your patience"

// TestWrongBaseURL points the agent at a server that is not the API's: the
// error shows the URL the request went to.
func TestWrongBaseURL(t *testing.T) {
	t.Parallel()
	page := httptest.NewServer(http.NotFoundHandler())
	defer page.Close()
	e := newEnv(t, fakellm.Anthropic, nil)
	r := e.run(t, "", "-base-url", page.URL+"/api", "-p", "Hi.")
	require.Equal(t, 1, r.code, "stderr:\n%s", r.stderr)
	assert.Contains(t, r.stderr, "the base URL "+page.URL+"/api does not look like an Anthropic Messages API endpoint (HTTP 404, text/plain: \"404 page not found\" from "+page.URL+"/api/v1/messages)")
}
