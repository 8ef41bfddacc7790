package main

import (
	"context"
	"encoding/base32"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/fakellm"
	"github.com/fsmgen/fsmgen/internal/gittest"
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

// TestCredentialsOutOfReach (issue 20 item 4): the model's commands see an
// empty home directory, not the user's with a list of hidden paths, so
// that credentials the list never named stay out of reach; and the files
// of the workspace that hold the API key (a .env the user keeps there,
// ignored by git) are masked from bash and the file tools alike, so that
// no encoding of the key the redactor does not know can be made of them.
func TestCredentialsOutOfReach(t *testing.T) {
	if sandboxErr != nil {
		sandboxtest.Unavailable(t, sandboxErr)
	}
	home := hostDir(t)
	secrets := map[string]string{
		".config/environment.d/keys.conf":            "OPENAI_API_KEY=SECRET-ENVD",
		".pam_environment":                           "HF_TOKEN DEFAULT=SECRET-PAM",
		".env":                                       "GITHUB_TOKEN=SECRET-HOMEENV",
		".config/zsh/.zshrc":                         "export GITHUB_TOKEN=SECRET-ZDOTDIR",
		".bashrc.d/keys.sh":                          "export API_TOKEN=SECRET-BASHRCD",
		".gitconfig":                                 "[url \"https://x:SECRET-GITCONFIG@github.com/\"]\n\tinsteadOf = https://github.com/\n",
		".config/io.datasette.llm/keys.json":         `{"openai": "SECRET-LLM"}`,
		".aider.conf.yml":                            "openai-api-key: SECRET-AIDER",
		".local/share/fsmgen-agent/threads/OLD.json": `{"text": "SECRET-OLDTHREAD"}`,
		".local/share/fsmgen-agent/threads/OLD.events.jsonl": `{"text": "SECRET-OLDLOG"}`,
		".config/unknown-tool/token":                         "SECRET-UNKNOWN", // on no list
	}
	for name, content := range secrets {
		p := filepath.Join(home, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content+"\n"), 0o600))
	}
	e := newEnv(t, fakellm.OpenAI, map[string]string{".gitignore": ".env\n", "main.go": "package main\n"})
	require.NoError(t, os.WriteFile(filepath.Join(e.ws, ".env"), []byte("OPENAI_API_KEY="+testKey+"\n"), 0o600))
	encoded := strings.TrimRight(base32.StdEncoding.EncodeToString([]byte(testKey)), "=")

	reply := bashCalls(t,
		"grep -rs SECRET ~ 2>/dev/null | cut -c1-300; ls -A ~; true",
		"base32 -w0 .env; rev .env; true",
		"cat main.go")
	reply.ToolCalls = append(reply.ToolCalls,
		fakellm.ToolCall{ID: "c_read", Name: "read_file", Args: `{"path": ".env"}`},
		fakellm.ToolCall{ID: "c_list", Name: "list_files", Args: `{}`})
	e.srv.Add(reply, fakellm.Reply{Text: "Done."})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := e.command(ctx, "-p", "Look for credentials.")
	cmd.Env = append(cmd.Env, "HOME="+home)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "agent: masked from the model (they hold the API key): .env\n")

	results := toolResults(t, e)
	assert.Equal(t, "(no output)", results["c_0"], "the home directory is empty and holds no secret")
	assert.Equal(t, "package main\n", results["c_2"], "the rest of the workspace is there")
	assert.Contains(t, results["c_read"], `".env" is masked: it holds the agent's API key`)
	assert.Contains(t, results["c_list"], ".env  (masked: it holds the agent's API key")
	for i, req := range e.srv.Requests() {
		body := string(req.Body)
		assert.False(t, strings.Contains(body, "SECRET-"), "request %d holds a credential of the home directory", i)
		assert.False(t, strings.Contains(body, encoded[:16]), "request %d holds the key in base32", i)
		assert.False(t, strings.Contains(body, reverse(testKey)[:16]), "request %d holds the key reversed", i)
	}
	assert.Equal(t, "OPENAI_API_KEY="+testKey+"\n", gittest.ReadFile(t, e.ws, ".env"), "the .env is left as it was")
	e.checkNoSecret(t)
}

// reverse returns s with its bytes in reverse order.
func reverse(s string) string {
	b := []byte(s)
	slices.Reverse(b)
	return string(b)
}

// TestSandboxExpose checks -sandbox-expose: the agent names the
// directories of PATH that commands cannot see, and an exposed one works,
// read-only.
func TestSandboxExpose(t *testing.T) {
	if sandboxErr != nil {
		sandboxtest.Unavailable(t, sandboxErr)
	}
	home := hostDir(t)
	bin := filepath.Join(home, "tools", "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bin, "hello"), []byte("#!/bin/sh\necho hello from the home\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("SECRET-GITCONFIG\n"), 0o600))
	tests := []struct {
		name       string
		args       []string
		wantStderr string
		want       map[string]string
	}{
		{
			name:       "hidden",
			wantStderr: "agent: bash does not see these directories of your PATH (show them with -sandbox-expose): " + bin + "\n",
			want:       map[string]string{"c_0": "hello: command not found", "c_2": "No such file or directory"},
		},
		{
			name: "exposed",
			args: []string{"-sandbox-expose", "~/tools/bin", "-sandbox-expose=~"},
			want: map[string]string{"c_0": "hello from the home\n", "c_1": "refused\n", "c_2": "Permission denied"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, fakellm.Anthropic, nil,
				bashCalls(t, "hello", "{ echo x > ~/tools/bin/new; } 2>/dev/null || echo refused", "cat ~/.gitconfig"),
				fakellm.Reply{Text: "Done."})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := e.command(ctx, append(tt.args, "-p", "Say hello.")...)
			cmd.Env = append(cmd.Env, "HOME="+home, "PATH="+bin+string(os.PathListSeparator)+pathOutsideHomes())
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			if tt.wantStderr != "" {
				assert.Contains(t, string(out), tt.wantStderr)
			} else {
				assert.NotContains(t, string(out), "bash does not see")
			}
			results := toolResults(t, e)
			for id, want := range tt.want {
				assert.Contains(t, results[id], want, id)
			}
			assert.NotContains(t, results["c_2"], "SECRET", "the whole home exposed, ~/.gitconfig stays hidden")
			assert.NoFileExists(t, filepath.Join(bin, "new"))
		})
	}
}

// pathOutsideHomes returns $PATH without the directories the sandbox hides
// by default as home directories (/root, /home).
func pathOutsideHomes() string {
	var keep []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir != "/root" && dir != "/home" && !strings.HasPrefix(dir, "/root/") && !strings.HasPrefix(dir, "/home/") {
			keep = append(keep, dir)
		}
	}
	return strings.Join(keep, string(os.PathListSeparator))
}
