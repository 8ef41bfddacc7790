package tools

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
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox/sandboxtest"
)

// newWorkspace returns a workspace in a fresh temporary directory.
func newWorkspace(t *testing.T) *Workspace {
	t.Helper()
	ws, err := NewWorkspace(t.TempDir())
	require.NoError(t, err)
	return ws
}

// modes are the sandbox modes the bash tool's tests run in.
var modes = []sandbox.Mode{sandbox.Off, sandbox.Bwrap}

// bashSet returns the default tools in ws with the bash tool confined as
// mode says (skipping the test in mode bwrap where bubblewrap cannot run,
// unless FSMGEN_REQUIRE_SANDBOX=1).
func bashSet(t *testing.T, mode sandbox.Mode, ws *Workspace, opt Options) *Set {
	t.Helper()
	opt.Sandbox = sandboxtest.New(t, sandbox.Options{Mode: mode})
	return Default(ws, opt)
}

func TestBash(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		command  string
		want     string // exact content, when set
		contains []string
		wantErr  bool
	}{
		{name: "stdout", command: "echo hello", want: "hello\n"},
		{name: "stdout and stderr combined", command: "echo out; echo err >&2; echo out2", want: "out\nerr\nout2\n"},
		{name: "runs in the workspace root", command: "pwd; ls", want: "{root}\nhere.txt\n"},
		{name: "no output", command: "true", want: "(no output)"},
		{name: "stdin is empty", command: "cat; echo done", want: "done\n"},
		{name: "non-zero exit", command: "echo failing; exit 3", wantErr: true, want: "command exited with status 3\n\nfailing\n"},
		{name: "killed by a signal", command: "kill -TERM $$", wantErr: true, contains: []string{"killed by signal terminated"}},
		{
			name: "output is capped", command: "for i in $(seq 1 500); do echo line$i; done",
			contains: []string{"line1\n", "line500\n", "output cut: 3892 bytes in total", "showing the first 500 and the last 500 bytes"},
		},
		{name: "empty command", command: "  ", wantErr: true, contains: []string{"command is empty"}},
		{name: "git never prompts and nothing pages", command: "echo $GIT_TERMINAL_PROMPT $GIT_PAGER $PAGER", want: "0 cat cat\n"},
		// Field 7 of /proc/PID/stat is the controlling terminal, 0 for none.
		{name: "no controlling terminal", command: "cut -d' ' -f7 /proc/self/stat; tty; echo hi > /dev/tty", wantErr: true, contains: []string{"\n\n0\nnot a tty\n", "/dev/tty: No such device or address"}},
	}
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			ws := newWorkspace(t)
			require.NoError(t, os.WriteFile(filepath.Join(ws.Root(), "here.txt"), []byte("x"), 0o644))
			s := bashSet(t, mode, ws, Options{BashOutputLimit: 1000})
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					t.Parallel()
					out := call(t, s, "bash", obj{"command": tt.command})
					assert.Equal(t, tt.wantErr, out.IsError, out.Content)
					if tt.want != "" {
						assert.Equal(t, strings.ReplaceAll(tt.want, "{root}", ws.Root()), out.Content)
					}
					for _, c := range tt.contains {
						assert.Contains(t, out.Content, c)
					}
				})
			}
		})
	}
}

// TestBashOwnSession checks that a command runs in a session of its own,
// away from the agent's and so from its terminal, if it has one (the
// sandbox's tests run an agent on a terminal).
func TestBashOwnSession(t *testing.T) {
	t.Parallel()
	self, err := os.ReadFile("/proc/self/stat")
	require.NoError(t, err)
	mySession := statField(t, string(self), 6)
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			ws := newWorkspace(t)
			s := bashSet(t, mode, ws, Options{})
			out := call(t, s, "bash", obj{"command": "cat /proc/self/stat"})
			require.False(t, out.IsError, out.Content)
			assert.NotEqual(t, mySession, statField(t, out.Content, 6), "the command's session is the agent's")
			assert.Equal(t, "0", statField(t, out.Content, 7), "the command has a controlling terminal")
		})
	}
}

// statField returns field n (from 1) of a /proc/PID/stat line.
func statField(t *testing.T, stat string, n int) string {
	t.Helper()
	// The command name, field 2, is in parentheses and may hold spaces.
	i := strings.LastIndexByte(stat, ')')
	require.Positive(t, i, stat)
	fields := strings.Fields(stat[i+1:])
	require.Greater(t, len(fields), n-3, stat)
	return fields[n-3]
}

