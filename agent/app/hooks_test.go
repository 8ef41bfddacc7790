package app

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox/sandboxtest"
	"github.com/fsmgen/fsmgen/agent/internal/thread"
	"github.com/fsmgen/fsmgen/internal/proctest"
)

// projectHooks is the hooks file of the tests' projects: a pre_tool hook
// that refuses a bash command with "rm -rf" (reading the call as JSON on
// its standard input), a post_tool hook of edit_file that changes the
// file it edited (a formatter), a post_tool hook of read_file that tries
// to write (its workspace is read-only) and a turn_end hook that fails
// (a linter).
const projectHooks = `pre_tool:
  - tools: [bash]
    command: 'if grep -q "rm -rf"; then echo "refused: no rm -rf in this project"; exit 1; fi'
post_tool:
  - tools: [edit_file]
    command: 'echo "// formatted" >> a.go && echo "formatted by $AGENT_TOOL_NAME hook"'
  - tools: ["read_*"]
    command: 'echo x > a.go'
turn_end:
  - command: 'echo "lint: a.go:1: 1 issue"; exit 1'
`

// userHooks is the user's hooks file of the tests: a post_tool hook of
// bash that prints its environment and input, which must hold no secret.
const userHooks = `post_tool:
  - tools: [bash]
    command: 'echo "user hook: event=$AGENT_HOOK_EVENT"; env; cat'
    timeout: 30s
`

// hookedEnv returns an env whose project and user have hooks, and whose
// model asks, in its first reply, for a bash command the project's hook
// refuses, one it lets run, an edit and a read; it then answers "Done."
// and "Seen." to the next message.
func hookedEnv(t *testing.T, p fakellm.Provider) *env {
	t.Helper()
	if sandboxErr != nil {
		sandboxtest.Unavailable(t, sandboxErr)
	}
	e := newEnv(t, p, map[string]string{
		".agent/hooks.yaml": projectHooks,
		"a.go":              "package a\n",
		"build/keep.txt":    "kept\n",
	},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			{ID: "c1", Name: "bash", Args: `{"command":"rm -rf build"}`},
			{ID: "c2", Name: "bash", Args: `{"command":"echo made > made.txt"}`},
			{ID: "c3", Name: "edit_file", Args: `{"path":"a.go","old_str":"package a","new_str":"package a // edited"}`},
			{ID: "c4", Name: "read_file", Args: `{"path":"a.go"}`},
		}},
		fakellm.Reply{Text: "Done."},
		fakellm.Reply{Text: "Seen."})
	dir := filepath.Join(e.configHome(), configDirName)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hooks.yaml"), []byte(userHooks), 0o644))
	return e
}

