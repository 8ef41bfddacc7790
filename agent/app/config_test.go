package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/mcptools"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
)

// TestConfigFile parses config files through the command line: the
// defaults they give the flags (flags given win), the instructions and
// MCP servers' settings, and every mistake refused with the file, the
// line and what is allowed.
func TestConfigFile(t *testing.T) {
	t.Setenv("MCP_CONFIG_TEST_TOKEN", "t0k")
	tests := []struct {
		name    string
		config  string
		args    []string
		check   func(t *testing.T, o options)
		wantErr string // "FILE" stands for the config file's path
	}{
		{
			name:   "flags' defaults",
			config: "provider: openai\nmodel: qwen\nbase_url: http://localhost:8080/v1\nmax_retries: 5\nretry_delay: 250ms\nsandbox: \"off\"\nsandbox_network: true\nsandbox_expose: [/etc, \"/usr:rw\"]\nmax_tool_args: 2MiB\n",
			check: func(t *testing.T, o options) {
				assert.Equal(t, "openai", o.provider)
				assert.Equal(t, "qwen", o.model)
				assert.Equal(t, "http://localhost:8080/v1", o.baseURL)
				assert.Equal(t, 5, o.maxRetries)
				assert.Equal(t, 250*time.Millisecond, o.retryDelay)
				assert.Equal(t, sandbox.Off, o.sandbox)
				assert.True(t, o.sandboxNetwork)
				assert.Equal(t, exposures{{Path: "/etc"}, {Path: "/usr", Writable: true}}, o.sandboxFlags.expose)
				assert.Equal(t, byteSize(2<<20), o.maxToolArgs)
				assert.False(t, o.set["model"], "a default from the file is not a flag given: a resumed thread's model still wins")
			},
		},
		{
			name:   "a flag given wins over the file",
			config: "model: qwen\nmax_retries: 5\n",
			args:   []string{"-model", "other"},
			check: func(t *testing.T, o options) {
				assert.Equal(t, "other", o.model)
				assert.Equal(t, 5, o.maxRetries)
			},
		},
		{
			name:   "an empty file is no error",
			config: "# nothing yet\n",
			check:  func(t *testing.T, o options) { assert.Equal(t, "anthropic", o.provider) },
		},
		{
			name:   "instructions settings",
			config: "instructions:\n  names: [RULES.md]\n  max_file_size: 1KiB\n  max_total_size: 2KiB\n  user_file: /etc/rules.md\n",
			check: func(t *testing.T, o options) {
				io := o.config.instructionsOptions()
				assert.Equal(t, []string{"RULES.md"}, io.Names)
				assert.Equal(t, 1024, io.MaxFileBytes)
				assert.Equal(t, 2048, io.MaxTotalBytes)
				assert.Equal(t, "/etc/rules.md", io.UserFile)
			},
		},
		{
			name: "MCP servers, in the file's order, a disabled one left out",
			config: `mcp_servers:
  files:
    command: [fs-server, --root, .]
    env: {LOG_LEVEL: debug}
    network: true
    expose: ["~/.cache/fs:rw"]
    workspace: ro
    read_only_tools: [read]
    approve: {write: always, "*": never}
    start_timeout: 2m
  docs:
    url: https://docs.example/mcp
    headers: {Authorization: "Bearer ${MCP_CONFIG_TEST_TOKEN}"}
    approve: always
  old:
    command: [old-server]
    disabled: true
`,
			check: func(t *testing.T, o options) {
				assert.Equal(t, []mcptools.Server{
					{Name: "files", Command: []string{"fs-server", "--root", "."}, Env: map[string]string{"LOG_LEVEL": "debug"}, Network: true,
						Expose: []sandbox.Exposure{{Path: "~/.cache/fs", Writable: true}}, ReadOnlyWorkspace: true, ReadOnlyTools: []string{"read"},
						Approve: map[string]tools.Approval{"write": tools.ApprovalAlways, "*": tools.ApprovalNever}, StartTimeout: 2 * time.Minute},
					{Name: "docs", URL: "https://docs.example/mcp", Headers: map[string]string{"Authorization": "Bearer t0k"},
						Approve: map[string]tools.Approval{"*": tools.ApprovalAlways}},
				}, o.config.servers)
			},
		},
		{
			name:    "an unknown key, with a suggestion and what is allowed",
			config:  "provider: openai\nmodell: qwen\n",
			wantErr: `FILE:2:1: unknown key "modell" in the config file (did you mean "model"?); allowed: instructions, mcp_servers, approve, base_url,`,
		},
		{
			name:    "a flag that is no default",
			config:  "resume: last\n",
			wantErr: `FILE:1:1: unknown key "resume" in the config file`,
		},
		{
			name:    "a bad value, in the flag's words",
			config:  "\nmax_retries: many\n",
			wantErr: `FILE:2:14: max_retries: parse error`,
		},
		{
			name:    "a value out of range is refused as the flag's would be",
			config:  "max_retries: -1\n",
			wantErr: "agent: -max-retries must be 0 or more",
		},
		{
			name:    "a key twice",
			config:  "model: a\nmodel: b\n",
			wantErr: "FILE:2:1: model is given twice in the config file; keep one",
		},
		{
			name:    "a list where one value goes",
			config:  "model: [a, b]\n",
			wantErr: "FILE:1:8: model must be a single value",
		},
		{
			name:    "broken YAML",
			config:  "model: [a\n",
			wantErr: "FILE: yaml: line 1:",
		},
		{
			name:    "the top is no mapping",
			config:  "- a\n",
			wantErr: "FILE:1:1: the config file must be a mapping of keys to values",
		},
		{
			name:    "an unknown key of an MCP server",
			config:  "mcp_servers:\n  x:\n    comand: [a]\n",
			wantErr: `FILE:3:5: unknown key "comand" in mcp_servers.x (did you mean "command"?); allowed: command, env, network, expose, workspace, url, headers, read_only_tools, approve, start_timeout, disabled`,
		},
		{
			name:    "an MCP server with neither command nor url",
			config:  "mcp_servers:\n  x:\n    network: true\n",
			wantErr: "FILE:2:3: mcp_servers.x has neither command (a stdio server) nor url (an HTTP server); give one",
		},
		{
			name:    "a stdio key on an HTTP server",
			config:  "mcp_servers:\n  x:\n    url: http://localhost:1/mcp\n    network: true\n",
			wantErr: "FILE:4:5: mcp_servers.x has a url: network applies only to a stdio server (one with a command)",
		},
		{
			name:    "a command as a string",
			config:  "mcp_servers:\n  x:\n    command: my-server --stdio\n",
			wantErr: "FILE:3:14: mcp_servers.x.command must be a list: the program and its arguments",
		},
		{
			name:    "a bad approval",
			config:  "mcp_servers:\n  x:\n    command: [a]\n    approve: {write: sometimes}\n",
			wantErr: `FILE:4:22: mcp_servers.x.approve.write is "sometimes": use always, never, policy`,
		},
		{
			name:    "a bad server name",
			config:  "mcp_servers:\n  \"my server\":\n    command: [a]\n",
			wantErr: `FILE:2:3: MCP server name "my server": use 1 to 32 letters, digits, _ or -`,
		},
		{
			name:    "a header naming an unset variable",
			config:  "mcp_servers:\n  x:\n    url: http://localhost:1/mcp\n    headers: {X-Token: \"${MCP_CONFIG_TEST_UNSET}\"}\n",
			wantErr: "FILE:4:14: mcp_servers.x.headers.X-Token names $MCP_CONFIG_TEST_UNSET, which is not set in the environment",
		},
		{
			name:    "an instructions size that is no size",
			config:  "instructions:\n  max_file_size: big\n",
			wantErr: `FILE:2:18: instructions.max_file_size: "big" is not a positive size, such as 32KiB`,
		},
		{
			name:    "an instructions name that is a path",
			config:  "instructions:\n  names: [docs/AGENTS.md]\n",
			wantErr: `FILE:2:10: instructions.names: "docs/AGENTS.md" is not a file name`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			require.NoError(t, os.WriteFile(path, []byte(tt.config), 0o644))
			var stderr bytes.Buffer
			o, code := parseFlags(append([]string{"-config", path}, tt.args...), &stderr)
			if tt.wantErr != "" {
				assert.Equal(t, exitUsage, code)
				assert.Contains(t, stderr.String(), strings.ReplaceAll(tt.wantErr, "FILE", path))
				return
			}
			require.Equal(t, -1, code, stderr.String())
			tt.check(t, o)
		})
	}
}