func TestBashArguments(t *testing.T) {
	t.Parallel()
	s := Default(newWorkspace(t), Options{})
	tests := []struct {
		name, raw, wantErr string
	}{
		{"missing command", `{}`, `missing required field "command"`},
		{"unknown field", `{"command": "true", "timeout": 5}`, `unknown field "timeout"`},
		{"wrong type", `{"command": ["ls"]}`, "invalid arguments"},
		{"malformed JSON", `{"command": "ls"`, "invalid arguments"},
		{"trailing data", `{"command": "ls"} {}`, "extra data after the JSON object"},
		{"not an object", `"ls"`, "expected a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := s.Run(context.Background(), chat.ToolCall{Name: "bash", Arguments: json.RawMessage(tt.raw)}, nil)
			assert.True(t, out.IsError, out.Content)
			assert.Contains(t, out.Content, tt.wantErr)
		})
	}
}

// TestBashDefaultSandbox checks that the bash tool of Default without a
// sandbox is confined (mode auto), never run unconfined.
func TestBashDefaultSandbox(t *testing.T) {
	t.Parallel()
	if _, err := sandbox.Detect(context.Background(), ""); err != nil {
		sandboxtest.Unavailable(t, err)
	}
	s := Default(newWorkspace(t), Options{})
	// A confined command has no capabilities and its own PID namespace,
	// where it is not far from pid 1.
	out := call(t, s, "bash", obj{"command": "grep CapEff /proc/self/status; echo $$"})
	require.False(t, out.IsError, out.Content)
	assert.Regexp(t, `^CapEff:\s+0+\n[2-9]\n$`, out.Content)
}

// TestBashDisabled checks that in mode auto without a working bubblewrap
// every call fails saying why, and the tool's description says so.
func TestBashDisabled(t *testing.T) {
	t.Parallel()
	sb, err := sandbox.New(context.Background(), sandbox.Options{Mode: sandbox.Auto, Bwrap: filepath.Join(t.TempDir(), "no-bwrap")})
	require.NoError(t, err)
	require.Error(t, sb.Disabled())
	ws := newWorkspace(t)
	s := Default(ws, Options{Sandbox: sb})
	out := call(t, s, "bash", obj{"command": "touch ran"})
	assert.True(t, out.IsError)
	assert.Contains(t, out.Content, "bash is disabled because its sandbox is unavailable: bubblewrap is not installed")
	assert.Contains(t, out.Content, "-sandbox=off")
	assert.NoFileExists(t, filepath.Join(ws.Root(), "ran"))
	assert.True(t, strings.HasPrefix(s.Specs()[0].Description, "This tool is disabled here"), s.Specs()[0].Description)
}

func TestBashSpecDescribesTheSandbox(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		opt           sandbox.Options
		want, wantNot []string
	}{
		{
			name: "confined",
			opt:  sandbox.Options{Mode: sandbox.Bwrap},
			want: []string{"runs in a sandbox", "write only inside the workspace", "home directory is empty", "reads as a notice", ".git is read-only", "no network access",
				"limited (1 GiB of memory per process, 1024 processes, 10m0s of CPU per process, files up to 1 GiB, a /tmp of 512 MiB, 1 GiB written to the disk per command); a limit reached is said first", "including background ones, is killed"},
			wantNot: []string{"disabled", "Network access is allowed"},
		},
		{
			name:    "confined with network",
			opt:     sandbox.Options{Mode: sandbox.Bwrap, Network: true},
			want:    []string{"runs in a sandbox", "Network access is allowed"},
			wantNot: []string{"no network access"},
		},
		{
			name:    "off",
			opt:     sandbox.Options{Mode: sandbox.Off},
			want:    []string{"including background ones, is killed"},
			wantNot: []string{"sandbox", "network"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sb := sandboxtest.New(t, tt.opt)
			desc := Bash(newWorkspace(t), BashOptions{Sandbox: sb}).Spec().Description
			for _, w := range tt.want {
				assert.Contains(t, desc, w)
			}
			for _, w := range tt.wantNot {
				assert.NotContains(t, desc, w)
			}
		})
	}
}

// beatCommand starts, in the way how says, a background shell that
// appends to the file beat in the workspace every 50ms, and waits for its
// first beat; marker, in the shell's command line, lets the test find
// every process of the command from outside.
func beatCommand(how, marker string) string {
	loop := fmt.Sprintf(": %s; while :; do date >> beat; sleep 0.05; done", marker)
	switch how {
	case "setsid":
		loop = fmt.Sprintf("setsid sh -c '%s' &", loop)
	case "set -m":
		loop = fmt.Sprintf("set -m; (%s) &", loop)
	default:
		loop = fmt.Sprintf("sh -c '%s' &", loop)
	}
	return loop + "\nwhile [ ! -s beat ]; do sleep 0.01; done"
}

