package app

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/approval"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox/sandboxtest"
	"github.com/fsmgen/fsmgen/agent/internal/term"
	"github.com/fsmgen/fsmgen/internal/gittest"
)

// mcpServerBin is the test MCP server (testdata/mcpserver), built once,
// into a directory that TestMain removes.
var mcpServerBin = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(filepath.Dir(agentBin), "mcpserver")
	cmd := exec.Command("go", "build", "-o", bin, "./testdata/mcpserver")
	cmd.Env = goEnv
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build the MCP server: %v\n%s", err, out)
	}
	return bin, nil
})

// writeConfig writes the agent's config file.
func (e *env) writeConfig(t *testing.T, text string) {
	t.Helper()
	dir := filepath.Join(e.configHome(), "fsmgen-agent")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(text), 0o644))
}

// stdioEntry is a config entry of the test server: its binary exposed to
// its sandbox (it is built in a /tmp the sandbox does not show).
func stdioEntry(t *testing.T, name string, args ...string) string {
	t.Helper()
	bin, err := mcpServerBin()
	require.NoError(t, err)
	q := func(s string) string { return fmt.Sprintf("%q", s) }
	cmd := []string{q(bin)}
	for _, a := range args {
		cmd = append(cmd, q(a))
	}
	return fmt.Sprintf("  %s:\n    command: [%s]\n    expose: [%s]\n", name, strings.Join(cmd, ", "), q(filepath.Dir(bin)))
}

// TestMCPStdio calls the tools of a local stdio MCP server, confined in
// the sandbox, through the real CLI against both wire formats: the tools
// are offered namespaced, a result reaches the next request redacted of
// the key the server echoes (handed to it in ROT13, which the entry's
// check of secrets does not know), a write counts for the commit, a server that
// crashes at start is named and left out, and a call that outlives the
// tool timeout fails with a message.
func TestMCPStdio(t *testing.T) {
	t.Parallel()
	for _, p := range []fakellm.Provider{fakellm.Anthropic, fakellm.OpenAI} {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, p, map[string]string{"a.txt": "one\n"},
				fakellm.Reply{ToolCalls: []fakellm.ToolCall{
					{ID: "c1", Name: "mcp__test__say", Args: `{}`},
					{ID: "c2", Name: "mcp__test__write", Args: `{"path":"from-mcp.txt","text":"written by mcp\n"}`},
					{ID: "c3", Name: "mcp__test__picture", Args: `{}`},
				}},
				fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c4", Name: "mcp__test__slow", Args: `{}`}}},
				fakellm.Reply{Text: "Used the MCP tools."})
			marker := "mcp-marker-" + filepath.Base(filepath.Dir(e.ws))
			sandboxtest.KillAtCleanup(t, marker)
			e.writeConfig(t, "mcp_servers:\n"+stdioEntry(t, "test", "-say-rot13", strings.Map(rot13, "the key is "+testKey), "-marker", marker)+stdioEntry(t, "broken", "-crash"))
			r := e.run(t, "", "-p", "Use the MCP tools.", "-tool-timeout", "2s")
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			assert.Contains(t, r.stderr, "agent: MCP server test (6 tools)")
			assert.Contains(t, r.stderr, `agent: MCP server "broken": start `)
			assert.Contains(t, r.stderr, "mcpserver: boom, cannot start")
			assert.Contains(t, r.stderr, "it is left out")

			reqs := e.srv.Requests()
			require.Len(t, reqs, 3)
			assert.Subset(t, reqs[0].Tools, []string{"bash", "edit_file", "mcp__test__echo", "mcp__test__picture", "mcp__test__say", "mcp__test__slow", "mcp__test__write"})
			for _, name := range reqs[0].Tools {
				assert.NotContains(t, name, "broken")
			}
			results := map[string]fakellm.Message{}
			for _, req := range reqs[1:] {
				for _, m := range req.Messages {
					if m.ToolCallID != "" {
						results[m.ToolCallID] = m
					}
				}
			}
			assert.Equal(t, "the key is [REDACTED]", results["c1"].Text)
			assert.Equal(t, "wrote from-mcp.txt", results["c2"].Text)
			assert.Equal(t, "[an image (image/png, 8 bytes), not shown]", results["c3"].Text)
			assert.True(t, results["c4"].IsError)
			assert.Contains(t, results["c4"].Text, "tool mcp__test__slow timed out after 2s")

			// The sandbox's namespace dies with its bubblewrap, a moment
			// after the agent has killed it.
			assert.Eventually(t, func() bool { return len(sandboxtest.Processes(marker)) == 0 }, 10*time.Second, 10*time.Millisecond,
				"the server is killed with the session")

			got, err := os.ReadFile(filepath.Join(e.ws, "from-mcp.txt"))
			require.NoError(t, err)
			assert.Equal(t, "written by mcp\n", string(got))
			assert.Contains(t, gittest.Git(t, e.ws, "show", "--stat", "HEAD"), "from-mcp.txt", "an MCP tool's change is committed")
			e.checkNoSecret(t)
			rep := replayExit(t, filepath.Join(e.threads, e.onlyThread(t)+".events.jsonl"))
			assert.Equal(t, 0, rep.code, "the session replays: %s%s", rep.stdout, rep.stderr)
		})
	}
}

