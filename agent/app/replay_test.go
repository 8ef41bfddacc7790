package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/eventlog"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/internal/gittest"
	"github.com/fsmgen/fsmgen/internal/proctest"
)

// TestReplay plays back the demo session, and reports tampered copies:
// edited in place, where the edited line no longer chains, and rewritten
// whole through an event log writer, every line chaining, where only the
// machine can tell.
func TestReplay(t *testing.T) {
	t.Run("the demo session replays exactly", func(t *testing.T) {
		r := replayExit(t, demoLog)
		require.Equal(t, 0, r.code, r.stdout+r.stderr)
		assert.Regexp(t, `^replay ok: \d+ events\n$`, r.stdout)
	})
	t.Run("the binary replays with no API key and no server", func(t *testing.T) {
		cmd := exec.Command(agentBin, "replay", demoLog)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HTTPS_PROXY=http://127.0.0.1:1", "HTTP_PROXY=http://127.0.0.1:1"}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		assert.Contains(t, string(out), "replay ok:")
	})

	demo, err := os.ReadFile(demoLog)
	require.NoError(t, err)
	// rewrite writes log to a new file line by line through an event log
	// writer, as a program forging a whole log would: every line chains.
	rewrite := func(t *testing.T, log string) string {
		t.Helper()
		p := filepath.Join(t.TempDir(), "rewritten.events.jsonl")
		w, err := eventlog.Open(p)
		require.NoError(t, err)
		for _, line := range strings.Split(strings.TrimSuffix(log, "\n"), "\n") {
			if strings.HasPrefix(line, `{"type":"session"`) {
				var h eventlog.Header
				require.NoError(t, json.Unmarshal([]byte(line), &h))
				require.NoError(t, w.WriteHeader(h))
				continue
			}
			var rec eventlog.Record
			require.NoError(t, json.Unmarshal([]byte(line), &rec))
			_, err := w.Append(rec)
			require.NoError(t, err)
		}
		require.NoError(t, w.Close())
		return p
	}
	t.Run("the demo session rewritten as it is", func(t *testing.T) {
		b, err := os.ReadFile(rewrite(t, string(demo)))
		require.NoError(t, err)
		assert.Equal(t, string(demo), string(b), "the rewriting keeps every byte")
	})

	tampers := []struct {
		name, old, new string
		// rewritten is what replay says of the edited log rewritten
		// whole; "" when the machine acts the same.
		rewritten string
	}{
		{"a user message typed while busy, which the machine held", `"content":"What did you change?"`, `"content":"What did you break?"`, "action differs: action 2 (send_llm_request) at request.messages"},
		{"a user message", `"content":"Do what the TODO says."`, `"content":"Do what you like."`, "action differs: action 1 (send_llm_request) at request.messages"},
		{"a streamed delta", `"content":"Let me read `, `"content":"Let us read `, "action differs: action 1 (display_message) at content"},
		{"a tool result", `"outcome":{"content":"Hello, world\n"}`, `"outcome":{"content":"Hello, there\n"}`, "action differs: action 1 (send_llm_request) at request.messages"},
		{"a tool result the round has not used yet", `"content":"Say goodbye in hello.txt too.\n"`, `"content":"Say hello in hello.txt too.\n"`, "tool_completed: action differs: action 1 (send_llm_request) at request.messages"},
		{"a recorded rejection", `"actions":[],"rejected":false`, `"actions":[],"rejected":true`, "rejection differs"},
		{"a recorded retry delay", `"kind":"schedule_retry","delay":`, `"kind":"schedule_retry","delay":9`, "action differs: action 1 (schedule_retry) at delay"},
	}
	for _, tt := range tampers {
		require.Contains(t, string(demo), tt.old)
		edited := strings.Replace(string(demo), tt.old, tt.new, 1)
		line := strings.Count(string(demo)[:strings.Index(string(demo), tt.old)], "\n") + 1
		t.Run("edited: "+tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "tampered.events.jsonl")
			require.NoError(t, os.WriteFile(p, []byte(edited), 0o600))
			r := replayExit(t, p)
			assert.Equal(t, 1, r.code)
			assert.Regexp(t, fmt.Sprintf(`event \d+ \(line %d\) \w+: the line does not chain`, line), r.stdout)
		})
		t.Run("rewritten: "+tt.name, func(t *testing.T) {
			r := replayExit(t, rewrite(t, edited))
			if tt.rewritten == "" {
				assert.Equal(t, 0, r.code, "only the chain tells this edit: %s", r.stdout)
				return
			}
			assert.Equal(t, 1, r.code)
			assert.Contains(t, r.stdout, tt.rewritten)
			assert.Regexp(t, `event \d+ \(line \d+\)`, r.stdout)
			assert.Contains(t, r.stdout, "expected: ")
		})
	}

	t.Run("a line removed", func(t *testing.T) {
		lines := strings.SplitAfter(string(demo), "\n")
		p := filepath.Join(t.TempDir(), "removed.events.jsonl")
		require.NoError(t, os.WriteFile(p, []byte(strings.Join(append(lines[:4:4], lines[5:]...), "")), 0o600))
		r := replayExit(t, p)
		assert.Equal(t, 1, r.code)
		assert.Regexp(t, `event 5 \(line 5\) \w+: the line does not chain`, r.stdout)
	})
	t.Run("a log whose last line a crash cut short", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "torn.events.jsonl")
		require.NoError(t, os.WriteFile(p, demo[:len(demo)-30], 0o600))
		r := replayExit(t, p)
		require.Equal(t, 0, r.code, r.stdout+r.stderr)
		assert.Equal(t, fmt.Sprintf("replay ok: %d events\n", strings.Count(string(demo), "\n")-2), r.stdout)
	})

	t.Run("usage and unreadable logs", func(t *testing.T) {
		var o, e bytes.Buffer
		assert.Equal(t, exitUsage, run(context.Background(), []string{"replay"}, nil, &o, &e))
		assert.Contains(t, e.String(), "usage: agent [-v] replay [-v] LOG")
		r := replayExit(t, filepath.Join(t.TempDir(), "missing.jsonl"))
		assert.Equal(t, 1, r.code)
		for content, want := range map[string]string{
			"not a log\n": "not an fsmgen event log",
			`{"type":"session","format":"fsmgen-eventlog/2","machine":"agent"}` + "\n": `another format ("fsmgen-eventlog/2", not "fsmgen-eventlog/3")`,
		} {
			p := filepath.Join(t.TempDir(), "other.jsonl")
			require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
			r = replayExit(t, p)
			assert.Equal(t, 1, r.code)
			assert.Contains(t, r.stderr, want)
		}
	})
}

