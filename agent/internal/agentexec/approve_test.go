package agentexec_test

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/agent/internal/approval"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// TestApproval runs a round of a read, an edit and a command under each
// policy, answering each question from the input: reads are never asked
// about, a refused call does not run and its result says why, and every
// verdict is recorded with the call's outcome in the event log.
func TestApproval(t *testing.T) {
	t.Parallel()
	round := []fakellm.ToolCall{
		{ID: "r", Name: "read_file", Args: `{"path": "a.txt"}`},
		{ID: "e", Name: "edit_file", Args: `{"path": "a.txt", "old_str": "one", "new_str": "two", "ask_approval": true, "approval_reason": "it renames one"}`},
		{ID: "b", Name: "bash", Args: `{"command": "touch ran"}`},
	}
	tests := []struct {
		name    string
		policy  approval.Policy
		calls   []fakellm.ToolCall
		answers []string
		asked   []string          // the calls asked about, in order
		reasons []string          // the model's reason of each question
		want    map[string]string // a call's outcome: "ok", or the start of its error
		verdict map[string]string // the verdict recorded with each outcome
		file    string            // a.txt at the end
		ran     bool              // the command ran
	}{
		{
			name: "untrusted asks before each mutating call", policy: approval.Untrusted,
			calls:   []fakellm.ToolCall{round[0], {ID: "e", Name: "edit_file", Args: `{"path": "a.txt", "old_str": "one", "new_str": "two"}`}, round[2]},
			answers: []string{"n not that file", "y"},
			asked:   []string{"edit_file", "bash"}, reasons: []string{"", ""},
			want:    map[string]string{"r": "ok", "e": approval.RefusedPrefix + ": not that file", "b": "ok"},
			verdict: map[string]string{"r": "", "e": approval.Refused, "b": approval.Granted},
			file:    "one\n", ran: true,
		},
		{
			name: "on-request asks when the model asks", policy: approval.OnRequest,
			calls:   round,
			answers: []string{"a"},
			asked:   []string{"edit_file"}, reasons: []string{"it renames one"},
			want:    map[string]string{"r": "ok", "e": "ok", "b": "ok"},
			verdict: map[string]string{"r": "", "e": approval.Always, "b": ""},
			file:    "two\n", ran: true,
		},
		{
			name: "never never asks", policy: approval.Never,
			calls:   []fakellm.ToolCall{round[0], round[2]},
			want:    map[string]string{"r": "ok", "b": "ok"},
			verdict: map[string]string{"r": "", "b": ""},
			file:    "one\n", ran: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newSession(t, fakellm.Anthropic, map[string]string{"a.txt": "one\n"},
				fakellm.Reply{ToolCalls: tt.calls}, fakellm.Reply{Text: "Done."})
			pr, pw := io.Pipe()
			t.Cleanup(func() { _ = pw.Close() })
			answers := tt.answers
			d := &recorder{}
			d.onAsk = func(approval.Question) {
				require.NotEmpty(t, answers, "asked once more than answered")
				line := answers[0] + "\n"
				answers = answers[1:]
				go func() { _, _ = io.WriteString(pw, line) }() // the input task reads it
			}
			d.onTurnEnd = func() { go pw.Close() }
			go func() { _, _ = io.WriteString(pw, "Do it.\n") }()
			res, err := s.run(t, run{input: pr, display: d, approval: tt.policy})
			require.NoError(t, err)
			assert.Empty(t, res.LastError)

			var asked, reasons []string
			for _, q := range d.asked {
				asked, reasons = append(asked, q.Call.Name), append(reasons, q.Reason)
				assert.NotContains(t, string(q.Call.Arguments), approval.AskField, "the question shows the call as it runs")
			}
			assert.Equal(t, tt.asked, asked)
			assert.Equal(t, tt.reasons, reasons)
			assert.Empty(t, answers, "every answer was asked for")

			outcomes := map[string]chat.ToolOutcome{}
			for _, r := range s.records(t) {
				var ev struct {
					Kind    string           `json:"kind"`
					CallID  string           `json:"call_id"`
					Outcome chat.ToolOutcome `json:"outcome"`
				}
				require.NoError(t, json.Unmarshal(r.Event, &ev))
				if ev.Kind == "tool_completed" {
					outcomes[ev.CallID] = ev.Outcome
				}
			}
			require.Len(t, outcomes, len(tt.want), "the event log records each outcome")
			for id, want := range tt.want {
				out := outcomes[id]
				if want == "ok" {
					assert.False(t, out.IsError, "%s: %s", id, out.Content)
				} else {
					assert.True(t, out.IsError, id)
					assert.True(t, strings.HasPrefix(out.Content, want), "%s: %s", id, out.Content)
				}
				assert.Equal(t, tt.verdict[id], out.Approval, id)
			}
			content, err := os.ReadFile(filepath.Join(s.ws, "a.txt"))
			require.NoError(t, err)
			assert.Equal(t, tt.file, string(content))
			if tt.ran {
				assert.FileExists(t, filepath.Join(s.ws, "ran"))
			}
			s.checkReplay(t)
			s.checkNoSecret(t)
		})
	}
}

// TestApprovalNeedsInput refuses a policy that asks when nothing can
// answer.
func TestApprovalNeedsInput(t *testing.T) {
	t.Parallel()
	b, err := behavior.New(behavior.DefaultConfig())
	require.NoError(t, err)
	s := newSession(t, fakellm.Anthropic, nil)
	_, err = agentexec.New(agentexec.Config{
		Behavior: b, Provider: nopProvider{}, Tools: s.defaultTools(t), Workspace: s.ws,
		Thread: &threadwire.Thread{ID: s.id}, Approval: approval.Untrusted,
	})
	assert.ErrorContains(t, err, "Config.Approval untrusted asks the user, and there is no Input or Editor to read the answers from")
}