// TestMCPServerDies calls a tool whose server exits: that call and the
// next one of the server's fail with an error naming it; the session goes
// on.
func TestMCPServerDies(t *testing.T) {
	t.Parallel()
	_, err := mcpServerBin()
	require.NoError(t, err)
	e := newEnv(t, fakellm.Anthropic, nil,
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "mcp__test__die", Args: `{}`}}},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c2", Name: "mcp__test__say", Args: `{}`}}},
		fakellm.Reply{Text: "It died."})
	e.writeConfig(t, "mcp_servers:\n"+stdioEntry(t, "test"))
	r := e.run(t, "", "-p", "Kill it.")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	reqs := e.srv.Requests()
	require.Len(t, reqs, 3)
	results := map[string]fakellm.Message{}
	for _, m := range reqs[2].Messages {
		if m.ToolCallID != "" {
			results[m.ToolCallID] = m
		}
	}
	for _, id := range []string{"c1", "c2"} {
		assert.True(t, results[id].IsError, id)
		assert.Contains(t, results[id].Text, "MCP server test has exited (exit status 1); its standard error ends with: mcpserver: dying; it is not restarted in this session", id)
	}
}

// TestMCPServerMute starts a server that never answers: it is left out
// once its start_timeout has passed, and killed.
func TestMCPServerMute(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, nil, fakellm.Reply{Text: "ok"})
	marker := "mute-marker-" + filepath.Base(filepath.Dir(e.ws))
	sandboxtest.KillAtCleanup(t, marker)
	e.writeConfig(t, fmt.Sprintf("mcp_servers:\n  mute:\n    command: [bash, -c, \"sleep 60 # %s\"]\n    start_timeout: 500ms\n", marker))
	r := e.run(t, "", "-p", "Hi.")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Contains(t, r.stderr, `agent: MCP server "mute": start bash -c sleep 60 # `+marker+`: it did not answer within 500ms; it is left out`)
	assert.Eventually(t, func() bool { return len(sandboxtest.Processes(marker)) == 0 }, 10*time.Second, 10*time.Millisecond)
}

