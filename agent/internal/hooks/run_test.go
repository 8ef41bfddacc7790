package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/redact"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox/sandboxtest"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
)

// secret is a key the tests' runners redact.
const secret = "sk-hooks-test-SECRET-0123456789abcdef"

// The sandboxes of the tests' runners: bash's and its read-only twin,
// made once, before any test runs a command. (sandbox.New finds the
// process's pids cgroup, as root on cgroup v1, in /proc/self/cgroup,
// which shows a command's own cgroup while another goroutine starts one:
// made while other tests run hooks, a sandbox could take that cgroup for
// its parent.)
var (
	sandboxOnce          sync.Once
	sandboxCache         string // removed by TestMain
	sandboxRW, sandboxRO *sandbox.Sandbox
	sandboxErr           error
)

// TestMain removes the sandboxes' cache once the tests ran.
func TestMain(m *testing.M) {
	code := m.Run()
	if sandboxCache != "" {
		_ = os.RemoveAll(sandboxCache)
	}
	os.Exit(code)
}

// sandboxes returns the tests' sandboxes (the test is skipped without
// bubblewrap, or fails when FSMGEN_REQUIRE_SANDBOX=1).
func sandboxes(t *testing.T) (rw, ro *sandbox.Sandbox) {
	t.Helper()
	sandboxOnce.Do(func() {
		if sandboxCache, sandboxErr = os.MkdirTemp("", "hooks-test-cache-"); sandboxErr != nil {
			return
		}
		opt := sandbox.Options{Mode: sandbox.Bwrap, CacheDir: sandboxCache}
		if sandboxRW, sandboxErr = sandbox.New(context.Background(), opt); sandboxErr != nil {
			return
		}
		opt.ReadOnlyWorkspace = true
		sandboxRO, sandboxErr = sandbox.New(context.Background(), opt)
	})
	if sandboxErr != nil {
		sandboxtest.Unavailable(t, sandboxErr)
	}
	return sandboxRW, sandboxRO
}

// newRunner returns a runner of hs in a fresh workspace, with the tests'
// sandboxes.
func newRunner(t *testing.T, hs ...Hook) *Runner {
	t.Helper()
	rw, ro := sandboxes(t)
	ws, err := tools.NewWorkspace(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = ws.Close() })
	return &Runner{Hooks: hs, Workspace: ws, Session: "S-1", Redactor: redact.New(secret), Sandbox: rw, ReadOnly: ro}
}

// hook returns a hook of event running command for the tools.
func hook(event Event, command string, tools ...string) Hook {
	return Hook{Event: event, Command: command, Tools: tools, Timeout: time.Minute, Source: "h.yaml:1"}
}

// TestBeforeTool runs pre_tool hooks in the sandbox: they read the call
// as JSON (redacted) and their variables; the first that fails refuses
// the call and the later ones do not run; a hook of another tool does
// not run.
func TestBeforeTool(t *testing.T) {
	t.Parallel()
	r := newRunner(t,
		hook(PreTool, `echo "$AGENT_HOOK_EVENT $AGENT_TOOL_NAME $AGENT_SESSION"; cat`, "bash"),
		hook(PreTool, "echo never", "edit_file"),
		hook(PreTool, `grep -q '"rm -rf' && { echo "no rm -rf"; exit 2; }; exit 0`),
		hook(PreTool, "echo after the refusal"),
	)
	call := chat.ToolCall{ID: "c1", Name: "bash", Arguments: json.RawMessage(`{"command":"echo ` + secret + ` > x"}`)}
	reports, refused := r.BeforeTool(context.Background(), call, true, nil)
	assert.False(t, refused)
	require.Len(t, reports, 3)
	first := reports[0]
	require.NoError(t, first.Err)
	line, input, _ := strings.Cut(first.Output, "\n")
	assert.Equal(t, "pre_tool bash S-1", line)
	var in Input
	require.NoError(t, json.Unmarshal([]byte(input), &in), input)
	assert.Equal(t, Input{Event: PreTool, Session: "S-1", Workspace: r.Workspace.Root(), Tool: "bash", CallID: "c1",
		Arguments: json.RawMessage(`{"command":"echo [REDACTED] > x"}`)}, in)
	assert.NotContains(t, first.Output, secret)

	call.Arguments = json.RawMessage(`{"command":"rm -rf /"}`)
	reports, refused = r.BeforeTool(context.Background(), call, true, nil)
	assert.True(t, refused)
	require.Len(t, reports, 2, "the hooks after the refusal do not run")
	assert.EqualError(t, reports[1].Err, "command exited with status 2")
	assert.Equal(t, "no rm -rf\n", reports[1].Output)
	assert.Equal(t, "[pre_tool hook \"grep -q '\\\"rm -rf' && { echo \\\"no rm -rf\\\"; exit 2; }; exit 0\" (h.yaml:1) failed: command exited with status 2]\nno rm -rf", reports[1].String())
}

