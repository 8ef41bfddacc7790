package sandbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
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
	"github.com/fsmgen/fsmgen/agent/internal/redact"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox/sandboxtest"
)

func TestNetwork(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() { // accept and close, until the listener is closed
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	connect := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo connected", port)
	tests := []struct {
		v       variant
		network bool
		want    bool
	}{
		{v: off, want: true},
		{v: bwrap, want: false},
		{v: bwrap, network: true, want: true},
		{v: unprivileged, want: false},
		{v: unprivileged, network: true, want: true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/network=%t", tt.v.name, tt.network), func(t *testing.T) {
			f := newFixture(t, tt.v, sandbox.Options{Network: tt.network})
			out := f.bash(t, connect)
			if tt.want {
				assert.Equal(t, chat.ToolOutcome{Content: "connected\n"}, out)
				return
			}
			assert.True(t, out.IsError, out.Content)
			assert.Contains(t, out.Content, "Connection refused", "a loopback of its own, with nothing listening")
			out = f.bash(t, "cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '")
			assert.Equal(t, "lo\n", out.Content, "no interface but loopback")
		})
	}
}

func TestEnvironment(t *testing.T) {
	const (
		apiKey = "sk-ant-api03-planted-in-the-agent"
		other  = "value-the-redactor-knows-0123"
	)
	t.Setenv("ANTHROPIC_API_KEY", apiKey)
	t.Setenv("OPENAI_API_KEY", apiKey)
	t.Setenv("GITHUB_TOKEN", "ghp_plantedtoken")
	t.Setenv("DB_PASSWORD", "hunter2-planted")
	t.Setenv("LC_PAPER", other) // an allowed name, a secret value
	t.Setenv("GOPROXY", "https://user:pw-planted@proxy.example/")
	t.Setenv("FSMGEN_UNLISTED", "unlisted-planted")
	t.Setenv("FSMGEN_EXTRA", "extra-kept")
	t.Setenv("TZ", "UTC")
	t.Setenv("GOFLAGS", "-count=1")
	for _, v := range allVariants {
		t.Run(v.name, func(t *testing.T) {
			f := newFixture(t, v, sandbox.Options{Redactor: redact.New(apiKey, other), Env: []string{"FSMGEN_EXTRA"}})
			out := f.bash(t, "env")
			require.False(t, out.IsError, out.Content)
			for _, leak := range []string{apiKey, "ghp_planted", "hunter2", other, "pw-planted", "unlisted-planted", "ANTHROPIC_", "OPENAI_"} {
				assert.NotContains(t, out.Content, leak)
			}
			for _, kept := range []string{"FSMGEN_EXTRA=extra-kept", "TZ=UTC", "GOFLAGS=-count=1", "HOME=" + f.home, "PATH=", "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "PAGER=cat"} {
				assert.Contains(t, out.Content, kept)
			}
			if v.confined() {
				assert.Contains(t, out.Content, "TMPDIR=/tmp\n")
				require.NotEmpty(t, f.wsCache)
				assert.Contains(t, out.Content, "XDG_CACHE_HOME="+f.wsCache+"\n")
				assert.Contains(t, out.Content, "GOCACHE="+filepath.Join(f.wsCache, "go-build")+"\n")
				for _, v := range []string{"GOMODCACHE=" + filepath.Join(f.wsCache, "go-mod"), "npm_config_cache=" + filepath.Join(f.wsCache, "npm"),
					"PIP_CACHE_DIR=" + filepath.Join(f.wsCache, "pip"), "CARGO_HOME=" + filepath.Join(f.wsCache, "cargo")} {
					assert.Contains(t, out.Content, v+"\n", "the toolchains' caches are the workspace's")
				}
				assert.Contains(t, out.Content, "GOPROXY="+"https://proxy.golang.org,direct\n", "the planted proxy, which holds a password, is not kept")
			}
		})
	}
}