// TestMCPHTTP calls a tool of a streamable HTTP MCP server (the SDK's
// handler on httptest), which is sent the header its entry names, with
// its value from the environment.
func TestMCPHTTP(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "http-test", Version: "1"}, nil)
	type args struct {
		Q string `json:"q"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "look.up", Description: "Look a word up."}, func(_ context.Context, _ *mcp.CallToolRequest, a args) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "found " + a.Q}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	var mu sync.Mutex
	var auth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer tok-123" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	e := newEnv(t, fakellm.Anthropic, nil,
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "mcp__docs__look_up", Args: `{"q":"fsm"}`}}},
		fakellm.Reply{Text: "Found it."})
	e.writeConfig(t, fmt.Sprintf("mcp_servers:\n  docs:\n    url: %s\n    headers: {Authorization: \"Bearer ${MCP_TEST_TOKEN}\"}\n    read_only_tools: [look.up]\n", srv.URL))
	ctx := t.Context()
	cmd := e.command(ctx, "-p", "Look it up.")
	cmd.Env = append(cmd.Env, "MCP_TEST_TOKEN=tok-123")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "agent: MCP server docs (1 tools)")
	reqs := e.srv.Requests()
	require.Len(t, reqs, 2)
	assert.Contains(t, reqs[0].Tools, "mcp__docs__look_up")
	var res []string
	for _, m := range reqs[1].Messages {
		if m.ToolCallID != "" {
			res = append(res, m.Text)
		}
	}
	assert.Equal(t, []string{"found fsm"}, res)
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, auth)
	for _, a := range auth {
		assert.Equal(t, "Bearer tok-123", a)
	}
}

// TestMCPApproval sets a tool of an MCP server to ask before every call
// (approve: always in its entry): without a terminal the agent refuses
// to start, naming it; in a terminal the call is asked about under the
// default policy (never), and a refusal reaches the model, while the
// server's other tools, set to never, run without asking.
func TestMCPApproval(t *testing.T) {
	t.Parallel()
	_, err := mcpServerBin()
	require.NoError(t, err)
	t.Run("no terminal", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, fakellm.Anthropic, nil)
		e.writeConfig(t, "mcp_servers:\n"+stdioEntry(t, "test")+"    approve: {say: always, \"*\": never}\n")
		r := e.run(t, "", "-p", "Say it.")
		assert.Equal(t, exitUsage, r.code, r.stderr)
		assert.Contains(t, r.stderr, "agent: mcp__test__say ask before every call (approve: always in the config file's mcp_servers) and need a terminal to ask")
		assert.Empty(t, e.srv.Requests())
	})
	t.Run("refused in a terminal", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, fakellm.Anthropic, nil,
			fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "mcp__test__say", Args: `{}`}}},
			fakellm.Reply{Text: "I will not."},
			fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c2", Name: "mcp__test__say", Args: `{}`}}},
			fakellm.Reply{Text: "Said."},
			fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c3", Name: "mcp__test__say", Args: `{}`}}},
			fakellm.Reply{Text: "Said twice."})
		e.writeConfig(t, "mcp_servers:\n"+stdioEntry(t, "test")+"    approve: {say: always, \"*\": never}\n")
		s := startPTY(t, e, []string{"NO_COLOR=1"})
		s.waitScreen(t, "> ")
		s.typeKeys(t, "Say it.\r")
		s.waitScreen(t, "? approve mcp__test__say")
		s.waitScreen(t, term.AskPrompt)
		s.typeKeys(t, "n not now\r")
		s.waitScreen(t, "I will not.")
		s.typeKeys(t, "Again.\r")
		s.waitScreen(t, "> Again.")
		require.Eventually(t, func() bool { return strings.Count(s.screen.String(), "? approve mcp__test__say") == 2 }, runLimit, 10*time.Millisecond)
		s.typeKeys(t, "a\r")
		s.waitScreen(t, "this call only")
		s.waitScreen(t, "Said.")
		s.typeKeys(t, "And again.\r")
		// Asked again: "a" does not lift approve: always.
		require.Eventually(t, func() bool { return strings.Count(s.screen.String(), "? approve mcp__test__say") == 3 }, runLimit, 10*time.Millisecond, "screen:\n%s", &s.screen)
		s.typeKeys(t, "y\r")
		s.waitScreen(t, "Said twice.")
		s.typeKeys(t, "\x04")
		require.Equal(t, 0, s.wait(t), "screen:\n%s", s.screen.String())
		reqs := e.srv.Requests()
		require.Len(t, reqs, 6)
		res := resultsByID(reqs[1])["c1"]
		assert.True(t, res.IsError)
		assert.Contains(t, res.Text, approval.RefusedPrefix+": not now")
	})
}

// rot13 turns a letter 13 places in the alphabet, as ROT13 does.
func rot13(r rune) rune {
	switch {
	case 'a' <= r && r <= 'z':
		return 'a' + (r-'a'+13)%26
	case 'A' <= r && r <= 'Z':
		return 'A' + (r-'A'+13)%26
	}
	return r
}

// TestMCPHiddenPath starts a stdio server whose program lies in a /tmp
// the sandbox replaces, and one whose script lies there: each is left out
// with a message naming what hides it and the expose: line that shows it
// (not "No such file or directory"); with that line, the server starts.
func TestMCPHiddenPath(t *testing.T) {
	t.Parallel()
	bin, err := mcpServerBin()
	require.NoError(t, err)
	script := filepath.Join(t.TempDir(), "server.sh")
	require.NoError(t, os.WriteFile(script, []byte("exec "+bin+"\n"), 0o755))
	e := newEnv(t, fakellm.Anthropic, nil, fakellm.Reply{Text: "Hi."}, fakellm.Reply{Text: "Hi again."})
	e.writeConfig(t, fmt.Sprintf("mcp_servers:\n  test:\n    command: [%q]\n  script:\n    command: [bash, %q]\n", bin, script))
	r := e.run(t, "", "-p", "Hi.")
	require.Equal(t, 0, r.code, r.stderr)
	dir := filepath.Dir(bin)
	assert.Contains(t, r.stderr, fmt.Sprintf(`agent: MCP server "test": its program %s lies in /tmp, which the sandbox replaces with an empty /tmp of its own, so the server cannot start; add "expose: [%s]" to its entry to show it read-only ("%s:rw" writable); it is left out`, bin, dir, dir))
	assert.Contains(t, r.stderr, fmt.Sprintf(`agent: MCP server "script": its argument %s lies in /tmp, which the sandbox replaces with an empty /tmp of its own, so the server cannot start; add "expose: [%s]"`, script, filepath.Dir(script)))
	assert.NotContains(t, r.stderr, "No such file")

	e.writeConfig(t, fmt.Sprintf("mcp_servers:\n  test:\n    command: [%q]\n    expose: [%q]\n", bin, dir))
	r = e.run(t, "", "-p", "Hi.")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "agent: MCP server test (6 tools)")
}
