package app

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/gen/agent"
)

// runEnv runs the agent like e.run, with extra variables in its
// environment.
func (e *env) runEnv(t *testing.T, extra []string, args ...string) result {
	t.Helper()
	return e.runWith(t, "", extra, args...)
}

// TestQueryConformance runs the query loop through the real CLI against
// both wire formats: a model without tool calls asks in prose to read a
// file; the agent cuts the reply after the query, reads the file with its
// tools, sends the result back marked as the query's, and the model
// answers. The request carries no tools and teaches the protocol, the
// thread holds the exchange, and the event log replays.
func TestQueryConformance(t *testing.T) {
	t.Parallel()
	for _, p := range []fakellm.Provider{fakellm.Anthropic, fakellm.OpenAI} {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, p, map[string]string{"src/main.rs": "fn main() { println!(\"hello from rust\"); }\n"},
				fakellm.Reply{Text: "Sure. I need to read src/main.rs to see how it starts. Then I will explain it in detail."},
				fakellm.Reply{Text: "QUERY: search \"println\" in src\n"},
				fakellm.Reply{Text: "It prints a greeting: hello from rust."},
			)
			res := e.run(t, "", "-tool-calls=false", "-p", "what does the program print?")
			require.Equal(t, 0, res.code, "stderr:\n%s", res.stderr)
			assert.Equal(t, "It prints a greeting: hello from rust.\n", res.stdout)

			reqs := e.srv.Requests()
			require.Len(t, reqs, 3)
			assert.Empty(t, reqs[0].Tools, "a model without tool calling is offered no tools")
			assert.Contains(t, reqs[0].System, "QUERY: read PATH")

			second := reqs[1].Messages
			require.Len(t, second, 3)
			assert.Equal(t, "Sure. I need to read src/main.rs to see how it starts.", second[1].Text, "the reply is cut after the query")
			assert.Equal(t, "user", second[2].Role)
			assert.Equal(t, "[query read src/main.rs: result]\nfn main() { println!(\"hello from rust\"); }\n[end of the query's result]", second[2].Text)

			third := reqs[2].Messages
			require.Len(t, third, 5)
			assert.Equal(t, "QUERY: search \"println\" in src\n", third[3].Text)
			assert.Equal(t, "[query search \"println\" in src: result]\nsrc/main.rs:1: fn main() { println!(\"hello from rust\"); }\n[end of the query's result]", third[4].Text)

			id := e.onlyThread(t)
			st := e.state(t, id)
			require.Equal(t, agent.StateWaitingForUserInput, st.Kind())
			msgs := messages(st)
			require.Len(t, msgs, 6)
			assert.Equal(t, "assistant: It prints a greeting: hello from rust.", msgs[5])

			rep := replayExit(t, filepath.Join(e.threads, id+".events.jsonl"))
			assert.Equal(t, 0, rep.code, rep.stdout+rep.stderr)
			assert.Contains(t, rep.stdout, "replay ok")
		})
	}
}

// TestQueryEnvironmentKeepsTheKey asks the environment and project
// queries with the API key planted in the agent's environment (under the
// provider's name and an innocent one) and in a workspace file: the
// results reach the model with the facts and without the key in any form,
// and the thread and the event log hold none either.
func TestQueryEnvironmentKeepsTheKey(t *testing.T) {
	t.Parallel()
	for _, p := range []fakellm.Provider{fakellm.Anthropic, fakellm.OpenAI} {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, p, map[string]string{
				"go.mod":     "module example.com/planted\n\ngo 1.26\n",
				"config.env": "KEY=" + testKey + "\n",
			},
				fakellm.Reply{Text: "What's in the environment?"},
				fakellm.Reply{Text: "I'd like to know the module name and the build system of this project."},
				fakellm.Reply{Text: "Let me search for `KEY=` in the workspace."},
				fakellm.Reply{Text: "You are on Linux."},
			)
			res := e.runEnv(t, []string{"INNOCENT_VAR=" + testKey, "SHELL=/bin/planted-shell"}, "-tool-calls=false", "-p", "where am I?")
			require.Equal(t, 0, res.code, "stderr:\n%s", res.stderr)

			reqs := e.srv.Requests()
			require.Len(t, reqs, 4)
			env := reqs[1].Messages[2].Text
			assert.True(t, strings.HasPrefix(env, "[query environment: result]\noperating system: "), env)
			assert.Contains(t, env, "shell: /bin/planted-shell")
			assert.Contains(t, env, "INNOCENT_VAR")
			assert.NotContains(t, env, "ANTHROPIC_API_KEY")
			proj := reqs[2].Messages[4].Text
			assert.Contains(t, proj, "Go module (go.mod): module example.com/planted, go 1.26")
			search := reqs[3].Messages[6].Text
			assert.Contains(t, search, "1 file not searched: masked")
			for i, r := range reqs {
				assert.Empty(t, keyLeaks(string(r.Body)), "request %d holds the key", i+1)
			}
			assert.Empty(t, keyLeaks(res.stdout+res.stderr), "the screen shows the key")
			e.checkNoKeyForm(t)
		})
	}
}

