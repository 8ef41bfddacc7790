package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox/sandboxtest"
	"github.com/fsmgen/fsmgen/internal/gittest"
)

// TestTerminalEscapes checks that escape sequences in the model's text
// and in a tool's output never reach the terminal.
func TestTerminalEscapes(t *testing.T) {
	t.Parallel()
	for _, p := range []fakellm.Provider{fakellm.Anthropic, fakellm.OpenAI} {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, p, nil,
				fakellm.Reply{Text: "Look: \x1b]0;pwned\x07\x1b[2J", ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "bash",
					Args: `{"command":"printf 'out \\033]52;c;ZXZpbA==\\007\\033[31mred\\n'"}`}}},
				fakellm.Reply{Text: "Done \u009b31m."})
			for _, mode := range [][]string{{"-p", "Go."}, nil} {
				stdin := ""
				if mode == nil {
					e.srv.Add(fakellm.Reply{Text: "Look: \x1b]0;pwned\x07\x1b[2J", ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "bash",
						Args: `{"command":"printf 'out \\033]52;c;ZXZpbA==\\007\\033[31mred\\n'"}`}}}, fakellm.Reply{Text: "Done \u009b31m."})
					stdin = "Go.\n"
				}
				r := e.run(t, stdin, mode...)
				assert.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
				for name, out := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
					assert.NotContains(t, out, "\x1b", "%s holds an escape", name)
					assert.NotContains(t, out, "\u009b", "%s holds a C1 CSI", name)
					assert.NotContains(t, out, "\x07", "%s holds a bell", name)
				}
				assert.Contains(t, r.stdout, "Done .", "a C1 CSI sequence is removed whole")
				// The line is shown once: while the command runs or after
				// its result, as the machine's speed has it.
				assert.Contains(t, r.stderr, "✓ bash: 1 line of output\n")
				assert.Equal(t, 1, strings.Count(r.stderr, "    out red\n"), "the output, cleaned, once:\n%s", r.stderr)
			}
		})
	}
}

// TestVerboseReplay checks that flags before a subcommand are taken.
func TestVerboseReplay(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, nil, fakellm.Reply{Text: "Hi."})
	r := e.run(t, "", "-p", "Hello.")
	assert.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	log := filepath.Join(e.threads, e.onlyThread(t)+".events.jsonl")
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"-v", "replay", log}, nil, &stdout, &stderr)
	assert.Equal(t, exitOK, code, "stderr:\n%s", stderr.String())
	assert.Contains(t, stdout.String(), "replay ok: ")
	assert.Contains(t, stderr.String(), "1 sessions")

	stdout.Reset()
	stderr.Reset()
	code = run(t.Context(), []string{"replay", "-v", log}, nil, &stdout, &stderr)
	assert.Equal(t, exitOK, code, "stderr:\n%s", stderr.String())
	assert.Contains(t, stderr.String(), "1 sessions", "-v after the subcommand")

	stderr.Reset()
	code = run(t.Context(), []string{"replay", e.threads}, nil, &stdout, &stderr)
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr.String(), "is not a file; give an event log")
}

// TestLedgerShown checks that a one-shot run ends with the tokens it used,
// and their cost when the price is known.
func TestLedgerShown(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"no price for the model", nil, []string{"agent: last turn: 10 tokens in, 20 out\n", "agent: thread: 10 tokens in, 20 out, over 1 reply\n"}},
		{"a price", []string{"-price", "3,15"}, []string{"agent: last turn: 10 tokens in, 20 out, $0.0003\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, fakellm.OpenAI, nil, fakellm.Reply{Text: "Hi."})
			r := e.run(t, "", append(tt.args, "-p", "Hello.")...)
			assert.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			for _, w := range tt.want {
				assert.Contains(t, r.stderr, w)
			}
		})
	}
}

