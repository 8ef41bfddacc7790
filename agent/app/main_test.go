package app

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/agent/internal/ledger"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox/sandboxtest"
	"github.com/fsmgen/fsmgen/agent/internal/thread"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/internal/gittest"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// update rewrites the recorded demo session from a fresh run.
var update = flag.Bool("update", false, "record the demo session again into "+demoLog)

// demoLog is the recorded demo session that ships with the runtime.
const demoLog = "testdata/demo/demo.events.jsonl"

// testKey is the API key of every test; it must never be written anywhere.
const testKey = "sk-test-SECRET-KEY-0a1b2c3d4e5f"

// agentBin is the agent binary built for the tests.
var agentBin string

// runLimit is how long a test lets a run of the agent take before it
// gives up on it: a bound on a hang, far above what a run takes on a
// loaded machine (the longest, TestLongSessionJournalGrowsLinearly's 500
// rounds, takes about 25 s on two busy cores). The tests wait as long
// for what a run shows them: a run on a machine loaded with other builds
// took more than 20 s to show the next line after a stopped turn.
const runLimit = 3 * time.Minute

// sandboxArgs are the flags every run of the agent gets about its
// sandbox: none where bubblewrap works (the agent runs as users run it),
// -sandbox=off where it does not (TestSandboxedBash is then skipped, or
// fails when FSMGEN_REQUIRE_SANDBOX=1).
var sandboxArgs []string

// sandboxErr says why bubblewrap does not work here; nil when it does.
var sandboxErr error

// goEnv is the environment the test binary started with, in which the
// tests run the go command: gittest.Isolate moves HOME, and with it the
// build and module caches go would find.
var goEnv []string

// TestMain builds the agent binary the tests run, and keeps the machine's
// git configuration out of every test (gittest.Isolate), so that the tests
// may run in parallel.
func TestMain(m *testing.M) {
	sandboxtest.Main() // the test binary's helper roles (a session keyring, a key reader)
	flag.Parse()
	goEnv = os.Environ()
	dir, err := os.MkdirTemp("", "agent-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	agentBin = filepath.Join(dir, "agent")
	build := exec.Command("go", "build", "-o", agentBin, "../../cmd/agent")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "build the agent: %v\n", err)
		os.Exit(1)
	}
	cleanup, err := gittest.Isolate()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// No config file of the user's reaches the tests run in-process.
	_ = os.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	if _, sandboxErr = sandbox.Detect(context.Background(), ""); sandboxErr != nil {
		sandboxArgs = []string{"-sandbox=off"}
	}
	code := m.Run()
	cleanup()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// env is a workspace, a threads directory and a fake LLM server.
type env struct {
	srv      *fakellm.Server
	provider fakellm.Provider
	ws       string
	threads  string
	cache    string // the agent's XDG_CACHE_HOME
}

func newEnv(t *testing.T, p fakellm.Provider, files map[string]string, replies ...fakellm.Reply) *env {
	t.Helper()
	e := &env{srv: fakellm.New(t, p, replies...), provider: p, ws: gittest.NewRepo(t, files), threads: filepath.Join(t.TempDir(), "threads"), cache: t.TempDir()}
	t.Cleanup(func() {
		if u := e.srv.Unexpected(); len(u) > 0 {
			t.Errorf("the agent made requests the test did not expect: %v", u)
		}
	})
	return e
}

// command returns the agent command with the env's flags and args.
func (e *env) command(ctx context.Context, args ...string) *exec.Cmd {
	base := append([]string{"-provider", string(e.provider), "-base-url", e.srv.BaseURL(), "-model", "fake-model",
		"-threads", e.threads, "-retry-delay", "1ms"}, sandboxArgs...)
	cmd := exec.CommandContext(ctx, agentBin, append(base, args...)...)
	cmd.Dir = e.ws
	cmd.Env = append(os.Environ(), "ANTHROPIC_API_KEY="+testKey, "OPENAI_API_KEY="+testKey,
		"ANTHROPIC_BASE_URL=", "OPENAI_BASE_URL=", "XDG_CACHE_HOME="+e.cache, "XDG_CONFIG_HOME="+e.configHome(),
		"XDG_STATE_HOME="+filepath.Join(e.cache, "state"))
	return cmd
}

