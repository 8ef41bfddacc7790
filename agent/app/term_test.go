package app

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/internal/proctest"
)

// ptySession is the agent running in a pseudo-terminal, as a user runs it.
type ptySession struct {
	e      *env
	tty    *os.File
	screen proctest.Buffer // everything the agent wrote to the terminal
	done   chan error      // the agent's exit
	copied chan struct{}
	cmd    *exec.Cmd
}

// startPTY starts the agent with args in a pseudo-terminal of 100
// columns; the screen is read until the agent exits.
func startPTY(t *testing.T, e *env, extraEnv []string, args ...string) *ptySession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runLimit)
	t.Cleanup(cancel)
	cmd := e.command(ctx, args...)
	cmd.Env = append(cmd.Env, extraEnv...)
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 100})
	require.NoError(t, err)
	s := &ptySession{e: e, tty: tty, done: make(chan error, 1), copied: make(chan struct{}), cmd: cmd}
	go func() { // owned by the test: ends when the terminal closes
		defer close(s.copied)
		_, _ = io.Copy(&s.screen, tty)
	}()
	go func() { s.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = tty.Close()
		<-s.copied
	})
	return s
}

// typeKeys writes keys to the terminal as typed.
func (s *ptySession) typeKeys(t *testing.T, keys string) {
	t.Helper()
	_, err := io.WriteString(s.tty, keys)
	require.NoError(t, err)
}

// waitScreen waits until the screen shows want.
func (s *ptySession) waitScreen(t *testing.T, want string) {
	t.Helper()
	require.Eventually(t, func() bool { return strings.Contains(s.screen.String(), want) },
		runLimit, 10*time.Millisecond, "the screen never showed %q:\n%s", want, s.screen.String())
}

// waitTurnEnd waits until the session's one thread is saved waiting for
// the user, its last message the model's: the turn has ended. A reply on
// the screen does not say so (its stream may not have ended yet), and a
// key such as Ctrl-C means another thing while a turn runs.
func (s *ptySession) waitTurnEnd(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool {
		ids := s.e.threadIDs(t)
		if len(ids) != 1 {
			return false
		}
		st, th, err := s.e.saved(ids[0])
		if err != nil || len(th.QueuedInput) > 0 || st == nil || st.Kind() != agent.StateWaitingForUserInput {
			return false
		}
		c, _ := agent.ConversationOf(st)
		msgs := c.Messages()
		return len(msgs) > 0 && msgs[len(msgs)-1].Role == chat.RoleAssistant
	}, runLimit, 10*time.Millisecond, "the turn never ended; screen:\n%s", s.screen.String())
}

// wait waits for the agent to exit and returns its exit status.
func (s *ptySession) wait(t *testing.T) int {
	t.Helper()
	select {
	case err := <-s.done:
		// The terminal is read to its end (its last lines are on the
		// screen) before the screen is looked at.
		select {
		case <-s.copied:
		case <-time.After(30 * time.Second):
			t.Fatalf("the terminal was not read to its end; screen:\n%s", s.screen.String())
		}
		var exit interface{ ExitCode() int }
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		require.NoError(t, err)
		return 0
	case <-time.After(30 * time.Second):
		t.Fatalf("the agent did not exit; screen:\n%s", s.screen.String())
		return -1
	}
}

// userMessages returns the last message of each request the model was
// sent that ends with one of the user's.
func userMessages(e *env) []string {
	var out []string
	for _, r := range e.srv.Requests() {
		if m := r.Messages[len(r.Messages)-1]; m.Role == "user" {
			out = append(out, m.Text)
		}
	}
	return out
}

// TestTerminalInput types in a pseudo-terminal: a bracketed paste of
// several lines is one message, sent with the next Enter; a line ending
// with a backslash goes on; the Up arrow recalls the line before (never
// sent as an escape sequence); Ctrl-D quits.
func TestTerminalInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, nil,
		fakellm.Reply{Text: "Pasted."}, fakellm.Reply{Text: "Two lines."}, fakellm.Reply{Text: "Again."})
	s := startPTY(t, e, nil)
	s.waitScreen(t, "> ")
	s.typeKeys(t, "\x1b[200~panic: boom\ngoroutine 1 [running]:\nmain.main()\x1b[201~\r")
	s.waitScreen(t, "Pasted.")
	s.typeKeys(t, "first \\\rsecond\r")
	s.waitScreen(t, "Two lines.")
	s.typeKeys(t, "\x1b[A\r")
	s.waitScreen(t, "Again.")
	s.typeKeys(t, "\x04")
	require.Equal(t, 0, s.wait(t), "screen:\n%s", s.screen.String())
	assert.Equal(t, []string{"panic: boom\ngoroutine 1 [running]:\nmain.main()", "first \nsecond", "second"}, userMessages(e))
}