// TestOldEventLogMovedAside checks that resuming a thread whose event log
// an older agent wrote keeps that log aside and starts a new one, and that
// -log never touches a file that is not an event log of this format.
func TestOldEventLogMovedAside(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, nil, fakellm.Reply{Text: "Hi."}, fakellm.Reply{Text: "Again."})
	r := e.run(t, "", "-p", "Hello.")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	id := e.onlyThread(t)
	logPath := filepath.Join(e.threads, id+".events.jsonl")
	old := `{"type":"session","format":"fsmgen-eventlog/2","machine":"agent"}` + "\n"
	require.NoError(t, os.WriteFile(logPath, []byte(old), 0o600))

	r = e.run(t, "Again.\n", "-resume", id)
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Contains(t, r.stderr, "the thread's event log is of an older format; it was moved to ")
	moved, err := filepath.Glob(logPath + ".*.old")
	require.NoError(t, err)
	require.Len(t, moved, 1)
	b, err := os.ReadFile(moved[0])
	require.NoError(t, err)
	assert.Equal(t, old, string(b), "the old log is kept as it was")
	assert.Equal(t, 0, replayExit(t, logPath).code, "the new log replays")

	notLog := filepath.Join(t.TempDir(), "notes.txt")
	require.NoError(t, os.WriteFile(notLog, []byte("my notes\nlast line without newline"), 0o600))
	r = e.run(t, "", "-log", notLog, "-p", "Hi.")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "is not an fsmgen event log; give -log a new file or an existing event log")
	b, err = os.ReadFile(notLog)
	require.NoError(t, err)
	assert.Equal(t, "my notes\nlast line without newline", string(b), "the file is untouched")
}

// TestSandboxedBash runs the agent as a user would, against a fake server,
// with a model that tries through bash to read the agent's environment,
// write outside the workspace and into .git, reach the network (the fake
// server itself) and leave processes behind: every attempt fails and the
// key appears nowhere.
func TestSandboxedBash(t *testing.T) {
	t.Parallel()
	if sandboxErr != nil {
		sandboxtest.Unavailable(t, sandboxErr)
	}
	outside := t.TempDir()
	for _, p := range []fakellm.Provider{fakellm.Anthropic, fakellm.OpenAI} {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, p, map[string]string{"README": "sandbox test\n"})
			port := strings.TrimPrefix(e.srv.URL, "http://127.0.0.1:")
			// In the background loop's command line: the test finds its
			// processes by it, from outside the sandbox.
			marker := fmt.Sprintf("fsmgen-app-beat-%s-%d", p, time.Now().UnixNano())
			sandboxtest.KillAtCleanup(t, marker)
			attempts := []struct{ id, command, want string }{
				{"env", `cat /proc/$PPID/environ /proc/*/environ 2>/dev/null | tr '\0' '\n' | grep -c -e _API_KEY -e REDACTED || true`, "0\n"},
				{"outside", fmt.Sprintf(`touch %s/escaped 2>&1 || echo refused`, outside), "refused"},
				{"git", `echo x > .git/evil 2>&1 || echo refused`, "refused"},
				{"network", fmt.Sprintf(`(exec 3<>/dev/tcp/127.0.0.1/%s) 2>/dev/null && echo reached || echo unreachable`, port), "unreachable\n"},
				{"agent", `kill -0 $(pgrep -x agent || echo 1) 2>&1; pgrep -x agent || echo invisible`, "invisible"},
				{"background", fmt.Sprintf(`setsid sh -c ': %s; while :; do date >> beat; sleep 0.05; done' >/dev/null 2>&1 & while [ ! -s beat ]; do sleep 0.01; done; echo started`, marker), "started\n"},
			}
			var calls []fakellm.ToolCall
			for _, a := range attempts {
				args, err := json.Marshal(map[string]string{"command": a.command})
				require.NoError(t, err)
				calls = append(calls, fakellm.ToolCall{ID: "c_" + a.id, Name: "bash", Args: string(args)})
			}
			e.srv.Add(fakellm.Reply{ToolCalls: calls}, fakellm.Reply{Text: "Tried."})
			r := e.run(t, "", "-p", "Try to escape.")
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			assert.Contains(t, r.stderr, "agent: bash sandbox: bubblewrap")

			reqs := e.srv.Requests()
			require.Len(t, reqs, 2)
			results := map[string]string{}
			for _, m := range reqs[1].Messages {
				if m.ToolCallID != "" {
					results[strings.TrimPrefix(m.ToolCallID, "c_")] = m.Text
				}
			}
			for _, a := range attempts {
				assert.Contains(t, results[a.id], a.want, "attempt %s", a.id)
			}
			assert.NoFileExists(t, filepath.Join(outside, "escaped"))
			assert.NoFileExists(t, filepath.Join(e.ws, ".git", "evil"))

			// The background loop died with its command: none of its
			// processes is left, and its beat file stopped growing.
			assert.Eventually(t, func() bool { return len(sandboxtest.Processes(marker)) == 0 }, 10*time.Second, 10*time.Millisecond,
				"the background loop outlived its command: %v", sandboxtest.Processes(marker))
			beat := filepath.Join(e.ws, "beat")
			before, err := os.ReadFile(beat)
			require.NoError(t, err, "the loop ran")
			time.Sleep(200 * time.Millisecond) // four beats, were anything left beating
			after, err := os.ReadFile(beat)
			require.NoError(t, err)
			assert.Equal(t, string(before), string(after), "the background loop outlived its command")

			for _, req := range reqs {
				assert.NotContains(t, string(req.Body), testKey)
			}
			assert.NotContains(t, r.stderr+r.stdout, testKey)
			e.checkNoSecret(t)
		})
	}
}