// configHome is the agent's XDG_CONFIG_HOME: empty unless a test writes
// a config file or instructions there.
func (e *env) configHome() string { return filepath.Join(e.cache, "config") }

// result is how a run of the binary ended.
type result struct {
	code           int
	stdout, stderr string
}

// run runs the agent to its end with stdin as its input.
func (e *env) run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return e.runWith(t, stdin, nil, args...)
}

// runWith runs the agent to its end with stdin as its input and the
// variables extra added to its environment.
func (e *env) runWith(t *testing.T, stdin string, extra []string, args ...string) result {
	t.Helper()
	return e.runFor(t, runLimit, stdin, extra, args...)
}

// runFor is runWith, the agent given limit to finish.
func (e *env) runFor(t *testing.T, limit time.Duration, stdin string, extra []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := e.command(ctx, args...)
	cmd.Env = append(cmd.Env, extra...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "the agent did not finish in time; stderr:\n%s", stderr.String())
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// threadIDs lists the saved threads.
func (e *env) threadIDs(t *testing.T) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(e.threads, "*.journal"))
	require.NoError(t, err)
	var ids []string
	for _, p := range m {
		ids = append(ids, strings.TrimSuffix(filepath.Base(p), ".journal"))
	}
	return ids
}

// onlyThread returns the ID of the one saved thread.
func (e *env) onlyThread(t *testing.T) string {
	t.Helper()
	ids := e.threadIDs(t)
	require.Len(t, ids, 1, "threads: %v", ids)
	return ids[0]
}

// state loads the state a thread was saved in; nil if it has none yet.
func (e *env) state(t *testing.T, id string) agent.State {
	t.Helper()
	st, _, err := e.saved(id)
	require.NoError(t, err)
	return st
}

// saved loads thread id and the state it was saved in.
func (e *env) saved(id string) (agent.State, *threadwire.Thread, error) {
	store, err := thread.NewStore(e.threads)
	if err != nil {
		return nil, nil, err
	}
	th, err := store.Load(id)
	if err != nil {
		return nil, nil, err
	}
	st, err := agentexec.ThreadState(th)
	return st, th, err
}

// messages returns the conversation of a state as role: text lines.
func messages(st agent.State) []string {
	c, _ := agent.ConversationOf(st)
	var out []string
	for _, m := range c.Messages() {
		line := string(m.Role) + ": " + m.Content
		if m.IsError {
			line += " (error)"
		}
		out = append(out, line)
	}
	return out
}

// checkNoSecret fails if the API key is in any file of the threads directory.
func (e *env) checkNoSecret(t *testing.T) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(e.threads, "*"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, p := range files {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NotContains(t, string(b), testKey, "%s holds the API key", p)
	}
}