// TestTerminalCtrlC presses Ctrl-C in a pseudo-terminal while a command
// runs: the turn stops and the session goes on; Ctrl-C at the empty
// prompt then quits.
func TestTerminalCtrlC(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, nil,
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "bash", Args: `{"command":"echo run >&2; sleep 600"}`}}},
		fakellm.Reply{Text: "Fine."})
	s := startPTY(t, e, nil)
	s.waitScreen(t, "> ")
	s.typeKeys(t, "Run it.\r")
	s.waitScreen(t, "→ bash")
	require.Eventually(t, func() bool { return len(e.srv.Requests()) == 1 }, runLimit, 10*time.Millisecond)
	s.typeKeys(t, "\x03")
	s.waitScreen(t, "turn stopped")
	s.typeKeys(t, "Go on.\r")
	s.waitScreen(t, "Fine.")
	s.waitTurnEnd(t)
	s.typeKeys(t, "\x03")
	require.Equal(t, 0, s.wait(t), "screen:\n%s", s.screen.String())
	assert.Equal(t, []string{"Run it.", "Go on."}, userMessages(e))
}

// TestTerminalFork forks the thread in a pseudo-terminal: the session goes
// on in the copy on the same terminal, reading what is typed next.
func TestTerminalFork(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, nil, fakellm.Reply{Text: "Hello."}, fakellm.Reply{Text: "In the fork."})
	s := startPTY(t, e, nil)
	s.waitScreen(t, "> ")
	s.typeKeys(t, "Hi.\r")
	s.waitScreen(t, "Hello.")
	s.typeKeys(t, "/fork\r")
	s.waitScreen(t, "resumed (anthropic")
	s.typeKeys(t, "And now?\r")
	s.waitScreen(t, "In the fork.")
	s.typeKeys(t, "\x04")
	require.Equal(t, 0, s.wait(t), "screen:\n%s", s.screen.String())
	assert.Equal(t, []string{"Hi.", "And now?"}, userMessages(e))
	assert.Len(t, e.threadIDs(t), 2)
	assert.Equal(t, 1, strings.Count(s.screen.String(), "agent: bash sandbox: "), "the fork's session does not say the sandbox again")
	r := e.sessionsOf(t)
	require.Equal(t, 0, r.code, r.stderr)
	ids := e.threadIDs(t)
	assert.Equal(t, 1, strings.Count(r.stdout, "(fork of "), "the fork, told from its parent:\n%s", r.stdout)
	assert.True(t, strings.Contains(r.stdout, "(fork of "+ids[0]+") Hi.") || strings.Contains(r.stdout, "(fork of "+ids[1]+") Hi."), r.stdout)
}

// TestTerminalForkAfterTurn types /fork while a turn runs (its command
// waits for a file the test makes): the fork says it waits, and runs once
// the turn has ended, rather than being refused; the session goes on in
// the fork.
func TestTerminalForkAfterTurn(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, nil,
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "bash", Args: `{"command":"until [ -e go ]; do sleep 0.01; done"}`}}},
		fakellm.Reply{Text: "Done."}, fakellm.Reply{Text: "In the fork."})
	s := startPTY(t, e, nil)
	s.waitScreen(t, "> ")
	s.typeKeys(t, "Wait.\r")
	s.waitScreen(t, "→ bash")
	s.typeKeys(t, "/fork\r")
	s.waitScreen(t, "/fork runs once this turn has ended")
	require.NoError(t, os.WriteFile(filepath.Join(e.ws, "go"), nil, 0o644))
	s.waitScreen(t, "resumed (anthropic")
	s.typeKeys(t, "And now?\r")
	s.waitScreen(t, "In the fork.")
	s.typeKeys(t, "\x04")
	require.Equal(t, 0, s.wait(t), "screen:\n%s", s.screen.String())
	assert.NotContains(t, s.screen.String(), "a turn is running")
	assert.Less(t, strings.Index(s.screen.String(), "Done."), strings.Index(s.screen.String(), "forked thread"), "the fork ran after the turn")
	assert.Equal(t, []string{"Wait.", "And now?"}, userMessages(e))
	assert.Len(t, e.threadIDs(t), 2)
}

// TestTerminalCtrlCClearsLine presses Ctrl-C at the prompt with text
// typed: the line is cleared, as shells do, and the session goes on;
// what is typed next is the message. Ctrl-C at the empty prompt quits.
func TestTerminalCtrlCClearsLine(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, nil, fakellm.Reply{Text: "Hello."})
	s := startPTY(t, e, nil)
	s.waitScreen(t, "> ")
	s.typeKeys(t, "a line I no longer want")
	s.waitScreen(t, "a line I no longer want")
	s.typeKeys(t, "\x03")
	s.typeKeys(t, "Hi.\r")
	s.waitScreen(t, "Hello.")
	s.waitTurnEnd(t)
	s.typeKeys(t, "\x03")
	require.Equal(t, 0, s.wait(t), "screen:\n%s", s.screen.String())
	assert.Equal(t, []string{"Hi."}, userMessages(e), "the line was cleared, and the session went on")
	assert.Equal(t, 1, strings.Count(s.screen.String(), "quitting"), "the second Ctrl-C quit, not the first")
}
