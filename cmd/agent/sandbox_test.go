package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/fakellm"
	"github.com/fsmgen/fsmgen/runtime/sandbox/sandboxtest"
)

// The tests of issue 20's sandbox findings, each through the agent as a
// user runs it, with default flags but where a test says otherwise.

// hostDir returns a fresh directory outside /tmp, which confined commands
// do not see (the sandbox gives them a /tmp of their own), and outside
// the home directory: what a test puts there is really within reach.
func hostDir(t *testing.T) string {
	t.Helper()
	parent := "/var/tmp"
	if fi, err := os.Stat(parent); err != nil || !fi.IsDir() {
		parent = "." // the package's directory
	}
	dir, err := os.MkdirTemp(parent, "fsmgen-agent-test-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	real, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	abs, err := filepath.Abs(real)
	require.NoError(t, err)
	return abs
}

// bashCalls returns one reply calling bash once for each command, with
// IDs c_0, c_1, ...
func bashCalls(t *testing.T, commands ...string) fakellm.Reply {
	t.Helper()
	var calls []fakellm.ToolCall
	for i, c := range commands {
		args, err := json.Marshal(map[string]string{"command": c})
		require.NoError(t, err)
		calls = append(calls, fakellm.ToolCall{ID: "c_" + string(rune('0'+i)), Name: "bash", Args: string(args)})
	}
	return fakellm.Reply{ToolCalls: calls}
}

// toolResults returns the results the agent sent back in its second
// request, by call ID.
func toolResults(t *testing.T, e *env) map[string]string {
	t.Helper()
	reqs := e.srv.Requests()
	require.GreaterOrEqual(t, len(reqs), 2, "the agent did not send the tools' results")
	results := map[string]string{}
	for _, m := range reqs[1].Messages {
		if m.ToolCallID != "" {
			results[m.ToolCallID] = m.Text
		}
	}
	return results
}

// TestKeyringOutOfReach (issue 20 item 1): a key in the session keyring
// the agent was started in (a login session's, say) cannot be read by
// the model's commands. The keyring is not namespaced; the sandbox's
// seccomp filter refuses keyctl, add_key and request_key.
func TestKeyringOutOfReach(t *testing.T) {
	if sandboxErr != nil {
		sandboxtest.Unavailable(t, sandboxErr)
	}
	const desc, payload = "fsmgen-agent-test", "KEYRING-SECRET-4e5f6a7b"
	reader := sandboxtest.KeyReader(t, hostDir(t), desc)
	e := newEnv(t, fakellm.Anthropic, nil,
		bashCalls(t, reader, "cat /proc/keys 2>&1 | grep -c "+desc+" || true"),
		fakellm.Reply{Text: "Done."})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := e.command(ctx, "-p", "Read the keyring.")
	sandboxtest.WithSessionKey(t, cmd, desc, payload)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	results := toolResults(t, e)
	assert.Contains(t, results["c_0"], "keyring: search: operation not permitted")
	assert.Equal(t, "0\n", results["c_1"], "/proc/keys lists the key")
	for i, req := range e.srv.Requests() {
		assert.False(t, strings.Contains(string(req.Body), payload), "request %d holds the key", i)
	}
	assert.False(t, strings.Contains(string(out), payload), "the agent showed the key")
}
