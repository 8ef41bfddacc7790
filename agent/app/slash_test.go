package app

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/internal/gittest"
)

// TestDiffLabels runs /diff with the user's change beside the agent's:
// each under its heading.
func TestDiffLabels(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, map[string]string{"a.txt": "one\n", "mine.txt": "mine\n"},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "edit_file", Args: `{"path":"a.txt","old_str":"one\n","new_str":"one\ntwo\n"}`}}},
		fakellm.Reply{Text: "Added."})
	gittest.WriteFile(t, e.ws, "mine.txt", "mine, changed by me\n")
	r := e.run(t, "Add a line.\n/diff\n")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	committed := strings.Index(r.stderr, "── committed by the agent since the session started ──\n")
	uncommitted := strings.Index(r.stderr, "── not committed: your changes")
	require.True(t, committed >= 0 && uncommitted > committed, "both headings, in order:\n%s", r.stderr)
	agent, yours := r.stderr[committed:uncommitted], r.stderr[uncommitted:]
	assert.Contains(t, agent, "+two")
	assert.NotContains(t, agent, "mine.txt")
	assert.Contains(t, yours, "+mine, changed by me")
	assert.NotContains(t, yours, "a.txt")
}

// TestSlashCommands types slash commands on standard input: they are
// answered by the agent, never sent to the model; "//" sends a literal
// slash, and a pasted path that starts with "/" is a message.
func TestSlashCommands(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		input      string
		replies    []fakellm.Reply
		wantErr    []string // in stderr
		notErr     []string
		wantPrompt []string // the user messages the model was sent, in order
	}{
		{
			name:    "/help lists the commands and the keys",
			input:   "/help\n",
			wantErr: []string{"/help", "/diff", "/usage", "/sessions", "/quit", "Ctrl-C", "//text"},
		},
		{
			name:    "an unknown command is an error with a suggestion",
			input:   "/hlep\n",
			wantErr: []string{"error: unknown command /hlep; did you mean /help?"},
		},
		{
			name:       "// sends a literal slash",
			input:      "//help me\n",
			replies:    []fakellm.Reply{{Text: "Sure."}},
			wantPrompt: []string{"/help me"},
		},
		{
			name:       "a pasted path is a message",
			input:      "/src/main.go:3: undefined: x\n",
			replies:    []fakellm.Reply{{Text: "Fixing."}},
			wantPrompt: []string{"/src/main.go:3: undefined: x"},
		},
		{
			name:       "/usage shows the tokens",
			input:      "Hi.\n/usage\n",
			replies:    []fakellm.Reply{{Text: "Hello."}},
			wantErr:    []string{"agent: thread: 10 tokens in, 20 out, over 1 reply"},
			wantPrompt: []string{"Hi."},
		},
		{
			name:       "/sessions lists the threads, this one included",
			input:      "Hi.\n/sessions\n",
			replies:    []fakellm.Reply{{Text: "Hello."}},
			wantErr:    []string{"ID  ", "FIRST PROMPT", "  30      0       -     Hi.\n"},
			wantPrompt: []string{"Hi."},
		},
		{
			name:    "/quit ends the session before the next message",
			input:   "/quit\nNever sent.\n",
			notErr:  []string{"error:", "Never sent"},
			wantErr: []string{"had no message; nothing was saved"},
		},
		{
			name:       "/diff shows the session's changes",
			input:      "Add a line.\n/diff\n",
			replies:    []fakellm.Reply{{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "edit_file", Args: `{"path":"a.txt","old_str":"one\n","new_str":"one\ntwo\n"}`}}}, {Text: "Added."}},
			wantErr:    []string{"── committed by the agent since the session started ──\ndiff --git a/a.txt b/a.txt", "--- a/a.txt", "+++ b/a.txt", "@@ -1 +1,2 @@", " one\n+two\n"},
			notErr:     []string{"── not committed"},
			wantPrompt: []string{"Add a line."},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, fakellm.Anthropic, map[string]string{"a.txt": "one\n"}, tt.replies...)
			r := e.run(t, tt.input)
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			for _, s := range tt.wantErr {
				assert.Contains(t, r.stderr, s)
			}
			for _, s := range tt.notErr {
				assert.NotContains(t, r.stderr, s)
			}
			var prompts []string
			for _, req := range e.srv.Requests() {
				if m := req.Messages[len(req.Messages)-1]; m.Role == "user" {
					prompts = append(prompts, m.Text)
				}
			}
			assert.Equal(t, tt.wantPrompt, prompts, "what the model was sent")
		})
	}
}