// TestQueryLimit ends a turn whose model asks more queries than
// -max-queries allows, with an error that names the flag.
func TestQueryLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, map[string]string{"a.go": "package a\n"},
		fakellm.Reply{Text: "QUERY: read a.go"},
		fakellm.Reply{Text: "QUERY: read a.go"},
	)
	res := e.run(t, "", "-tool-calls=false", "-max-queries", "1", "-p", "look")
	assert.Equal(t, 1, res.code, res.stderr)
	assert.Contains(t, res.stderr, "more than 1 queries in one turn")
	assert.Contains(t, res.stderr, "-max-queries")
	assert.Len(t, e.srv.Requests(), 2)
}

// TestQueryPausesTheStream has the model ask a query and then stream
// without end: the agent must cancel the call at the query (else the turn
// never ends), run it and send the next request.
func TestQueryPausesTheStream(t *testing.T) {
	t.Parallel()
	for _, p := range []fakellm.Provider{fakellm.Anthropic, fakellm.OpenAI} {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, p, map[string]string{"a.go": "package a\n"},
				fakellm.Reply{Text: "Let me read a.go. And then ", Forever: true},
				fakellm.Reply{Text: "It is package a."},
			)
			res := e.run(t, "", "-tool-calls=false", "-p", "what package?")
			require.Equal(t, 0, res.code, "stderr:\n%s", res.stderr)
			assert.Equal(t, "It is package a.\n", res.stdout)
			reqs := e.srv.Requests()
			require.Len(t, reqs, 2)
			assert.Equal(t, "Let me read a.go.", reqs[1].Messages[1].Text)
		})
	}
}

// TestQueryThreadResumesWithoutTools resumes a thread started with
// -tool-calls=false without the flag: it still offers no tools and reads
// the replies for queries; -tool-calls=true turns tools back on.
func TestQueryThreadResumesWithoutTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.OpenAI, map[string]string{"a.go": "package a\n"},
		fakellm.Reply{Text: "Hello."},
		fakellm.Reply{Text: "QUERY: read a.go"},
		fakellm.Reply{Text: "Package a."},
		fakellm.Reply{Text: "With tools again."},
	)
	res := e.run(t, "", "-tool-calls=false", "-p", "hi")
	require.Equal(t, 0, res.code, res.stderr)
	id := e.onlyThread(t)
	res = e.run(t, "", "-resume", id, "-p", "what package?")
	require.Equal(t, 0, res.code, res.stderr)
	assert.Equal(t, "Package a.\n", res.stdout)
	res = e.run(t, "", "-resume", id, "-tool-calls=true", "-p", "and now?")
	require.Equal(t, 0, res.code, res.stderr)
	reqs := e.srv.Requests()
	require.Len(t, reqs, 4)
	for i, r := range reqs[:3] {
		assert.Empty(t, r.Tools, "request %d", i+1)
		assert.Contains(t, r.System, "QUERY: read PATH", "request %d", i+1)
	}
	assert.Contains(t, reqs[2].Messages[4].Text, "[query read a.go: result]\npackage a")
	assert.NotEmpty(t, reqs[3].Tools, "-tool-calls=true offers the tools again")
}

// TestQueryUsageCounted has a model without tool calls ask a query in
// the middle of a reply, which the agent cuts there: the request's usage,
// as far as the provider reported it before the cut (Anthropic's prompt
// tokens; OpenAI reports none before a reply's end), is counted in the
// -json usage, beside the next request's.
func TestQueryUsageCounted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		p         fakellm.Provider
		wantInput int
	}{
		{fakellm.Anthropic, 1000 + 2000},
		{fakellm.OpenAI, 2000}, // the cut reply's usage would come in its last chunk
	}
	for _, tt := range tests {
		t.Run(string(tt.p), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tt.p, map[string]string{"a.go": "package a\n"},
				fakellm.Reply{Text: "QUERY: read a.go\nAnd then I will tell you all about it.", Usage: &chat.Usage{InputTokens: 1000, OutputTokens: 50}},
				fakellm.Reply{Text: "Package a.", Usage: &chat.Usage{InputTokens: 2000, OutputTokens: 7}},
			)
			res := e.run(t, "", "-tool-calls=false", "-json", "-p", "what package?")
			require.Equal(t, 0, res.code, "stderr:\n%s", res.stderr)
			var got oneShotResult
			require.NoError(t, json.Unmarshal([]byte(lastLine(res.stdout)), &got), res.stdout)
			assert.Equal(t, "Package a.", got.Answer)
			assert.Equal(t, tt.wantInput, got.Usage.InputTokens)
			assert.Greater(t, got.Usage.OutputTokens, 7, "the cut reply's output is estimated")
		})
	}
}

