package app

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/internal/proctest"
)

// stopWhileCalling runs the agent, types a message and, while the model
// streams its reply, a second one (queued: the agent is busy), then stops
// it with SIGTERM: the thread is saved calling the LLM, the second
// message queued. It returns the thread's ID.
func stopWhileCalling(t *testing.T, e *env) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runLimit)
	defer cancel()
	cmd := e.command(ctx)
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	var stderr proctest.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	_, err = io.WriteString(in, "Think.\n")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(e.srv.Requests()) == 1 }, runLimit, 10*time.Millisecond)
	_, err = io.WriteString(in, "And this.\n")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "queued") }, runLimit, 10*time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait(), "stderr:\n%s", stderr.String())
	_ = in.Close()
	id := e.onlyThread(t)
	require.IsType(t, agent.CallingLLM{}, e.state(t, id))
	return id
}

// TestResumeWaitsForTheUser resumes a thread stopped while the model
// replied, with a message queued (issue 23 item 5: resume re-sent the
// queued message and the request before the user typed anything).
// Interactive, the turn is stopped as Ctrl-C stops it, the queued message
// is shown, not sent, and nothing reaches the model until the user types;
// one-shot (-p), the turn is finished and the queued message sent, as a
// script wants.
func TestResumeWaitsForTheUser(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		stdin    string
		args     []string
		replies  []fakellm.Reply
		requests int // the requests of the resumed session
		want     []string
		stderr   []string
	}{
		{
			name:     "interactive, nothing typed",
			requests: 0,
			want:     []string{"user: Think.", "user: " + chat.UserStoppedNote},
			stderr:   []string{`not sent before the session stopped: "And this."`, "nothing is sent to it until you type"},
		},
		{
			name:     "interactive, then the user types",
			stdin:    "Go on.\n",
			replies:  []fakellm.Reply{{Text: "Going on."}},
			requests: 1,
			want:     []string{"user: Think.", "user: " + chat.UserStoppedNote, "user: Go on.", "assistant: Going on."},
			stderr:   []string{`not sent before the session stopped: "And this."`},
		},
		{
			name:     "one-shot finishes the turn",
			args:     []string{"-p", "Last."},
			replies:  []fakellm.Reply{{Text: "Thought."}, {Text: "This too."}, {Text: "Last one."}},
			requests: 3,
			want: []string{"user: Think.", "assistant: Thought.", "user: And this.", "assistant: This too.",
				"user: Last.", "assistant: Last one."},
			stderr: []string{"sending the LLM request again"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, fakellm.Anthropic, nil, fakellm.Reply{Text: "Thinking", Stall: true})
			id := stopWhileCalling(t, e)
			before := len(e.srv.Requests())
			e.srv.Add(tt.replies...)

			r := e.run(t, tt.stdin, append([]string{"-resume", id}, tt.args...)...)
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			for _, s := range tt.stderr {
				assert.Contains(t, r.stderr, s)
			}
			assert.Equal(t, before+tt.requests, len(e.srv.Requests()), "requests sent by the resumed session")
			assert.Equal(t, tt.want, messages(e.state(t, id)))
			assert.Equal(t, 0, replayExit(t, filepath.Join(e.threads, id+".events.jsonl")).code, "the event log replays")
		})
	}
}