// TestKillMidTurnAndResume kills the agent with SIGKILL while a tool runs,
// then resumes the thread: what was saved (the user's message, the
// model's reply, the result of the tool that had finished) is all there,
// the tool that was running gets an "interrupted" result, the turn is
// stopped, and the model is asked nothing until the user types.
func TestKillMidTurnAndResume(t *testing.T) {
	t.Parallel()
	// The slow command marks that it runs in the workspace, the one place
	// the sandbox lets it write.
	slow := `{"command":"touch slow.started && exec sleep 60"}`
	e := newEnv(t, fakellm.Anthropic, map[string]string{"hello.txt": "Hello, world\n"},
		fakellm.Reply{
			Text: "Fixing the greeting and running the slow check.",
			ToolCalls: []fakellm.ToolCall{
				{ID: "toolu_edit", Name: "edit_file", Args: `{"path":"hello.txt","old_str":"world","new_str":"agent"}`},
				{ID: "toolu_slow", Name: "bash", Args: slow},
			},
		},
	)

	ctx, cancel := context.WithTimeout(context.Background(), runLimit)
	defer cancel()
	cmd := e.command(ctx, "-p", "Fix the greeting, then run the slow check.")
	var stderr proctest.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	if len(sandboxArgs) > 0 {
		// Unconfined, the sleep's process group outlives the agent.
		t.Cleanup(func() { _ = exec.Command("pkill", "-KILL", "-f", "^sleep 60$").Run() })
	}
	pidFile := filepath.Join(e.ws, "slow.started")

	// Wait until the edit's result is saved and the slow command runs.
	var id string
	require.Eventually(t, func() bool {
		if _, err := os.Stat(pidFile); err != nil {
			return false
		}
		ids := e.threadIDs(t)
		if len(ids) != 1 {
			return false
		}
		id = ids[0]
		st, ok := e.state(t, id).(agent.ExecutingTools)
		return ok && st.Executions.Len() == 2 && st.Executions.Execution(0).Status == chat.ToolCompleted
	}, runLimit, 20*time.Millisecond, "stderr:\n%s", stderr.String())
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()

	st := e.state(t, id).(agent.ExecutingTools)
	assert.Equal(t, []string{"user: Fix the greeting, then run the slow check.", "assistant: Fixing the greeting and running the slow check."}, messages(st))
	assert.Equal(t, "toolu_edit", st.Executions.Execution(0).Call.ID)
	assert.NotEqual(t, chat.ToolCompleted, st.Executions.Execution(1).Status)
	assert.Equal(t, "Hello, agent\n", gittest.ReadFile(t, e.ws, "hello.txt"))
	assert.Equal(t, "initial", gittest.Git(t, e.ws, "log", "-1", "--format=%s"), "killed before the hook")

	// Resumed, the agent answers the cut call "interrupted" but sends
	// nothing to the model until the user types (issue 23).
	e.srv.Add(fakellm.Reply{Text: "The greeting is fixed; the slow check was interrupted."})
	r := e.run(t, "What happened?\n", "-resume", id)
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Equal(t, "The greeting is fixed; the slow check was interrupted.\n", r.stdout)
	assert.Contains(t, r.stderr, "interrupted")

	final := messages(e.state(t, id))
	require.Len(t, final, 7, "%q", final)
	assert.Equal(t, "user: Fix the greeting, then run the slow check.", final[0])
	assert.Equal(t, "assistant: Fixing the greeting and running the slow check.", final[1])
	assert.True(t, strings.HasPrefix(final[2], "tool: edited hello.txt"), final[2])
	assert.True(t, strings.HasPrefix(final[3], "tool: interrupted: the agent stopped before this tool finished"), final[3])
	assert.True(t, strings.HasSuffix(final[3], "(error)"), final[3])
	assert.Equal(t, "user: "+chat.UserStoppedNote, final[4])
	assert.Equal(t, "user: What happened?", final[5])
	assert.Equal(t, "assistant: The greeting is fixed; the slow check was interrupted.", final[6])
	// What the round cut by the kill changed is not known to be the
	// agent's alone: it stays in the work tree, uncommitted.
	assert.Equal(t, "initial", gittest.Git(t, e.ws, "log", "-1", "--format=%s"))
	assert.Contains(t, gittest.Git(t, e.ws, "status", "--porcelain"), "M hello.txt")

	reqs := e.srv.Requests()
	require.Len(t, reqs, 2, "one request, after the user typed")

	rr := replayExit(t, filepath.Join(e.threads, id+".events.jsonl"))
	assert.Equal(t, 0, rr.code, rr.stdout+rr.stderr)
	e.checkNoSecret(t)
}