// helper starts the test binary as a helper agent running command through
// its bash tool in f's workspace, with secret in the helper's own (initial)
// environment, and returns the helper and a channel of its output.
func (f *fixture) helper(t *testing.T, command, secret string) (*exec.Cmd, <-chan string) {
	t.Helper()
	cmd := f.helperCmd(t, command, secret)
	return cmd, f.startHelper(t, cmd)
}

// helperCmd returns the command of a helper agent (see helper), not
// started.
func (f *fixture) helperCmd(t *testing.T, command, secret string) *exec.Cmd {
	t.Helper()
	var bwrapPath string
	if f.v.unprivileged {
		bwrapPath = filepath.Join(f.base, "bwrap-as-nobody")
	}
	spec, err := json.Marshal(helperSpec{Mode: f.v.mode, Bwrap: bwrapPath, Workspace: f.ws, Cache: f.cache, Command: command})
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+string(spec), "ANTHROPIC_API_KEY="+secret)
	return cmd
}

// startHelper starts cmd, a helper agent, and returns a channel of its
// output.
func (f *fixture) startHelper(t *testing.T, cmd *exec.Cmd) <-chan string {
	t.Helper()
	outc := make(chan string, 1)
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = pw, pw
	require.NoError(t, cmd.Start())
	pw.Close()
	go func() {
		defer pr.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := pr.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		outc <- b.String()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return outc
}

// TestAgentIsOutOfReach runs a command from a helper agent whose own
// environment holds a key, and looks for the key, and the agent, from the
// command in every way it can.
func TestAgentIsOutOfReach(t *testing.T) {
	const secret = "sk-ant-api03-in-the-agents-own-environ"
	command := strings.Join([]string{
		"cat /proc/$PPID/environ",
		"cat /proc/{agent}/environ /proc/{agent}/cmdline",
		"for p in /proc/[0-9]*; do cat $p/environ $p/cmdline; echo; done",
		"env",
		"ps -eo pid,args 2>/dev/null",
		"kill -0 {agent} 2>/dev/null && echo signalled-$((40+2))", // the command line shows in /proc: no literal answers
		"test -e /proc/{agent} && echo seen-$((40+2))",
		"true",
	}, "; ")
	for _, v := range allVariants {
		t.Run(v.name, func(t *testing.T) {
			f := newFixture(t, v, sandbox.Options{})
			cmd, outc := f.helper(t, command, secret)
			out := <-outc
			require.NoError(t, cmd.Wait(), out)
			if !v.confined() {
				assert.Contains(t, out, secret, "unconfined, the agent's environment is readable")
				assert.Contains(t, out, "signalled-42")
				return
			}
			assert.NotContains(t, out, secret)
			assert.NotContains(t, out, "signalled-42")
			assert.NotContains(t, out, "seen-42")
		})
	}
}

// TestEverythingDiesWithTheAgent kills a helper agent while its command
// runs, with processes in the background that left the command's session:
// they must all die with it.
func TestEverythingDiesWithTheAgent(t *testing.T) {
	for _, v := range confined {
		t.Run(v.name, func(t *testing.T) {
			f := newFixture(t, v, sandbox.Options{})
			marker := fmt.Sprintf("fsmgen-sandbox-test-%d", time.Now().UnixNano())
			sandboxtest.KillAtCleanup(t, marker)
			loop := fmt.Sprintf(": %s; while :; do date >> beat; sleep 0.05; done", marker)
			command := fmt.Sprintf("setsid sh -c '%[1]s' & set -m; (%[1]s) & while [ ! -s beat ]; do sleep 0.01; done; touch ready; sleep 60", loop)
			cmd, _ := f.helper(t, command, "none")
			require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(f.ws, "ready")); return err == nil },
				20*time.Second, 10*time.Millisecond, "the command never got ready")
			require.NotEmpty(t, sandboxtest.Processes(marker))
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			_ = cmd.Wait()
			assert.Eventually(t, func() bool { return len(sandboxtest.Processes(marker)) == 0 }, 10*time.Second, 10*time.Millisecond,
				"processes outlived the agent: %v", sandboxtest.Processes(marker))
			beat := filepath.Join(f.ws, "beat")
			fi, err := os.Stat(beat)
			require.NoError(t, err)
			time.Sleep(200 * time.Millisecond) // four beats, were anything left beating
			fi2, err := os.Stat(beat)
			require.NoError(t, err)
			assert.Equal(t, fi.Size(), fi2.Size(), "the beat file still grows")
		})
	}
}

