package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/internal/proctest"
)

// gatedCommand prints seven lines, then waits for the file "gate1" in
// the workspace, prints one more and waits for "gate2": the test decides
// when the command goes on, once it has seen its lines on the screen,
// instead of racing a sleep.
const gatedCommand = `for i in 1 2 3 4 5 6 7; do echo line $i; done; while [ ! -e gate1 ]; do sleep 0.05; done; ` +
	`echo line 8; while [ ! -e gate2 ]; do sleep 0.05; done; echo done`

// openGate lets gatedCommand go on past gate (gate1 or gate2).
func openGate(t *testing.T, e *env, gate string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(e.ws, gate), nil, 0o644))
}

// TestTerminalLiveOutput runs a command in a pseudo-terminal: its last
// lines are on the screen while it runs, drawn in place under its
// progress line (the block erased and drawn again), and its result takes
// their place when it ends; /expand still shows the whole output. A
// silent command is reported once, as having no output.
func TestTerminalLiveOutput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, nil,
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c0", Name: "bash", Args: `{"command":"true"}`}}},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{bashCall(t, "c1", gatedCommand)}},
		fakellm.Reply{Text: "Ran them."})
	s := startPTY(t, e, nil)
	s.waitScreen(t, "> ")
	s.typeKeys(t, "Run it.\r")
	s.waitScreen(t, "→ bash $ for i")
	// The last five lines, under the progress line, while it runs.
	s.waitScreen(t, "line 7\x1b[0m\r\r\n> ")
	screen := s.screen.String()
	live := screen[strings.LastIndex(screen, "  … bash: running"):]
	for _, l := range []string{"line 3", "line 4", "line 5", "line 6", "line 7"} {
		assert.Contains(t, live, l)
	}
	assert.NotContains(t, live, "line 2", "five lines")
	// One more line: the block is erased and drawn again, in place.
	openGate(t, e, "gate1")
	s.waitScreen(t, "\x1b[6A\r\x1b[J  … bash: running")
	s.waitScreen(t, "line 8\x1b[0m\r\r\n> ")
	screen = s.screen.String()
	live = screen[strings.LastIndex(screen, "  … bash: running"):]
	assert.NotContains(t, live, "line 3")
	openGate(t, e, "gate2")
	s.waitScreen(t, "Ran them.")
	s.typeKeys(t, "/expand\r")
	s.waitScreen(t, "line 1\r\r\nline 2")
	s.typeKeys(t, "\x04")
	require.Equal(t, 0, s.wait(t), "screen:\n%s", s.screen.String())
	screen = s.screen.String()
	assert.Contains(t, screen, "bash: no output")
	assert.NotContains(t, screen, "bash: 1 line of output")
	assert.Equal(t, 1, strings.Count(screen, "no output"), "a silent command is reported once")
}

// TestPlainLiveOutput runs a command with the output not a terminal: its
// lines are written as plain lines while it runs, each once (the last
// five of what came since the last report, the others counted), and not
// again in its result.
func TestPlainLiveOutput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, nil,
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{bashCall(t, "c1", gatedCommand)}},
		fakellm.Reply{Text: "Ran it."})
	ctx, cancel := context.WithTimeout(context.Background(), runLimit)
	defer cancel()
	cmd := e.command(ctx, "-p", "Run it.")
	var stdout, stderr proctest.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "line 7\n") },
		60*time.Second, 10*time.Millisecond, "the lines while the command runs; stderr:\n%s", stderr.String())
	assert.NotContains(t, stderr.String(), "\x1b", "plain lines")
	openGate(t, e, "gate1")
	openGate(t, e, "gate2")
	require.NoError(t, cmd.Wait(), stderr.String())
	assert.Equal(t, "Ran it.\n", stdout.String())
	// Each line once (the last five lines of what came since the last
	// report, the others counted), the result's tail after them.
	for _, l := range []string{"line 3", "line 7", "line 8", "done"} {
		assert.Equal(t, 1, strings.Count(stderr.String(), "    "+l+"\n"), "%s once in:\n%s", l, stderr.String())
	}
	assert.Contains(t, stderr.String(), "✓ bash: 9 lines of output\n")
}
