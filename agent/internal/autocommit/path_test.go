package autocommit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/progpath"
	"github.com/fsmgen/fsmgen/internal/gittest"
)

// TestPlantedProgramsNotRun (issue 29 item 1): with a directory of the
// workspace first on PATH (an activated .venv), a git planted there, and
// a program a filter the user configured runs through PATH, are never
// run by the commit nor by /undo: git is found outside the workspace,
// and what git starts gets a PATH without the workspace's directories.
func TestPlantedProgramsNotRun(t *testing.T) {
	gittest.IsolateGit(t)
	for _, how := range []string{"the agent's resolver", "the default resolver"} {
		t.Run(how, func(t *testing.T) {
			dir := gittest.NewRepo(t, map[string]string{"a.txt": "one\n"})
			// The user's filter (as git-lfs installs its own), which git
			// starts through PATH for the files .gitattributes names.
			gittest.Git(t, dir, "config", "filter.demo.clean", "demo-filter clean")
			gittest.WriteFile(t, dir, ".gitattributes", "*.bin filter=demo\n")
			gittest.Git(t, dir, "add", ".gitattributes")
			gittest.Git(t, dir, "commit", "--quiet", "-m", "attributes")
			markers := t.TempDir()
			bin := filepath.Join(dir, ".venv", "bin")
			require.NoError(t, os.MkdirAll(bin, 0o755))
			for _, name := range []string{"git", "demo-filter"} {
				script := "#!/bin/sh\ntouch '" + filepath.Join(markers, name) + "'\ncat\n"
				require.NoError(t, os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755))
			}
			path := bin + string(filepath.ListSeparator) + os.Getenv("PATH")
			opt := Options{Programs: progpath.New(progpath.Options{PATH: path, Workspace: dir})}
			if how == "the default resolver" {
				opt.Programs = nil
				restore := os.Getenv("PATH")
				t.Setenv("PATH", path)
				defer os.Setenv("PATH", restore) // before gittest runs git again
			}

			ctx := context.Background()
			c, err := Open(ctx, dir, opt)
			require.NoError(t, err)
			assert.False(t, strings.HasPrefix(c.prog.git, dir), "git found in the workspace: %s", c.prog.git)
			assert.NotContains(t, filepath.SplitList(c.prog.path), bin)
			res := commitTurnOf(t, c, "t1", func() {
				gittest.WriteFile(t, dir, "data.bin", "binary\n")
				gittest.WriteFile(t, dir, "a.txt", "two\n")
			})
			require.NotEmpty(t, res.Commit, "%+v", res)
			undone, err := c.Undo(ctx, []string{"T1"}, "t1")
			require.NoError(t, err)
			assert.Equal(t, res.Commit, undone.Reverted)
			entries, err := os.ReadDir(markers)
			require.NoError(t, err)
			assert.Empty(t, entries, "a program planted in the workspace ran")
		})
	}
}