// TestSignalStopsAndSaves sends SIGTERM while the LLM streams: the
// request is cancelled, the thread saved, and the agent exits.
func TestSignalStopsAndSaves(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.OpenAI, nil, fakellm.Reply{Text: "Thinking very hard", Stall: true})
	ctx, cancel := context.WithTimeout(context.Background(), runLimit)
	defer cancel()
	cmd := e.command(ctx)
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	var stdout, stderr proctest.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	_, err = io.WriteString(in, "Think.\n")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return strings.Contains(stdout.String(), "Thinking") || len(e.srv.Requests()) > 0 },
		runLimit, 10*time.Millisecond)
	// The stdin pipe stays open: the agent must stop on the signal alone.
	require.Eventually(t, func() bool {
		ids := e.threadIDs(t)
		return len(ids) == 1 && e.state(t, ids[0]) != nil
	}, runLimit, 10*time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	err = cmd.Wait()
	require.NoError(t, err, "stderr:\n%s", stderr.String())
	_ = in.Close()
	assert.Contains(t, stderr.String(), "stopping")

	id := e.onlyThread(t)
	st := e.state(t, id)
	assert.IsType(t, agent.CallingLLM{}, st)
	assert.Equal(t, []string{"user: Think."}, messages(st))
	e.checkNoSecret(t)
}