// TestQueryPlanMode runs a model without tool calls in plan mode: its
// system prompt teaches the queries and asks for a plan, not for changes.
func TestQueryPlanMode(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, map[string]string{"a.go": "package a\n"},
		fakellm.Reply{Text: "The plan: rename package a."})
	res := e.run(t, "", "-tool-calls=false", "-mode", "plan", "-p", "plan a rename")
	require.Equal(t, 0, res.code, "stderr:\n%s", res.stderr)
	reqs := e.srv.Requests()
	require.Len(t, reqs, 1)
	assert.Empty(t, reqs[0].Tools)
	assert.Contains(t, reqs[0].System, "QUERY: read PATH")
	assert.Contains(t, reqs[0].System, "In plan mode nothing is changed")
	assert.Contains(t, reqs[0].System, "write the plan as your last reply")
	assert.NotContains(t, reqs[0].System, "answer with the changes to make")
}

// TestQueryStartsNoMCPServer configures an MCP server whose tool asks
// before every call (approve: always), which needs a terminal: with
// -tool-calls=false no tool is offered, so the server is not started
// (the agent says so once) and the agent runs without a terminal.
func TestQueryStartsNoMCPServer(t *testing.T) {
	t.Parallel()
	_, err := mcpServerBin()
	require.NoError(t, err)
	e := newEnv(t, fakellm.Anthropic, nil, fakellm.Reply{Text: "Said."})
	e.writeConfig(t, "mcp_servers:\n"+stdioEntry(t, "test")+"    approve: {say: always, \"*\": never}\n")
	res := e.run(t, "", "-tool-calls=false", "-p", "Say it.")
	require.Equal(t, 0, res.code, "stderr:\n%s", res.stderr)
	assert.Equal(t, 1, strings.Count(res.stderr, "agent: -tool-calls=false offers the model no tools: the config file's MCP servers are not started"), res.stderr)
	assert.NotContains(t, res.stderr, "MCP server test")
	reqs := e.srv.Requests()
	require.Len(t, reqs, 1)
	assert.Empty(t, reqs[0].Tools)
}

// TestToolThreadResumesWithTools resumes a thread started with tools
// under a config file that says tool_calls: false: the thread keeps its
// tools (only -tool-calls on the command line changes a thread's), and
// stays a tool-calling thread.
func TestToolThreadResumesWithTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, map[string]string{"a.go": "package a\n"},
		fakellm.Reply{Text: "Hello."},
		fakellm.Reply{Text: "Still with tools."},
		fakellm.Reply{Text: "And again."},
	)
	res := e.run(t, "", "-p", "hi")
	require.Equal(t, 0, res.code, res.stderr)
	id := e.onlyThread(t)
	e.writeConfig(t, "tool_calls: false\n")
	for _, prompt := range []string{"more", "again"} {
		res = e.run(t, "", "-resume", id, "-p", prompt)
		require.Equal(t, 0, res.code, res.stderr)
	}
	reqs := e.srv.Requests()
	require.Len(t, reqs, 3)
	for i, r := range reqs {
		assert.NotEmpty(t, r.Tools, "request %d", i+1)
		assert.NotContains(t, r.System, "QUERY: read PATH", "request %d", i+1)
	}
}

// TestQueryEnvironmentRunsNoWorkspaceToolchain asks the environment
// query in a workspace whose go.mod names a toolchain (go1.99.0, a script
// on PATH that leaves a marker file) under GOTOOLCHAIN=auto, asked both by
// the environment and by the user's go env file: with the sandbox and
// without, the query runs the go installed, never the workspace's choice.
func TestQueryEnvironmentRunsNoWorkspaceToolchain(t *testing.T) {
	t.Parallel()
	goPath, err := exec.LookPath("go")
	require.NoError(t, err)
	for _, sb := range []string{"default", "off"} {
		t.Run(sb, func(t *testing.T) {
			t.Parallel()
			marker := filepath.Join(t.TempDir(), "ran")
			bin := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(bin, "go1.99.0"), []byte("#!/bin/sh\necho ran >"+marker+"\necho evil\n"), 0o755))
			home := t.TempDir()
			require.NoError(t, os.MkdirAll(filepath.Join(home, ".config", "go"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(home, ".config", "go", "env"), []byte("GOTOOLCHAIN=auto\n"), 0o644))
			e := newEnv(t, fakellm.Anthropic, map[string]string{"go.mod": "module example.com/m\n\ngo 1.21\n\ntoolchain go1.99.0\n"},
				fakellm.Reply{Text: "What's in the environment?"},
				fakellm.Reply{Text: "Go is installed."},
			)
			args := []string{"-tool-calls=false", "-p", "which go?"}
			if sb == "off" {
				args = append([]string{"-sandbox=off"}, args...)
			}
			res := e.runEnv(t, []string{"GOTOOLCHAIN=auto", "HOME=" + home,
				"PATH=" + bin + string(filepath.ListSeparator) + filepath.Dir(goPath) + string(filepath.ListSeparator) + os.Getenv("PATH")}, args...)
			require.Equal(t, 0, res.code, "stderr:\n%s", res.stderr)
			assert.NoFileExists(t, marker)
			reqs := e.srv.Requests()
			require.Len(t, reqs, 2)
			facts := reqs[1].Messages[2].Text
			assert.Regexp(t, `go: go version go1\.\d+`, facts)
			assert.NotContains(t, facts, "evil")
		})
	}
}