// replayExit runs "agent replay LOG" in-process.
func replayExit(t *testing.T, log string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"replay", log}, nil, &stdout, &stderr)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// TestOneShot runs "agent -p" against both providers: the reply on
// stdout, diagnostics on stderr, exit 1 when the turn fails.
func TestOneShot(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		replies  []fakellm.Reply
		args     []string
		wantCode int
		wantOut  string
		wantErr  []string // in stderr
		check    func(t *testing.T, e *env)
	}{
		{
			name: "a turn of two rounds",
			replies: []fakellm.Reply{
				{Text: "I'll create it.", ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "edit_file", Args: `{"path":"greeting.txt","old_str":"","new_str":"hello\n"}`}}},
				{Text: "Created greeting.txt."},
			},
			wantOut: "Created greeting.txt.\n", // the answer only, not the narration
			wantErr: []string{"→ edit_file", "✓ edit_file", "committed", "agent -resume"},
			check: func(t *testing.T, e *env) {
				assert.Equal(t, "hello\n", gittest.ReadFile(t, e.ws, "greeting.txt"))
				assert.Equal(t, "agent: Created greeting.txt.", gittest.Git(t, e.ws, "log", "-1", "--format=%s"))
			},
		},
		{
			name: "a retried fault prints the reply once",
			replies: []fakellm.Reply{
				{Text: "The answer is, hmm, let me see", CutAfter: 2},
				{Text: "The answer is 42."},
			},
			wantOut: "The answer is 42.\n",
			wantErr: []string{"! network", "retry 1 in 1ms"},
		},
		{
			name: "the commands the agent runs do not see the API key",
			replies: []fakellm.Reply{
				{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "bash", Args: `{"command":"echo \"key=[$ANTHROPIC_API_KEY$OPENAI_API_KEY]\"; tr '\\0' '\\n' < /proc/$PPID/environ | grep -c _API_KEY= || true"}`}}},
				{Text: "No key."},
			},
			wantOut: "No key.\n",
			check: func(t *testing.T, e *env) {
				reqs := e.srv.Requests()
				require.Len(t, reqs, 2)
				m := reqs[1].Messages
				require.Len(t, m, 3)
				assert.Equal(t, "key=[]\n0\n", m[2].Text, "neither the command's environment nor the agent's holds a key")
				for _, r := range reqs {
					assert.Contains(t, r.Header.Get("X-Api-Key")+r.Header.Get("Authorization"), testKey, "the agent still sends the key")
				}
			},
		},
		{
			name:     "a request that is not retried fails the turn",
			replies:  []fakellm.Reply{{Status: 401, ErrorMessage: "invalid x-api-key"}},
			wantCode: 1,
			wantErr:  []string{"error: LLM request failed", "not retried"},
		},
		{
			name:     "-max-retries 0 turns retries off",
			replies:  []fakellm.Reply{{Status: 500}},
			args:     []string{"-max-retries", "0"},
			wantCode: 1,
			wantErr:  []string{"error: LLM request failed", "retries are off"},
		},
		{
			name:     "retries used up fail the turn",
			replies:  []fakellm.Reply{{Status: 500}, {Status: 500}},
			args:     []string{"-max-retries", "1"},
			wantCode: 1,
			wantErr:  []string{"retry 1 in 1ms", "error: LLM request failed after 2 attempts"},
		},
	}
	for _, p := range []fakellm.Provider{fakellm.Anthropic, fakellm.OpenAI} {
		for _, tt := range tests {
			t.Run(string(p)+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, p, nil, tt.replies...)
				r := e.run(t, "", append(tt.args, "-p", "Do it.")...)
				assert.Equal(t, tt.wantCode, r.code, "stderr:\n%s", r.stderr)
				assert.Equal(t, tt.wantOut, r.stdout, "stderr:\n%s", r.stderr)
				for _, s := range tt.wantErr {
					assert.Contains(t, r.stderr, s)
				}
				assert.NotContains(t, r.stderr, testKey)
				if tt.check != nil {
					tt.check(t, e)
				}
				id := e.onlyThread(t)
				assert.IsType(t, agent.WaitingForUserInput{}, e.state(t, id))
				assert.Equal(t, 0, replayExit(t, filepath.Join(e.threads, id+".events.jsonl")).code)
				e.checkNoSecret(t)
			})
		}
	}
}