// TestKeyNeverCommitted checks that a file holding the API key (here the
// user's own .env, untracked and not ignored) is never committed: it is
// the user's, so the commit leaves it alone, and commits the agent's work.
func TestKeyNeverCommitted(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.OpenAI, nil,
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "edit_file", Args: `{"path":"main.go","old_str":"","new_str":"package main\n"}`}}},
		fakellm.Reply{Text: "Created main.go."})
	gittest.WriteFile(t, e.ws, ".env", "OPENAI_API_KEY="+testKey+"\n")
	r := e.run(t, "", "-p", "Create main.go.")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Equal(t, "main.go", gittest.Git(t, e.ws, "show", "--name-only", "--format=", "HEAD"))
	assert.NotContains(t, gittest.Git(t, e.ws, "log", "--all", "-p"), testKey)
	assert.Equal(t, "?? .env", gittest.Git(t, e.ws, "status", "--porcelain"))
}

// TestRiskyWorkspace checks that the agent refuses a workspace holding the
// home directory, its threads or its event log.
func TestRiskyWorkspace(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args func(e *env) []string
		env  func(e *env) []string
		want string
	}{
		{
			name: "the home directory",
			env:  func(e *env) []string { return []string{"HOME=" + e.ws} },
			want: "holds your home directory",
		},
		{
			name: "a parent of the home directory",
			env:  func(e *env) []string { return []string{"HOME=" + filepath.Join(e.ws, "user")} },
			want: "holds your home directory",
		},
		{
			name: "the threads",
			args: func(e *env) []string { return []string{"-threads", filepath.Join(e.ws, "threads")} },
			want: "-threads " + "{ws}/threads is inside the workspace",
		},
		{
			name: "the event log, given relative",
			args: func(*env) []string { return []string{"-log", "session.log"} },
			want: "-log {ws}/session.log is inside the workspace",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, fakellm.Anthropic, nil)
			ctx, cancel := context.WithTimeout(context.Background(), runLimit)
			defer cancel()
			var args []string
			if tt.args != nil {
				args = tt.args(e)
			}
			cmd := e.command(ctx, append(args, "-p", "Hi.")...)
			if tt.env != nil {
				require.NoError(t, os.MkdirAll(filepath.Join(e.ws, "user"), 0o755))
				cmd.Env = append(cmd.Env, tt.env(e)...)
			}
			out, err := cmd.CombinedOutput()
			require.Error(t, err)
			assert.Contains(t, string(out), strings.ReplaceAll(tt.want, "{ws}", e.ws))
			assert.Empty(t, e.srv.Requests(), "nothing was sent")
		})
	}
}