// TestHooks runs a session with the project's and the user's hooks, in
// the real sandbox, against both providers: a failing pre_tool hook
// refuses the call with its output as the reason (nothing is run); the
// post_tool hooks' output is appended to the results, a hook of an edit
// may change the workspace (and its change is the turn's commit) while a
// hook of a read sees it read-only; the turn_end hook's output is shown
// and kept for the model's next message; the hooks' environment and
// input hold no secret. The second message is typed during the first
// turn: the machine holds it and takes it as the turn ends, before the
// turn_end hook has run, so its turn waits for the hook and the hook's
// output goes with the message after it (kept in the thread, hook_note,
// as the input then ends).
func TestHooks(t *testing.T) {
	t.Parallel()
	for _, p := range []fakellm.Provider{fakellm.Anthropic, fakellm.OpenAI} {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			e := hookedEnv(t, p)
			r := e.run(t, "change it\nwhat did the linter say?\n")
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			reqs := e.srv.Requests()
			require.Len(t, reqs, 3)

			res := resultsByID(reqs[1])
			refused := res["c1"]
			assert.True(t, refused.IsError)
			assert.Contains(t, refused.Text, agentexec.HookRefusedPrefix)
			assert.Contains(t, refused.Text, "(.agent/hooks.yaml:2)")
			assert.Contains(t, refused.Text, "refused: no rm -rf in this project")
			assert.FileExists(t, filepath.Join(e.ws, "build/keep.txt"), "the refused command never ran")

			ran := res["c2"]
			assert.False(t, ran.IsError, ran.Text)
			assert.Contains(t, ran.Text, "(no output)\n[post_tool hook")
			assert.Contains(t, ran.Text, "user hook: event=post_tool")
			assert.Contains(t, ran.Text, `"tool":"bash","call_id":"c2","arguments":{"command":"echo made > made.txt"},"result":{"content":"(no output)","is_error":false}`)
			assert.NotContains(t, ran.Text, "API_KEY", "a hook's environment holds no key")
			assert.FileExists(t, filepath.Join(e.ws, "made.txt"))

			edited := res["c3"]
			assert.False(t, edited.IsError, edited.Text)
			assert.Contains(t, edited.Text, "formatted by edit_file hook")
			data, err := os.ReadFile(filepath.Join(e.ws, "a.go"))
			require.NoError(t, err)
			assert.Equal(t, "package a // edited\n// formatted\n", string(data), "the read's hook could not write")

			read := res["c4"]
			assert.False(t, read.IsError, "a failing post_tool hook leaves the call's outcome as it was")
			assert.Contains(t, read.Text, "Read-only file system")

			last := reqs[2].Messages[len(reqs[2].Messages)-1]
			assert.Equal(t, "what did the linter say?", last.Text)
			store, err := thread.NewStore(e.threads)
			require.NoError(t, err)
			th, err := store.Load(e.onlyThread(t))
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(th.HookNote, "[what the end-of-turn hooks gave after your last reply]\n"), th.HookNote)
			assert.Contains(t, th.HookNote, "lint: a.go:1: 1 issue")
			for _, want := range []string{
				"agent: hooks of .agent/hooks.yaml (in the sandbox, as bash's commands): pre_tool bash ",
				"agent: hooks of " + filepath.Join(e.configHome(), configDirName, "hooks.yaml") + " (in the sandbox, as bash's commands): post_tool bash ",
				"hook turn_end \"echo \\\"lint: a.go:1: 1 issue\\\"; exit 1\": command exited with status 1",
				"    lint: a.go:1: 1 issue",
				// A call's hooks under its result, each with its last lines.
				"  ✓ edit_file: edited a.go: replaced 1 occurrence at line 1 (1 line removed, 1 line added)\n",
				"\n    [post_tool hook \"echo \\\"// formatted\\\" >> a.go && echo \\\"formatted by $AGENT_TOOL_NAME hook\\\"\" (.agent/hooks.yaml:5) ok]\n      formatted by edit_file hook\n",
				"  ✓ read_file: package a",
				"\n    [post_tool hook \"echo x > a.go\" (.agent/hooks.yaml:7) failed: command exited with status 1]\n      ",
			} {
				assert.Contains(t, r.stderr, want)
			}
			for _, req := range reqs {
				assert.NotContains(t, string(req.Body), testKey)
			}

			// The turn's commit holds the edit and the formatter's change.
			out, err := exec.Command("git", "-C", e.ws, "show", "--stat", "--format=%s", "HEAD").CombinedOutput()
			require.NoError(t, err, "%s", out)
			assert.Contains(t, string(out), "a.go")
			assert.Contains(t, string(out), "made.txt")
			show, err := exec.Command("git", "-C", e.ws, "show", "HEAD:a.go").CombinedOutput()
			require.NoError(t, err, "%s", show)
			assert.Equal(t, "package a // edited\n// formatted\n", string(show))
		})
	}
}