func TestGoBuildsInside(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not installed")
	}
	for _, v := range confined {
		t.Run(v.name, func(t *testing.T) {
			f := newFixture(t, v, sandbox.Options{})
			// A package that imports nothing builds in a moment even with an
			// empty cache (go vet or go test would build the standard library
			// first: seconds).
			files := map[string]string{
				"go.mod":  "module example.com/tiny\n\ngo 1.22\n",
				"tiny.go": "package tiny\n\n// Answer is the answer.\nfunc Answer() int { return 42 }\n",
			}
			for name, content := range files {
				require.NoError(t, os.WriteFile(filepath.Join(f.ws, name), []byte(content), 0o666))
			}
			out := f.bash(t, "go env GOCACHE && go build ./... && echo built")
			if v.unprivileged && out.IsError && strings.Contains(out.Content, "permission denied") {
				t.Skipf("go cannot run as nobody here (its GOROOT or GOPATH is private): %s", out.Content)
			}
			require.False(t, out.IsError, out.Content)
			assert.Equal(t, filepath.Join(f.wsCache, "go-build")+"\nbuilt\n", out.Content)
			entries, err := os.ReadDir(filepath.Join(f.wsCache, "go-build"))
			require.NoError(t, err)
			assert.NotEmpty(t, entries, "the build cache persists outside the sandbox")
		})
	}
}

// TestConcurrentCalls runs calls in parallel through one sandbox, as the
// agent runs the calls of one round.
func TestConcurrentCalls(t *testing.T) {
	for _, v := range []variant{off, bwrap} {
		t.Run(v.name, func(t *testing.T) {
			f := newFixture(t, v, sandbox.Options{})
			const n = 8
			outs := make(chan chat.ToolOutcome, n)
			for i := range n {
				raw, err := json.Marshal(map[string]string{"command": fmt.Sprintf("echo %d > out-%d.txt && cat out-%d.txt", i, i, i)})
				require.NoError(t, err)
				go func() {
					outs <- f.set.Run(context.Background(), chat.ToolCall{Name: "bash", Arguments: raw}, nil)
				}()
			}
			var got []string
			for range n {
				out := <-outs
				assert.False(t, out.IsError, out.Content)
				got = append(got, strings.TrimSpace(out.Content))
			}
			assert.ElementsMatch(t, []string{"0", "1", "2", "3", "4", "5", "6", "7"}, got)
			for i := range n {
				assert.FileExists(t, filepath.Join(f.ws, fmt.Sprintf("out-%d.txt", i)))
			}
		})
	}
}

// TestKeyringIsOutOfReach runs a command from a helper agent whose
// session keyring holds a key (as a user's login session can), and tries
// to read the key as `keyctl search` and `keyctl read` would: the kernel
// keyring is not namespaced, so only the seccomp filter stands between
// the command and the key.
func TestKeyringIsOutOfReach(t *testing.T) {
	const desc, payload = "fsmgen-sandbox-test", "KEYRING-SECRET-0a1b2c3d"
	for _, v := range allVariants {
		t.Run(v.name, func(t *testing.T) {
			f := newFixture(t, v, sandbox.Options{})
			cmd := f.helperCmd(t, sandboxtest.KeyReader(t, f.base, desc), "none")
			sandboxtest.WithSessionKey(t, cmd, desc, payload)
			outc := f.startHelper(t, cmd)
			out := <-outc
			require.NoError(t, cmd.Wait(), out)
			if !v.confined() {
				assert.Contains(t, out, payload, "unconfined, the session's keys are readable")
				return
			}
			assert.NotContains(t, out, payload)
			assert.Contains(t, out, "keyring: search: operation not permitted")
		})
	}
}
