package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/fakellm"
	"github.com/fsmgen/fsmgen/runtime/threadsync"
)

// TestSyncTokenIsSecret: the sync token (FSMGEN_SERVER_TOKEN) is one of
// the session's secrets, as the API key is: an AGENTS.md holding it
// reaches the request redacted, and an MCP server whose env holds it is
// refused.
func TestSyncTokenIsSecret(t *testing.T) {
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
			wantErr: `MCP server "test": env LEAK holds one of the agent's secrets (its API key, the sync token), which no command may have; remove it from the entry; it is left out`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
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