// TestHooksCtrlC: a message typed while the turn_end hooks run waits for
// them; Ctrl-C stops them (the session goes on, the model is told
// nothing of them) and the message is sent. The hooks of that message's
// turn are stopped the same way, before the session ends: else they would
// run to their timeout of a minute.
func TestHooksCtrlC(t *testing.T) {
	t.Parallel()
	if sandboxErr != nil {
		sandboxtest.Unavailable(t, sandboxErr)
	}
	e := newEnv(t, fakellm.Anthropic, map[string]string{
		".agent/hooks.yaml": "turn_end:\n  - command: 'echo slow; sleep 600'\n",
	}, fakellm.Reply{Text: "Done."}, fakellm.Reply{Text: "Next done."})
	ctx, cancel := context.WithTimeout(context.Background(), runLimit)
	defer cancel()
	cmd := e.command(ctx)
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	var stdout, stderr proctest.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	// waitFor waits for the nth notice s on the screen.
	waitFor := func(s string, n int) {
		t.Helper()
		require.Eventually(t, func() bool { return strings.Count(stderr.String(), s) >= n },
			runLimit, 10*time.Millisecond, "stderr:\n%s", stderr.String())
	}
	const running = "end-of-turn hooks: running \"echo slow; sleep 600\" (Ctrl-C stops them)"
	const stopped = "end-of-turn hooks stopped; the model is not told what they gave"
	_, err = io.WriteString(in, "Start.\n")
	require.NoError(t, err)
	waitFor(running, 1)
	_, err = io.WriteString(in, "Next.\n")
	require.NoError(t, err)
	waitFor("the end-of-turn hooks are running: your message is sent when they end", 1)
	assert.Len(t, e.srv.Requests(), 1, "the message waits for the hooks")
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	waitFor(stopped, 1)
	waitFor(running, 2) // the second turn's
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	waitFor(stopped, 2)
	require.NoError(t, in.Close())
	require.NoError(t, cmd.Wait(), "stderr:\n%s", stderr.String())
	assert.Equal(t, []string{"Start.", "Next."}, userMessages(e))
	assert.Contains(t, stdout.String(), "Next done.")
	assert.NotContains(t, stderr.String(), "quitting", "Ctrl-C stopped the hooks, not the session")
}

// TestHooksOneShotJSON: one-shot, the turn_end hooks run before the
// agent exits, and -json prints each as a "hook" event before the result.
func TestHooksOneShotJSON(t *testing.T) {
	t.Parallel()
	if sandboxErr != nil {
		sandboxtest.Unavailable(t, sandboxErr)
	}
	e := newEnv(t, fakellm.OpenAI, map[string]string{
		".agent/hooks.yaml": "turn_end:\n  - command: 'echo \"notified: $(head -c 200 | grep -o \"\\\"reply\\\":\\\"[^\\\"]*\\\"\")\"'\n",
	}, fakellm.Reply{Text: "All done."})
	r := e.run(t, "", "-p", "go", "-json")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.GreaterOrEqual(t, len(lines), 2)
	var hook map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-2]), &hook), lines[len(lines)-2])
	assert.Equal(t, map[string]any{"type": "hook", "event": "turn_end", "command": `echo "notified: $(head -c 200 | grep -o "\"reply\":\"[^\"]*\"")"`,
		"source": ".agent/hooks.yaml:2", "output": "notified: \"reply\":\"All done.\"\n"}, hook)
	assert.Contains(t, lines[len(lines)-1], `"type":"result"`)
}