// assertAllGone waits until no process of the command marked by marker is
// left, then checks that the beat file stopped growing.
func assertAllGone(t *testing.T, marker, beat string) {
	t.Helper()
	assert.Eventually(t, func() bool { return len(sandboxtest.Processes(marker)) == 0 }, 10*time.Second, 10*time.Millisecond,
		"processes of the command outlived the call: %v", sandboxtest.Processes(marker))
	fi, err := os.Stat(beat)
	require.NoError(t, err)
	time.Sleep(200 * time.Millisecond) // four beats, were anything left beating
	fi2, err := os.Stat(beat)
	require.NoError(t, err)
	assert.Equal(t, fi.Size(), fi2.Size(), "the beat file still grows")
}

func TestBashKillsEverythingItStarted(t *testing.T) {
	t.Parallel()
	type test struct {
		mode sandbox.Mode
		how  string // how the background process is started
		end  string // how the call ends: done, timeout or cancel
	}
	var tests []test
	for _, mode := range modes {
		for _, how := range []string{"&", "setsid", "set -m"} {
			if mode == sandbox.Off && how != "&" {
				continue // a process that leaves the group escapes without the sandbox, as documented
			}
			for _, end := range []string{"done", "timeout", "cancel"} {
				tests = append(tests, test{mode, how, end})
			}
		}
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s/%s", tt.mode, tt.how, tt.end), func(t *testing.T) {
			t.Parallel() // each waits seconds for a timeout or for processes to die
			ws := newWorkspace(t)
			timeout := time.Minute
			if tt.end == "timeout" {
				timeout = 2 * time.Second
			}
			s := bashSet(t, tt.mode, ws, Options{Timeout: timeout})
			marker := fmt.Sprintf("fsmgen-bash-test-%d", time.Now().UnixNano())
			sandboxtest.KillAtCleanup(t, marker)
			command := beatCommand(tt.how, marker) + "\necho started; touch ready"
			if tt.end != "done" {
				command += "; sleep 30"
			}
			raw, err := json.Marshal(obj{"command": command})
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()

			done := make(chan chat.ToolOutcome, 1)
			go func() { done <- s.Run(ctx, chat.ToolCall{Name: "bash", Arguments: raw}, nil) }()
			ready := filepath.Join(ws.Root(), "ready")
			require.Eventually(t, func() bool { _, err := os.Stat(ready); return err == nil }, 10*time.Second, 10*time.Millisecond,
				"the command never got ready")
			if tt.end == "cancel" {
				cancel()
			}
			var out chat.ToolOutcome
			select {
			case out = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("Run did not return")
			}
			switch tt.end {
			case "done":
				assert.Equal(t, chat.ToolOutcome{Content: "started\n"}, out)
			case "timeout":
				assert.True(t, out.IsError, out.Content)
				assert.Contains(t, out.Content, "bash command ")
				assert.Contains(t, out.Content, " timed out after 2s, the time limit of one tool call, and was stopped; the user can raise the limit with the agent's -tool-timeout flag")
			case "cancel":
				assert.True(t, out.IsError, out.Content)
				assert.Contains(t, out.Content, "was cancelled")
			}
			if tt.end != "done" {
				killed := "every process it started was killed"
				if tt.mode == sandbox.Off {
					killed = "process group was killed"
				}
				assert.Contains(t, out.Content, killed)
				assert.Contains(t, out.Content, "started")
			}
			assertAllGone(t, marker, filepath.Join(ws.Root(), "beat"))
		})
	}
}