// TestConfigFileFound reads the config file where the agent looks for
// it, and refuses a -config file that does not exist.
func TestConfigFileFound(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	var stderr bytes.Buffer
	o, code := parseFlags(nil, &stderr)
	require.Equal(t, -1, code, "no file is no error: %s", stderr.String())
	assert.Empty(t, o.config.path)

	require.NoError(t, os.MkdirAll(filepath.Join(home, "fsmgen-agent"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(home, "fsmgen-agent", "config.yaml"), []byte("model: from-file\n"), 0o644))
	o, code = parseFlags(nil, &stderr)
	require.Equal(t, -1, code, stderr.String())
	assert.Equal(t, "from-file", o.model)

	o, code = parseFlags([]string{"sessions"}, &stderr)
	require.Equal(t, -1, code, stderr.String())
	assert.Empty(t, o.model, "sessions takes only -threads and -price from the file")

	stderr.Reset()
	_, code = parseFlags([]string{"-config", filepath.Join(home, "missing.yaml")}, &stderr)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr.String(), "agent: read the config file: open "+filepath.Join(home, "missing.yaml")+": no such file or directory")
}

// TestConfigExample parses the commented example config file the docs
// ship, so that it stays valid.
func TestConfigExample(t *testing.T) {
	t.Setenv("DOCS_MCP_TOKEN", "tok")
	var stderr bytes.Buffer
	o, code := parseFlags([]string{"-config", "../../docs/agent-config.example.yaml"}, &stderr)
	require.Equal(t, -1, code, stderr.String())
	assert.Equal(t, "claude-sonnet-4-5", o.model)
	require.Len(t, o.config.servers, 2)
	assert.Equal(t, "Bearer tok", o.config.servers[1].Headers["Authorization"])
	assert.Equal(t, tools.ApprovalAlways, o.config.servers[0].Approve["delete"])
}