// TestHookWorkspace: the hooks of a call that may change the workspace
// write it; those of a read-only call and of the turn's end see it
// read-only; a hook's change to the repository's .git is refused as
// bash's is.
func TestHookWorkspace(t *testing.T) {
	t.Parallel()
	r := newRunner(t,
		hook(PostTool, "echo formatted >> out.txt"),
		hook(TurnEnd, "echo linted >> out.txt"),
	)
	call := chat.ToolCall{ID: "c1", Name: "edit_file", Arguments: json.RawMessage(`{}`)}
	reports := r.AfterTool(context.Background(), call, chat.ToolOutcome{Content: "edited"}, true, nil)
	require.Len(t, reports, 1)
	require.NoError(t, reports[0].Err, reports[0].Output)
	assert.True(t, reports[0].Silent())
	data, err := os.ReadFile(filepath.Join(r.Workspace.Root(), "out.txt"))
	require.NoError(t, err)
	assert.Equal(t, "formatted\n", string(data))

	call.Name = "read_file"
	reports = r.AfterTool(context.Background(), call, chat.ToolOutcome{Content: "read"}, false, nil)
	require.Len(t, reports, 1)
	assert.Error(t, reports[0].Err)
	assert.Contains(t, reports[0].Output, "Read-only file system")

	reports = r.TurnEnded(context.Background(), "Done.", nil)
	require.Len(t, reports, 1)
	assert.Error(t, reports[0].Err)
	assert.Contains(t, reports[0].Output, "Read-only file system")
	data, err = os.ReadFile(filepath.Join(r.Workspace.Root(), "out.txt"))
	require.NoError(t, err)
	assert.Equal(t, "formatted\n", string(data), "written once, by the edit's hook")
}

// TestHookStops: a hook stops at its timeout, and when its context is
// done (Ctrl-C), with every process it started.
func TestHookStops(t *testing.T) {
	t.Parallel()
	marker := fmt.Sprintf("hookstop%d", time.Now().UnixNano())
	sandboxtest.KillAtCleanup(t, marker)
	slow := hook(TurnEnd, "echo started; (sleep 600 # "+marker+"\n) & sleep 600 # "+marker)
	timed := slow
	timed.Timeout = 300 * time.Millisecond
	r := newRunner(t, timed)
	reports := r.TurnEnded(context.Background(), "", nil)
	require.Len(t, reports, 1)
	assert.EqualError(t, reports[0].Err, "timed out after 300ms and was stopped; raise its timeout in h.yaml:1")
	assert.Eventually(t, func() bool { return len(sandboxtest.Processes(marker)) == 0 }, 10*time.Second, 10*time.Millisecond,
		"processes of the hook outlived it: %v", sandboxtest.Processes(marker))

	r = newRunner(t, slow)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reports = r.TurnEnded(ctx, "", func(p chat.ToolProgress) {
		assert.Empty(t, p.Output, "a hook's lines are not its call's")
		if strings.HasSuffix(p.Message, "1 line of output") { // "started": it runs
			assert.True(t, strings.HasPrefix(p.Message, `turn_end hook "echo started;`), p.Message)
			cancel() // the user's Ctrl-C
		}
	})
	require.Len(t, reports, 1)
	assert.ErrorIs(t, reports[0].Err, context.Canceled)
	assert.Contains(t, reports[0].Err.Error(), "stopped")
	assert.Eventually(t, func() bool { return len(sandboxtest.Processes(marker)) == 0 }, 10*time.Second, 10*time.Millisecond,
		"processes of the hook outlived it: %v", sandboxtest.Processes(marker))
}

// TestHookUnconfined: with the sandbox off a hook is not run, and a
// pre_tool hook refuses its call.
func TestHookUnconfined(t *testing.T) {
	t.Parallel()
	ws, err := tools.NewWorkspace(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = ws.Close() })
	off := sandboxtest.New(t, sandbox.Options{Mode: sandbox.Off})
	r := &Runner{Hooks: []Hook{hook(PreTool, "touch ran")}, Workspace: ws, Sandbox: off, ReadOnly: off}
	reports, refused := r.BeforeTool(context.Background(), chat.ToolCall{ID: "c", Name: "bash", Arguments: json.RawMessage(`{}`)}, true, nil)
	assert.True(t, refused)
	require.Len(t, reports, 1)
	assert.ErrorIs(t, reports[0].Err, tools.ErrUnconfined)
	assert.NoFileExists(t, filepath.Join(ws.Root(), "ran"))
}