// TestHooksFlag: -hooks user runs the user's hooks only, -hooks off
// none; a hooks file that cannot be parsed stops the agent before it
// sends anything, naming the place and the way out.
func TestHooksFlag(t *testing.T) {
	t.Parallel()
	if sandboxErr != nil {
		sandboxtest.Unavailable(t, sandboxErr)
	}
	refuseAll := "pre_tool:\n  - command: 'echo refused; exit 1'\n"
	for _, tt := range []struct {
		flag, want string
	}{
		{"all", agentexec.HookRefusedPrefix},
		{"user", "ran\n"},
		{"off", "ran\n"},
	} {
		t.Run(tt.flag, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, fakellm.Anthropic, map[string]string{".agent/hooks.yaml": refuseAll},
				fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "bash", Args: `{"command":"echo ran"}`}}},
				fakellm.Reply{Text: "Done."})
			r := e.run(t, "", "-p", "go", "-hooks", tt.flag)
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			res := resultsByID(e.srv.Requests()[1])["c1"]
			assert.True(t, strings.HasPrefix(res.Text, tt.want), res.Text)
			assert.Equal(t, tt.flag == "all", strings.Contains(r.stderr, "agent: hooks of .agent/hooks.yaml"), r.stderr)
		})
	}
	t.Run("sandbox off", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, fakellm.Anthropic, map[string]string{".agent/hooks.yaml": "pre_tool:\n  - command: 'true'\n"},
			fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "bash", Args: `{"command":"touch ran"}`}}},
			fakellm.Reply{Text: "Done."})
		r := e.run(t, "", "-p", "go", "-sandbox=off")
		require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
		assert.Contains(t, r.stderr, "agent: hooks of .agent/hooks.yaml (NOT RUN: hooks run only in the sandbox, which is off or unavailable; a pre_tool hook then refuses the calls it matches)")
		res := resultsByID(e.srv.Requests()[1])["c1"]
		assert.True(t, res.IsError)
		assert.Contains(t, res.Text, "it runs only in the sandbox")
		assert.NoFileExists(t, filepath.Join(e.ws, "ran"), "a guard that cannot run lets no call through")
	})
	t.Run("broken file", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, fakellm.Anthropic, map[string]string{".agent/hooks.yaml": "post_tool:\n  - comand: gofmt -w .\n"})
		r := e.run(t, "", "-p", "go")
		assert.Equal(t, exitUsage, r.code)
		assert.Contains(t, r.stderr, `agent: .agent/hooks.yaml:2:5: post_tool hook: unknown key "comand" (allowed: command, tools, timeout); fix it, or run with -hooks user or -hooks off`)
		assert.Empty(t, e.srv.Requests())
	})
}

// TestHooksBeforeApproval: under -approve untrusted, in a terminal, a
// call's pre_tool hooks run before the user is asked: a call a hook
// refuses is never asked about (the model reads the hook's refusal), and
// the question of a call its hook let through comes once the hook ran.
func TestHooksBeforeApproval(t *testing.T) {
	t.Parallel()
	if sandboxErr != nil {
		sandboxtest.Unavailable(t, sandboxErr)
	}
	e := newEnv(t, fakellm.OpenAI, map[string]string{
		".agent/hooks.yaml": "pre_tool:\n  - tools: [bash]\n" +
			"    command: 'if grep -q \"rm -rf\"; then echo \"refused: no rm -rf in this project\"; exit 1; fi; echo checked >> pre.log'\n",
		"build/keep.txt": "kept\n",
	},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			{ID: "c1", Name: "bash", Args: `{"command":"rm -rf build"}`},
			{ID: "c2", Name: "bash", Args: `{"command":"echo made > made.txt"}`},
		}},
		fakellm.Reply{Text: "Done."})
	s := startPTY(t, e, []string{"NO_COLOR=1"}, "-approve", "untrusted")
	s.waitScreen(t, "> ")
	s.typeKeys(t, "Clean up.\r")
	s.waitScreen(t, "? approve bash")
	s.waitScreen(t, "    $ echo made > made.txt") // the question's command, indented
	pre, err := os.ReadFile(filepath.Join(e.ws, "pre.log"))
	require.NoError(t, err, "the hook of the call asked about ran before the question; screen:\n%s", s.screen.String())
	assert.Equal(t, "checked\n", string(pre))
	assert.NoFileExists(t, filepath.Join(e.ws, "made.txt"), "the call waits for the answer")
	s.typeKeys(t, "y\r")
	s.waitTurnEnd(t)
	s.typeKeys(t, "\x04")
	require.Equal(t, 0, s.wait(t), "screen:\n%s", s.screen.String())

	screen := s.screen.String()
	assert.Equal(t, 1, strings.Count(screen, "? approve"), "the call the hook refused is not asked about:\n%s", screen)
	assert.NotContains(t, screen, "    $ rm -rf build", "no question shows the refused command")
	reqs := e.srv.Requests()
	require.Len(t, reqs, 2)
	res := resultsByID(reqs[1])
	assert.True(t, res["c1"].IsError)
	assert.Contains(t, res["c1"].Text, agentexec.HookRefusedPrefix)
	assert.Contains(t, res["c1"].Text, "refused: no rm -rf in this project")
	assert.FileExists(t, filepath.Join(e.ws, "build/keep.txt"), "the refused command never ran")
	assert.False(t, res["c2"].IsError, res["c2"].Text)
	assert.FileExists(t, filepath.Join(e.ws, "made.txt"))
	assert.Contains(t, eventLog(t, e), `"approval":"granted"`, "the call let through was approved")
}