// TestInheritedDescriptors checks that a descriptor the agent inherits
// (here one of a directory outside the workspace, opened by the shell that
// started it) does not reach the commands it runs.
func TestInheritedDescriptors(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("OUTSIDE-SECRET"), 0o600))
	e := newEnv(t, fakellm.Anthropic, nil,
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "bash", Args: `{"command":"ls /proc/self/fd; cat /proc/self/fd/*/secret.txt 2>&1; true"}`}}},
		fakellm.Reply{Text: "Done."})
	dir, err := os.Open(outside)
	require.NoError(t, err)
	defer dir.Close()
	ctx, cancel := context.WithTimeout(context.Background(), runLimit)
	defer cancel()
	cmd := e.command(ctx, "-sandbox=off", "-p", "Look.")
	cmd.ExtraFiles = []*os.File{dir} // fd 3 of the agent, without close-on-exec
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	reqs := e.srv.Requests()
	require.Len(t, reqs, 2)
	result := reqs[1].Messages[len(reqs[1].Messages)-1].Text
	assert.NotContains(t, result, "OUTSIDE-SECRET")
	assert.Equal(t, "0\n1\n2\n", strings.SplitAfter(result, "2\n")[0], "the command has only its standard descriptors: %q", result)
}

// TestReplayFindsACutLog checks that replay of a thread's own log finds a
// log cut at a line boundary, which the chain alone cannot tell, through
// the chain value the thread noted.
func TestReplayFindsACutLog(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, nil, fakellm.Reply{Text: "Hi."})
	r := e.run(t, "", "-p", "Hello.")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	log := filepath.Join(e.threads, e.onlyThread(t)+".events.jsonl")
	assert.Equal(t, 0, replayExit(t, log).code, "the whole log replays")

	b, err := os.ReadFile(log)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(b), "\n")
	cut := strings.Join(lines[:len(lines)-3], "")
	require.NoError(t, os.WriteFile(log, []byte(cut), 0o600))
	rr := replayExit(t, log)
	assert.Equal(t, exitError, rr.code, "a log cut at a line boundary is found out:\n%s%s", rr.stdout, rr.stderr)

	other := filepath.Join(t.TempDir(), "copy.jsonl") // not beside its thread: the chain alone
	require.NoError(t, os.WriteFile(other, []byte(cut), 0o600))
	assert.Equal(t, exitOK, replayExit(t, other).code)
}

// TestNestedRepositoryNotCommitted checks that a repository a command
// creates inside the workspace, configured to run a command, is neither
// committed nor run, and the user is told: the git guard removes its
// .git, and its files are committed as the workspace's own.
func TestNestedRepositoryNotCommitted(t *testing.T) {
	t.Parallel()
	marker := filepath.Join(t.TempDir(), "PWNED")
	cmdline := "mkdir sub && cd sub && git init -q && git config core.fsmonitor 'touch " + marker + "; false' && " +
		"echo a > a && git -c user.name=a -c user.email=b commit -q --allow-empty -m x && git add a && cd .. && echo ok > ok.txt"
	args, err := json.Marshal(map[string]string{"command": cmdline})
	require.NoError(t, err)
	e := newEnv(t, fakellm.Anthropic, nil,
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "bash", Args: string(args)}}},
		fakellm.Reply{Text: "Done."})
	r := e.run(t, "", "-p", "Go.")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Contains(t, r.stderr, "agent:   sub/.git: a .git was created; removed")
	assert.NoDirExists(t, filepath.Join(e.ws, "sub", ".git"))
	assert.Equal(t, "ok.txt\nsub/a", gittest.Git(t, e.ws, "show", "--name-only", "--format=", "HEAD"))
	gittest.Git(t, e.ws, "status")
	assert.NoFileExists(t, marker, "the nested repository's fsmonitor ran")
}