func TestBashReportsProgress(t *testing.T) {
	t.Parallel()
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			ws := newWorkspace(t)
			s := bashSet(t, mode, ws, Options{ProgressEvery: 50 * time.Millisecond})
			var (
				mu      sync.Mutex
				reports []chat.ToolProgress
			)
			progress := func(p chat.ToolProgress) {
				mu.Lock()
				defer mu.Unlock()
				reports = append(reports, p)
			}
			// The command waits for a gate file, so the test decides when it
			// ends instead of racing a sleep. The gate is in the workspace,
			// which the sandbox shares with the test.
			raw, err := json.Marshal(obj{"command": "echo a; echo b; while [ ! -e gate ]; do sleep 0.01; done; echo c"})
			require.NoError(t, err)
			done := make(chan chat.ToolOutcome, 1)
			go func() { done <- s.Run(context.Background(), chat.ToolCall{Name: "bash", Arguments: raw}, progress) }()

			sawTwoLines := func() bool {
				mu.Lock()
				defer mu.Unlock()
				for _, p := range reports {
					if p.UnitsProcessed == 2 {
						return true
					}
				}
				return false
			}
			require.Eventually(t, sawTwoLines, 20*time.Second, 10*time.Millisecond, "a progress report counting the two lines printed so far")
			require.NoError(t, os.WriteFile(filepath.Join(ws.Root(), "gate"), nil, 0o644))
			out := <-done
			require.False(t, out.IsError, out.Content)
			assert.Equal(t, "a\nb\nc\n", out.Content)

			mu.Lock()
			defer mu.Unlock()
			for _, p := range reports {
				if p.UnitsProcessed == 2 {
					assert.Regexp(t, `^running \d+s, 2 lines of output$`, p.Message)
					assert.Equal(t, "a\nb\n", p.Output, "the lines so far")
				}
				assert.LessOrEqual(t, p.UnitsProcessed, int64(3))
			}
		})
	}
}

// TestBashStreamsOutput checks that a running command's last lines are
// reported as they come, long before its progress interval: a line being
// written last, a line a carriage return rewrites as it last was.
func TestBashStreamsOutput(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t)
	s := bashSet(t, sandbox.Bwrap, ws, Options{ProgressEvery: time.Hour})
	outputs := make(chan string, 100)
	progress := func(p chat.ToolProgress) {
		select {
		case outputs <- p.Output:
		default:
		}
	}
	raw, err := json.Marshal(obj{"command": `for i in 1 2 3 4 5 6 7; do echo line $i; done; printf '10%%\r50%%'; while [ ! -e gate ]; do sleep 0.01; done`})
	require.NoError(t, err)
	done := make(chan chat.ToolOutcome, 1)
	go func() { done <- s.Run(context.Background(), chat.ToolCall{Name: "bash", Arguments: raw}, progress) }()
	for out := range outputs {
		if strings.HasSuffix(out, "50%") {
			assert.Equal(t, "line 4\nline 5\nline 6\nline 7\n50%", out)
			break
		}
	}
	require.NoError(t, os.WriteFile(filepath.Join(ws.Root(), "gate"), nil, 0o644))
	out := <-done
	require.False(t, out.IsError, out.Content)
}

// BenchmarkBash measures a call of the bash tool running `true`, confined
// and not: the sandbox's cost per call.
func BenchmarkBash(b *testing.B) {
	for _, mode := range modes {
		b.Run(string(mode), func(b *testing.B) {
			ws, err := NewWorkspace(b.TempDir())
			require.NoError(b, err)
			s := Default(ws, Options{Sandbox: sandboxtest.New(b, sandbox.Options{Mode: mode})})
			call := chat.ToolCall{Name: "bash", Arguments: json.RawMessage(`{"command": "true"}`)}
			for b.Loop() {
				if out := s.Run(context.Background(), call, nil); out.IsError {
					b.Fatal(out.Content)
				}
			}
		})
	}
}

func TestCappedBuffer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		limit  int
		writes []string
		want   string
	}{
		{name: "under the limit", limit: 10, writes: []string{"abc", "def"}, want: "abcdef"},
		{name: "exactly the limit", limit: 10, writes: []string{"0123456789"}, want: "0123456789"},
		{
			name: "over the limit in small writes", limit: 6, writes: []string{"ab", "cd", "ef", "gh", "ij", "kl", "mn"},
			want: "abc\n[... output cut: 14 bytes in total, the 8 bytes in the middle were dropped; showing the first 3 and the last 3 bytes ...]\nlmn",
		},
		{
			name: "over the limit in one write", limit: 4, writes: []string{"abcdefghij"},
			want: "ab\n[... output cut: 10 bytes in total, the 6 bytes in the middle were dropped; showing the first 2 and the last 2 bytes ...]\nij",
		},
		{
			name: "tail not yet trimmed", limit: 10, writes: []string{"01234", "56789ab"},
			want: "01234\n[... output cut: 12 bytes in total, the 2 bytes in the middle were dropped; showing the first 5 and the last 5 bytes ...]\n789ab",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := newCappedBuffer(tt.limit)
			for _, w := range tt.writes {
				n, err := b.Write([]byte(w))
				require.NoError(t, err)
				require.Equal(t, len(w), n)
			}
			assert.Equal(t, tt.want, b.String())
		})
	}
}