// TestHooksNoteResumed: what the turn_end hooks gave after a session's
// last reply is saved with the thread, and a session resumed later sends
// it with its first message, typed or given with -p; the thread no
// longer holds it once it was sent.
func TestHooksNoteResumed(t *testing.T) {
	t.Parallel()
	if sandboxErr != nil {
		sandboxtest.Unavailable(t, sandboxErr)
	}
	for _, tt := range []struct {
		name  string
		stdin string
		args  []string
	}{
		{"typed", "Next.\n", nil},
		{"one-shot", "", []string{"-p", "Next."}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, fakellm.Anthropic, map[string]string{
				".agent/hooks.yaml": "turn_end:\n  - command: 'echo \"lint: a.go:1: 1 issue\"; exit 1'\n",
			}, fakellm.Reply{Text: "Done."}, fakellm.Reply{Text: "Fixed."})
			r := e.run(t, "", "-p", "Start.")
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			id := e.onlyThread(t)
			store, err := thread.NewStore(e.threads)
			require.NoError(t, err)
			th, err := store.Load(id)
			require.NoError(t, err)
			assert.Contains(t, th.HookNote, "lint: a.go:1: 1 issue", "the thread keeps the hooks' note")

			r = e.run(t, tt.stdin, append([]string{"-resume", id, "-hooks", "off"}, tt.args...)...)
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			assert.Contains(t, r.stderr, "what the end-of-turn hooks gave after the last reply goes to the model with your next message")
			reqs := e.srv.Requests()
			require.Len(t, reqs, 2)
			last := reqs[1].Messages[len(reqs[1].Messages)-1]
			assert.True(t, strings.HasPrefix(last.Text, "Next.\n\n[what the end-of-turn hooks gave after your last reply]\n"), last.Text)
			assert.Contains(t, last.Text, "lint: a.go:1: 1 issue")
			th, err = store.Load(id)
			require.NoError(t, err)
			assert.Empty(t, th.HookNote, "sent once")
		})
	}
}

// TestHooksNoteModel: /model typed while the turn_end hooks run waits
// for them, and the session on the new model sends what they gave with
// its first message.
func TestHooksNoteModel(t *testing.T) {
	t.Parallel()
	if sandboxErr != nil {
		sandboxtest.Unavailable(t, sandboxErr)
	}
	e := newEnv(t, fakellm.Anthropic, map[string]string{
		".agent/hooks.yaml": "turn_end:\n  - command: 'echo \"lint: a.go:1: 1 issue\"; exit 1'\n",
	}, fakellm.Reply{Text: "Done."}, fakellm.Reply{Text: "Fixed."})
	r := e.run(t, "Start.\n/model claude-haiku-4-5\nNext.\n")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Contains(t, r.stderr, "(anthropic claude-haiku-4-5 in ")
	assert.NotContains(t, r.stderr, "end-of-turn hooks stopped", "the switch waited for the hooks")
	reqs := e.srv.Requests()
	require.Len(t, reqs, 2)
	assert.Contains(t, string(reqs[1].Body), `"model":"claude-haiku-4-5"`)
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	assert.True(t, strings.HasPrefix(last.Text, "Next.\n\n[what the end-of-turn hooks gave after your last reply]\n"), last.Text)
	assert.Contains(t, last.Text, "lint: a.go:1: 1 issue")
}
