package app

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/agent/internal/progpath"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox/sandboxtest"
	"github.com/fsmgen/fsmgen/internal/gittest"
	"github.com/fsmgen/fsmgen/internal/proctest"
)

// plantScript is a program that leaves a file named after itself in
// markers when it runs, and fails. markers is outside /tmp and the
// workspace: run confined, the program could not write there; only a run
// on the host leaves the file.
func plantScript(markers, name string) string {
	return "#!/bin/sh\ntouch '" + filepath.Join(markers, name) + "'\nexit 1\n"
}

// plant writes the program name that plantScript makes into dir.
func plant(t *testing.T, dir, markers, name string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(plantScript(markers, name)), 0o755))
}

// ranOnHost returns the planted programs that ran on the host.
func ranOnHost(t *testing.T, markers string) []string {
	t.Helper()
	entries, err := os.ReadDir(markers)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// skippedLine is the start banner's line for the workspace's .venv/bin
// first on PATH.
func skippedLine(ws string) string {
	return "agent: PATH: the agent runs no program from " + ws + "/.venv/bin (inside the workspace " + ws + ", which the model's commands write)"
}

// TestPlantedProgramsNotRun (issue 29 item 1): with a directory of the
// workspace first on PATH (an activated .venv), a program of the same
// name as one the agent runs on the host, planted there before the
// session or by the model's bash during it, is never run on the host:
// git (the turn's commit, /undo), bubblewrap, bash with the sandbox off,
// an MCP server's command and the environment query's toolchains are
// found outside the workspace, and the start banner names the directory
// skipped and why.
func TestPlantedProgramsNotRun(t *testing.T) {
	t.Parallel()
	toolchains := []string{"go", "git", "make", "gcc", "node", "python3", "rustc", "cargo", "java"}
	tests := []struct {
		name string
		// confined says the case needs a working sandbox.
		confined bool
		args     []string
		input    string
		// before plants programs in the workspace's bin (ws/.venv/bin)
		// and writes the config file; replies are the model's.
		before  func(t *testing.T, e *env, bin, markers string)
		replies func(t *testing.T, markers string) []fakellm.Reply
		check   func(t *testing.T, e *env, res result)
	}{
		{
			name:  "git, planted by bash during the session: the commit and /undo",
			input: "Add a line.\n/undo\n",
			replies: func(t *testing.T, markers string) []fakellm.Reply {
				script := strings.ReplaceAll(plantScript(markers, "git"), "\n", `\n`)
				return []fakellm.Reply{
					bashCalls(t, "mkdir -p .venv/bin && printf '"+script+"' > .venv/bin/git && chmod +x .venv/bin/git && echo planted"),
					addLine,
					{Text: "Added a line."},
				}
			},
			check: func(t *testing.T, e *env, res result) {
				require.Equal(t, 0, res.code, res.stderr)
				assert.Equal(t, "planted\n", toolResults(t, e)["c_0"], "bash planted the program")
				assert.FileExists(t, filepath.Join(e.ws, ".venv", "bin", "git"))
				assert.Contains(t, res.stderr, "reverted the turn's commit")
				assert.Equal(t, "agent: undo Added a line.\nagent: Added a line.\ninitial", gittest.Git(t, e.ws, "log", "--format=%s"))
			},
		},
		{
			name:     "bubblewrap and git, planted before the session",
			confined: true,
			args:     []string{"-p", "Say hi."},
			before: func(t *testing.T, e *env, bin, markers string) {
				plant(t, bin, markers, "bwrap")
				plant(t, bin, markers, "git")
			},
			replies: func(t *testing.T, markers string) []fakellm.Reply {
				return []fakellm.Reply{bashCalls(t, "echo hi > said.txt && cat said.txt"), {Text: "Said hi."}}
			},
			check: func(t *testing.T, e *env, res result) {
				require.Equal(t, 0, res.code, res.stderr)
				assert.Contains(t, res.stderr, "agent: bash sandbox: bubblewrap")
				assert.Equal(t, "hi\n", toolResults(t, e)["c_0"])
				assert.Equal(t, "agent: Said hi.", gittest.Git(t, e.ws, "log", "-1", "--format=%s"))
			},
		},
		{
			name: "bash with the sandbox off",
			args: []string{"-sandbox=off", "-p", "Say hi."},
			before: func(t *testing.T, e *env, bin, markers string) {
				plant(t, bin, markers, "bash")
			},
			replies: func(t *testing.T, markers string) []fakellm.Reply {
				return []fakellm.Reply{bashCalls(t, "echo hi"), {Text: "Said hi."}}
			},
			check: func(t *testing.T, e *env, res result) {
				require.Equal(t, 0, res.code, res.stderr)
				assert.Equal(t, "hi\n", toolResults(t, e)["c_0"])
			},
		},
		{
			name: "an MCP server's command: the one outside the workspace started",
			args: []string{"-p", "Say hi."},
			before: func(t *testing.T, e *env, bin, markers string) {
				server, err := mcpServerBin()
				require.NoError(t, err)
				plant(t, bin, markers, filepath.Base(server))
				e.writeConfig(t, "mcp_servers:\n  test:\n    command: ["+filepath.Base(server)+"]\n    expose: ["+filepath.Dir(server)+"]\n")
			},
			replies: func(t *testing.T, markers string) []fakellm.Reply {
				return []fakellm.Reply{{ToolCalls: []fakellm.ToolCall{{ID: "c_0", Name: "mcp__test__say", Args: `{}`}}}, {Text: "Said hi."}}
			},
			check: func(t *testing.T, e *env, res result) {
				require.Equal(t, 0, res.code, res.stderr)
				assert.Contains(t, res.stderr, "agent: MCP server test (")
				assert.Equal(t, "hello from mcp", toolResults(t, e)["c_0"])
			},
		},
		{
			name: "an MCP server's command, with the sandbox off: the one outside the workspace started",
			args: []string{"-sandbox=off", "-p", "Say hi."},
			before: func(t *testing.T, e *env, bin, markers string) {
				server, err := mcpServerBin()
				require.NoError(t, err)
				plant(t, bin, markers, filepath.Base(server))
				e.writeConfig(t, "mcp_servers:\n  test:\n    command: ["+filepath.Base(server)+"]\n")
			},
			replies: func(t *testing.T, markers string) []fakellm.Reply {
				return []fakellm.Reply{{ToolCalls: []fakellm.ToolCall{{ID: "c_0", Name: "mcp__test__say", Args: `{}`}}}, {Text: "Said hi."}}
			},
			check: func(t *testing.T, e *env, res result) {
				require.Equal(t, 0, res.code, res.stderr)
				assert.Equal(t, "hello from mcp", toolResults(t, e)["c_0"])
			},
		},
		{
			name: "an MCP server's command found only in the workspace: refused",
			args: []string{"-p", "Say hi."},
			before: func(t *testing.T, e *env, bin, markers string) {
				plant(t, bin, markers, "workspace-mcp")
				e.writeConfig(t, "mcp_servers:\n  planted:\n    command: [workspace-mcp]\n")
			},
			replies: func(t *testing.T, markers string) []fakellm.Reply {
				return []fakellm.Reply{{Text: "Hi."}}
			},
			check: func(t *testing.T, e *env, res result) {
				require.Equal(t, 0, res.code, res.stderr)
				assert.Contains(t, res.stderr, `agent: MCP server "planted": its command: workspace-mcp is not installed in the directories of PATH the agent runs programs from; skipped: `+
					e.ws+"/.venv/bin/workspace-mcp ("+e.ws+"/.venv/bin: inside the workspace "+e.ws+", which the model's commands write); install workspace-mcp outside the workspace")
			},
		},
		{
			name: "the environment query's toolchains",
			args: []string{"-tool-calls=false", "-p", "What is installed?"},
			before: func(t *testing.T, e *env, bin, markers string) {
				for _, name := range toolchains {
					plant(t, bin, markers, name)
				}
			},
			replies: func(t *testing.T, markers string) []fakellm.Reply {
				return []fakellm.Reply{{Text: "What's in the environment?"}, {Text: "Go is installed."}}
			},
			check: func(t *testing.T, e *env, res result) {
				require.Equal(t, 0, res.code, res.stderr)
				reqs := e.srv.Requests()
				require.Len(t, reqs, 2)
				facts := reqs[1].Messages[2].Text
				assert.Regexp(t, `go: go version go1\.\d+`, facts)
				assert.NotContains(t, facts, ".venv")
			},
		},
		{
			name: "the environment query's toolchains, with the sandbox off",
			args: []string{"-sandbox=off", "-tool-calls=false", "-p", "What is installed?"},
			before: func(t *testing.T, e *env, bin, markers string) {
				for _, name := range toolchains {
					plant(t, bin, markers, name)
				}
			},
			replies: func(t *testing.T, markers string) []fakellm.Reply {
				return []fakellm.Reply{{Text: "What's in the environment?"}, {Text: "Go is installed."}}
			},
			check: func(t *testing.T, e *env, res result) {
				require.Equal(t, 0, res.code, res.stderr)
				facts := e.srv.Requests()[1].Messages[2].Text
				assert.Regexp(t, `go: go version go1\.\d+`, facts)
				assert.Contains(t, facts, "outside the sandbox")
				assert.NotContains(t, facts, ".venv")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.confined && sandboxErr != nil {
				sandboxtest.Unavailable(t, sandboxErr)
			}
			if _, err := exec.LookPath("go"); err != nil {
				t.Skip("go is not installed")
			}
			markers := proctest.HostDir(t)
			e := newEnv(t, fakellm.Anthropic, map[string]string{"a.txt": "one\n", ".gitignore": ".venv/\n"}, tt.replies(t, markers)...)
			bin := filepath.Join(e.ws, ".venv", "bin")
			if tt.before != nil {
				tt.before(t, e, bin, markers)
			}
			path := bin + string(filepath.ListSeparator) + filepath.Dir(agentBin) + string(filepath.ListSeparator) + os.Getenv("PATH")
			res := e.runWith(t, tt.input, []string{"PATH=" + path}, tt.args...)
			assert.Empty(t, ranOnHost(t, markers), "a program planted in the workspace ran on the host; stderr:\n%s", res.stderr)
			assert.Contains(t, res.stderr, skippedLine(e.ws))
			tt.check(t, e, res)
		})
	}
}

// TestNotePATH checks the start banner's line about PATH: one line, the
// first directory of each kind and how many, and with -v every one.
func TestNotePATH(t *testing.T) {
	t.Parallel()
	venv := progpath.Skip{Dir: "/w/.venv/bin", Why: "inside the workspace /w, which the model's commands write"}
	dot := progpath.Skip{Dir: ".", Why: "a relative entry"}
	tests := []struct {
		name    string
		skipped []progpath.Skip
		hidden  []string
		verbose bool
		want    string
	}{
		{name: "nothing to say"},
		{name: "one skipped", skipped: []progpath.Skip{venv},
			want: "agent: PATH: the agent runs no program from /w/.venv/bin (inside the workspace /w, which the model's commands write)\n"},
		{name: "one hidden", hidden: []string{"/root/.cargo/bin"},
			want: "agent: PATH: bash does not see /root/.cargo/bin (-sandbox-expose shows it)\n"},
		{name: "several of each", skipped: []progpath.Skip{venv, dot}, hidden: []string{"/root/.cargo/bin", "/root/go/bin", "/home/u/bin"},
			want: "agent: PATH: the agent runs no program from 2 of its directories, the first /w/.venv/bin (inside the workspace /w, which the model's commands write); " +
				"bash does not see 3 of them, the first /root/.cargo/bin (-sandbox-expose shows one); -v lists them\n"},
		{name: "several of each, verbose", skipped: []progpath.Skip{venv, dot}, hidden: []string{"/root/.cargo/bin", "/root/go/bin"}, verbose: true,
			want: "agent: PATH: the agent runs no program from 2 of its directories, the first /w/.venv/bin (inside the workspace /w, which the model's commands write); " +
				"bash does not see 2 of them, the first /root/.cargo/bin (-sandbox-expose shows one)\n" +
				"agent:   no program run from /w/.venv/bin (inside the workspace /w, which the model's commands write)\n" +
				"agent:   no program run from . (a relative entry)\n" +
				"agent:   hidden from bash: /root/.cargo/bin\n" +
				"agent:   hidden from bash: /root/go/bin\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			notePATH(tt.skipped, tt.hidden, tt.verbose, &b)
			assert.Equal(t, tt.want, b.String())
		})
	}
}
