package instructions_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/instructions"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
)

// workspace makes a workspace holding files.
func workspace(t *testing.T, files map[string]string) *tools.Workspace {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	ws, err := tools.NewWorkspace(dir)
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	return ws
}

// TestForPath checks which directories' instructions a tool's path
// brings in: those between the root and its directory, each once, never
// for a path outside the workspace.
func TestForPath(t *testing.T) {
	ws := workspace(t, map[string]string{"a/AGENTS.md": "A", "a/b/CLAUDE.md": "B", "c/AGENTS.md": "C"})
	set := instructions.Load(ws, instructions.Options{})
	assert.Empty(t, set.System(), "no root file")
	tests := []struct {
		path  string
		isDir bool
		want  []string // the files whose text comes, in order
	}{
		{"../c/x", false, nil},
		{"/etc/passwd", false, nil},
		{"a/../../c/x", false, nil},
		{"x.go", false, nil},
		{"c", false, nil}, // a file named c in the root
		{"a/b/x.go", false, []string{"a/AGENTS.md", "a/b/CLAUDE.md"}},
		{"a/b", true, nil}, // both loaded already
		{"c", true, []string{"c/AGENTS.md"}},
	}
	for _, tt := range tests {
		got := set.ForPath(t.Context(), tt.path, tt.isDir)
		if tt.want == nil {
			assert.Empty(t, got, tt.path)
			continue
		}
		for _, f := range tt.want {
			assert.Contains(t, got, "[instructions: "+f+" applies", tt.path)
		}
	}
	var loaded []string
	for _, f := range set.Files() {
		loaded = append(loaded, f.Path)
	}
	assert.Equal(t, []string{"a/AGENTS.md", "a/b/CLAUDE.md", "c/AGENTS.md"}, loaded)
}

// TestForPathConcurrent touches one directory from many calls at once, as
// a round of parallel tools does: its instructions come exactly once.
func TestForPathConcurrent(t *testing.T) {
	ws := workspace(t, map[string]string{"d/AGENTS.md": "D"})
	set := instructions.Load(ws, instructions.Options{})
	var wg sync.WaitGroup
	results := make([]string, 16)
	for i := range results {
		wg.Go(func() { results[i] = set.ForPath(t.Context(), "d/x.go", false) })
	}
	wg.Wait()
	n := 0
	for _, r := range results {
		if r != "" {
			n++
		}
	}
	assert.Equal(t, 1, n)
}

// TestHolding checks that what was sent is what the conversation holds: a
// directory's instructions come again once the results that brought them
// are gone, and not while one of them is there; the file is read once.
func TestHolding(t *testing.T) {
	ws := workspace(t, map[string]string{"a/AGENTS.md": "A", "a/b/AGENTS.md": "B"})
	set := instructions.Load(ws, instructions.Options{})
	first := set.ForPath(t.Context(), "a/b/x.go", false)
	require.Contains(t, first, "[instructions: a/b/AGENTS.md applies")
	tests := []struct {
		name  string
		held  []string // the results the conversation holds
		noted int
		want  []string // the files whose text comes for a/b/x.go
	}{
		{"the result is held", []string{"hello", "package x\n" + first}, 2, nil},
		{"the result was cut", []string{"hello"}, 0, []string{"a/AGENTS.md", "a/b/AGENTS.md"}},
		{"what was brought again is noted as sent", nil, -1, nil},
		{"a marker that is not on a line of its own", []string{"x [instructions: a/AGENTS.md applies to the files under a/; follow it there]"}, 0, []string{"a/AGENTS.md", "a/b/AGENTS.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.noted >= 0 {
				assert.Equal(t, tt.noted, set.Holding(tt.held))
			}
			got := set.ForPath(t.Context(), "a/b/x.go", false)
			if tt.want == nil {
				assert.Empty(t, got)
			}
			for _, f := range tt.want {
				assert.Contains(t, got, "[instructions: "+f+" applies")
			}
		})
	}
	assert.Len(t, set.Files(), 2, "each file is read once")
}

// TestForPathDeep checks the instructions of deep paths and of paths that
// lead through links: found down to the first directory that is missing,
// none for a path over the file tools' depth limit (which refuse it) or
// once the call's context is done, and an instructions file that is a
// link followed as the file tools follow it.
func TestForPathDeep(t *testing.T) {
	t.Parallel()
	ws := workspace(t, map[string]string{"a/AGENTS.md": "A", "a/a/a/CLAUDE.md": "AAA", "s/.keep": "", "o/.keep": ""})
	require.NoError(t, os.Symlink("../a/AGENTS.md", filepath.Join(ws.Root(), "s", "AGENTS.md")))
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(ws.Root(), "o", "AGENTS.md")))
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		path string
		want []string // the files whose text comes, in order
	}{
		{"1,000 deep, missing below a/a/a", t.Context(), strings.Repeat("a/", 1000) + "x", []string{"a/AGENTS.md", "a/a/a/CLAUDE.md"}},
		{"4,096 deep: over the limit", t.Context(), strings.Repeat("a/", 4096) + "x", nil},
		{"cancelled", cancelled, "a/a/a/x", nil},
		{"a link inside", t.Context(), "s/x", []string{"s/AGENTS.md"}},
		{"a link outside", t.Context(), "o/x", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			set := instructions.Load(ws, instructions.Options{})
			got := set.ForPath(tt.ctx, tt.path, false)
			var files []string
			for _, m := range regexp.MustCompile(`\[instructions: (\S+) applies`).FindAllStringSubmatch(got, -1) {
				files = append(files, m[1])
			}
			assert.Equal(t, tt.want, files)
		})
	}
	set := instructions.Load(ws, instructions.Options{})
	assert.Empty(t, set.ForPath(t.Context(), "o/x", false))
	files := set.Files()
	require.Len(t, files, 1)
	assert.ErrorContains(t, files[0].Err, "outside the workspace", "the link outside is refused, and said so")
}