// TestInteractive types two messages at once: the second is queued while
// the first turn runs. Run with -update to record the demo session again.
func TestInteractive(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, map[string]string{"hello.txt": "Hello, world\n", "TODO": "Say goodbye in hello.txt too.\n"},
		fakellm.Reply{
			Text: "Let me read the TODO and the file.",
			ToolCalls: []fakellm.ToolCall{
				{ID: "toolu_01", Name: "read_file", Args: `{"path":"TODO"}`},
				{ID: "toolu_02", Name: "read_file", Args: `{"path":"hello.txt"}`},
			},
		},
		fakellm.Reply{Status: 529, ErrorMessage: "Overloaded"},
		fakellm.Reply{
			Text:      "Adding the goodbye.",
			ToolCalls: []fakellm.ToolCall{{ID: "toolu_03", Name: "edit_file", Args: `{"path":"hello.txt","old_str":"Hello, world\n","new_str":"Hello, world\nGoodbye, world\n"}`}},
		},
		fakellm.Reply{Text: "Done: hello.txt now says goodbye too."},
		fakellm.Reply{Text: "I added one line, \"Goodbye, world\", to hello.txt, and it was committed."},
	)
	r := e.run(t, "Do what the TODO says.\nWhat did you change?\n")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Equal(t, "Let me read the TODO and the file.\nAdding the goodbye.\nDone: hello.txt now says goodbye too.\n"+
		"I added one line, \"Goodbye, world\", to hello.txt, and it was committed.\n", r.stdout)
	for _, s := range []string{"queued", "→ read_file", "✓ edit_file", "! overloaded", "committed"} {
		assert.Contains(t, r.stderr, s)
	}
	assert.Equal(t, "Hello, world\nGoodbye, world\n", gittest.ReadFile(t, e.ws, "hello.txt"))

	id := e.onlyThread(t)
	assert.Equal(t, []string{
		"user: Do what the TODO says.",
		"assistant: Let me read the TODO and the file.",
		"tool: Say goodbye in hello.txt too.\n",
		"tool: Hello, world\n",
		"assistant: Adding the goodbye.",
		messages(e.state(t, id))[5],
		"assistant: Done: hello.txt now says goodbye too.",
		"user: What did you change?",
		"assistant: I added one line, \"Goodbye, world\", to hello.txt, and it was committed.",
	}, messages(e.state(t, id)))
	log := filepath.Join(e.threads, id+".events.jsonl")
	rr := replayExit(t, log)
	require.Equal(t, 0, rr.code, rr.stdout+rr.stderr)
	e.checkNoSecret(t)

	if *update {
		b, err := os.ReadFile(log)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(demoLog, b, 0o644))
		t.Logf("recorded %s", demoLog)
	}
}

// TestUsage checks that bad command lines exit 2 and say why.
func TestUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-p"}, "flag needs an argument"},
		{[]string{"-p", ""}, "non-empty prompt"},
		{[]string{"fix it", "-v"}, `unexpected argument "-v" after the prompt "fix it"; put the flags before the prompt`},
		{[]string{"-p", "x", "stray"}, "-p gives the prompt already"},
		{[]string{"-json"}, "-json applies to a one-shot run"},
		{[]string{"-p", "x", "replay", "log"}, "agent: -p does not apply to replay; only -v does"},
		{[]string{"-model", "x", "sessions"}, "agent: -model does not apply to sessions; only -config, -price and -threads do"},
		{[]string{"-max-retries", "-1"}, "agent: -max-retries must be 0 or more\n"},
		{[]string{"-retry-delay", "0"}, "agent: -retry-delay must be positive and at most 30s"},
		{[]string{"-retry-delay", "1m"}, "agent: -retry-delay must be positive and at most 30s"},
		{[]string{"-max-retries", "-1", "-retry-delay", "-1s"}, "-max-retries must be 0 or more\n-retry-delay must be positive"},
		{[]string{"-tool-timeout", "0"}, "agent: -tool-timeout must be positive"},
		{[]string{"-tool-calls=false", "-max-queries", "-1"}, "agent: -max-queries must be 0 or more\n"},
		{[]string{"-nope"}, "flag provided but not defined"},
		{[]string{"-llm-idle-timeout", "0"}, "agent: -llm-idle-timeout must be positive"},
		{[]string{"-parallel-tools", "0"}, "agent: -parallel-tools must be at least 1"},
		{[]string{"-max-edit-size", "huge"}, `invalid value "huge" for flag -max-edit-size: "huge" is not a size`},
		{[]string{"-price", "3"}, "agent: -price: price \"3\": want INPUT,OUTPUT"},
		{[]string{"-thinking", "500"}, "agent: -thinking must be 0 (off) or a budget of at least 1024 tokens"},
		{[]string{"-max-tokens", "-5"}, "agent: -max-tokens must be positive (or 0: the model's own limit)"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, nil, &stdout, &stderr)
			assert.Equal(t, exitUsage, code)
			assert.Contains(t, stderr.String(), tt.want)
		})
	}
}

