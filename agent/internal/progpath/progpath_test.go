package progpath_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/progpath"
)

// tree is a file system for the resolver: a workspace, a directory the
// sandbox lets commands write, and directories outside both, each
// holding a program "tool".
type tree struct {
	root, ws, cache, usr, opt string
}

// newTree makes the tree in a fresh directory, links resolved.
func newTree(t *testing.T) tree {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	tr := tree{root: root, ws: filepath.Join(root, "ws"), cache: filepath.Join(root, "cache"),
		usr: filepath.Join(root, "usr", "bin"), opt: filepath.Join(root, "opt", "bin")}
	for _, dir := range []string{tr.ws + "/.venv/bin", tr.cache + "/bin", tr.usr, tr.opt} {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "tool"), []byte("#!/bin/sh\n"), 0o755))
	}
	return tr
}

// resolver returns the tree's resolver of the PATH made of dirs.
func (tr tree) resolver(dirs ...string) *progpath.Resolver {
	return progpath.New(progpath.Options{
		PATH:      strings.Join(dirs, string(filepath.ListSeparator)),
		Workspace: tr.ws,
		Writable:  []progpath.Place{{Path: tr.cache, What: "the sandbox's build caches"}},
	})
}

// link makes a symbolic link at path to target.
func link(t *testing.T, target, path string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.Symlink(target, path))
}

// TestResolverPATH checks which directories of PATH a resolver looks in,
// which it skips and why, and where it finds "tool".
func TestResolverPATH(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// path returns PATH's entries, after making what they need.
		path     func(t *testing.T, tr tree) []string
		wantTool func(tr tree) string // "" for not found
		// wantSkip are the reasons of the skipped entries, in order, each
		// with "{ws}" and "{cache}" standing for the tree's directories.
		wantSkip []string
	}{
		{
			name:     "a directory outside: looked in",
			path:     func(t *testing.T, tr tree) []string { return []string{tr.usr} },
			wantTool: func(tr tree) string { return filepath.Join(tr.usr, "tool") },
		},
		{
			name:     "a directory inside the workspace: skipped, the next one used",
			path:     func(t *testing.T, tr tree) []string { return []string{tr.ws + "/.venv/bin", tr.usr} },
			wantTool: func(tr tree) string { return filepath.Join(tr.usr, "tool") },
			wantSkip: []string{"inside the workspace {ws}, which the model's commands write"},
		},
		{
			name:     "the workspace itself",
			path:     func(t *testing.T, tr tree) []string { return []string{tr.ws} },
			wantSkip: []string{"inside the workspace {ws}, which the model's commands write"},
		},
		{
			name:     "a directory inside the workspace that does not exist yet",
			path:     func(t *testing.T, tr tree) []string { return []string{tr.ws + "/node_modules/.bin", tr.usr} },
			wantTool: func(tr tree) string { return filepath.Join(tr.usr, "tool") },
			wantSkip: []string{"inside the workspace {ws}, which the model's commands write"},
		},
		{
			name: "a link to a directory of the workspace",
			path: func(t *testing.T, tr tree) []string {
				link(t, tr.ws+"/.venv/bin", tr.root+"/venv-bin")
				return []string{tr.root + "/venv-bin", tr.usr}
			},
			wantTool: func(tr tree) string { return filepath.Join(tr.usr, "tool") },
			wantSkip: []string{"reached through the link {root}/venv-bin into the workspace {ws}, which the model's commands write"},
		},
		{
			name: "a safe directory reached through a link inside the workspace",
			path: func(t *testing.T, tr tree) []string {
				// The model can point ws/l at a directory of its own.
				link(t, tr.usr, tr.ws+"/l")
				link(t, tr.ws+"/l", tr.root+"/l")
				return []string{tr.root + "/l"}
			},
			wantSkip: []string{"reached through the link {root}/l into the workspace {ws}, which the model's commands write"},
		},
		{
			name:     "a directory the sandbox lets commands write",
			path:     func(t *testing.T, tr tree) []string { return []string{tr.cache + "/bin", tr.opt} },
			wantTool: func(tr tree) string { return filepath.Join(tr.opt, "tool") },
			wantSkip: []string{"inside {cache}, the sandbox's build caches, which the model's commands can write"},
		},
		{
			name: "relative and empty entries",
			path: func(t *testing.T, tr tree) []string { return []string{".", "bin", "", tr.usr} },
			wantTool: func(tr tree) string {
				return filepath.Join(tr.usr, "tool")
			},
			wantSkip: []string{
				"a relative entry, which names a directory of whatever the current directory is (the workspace, mostly)",
				"a relative entry, which names a directory of whatever the current directory is (the workspace, mostly)",
				"an empty entry, which stands for the current directory (the workspace, mostly)",
			},
		},
		{
			name: "a program that links into the workspace: refused, the next one used",
			path: func(t *testing.T, tr tree) []string {
				require.NoError(t, os.Remove(tr.opt+"/tool"))
				link(t, tr.ws+"/.venv/bin/tool", tr.opt+"/tool")
				return []string{tr.opt, tr.usr}
			},
			wantTool: func(tr tree) string { return filepath.Join(tr.usr, "tool") },
		},
		{
			name: "a program that links to a safe one through a link in the workspace",
			path: func(t *testing.T, tr tree) []string {
				require.NoError(t, os.Remove(tr.opt+"/tool"))
				link(t, tr.usr+"/tool", tr.ws+"/tool-link")
				link(t, tr.ws+"/tool-link", tr.opt+"/tool")
				return []string{tr.opt}
			},
		},
		{
			name: "a program that links to a safe one: kept as named",
			path: func(t *testing.T, tr tree) []string {
				require.NoError(t, os.Remove(tr.opt+"/tool"))
				link(t, "../../usr/bin/tool", tr.opt+"/tool")
				return []string{tr.opt}
			},
			wantTool: func(tr tree) string { return filepath.Join(tr.opt, "tool") },
		},
		{
			name: "a directory that does not exist outside: dropped without a word",
			path: func(t *testing.T, tr tree) []string { return []string{tr.root + "/none", tr.usr} },
			wantTool: func(tr tree) string {
				return filepath.Join(tr.usr, "tool")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr := newTree(t)
			r := tr.resolver(tt.path(t, tr)...)
			expand := strings.NewReplacer("{ws}", tr.ws, "{cache}", tr.cache, "{root}", tr.root)
			var whys []string
			for _, s := range r.Skipped() {
				whys = append(whys, s.Why)
			}
			var want []string
			for _, w := range tt.wantSkip {
				want = append(want, expand.Replace(w))
			}
			assert.Equal(t, want, whys)
			got, err := r.Look("tool")
			if tt.wantTool == nil {
				require.Error(t, err)
				assert.True(t, errors.Is(err, exec.ErrNotFound), "%v", err)
				assert.Empty(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantTool(tr), got)
		})
	}
}

