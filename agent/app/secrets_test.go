package app

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/agent/internal/threadsync"
)

// TestSyncTokenIsSecret: the sync token (FSMGEN_SERVER_TOKEN) is one of
// the session's secrets, as the API key is: an AGENTS.md holding it
// reaches the request redacted, and an MCP server whose env holds it is
// refused.
func TestSyncTokenIsSecret(t *testing.T) {
	t.Parallel()
	const token = "sync-token-0123456789abcdef"
	tests := []struct {
		name       string
		files      map[string]string
		config     func(t *testing.T) string
		wantSystem string
		wantErr    string
	}{
		{
			name:       "in the root's AGENTS.md",
			files:      map[string]string{"AGENTS.md": "The token is " + token + ".\n"},
			wantSystem: "The token is [REDACTED].",
		},
		{
			name: "in an MCP server's env",
			config: func(t *testing.T) string {
				return "mcp_servers:\n" + stdioEntry(t, "test") + "    env: {LEAK: " + token + "}\n"
			},
			wantErr: `MCP server "test": env LEAK holds one of the agent's secrets (its API key, the sync token), which no MCP server may be given; remove it from the entry; it is left out`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, fakellm.Anthropic, tt.files, fakellm.Reply{Text: "ok"})
			if tt.config != nil {
				e.writeConfig(t, tt.config(t))
			}
			r := e.runEnv(t, []string{threadsync.TokenVar + "=" + token}, "-p", "Go.")
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			reqs := e.srv.Requests()
			require.Len(t, reqs, 1)
			assert.NotContains(t, reqs[0].System, token)
			for _, m := range reqs[0].Messages {
				assert.NotContains(t, m.Text, token)
			}
			if tt.wantSystem != "" {
				assert.Contains(t, reqs[0].System, tt.wantSystem)
			}
			if tt.wantErr != "" {
				assert.Contains(t, r.stderr, tt.wantErr)
			}
			assert.False(t, strings.Contains(r.stderr+r.stdout, token), "the token is never shown")
		})
	}
}

// TestMCPEntriesHoldNoSecret gives MCP servers entries whose fields hold
// a secret of the session (the key in use, another provider's key, the
// sync token), through the environment as a header's ${VAR} or written
// in: each entry is refused with the message that names the field, the
// server is never reached, and the session goes on without it.
func TestMCPEntriesHoldNoSecret(t *testing.T) {
	t.Parallel()
	const (
		token   = "sync-token-0123456789abcdef"
		otherKy = "sk-ant-other-provider-0123456789abcdef"
	)
	tests := []struct {
		name     string
		provider fakellm.Provider
		entry    func(url string) string
		wantErr  string
	}{
		{
			name:     "the sync token in a header",
			provider: fakellm.Anthropic,
			entry: func(url string) string {
				return "    url: " + url + "\n    headers: {Authorization: \"Bearer ${FSMGEN_SERVER_TOKEN}\"}\n"
			},
			wantErr: "headers Authorization holds one of the agent's secrets",
		},
		{
			name:     "another provider's key in a header",
			provider: fakellm.OpenAI,
			entry: func(url string) string {
				return "    url: " + url + "\n    headers: {X-Key: \"${ANTHROPIC_API_KEY}\"}\n"
			},
			wantErr: "headers X-Key holds one of the agent's secrets",
		},
		{
			name:     "the key in use in the URL",
			provider: fakellm.Anthropic,
			entry:    func(url string) string { return "    url: " + url + "?key=" + testKey + "\n" },
			wantErr:  "url holds one of the agent's secrets",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reached := make(chan string, 10)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				reached <- r.Method + " " + r.URL.Path
				http.NotFound(w, r)
			}))
			t.Cleanup(srv.Close)
			e := newEnv(t, tt.provider, nil, fakellm.Reply{Text: "ok"})
			e.writeConfig(t, "mcp_servers:\n  leaky:\n"+tt.entry(srv.URL))
			env := []string{threadsync.TokenVar + "=" + token}
			if tt.provider != fakellm.Anthropic {
				env = append(env, "ANTHROPIC_API_KEY="+otherKy)
			}
			r := e.runEnv(t, env, "-p", "Go.")
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			assert.Contains(t, r.stderr, `agent: MCP server "leaky": `+tt.wantErr+` (its API key, the sync token), which no MCP server may be given; remove it from the entry; it is left out`)
			for _, s := range []string{token, otherKy, testKey} {
				assert.NotContains(t, r.stderr+r.stdout, s, "a secret is never shown")
			}
			select {
			case req := <-reached:
				t.Fatalf("the MCP server was reached: %s", req)
			default:
			}
		})
	}
}
