package mcptools_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/mcptools"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
)

// stdioServer builds the agent's test MCP server into a directory the
// sandbox shows, and returns its entry.
func stdioServer(b *testing.B) (mcptools.Server, mcptools.Options) {
	b.Helper()
	dir, err := os.MkdirTemp("", "mcptools-bench-")
	require.NoError(b, err)
	b.Cleanup(func() { _ = os.RemoveAll(dir) })
	require.NoError(b, os.Chmod(dir, 0o755))
	bin := filepath.Join(dir, "mcpserver")
	out, err := exec.Command("go", "build", "-o", bin, "../../app/testdata/mcpserver").CombinedOutput()
	require.NoError(b, err, "%s", out)
	ws := b.TempDir()
	mode := sandbox.Bwrap
	if _, err := sandbox.Detect(context.Background(), ""); err != nil {
		mode = sandbox.Off
	}
	return mcptools.Server{Name: "bench", Command: []string{bin}, Expose: []sandbox.Exposure{{Path: dir}}},
		mcptools.Options{Workspace: ws, Sandbox: sandbox.Options{Mode: mode}}
}

// BenchmarkStdioStart starts a stdio server in its sandbox, lists its
// tools and closes it: what each server adds to the agent's start.
func BenchmarkStdioStart(b *testing.B) {
	s, opt := stdioServer(b)
	for b.Loop() {
		c, errs := mcptools.Start(b.Context(), []mcptools.Server{s}, opt)
		require.Empty(b, errs)
		require.NoError(b, c.Close())
	}
}

// BenchmarkStdioCall calls a tool of a sandboxed stdio server: the cost
// of one MCP tool call beside the tool's own work.
func BenchmarkStdioCall(b *testing.B) {
	s, opt := stdioServer(b)
	c, errs := mcptools.Start(b.Context(), []mcptools.Server{s}, opt)
	require.Empty(b, errs)
	b.Cleanup(func() { _ = c.Close() })
	set, err := tools.NewSet(tools.Options{})
	require.NoError(b, err)
	set, err = set.With(c.Tools()...)
	require.NoError(b, err)
	call := chat.ToolCall{ID: "1", Name: "mcp__bench__echo", Arguments: json.RawMessage(`{"text":"hi"}`)}
	for b.Loop() {
		if out := set.Run(b.Context(), call, nil); out.IsError || out.Content != "echo: hi" {
			b.Fatalf("%+v", out)
		}
	}
}