// TestResolverNotFound checks that a program found only where the
// resolver does not look is refused with the place it was skipped in and
// why.
func TestResolverNotFound(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	require.NoError(t, os.WriteFile(tr.ws+"/.venv/bin/git", []byte("#!/bin/sh\n"), 0o755))
	r := tr.resolver(tr.ws+"/.venv/bin", tr.usr)
	_, err := r.Look("git")
	require.Error(t, err)
	assert.True(t, errors.Is(err, exec.ErrNotFound))
	assert.Equal(t, "git is not installed in the directories of PATH the agent runs programs from; skipped: "+
		tr.ws+"/.venv/bin/git ("+tr.ws+"/.venv/bin: inside the workspace "+tr.ws+", which the model's commands write); "+
		"install git outside the workspace and put its directory on PATH", err.Error())
}

// TestResolverAbsolute checks programs named by a path: absolute and
// outside, kept; inside the workspace, through a link or not, refused;
// relative, refused.
func TestResolverAbsolute(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	link(t, tr.ws+"/.venv/bin/tool", tr.opt+"/ws-tool")
	r := tr.resolver(tr.usr)
	tests := []struct {
		name, prog, want, wantErr string
	}{
		{name: "outside", prog: tr.usr + "/tool", want: tr.usr + "/tool"},
		{name: "inside the workspace", prog: tr.ws + "/.venv/bin/tool",
			wantErr: "program " + tr.ws + "/.venv/bin/tool: inside the workspace " + tr.ws + ", which the model's commands write; install it outside"},
		{name: "a link into the workspace", prog: tr.opt + "/ws-tool",
			wantErr: "reached through the link " + tr.opt + "/ws-tool into the workspace " + tr.ws},
		{name: "in a writable directory", prog: tr.cache + "/bin/tool", wantErr: "inside " + tr.cache + ", the sandbox's build caches"},
		{name: "relative", prog: "./.venv/bin/tool", wantErr: "a relative path is looked up from the current directory"},
		{name: "missing", prog: tr.usr + "/none", wantErr: "is not installed"},
		{name: "empty", prog: "", wantErr: "no program named"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := r.Look(tt.prog)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestResolverOnce checks that a name resolves once: a program planted
// later in a directory looked in before does not change the answer, nor
// does one removed.
func TestResolverOnce(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	r := tr.resolver(tr.opt, tr.usr)
	require.NoError(t, os.Remove(tr.opt+"/tool"))
	first, err := r.Look("tool")
	require.NoError(t, err)
	assert.Equal(t, tr.usr+"/tool", first)
	require.NoError(t, os.WriteFile(tr.opt+"/tool", []byte("#!/bin/sh\n"), 0o755))
	again, err := r.Look("tool")
	require.NoError(t, err)
	assert.Equal(t, first, again)
}

// TestResolverWithout checks the resolver of a sandbox's commands: it
// skips the directories the sandbox hides too, and says so.
func TestResolverWithout(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	r := tr.resolver(tr.opt+"/", tr.usr).Without("hidden from sandboxed commands", tr.opt)
	got, err := r.Look("tool")
	require.NoError(t, err)
	assert.Equal(t, tr.usr+"/tool", got)
	assert.Equal(t, []progpath.Skip{{Dir: tr.opt, Why: "hidden from sandboxed commands"}}, r.Skipped())
	assert.Equal(t, tr.usr, r.PATH())
}

// TestResolverPATHValue checks the search path given to programs the
// agent runs: the directories looked in alone.
func TestResolverPATHValue(t *testing.T) {
	t.Parallel()
	tr := newTree(t)
	r := tr.resolver(tr.ws+"/.venv/bin", ".", tr.usr, tr.cache+"/bin", tr.usr+"/", tr.opt)
	assert.Equal(t, tr.usr+string(filepath.ListSeparator)+tr.opt, r.PATH())
}
