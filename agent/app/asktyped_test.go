package app

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/approval"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox/sandboxtest"
	"github.com/fsmgen/fsmgen/agent/internal/term"
)

// TestApprovalTypedBefore: text typed, not yet sent, when an approval
// question appears was typed before the question and does not answer it:
// it is dropped, saying so, with the Enter that would send it (the
// question still waits) or with the first key typed after the question
// (which starts the answer). A pre_tool hook holds each question back
// until the test has typed, so that the keys come before it.
func TestApprovalTypedBefore(t *testing.T) {
	t.Parallel()
	if sandboxErr != nil {
		sandboxtest.Unavailable(t, sandboxErr)
	}
	e := newEnv(t, fakellm.Anthropic, map[string]string{
		"a.txt": "one\n",
		// The call's hook says it started (the nth line of started.log)
		// and waits for the test's go.n before the question is asked.
		".agent/hooks.yaml": "pre_tool:\n  - tools: [edit_file]\n" +
			"    command: 'n=$(( $(cat started.log 2>/dev/null | wc -l) + 1 )); echo started >> started.log; while [ ! -f go.$n ]; do sleep 0.05; done'\n",
	},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "edit_file", Args: `{"path": "a.txt", "old_str": "one", "new_str": "two"}`}}},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c2", Name: "edit_file", Args: `{"path": "a.txt", "old_str": "one", "new_str": "three"}`}}},
		fakellm.Reply{Text: "Done."})
	s := startPTY(t, e, []string{"NO_COLOR=1"}, "-approve", "untrusted")
	s.waitScreen(t, "> ")
	s.typeKeys(t, "Change one.\r")

	// typeBefore types keys while the nth call's hook holds its question
	// back, then lets the question come.
	typeBefore := func(n int, keys string) {
		t.Helper()
		require.Eventually(t, func() bool {
			b, err := os.ReadFile(filepath.Join(e.ws, "started.log"))
			return err == nil && strings.Count(string(b), "started\n") == n
		}, runLimit, 10*time.Millisecond, "hook %d never started; screen:\n%s", n, s.screen.String())
		s.typeKeys(t, keys)
		s.waitScreen(t, "> "+keys)
		require.NoError(t, os.WriteFile(filepath.Join(e.ws, "go."+strconv.Itoa(n)), nil, 0o644))
		require.Eventually(t, func() bool {
			screen := s.screen.String()
			if strings.Count(screen, "? approve edit_file a.txt") != n {
				return false
			}
			_, after, shown := strings.Cut(screen[strings.LastIndex(screen, "? approve"):], "call this session")
			return shown && strings.Contains(after, term.AskPrompt+keys)
		}, runLimit, 10*time.Millisecond, "question %d never shown; screen:\n%s", n, s.screen.String())
	}

	// "y" typed before the first question, sent after it: dropped, and
	// the question waits for the answer typed after it.
	typeBefore(1, "y")
	s.typeKeys(t, "\r")
	s.waitScreen(t, `agent: "y" was typed before the question it would answer was shown, and is dropped`)
	s.typeKeys(t, "n not this one\r")
	// "no" typed before the second question: dropped with the key that
	// starts the answer.
	typeBefore(2, "no")
	s.typeKeys(t, "y")
	s.waitScreen(t, `agent: "no" was typed before the question it would answer was shown, and is dropped`)
	s.typeKeys(t, "\r")
	s.waitScreen(t, "Done.")
	s.waitTurnEnd(t)
	s.typeKeys(t, "\x04")
	require.Equal(t, 0, s.wait(t), "screen:\n%s", s.screen.String())

	reqs := e.srv.Requests()
	require.Len(t, reqs, 3)
	first := resultsByID(reqs[1])["c1"]
	assert.True(t, first.IsError)
	assert.Contains(t, first.Text, approval.RefusedPrefix+": not this one", "the early \"y\" granted nothing")
	second := resultsByID(reqs[2])["c2"]
	assert.False(t, second.IsError, "the \"y\" typed after the question granted the call, not \"noy\": %s", second.Text)
	content, err := os.ReadFile(filepath.Join(e.ws, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "three\n", string(content))
	assert.Equal(t, []string{"Change one."}, userMessages(e), "neither dropped text was sent as a message")
}