// TestHelpNamesVariables checks that -h names the environment variables
// the agent reads, the API keys first.
func TestHelpNamesVariables(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 0, run(context.Background(), []string{"-h"}, nil, &stdout, &stderr))
	for _, want := range []string{"environment:\n  ANTHROPIC_API_KEY     the API key with -provider anthropic (the default)\n  OPENAI_API_KEY ",
		"FSMGEN_SERVER_TOKEN   the server's token, with -sync", "NO_COLOR", "XDG_CONFIG_HOME"} {
		assert.Contains(t, stderr.String(), want)
	}
}

// TestBehaviorConfig checks the behaviour's configuration the flags give:
// the defaults, changed by the flags only.
func TestBehaviorConfig(t *testing.T) {
	t.Parallel()
	specs := []chat.ToolSpec{{Name: "read_file"}}
	tests := []struct {
		args []string
		want func(c *behavior.Config)
	}{
		{nil, func(*behavior.Config) {}},
		{[]string{"-max-retries", "0"}, func(c *behavior.Config) { c.MaxRetries = 0 }},
		{[]string{"-max-retries", "5", "-retry-delay", "250ms"}, func(c *behavior.Config) { c.MaxRetries, c.BaseDelay = 5, 250*time.Millisecond }},
		{[]string{"-retry-delay", "30s"}, func(c *behavior.Config) { c.BaseDelay = 30 * time.Second }},
		{[]string{"-max-tokens", "3000", "-thinking", "2000"}, func(c *behavior.Config) { c.MaxTokens, c.Thinking = 3000, 2000 }},
		{[]string{"-tool-calls=false", "-max-queries", "3"}, func(c *behavior.Config) { c.System, c.Tools, c.MaxQueries = queryPrompt, nil, 3 }},
		{[]string{"-tool-calls=false", "-mode", "plan"}, func(c *behavior.Config) { c.System, c.Tools = queryPlanPrompt, nil }},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			var stderr bytes.Buffer
			o, code := parseFlags(tt.args, &stderr)
			require.Equal(t, -1, code, stderr.String())
			want := behavior.DefaultConfig()
			want.Model, want.System, want.Tools = "m", systemPrompt, specs
			want.MaxTokens = ledger.DefaultMaxOutput // "m"'s limits are not known
			tt.want(&want)
			got := behaviorConfig(o, "m", specs)
			assert.Equal(t, want, got)
			_, err := behavior.New(got)
			assert.NoError(t, err)
		})
	}
}

// TestResumeErrors resumes threads that cannot be.
func TestResumeErrors(t *testing.T) {
	threads := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-threads", threads, "-resume", "nope"}, strings.NewReader(""), &stdout, &stderr)
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr.String(), "thread not found")

	stderr.Reset()
	code = run(context.Background(), []string{"-threads", threads, "-resume", "../x"}, strings.NewReader(""), &stdout, &stderr)
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr.String(), "bad thread ID")
}

// TestDefaultThreadsDir follows XDG_DATA_HOME, else ~/.local/share.
func TestDefaultThreadsDir(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "/data")
	d, err := defaultThreadsDir()
	require.NoError(t, err)
	assert.Equal(t, "/data/fsmgen-agent/threads", d)

	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("HOME", "/home/u")
	d, err = defaultThreadsDir()
	require.NoError(t, err)
	assert.Equal(t, "/home/u/.local/share/fsmgen-agent/threads", d)
}
