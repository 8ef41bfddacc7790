package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/progpath"
)

// TestPlantedProgramsNotRun (issue 29 item 1): with the workspace's
// .venv/bin first on PATH, a bwrap and a bash planted there are never
// run: not bubblewrap, not the shell that sets the limits (which, planted,
// would set none), not an unconfined command's bash. Markers go to the
// workspace, which a planted program could write confined or not. (A
// confined command's own program is found inside the sandbox, through the
// PATH it sees: here echo, which is not planted.)
func TestPlantedProgramsNotRun(t *testing.T) {
	ws := t.TempDir()
	bin := filepath.Join(ws, ".venv", "bin")
	markers := filepath.Join(ws, "markers")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	require.NoError(t, os.MkdirAll(markers, 0o755))
	for _, name := range []string{"bwrap", "bash"} {
		script := "#!/bin/sh\ntouch '" + filepath.Join(markers, name) + "'\nexit 1\n"
		require.NoError(t, os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755))
	}
	path := bin + string(filepath.ListSeparator) + os.Getenv("PATH")
	programs := progpath.New(progpath.Options{PATH: path, Workspace: ws})
	environ := func() []string {
		env := []string{"PATH=" + path}
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "PATH=") {
				env = append(env, kv)
			}
		}
		return env
	}
	for _, mode := range []Mode{Bwrap, Off} {
		t.Run(string(mode), func(t *testing.T) {
			if mode == Bwrap {
				if _, err := Detect(context.Background(), ""); err != nil {
					t.Skipf("bubblewrap does not work here: %v", err)
				}
			}
			s, err := New(context.Background(), Options{Mode: mode, Programs: programs, Environ: environ})
			require.NoError(t, err)
			if mode == Bwrap {
				assert.False(t, strings.HasPrefix(s.bwrap, ws), s.bwrap)
				assert.False(t, strings.HasPrefix(s.shell, ws), s.shell)
			}
			var out bytes.Buffer
			args := []string{"echo", "hi"}
			if mode == Off {
				args = []string{"bash", "-c", "echo hi"}
			}
			p, err := s.Start(Command{Workspace: ws, Args: args, Stdout: &out, Stderr: &out})
			require.NoError(t, err)
			require.NoError(t, p.Wait(), out.String())
			assert.Equal(t, "hi\n", out.String())
			entries, err := os.ReadDir(markers)
			require.NoError(t, err)
			assert.Empty(t, entries, "a program planted in the workspace ran")
		})
	}
}

// TestOptionsWritable checks the directories commands can write besides
// their workspace: the cache directory and the paths exposed writable,
// absolute.
func TestOptionsWritable(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	opt := Options{CacheDir: "/var/cache/agent", Expose: []Exposure{{Path: "~/.cargo/bin"}, {Path: "~/.npm", Writable: true}, {Path: "/opt/data", Writable: true}}}
	assert.Equal(t, []progpath.Place{
		{Path: "/var/cache/agent", What: "the sandbox's build caches"},
		{Path: home + "/.npm", What: "exposed writable to sandboxed commands (-sandbox-expose ~/.npm:rw)"},
		{Path: "/opt/data", What: "exposed writable to sandboxed commands (-sandbox-expose /opt/data:rw)"},
	}, opt.Writable())
	assert.Empty(t, Options{}.Writable())
}
