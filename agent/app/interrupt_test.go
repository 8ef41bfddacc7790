package app

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/internal/proctest"
)

// TestCtrlCStopsTheTurn sends SIGINT (Ctrl-C) while a turn runs: the
// command or the reply in flight is stopped, the model is told, and the
// session goes on with the next message. At an idle prompt, Ctrl-C quits.
func TestCtrlCStopsTheTurn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		replies []fakellm.Reply
		busy    string // in stderr once the turn is at the point to stop
		// told is what the model is told in the request after the stop.
		told string
	}{
		{
			name: "a long command",
			replies: []fakellm.Reply{
				{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "bash", Args: `{"command":"touch started; sleep 600"}`}}},
				{Text: "Going on."},
			},
			busy: "→ bash",
			told: behavior.UserStoppedPrefix,
		},
		{
			name:    "a reply that stalls",
			replies: []fakellm.Reply{{Text: "Thinking very hard", Stall: true}, {Text: "Going on."}},
			busy:    "Thinking",
			told:    chat.UserStoppedNote,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, fakellm.Anthropic, nil, tt.replies...)
			ctx, cancel := context.WithTimeout(context.Background(), runLimit)
			defer cancel()
			cmd := e.command(ctx)
			in, err := cmd.StdinPipe()
			require.NoError(t, err)
			var stdout, stderr proctest.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Start())
			_, err = io.WriteString(in, "Start.\n")
			require.NoError(t, err)
			require.Eventually(t, func() bool { return strings.Contains(stdout.String()+stderr.String(), tt.busy) },
				runLimit, 10*time.Millisecond)
			if tt.busy == "→ bash" {
				require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(e.ws, "started")); return err == nil },
					runLimit, 10*time.Millisecond, "the command started")
			}
			require.NoError(t, cmd.Process.Signal(os.Interrupt))
			require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "turn stopped") },
				runLimit, 10*time.Millisecond, "stderr:\n%s", stderr.String())
			_, err = io.WriteString(in, "Go on.\n")
			require.NoError(t, err)
			require.NoError(t, in.Close())
			require.NoError(t, cmd.Wait(), "stderr:\n%s", stderr.String())
			assert.Contains(t, stdout.String(), "Going on.")

			reqs := e.srv.Requests()
			require.Len(t, reqs, 2)
			var sent []string
			for _, m := range reqs[1].Messages {
				sent = append(sent, m.Text)
			}
			joined := strings.Join(sent, "\n")
			assert.Contains(t, joined, tt.told, "the model is told the turn was stopped")
			assert.True(t, strings.HasSuffix(joined, "Go on."), "the next message follows: %q", sent)
			id := e.onlyThread(t)
			assert.IsType(t, agent.WaitingForUserInput{}, e.state(t, id))
			e.checkNoSecret(t)
		})
	}
}

// TestCtrlCAtThePromptQuits sends SIGINT while the agent waits for input:
// it saves the thread and quits, though its input is still open.
func TestCtrlCAtThePromptQuits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, nil, fakellm.Reply{Text: "Hello."})
	ctx, cancel := context.WithTimeout(context.Background(), runLimit)
	defer cancel()
	cmd := e.command(ctx)
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	defer in.Close()
	var stdout, stderr proctest.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	_, err = io.WriteString(in, "Hi.\n")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		ids := e.threadIDs(t)
		if len(ids) != 1 || !strings.Contains(stdout.String(), "Hello.") {
			return false
		}
		_, idle := e.state(t, ids[0]).(agent.WaitingForUserInput)
		return idle
	}, runLimit, 10*time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	require.NoError(t, cmd.Wait(), "stderr:\n%s", stderr.String())
	assert.Contains(t, stderr.String(), "quitting")
}
