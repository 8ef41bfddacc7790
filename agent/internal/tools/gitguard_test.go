package tools

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/gittest"
)

// guardedRepo returns a repository with a submodule "sub" (its .git a
// gitdir pointer into .git/modules/sub) and an untracked nested repository
// "nested" (its .git a directory), all committed.
func guardedRepo(t *testing.T) string {
	t.Helper()
	upstream := gittest.NewRepo(t, map[string]string{"lib.go": "package lib\n"})
	dir := gittest.NewRepo(t, map[string]string{"README": "top\n"})
	gittest.Git(t, dir, "-c", "protocol.file.allow=always", "submodule", "--quiet", "add", upstream, "sub")
	gittest.Git(t, dir, "commit", "--quiet", "-m", "sub")
	gittest.Git(t, dir, "init", "--quiet", "nested")
	gittest.WriteFile(t, dir, "nested/n.txt", "n\n")
	gittest.WriteFile(t, dir, "docs/guide.md", "# guide\n")
	return dir
}

// sh runs a shell command in dir, as the bash tool would.
func sh(t *testing.T, dir, command string) {
	t.Helper()
	cmd := exec.Command("bash", "-c", command)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// TestGitGuard makes the changes to the workspace's repositories that a
// command could make and checks that the guard puts back or removes each
// one, names it, and leaves the user's git running nothing planted.
func TestGitGuard(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// command is run in the workspace, with $PWNED replaced by a
		// marker path outside it and $OUTSIDE by a directory outside it
		// (in the text, so that whatever git process runs what the
		// command plants touches the marker, whatever its environment).
		command string
		want    []string // "path: what", then " (undone)" when the guard put it back
		check   func(t *testing.T, dir, outside string)
	}{
		{
			name: "the submodule's gitdir pointer redirected to a copy with core.fsmonitor (issue 20 item 2)",
			command: `cp -r .git/modules/sub evil && git config --file evil/config core.fsmonitor "touch $PWNED; false" && ` +
				`printf 'gitdir: ../evil\n' > sub/.git`,
			want: []string{"evil: a git repository was created (undone)", "sub/.git: the gitdir pointer changed (undone)"},
			check: func(t *testing.T, dir, _ string) {
				assert.Equal(t, "gitdir: ../.git/modules/sub\n", gittest.ReadFile(t, dir, "sub/.git"))
				assert.NoDirExists(t, filepath.Join(dir, "evil"))
			},
		},
		{
			name:    "the nested repository's configuration changed",
			command: `git -C nested config core.fsmonitor "touch $PWNED; false"`,
			want:    []string{"nested/.git/config: changed in a .git directory (undone)"},
		},
		{
			name:    "a hook added to the nested repository",
			command: `printf '#!/bin/sh\ntouch $PWNED\n' > nested/.git/hooks/pre-commit && chmod +x nested/.git/hooks/pre-commit`,
			want:    []string{"nested/.git/hooks/pre-commit: added to a .git directory (undone)"},
			check: func(t *testing.T, dir, _ string) {
				assert.NoFileExists(t, filepath.Join(dir, "nested/.git/hooks/pre-commit"))
			},
		},
		{
			name:    "a new repository",
			command: `git init -q fresh && git -C fresh config core.fsmonitor "touch $PWNED; false" && echo x > fresh/x`,
			want:    []string{"fresh/.git: a .git was created (undone)"},
			check: func(t *testing.T, dir, _ string) {
				assert.NoDirExists(t, filepath.Join(dir, "fresh/.git"))
				assert.FileExists(t, filepath.Join(dir, "fresh/x"), "the files stay")
			},
		},
		{
			name:    "a bare repository",
			command: `git init -q --bare plain.git && git config --file plain.git/config core.fsmonitor "touch $PWNED; false"`,
			want:    []string{"plain.git: a git repository was created (undone)"},
			check: func(t *testing.T, dir, _ string) {
				cmd := exec.Command("git", "rev-parse", "--git-dir")
				cmd.Dir = filepath.Join(dir, "plain.git")
				out, _ := cmd.CombinedOutput()
				assert.NotContains(t, string(out), "plain.git", "git still takes it for a repository")
			},
		},
		{
			name:    "a directory of the user's made into a git directory",
			command: `mkdir -p docs/objects docs/refs && printf 'ref: refs/heads/main\n' > docs/HEAD && printf '[core]\n\tfsmonitor = touch $PWNED\n' > docs/config`,
			want:    []string{"docs: a directory was made into a git repository (undone)"},
			check: func(t *testing.T, dir, _ string) {
				assert.NoFileExists(t, filepath.Join(dir, "docs/HEAD"))
				assert.NoDirExists(t, filepath.Join(dir, "docs/objects"))
				assert.FileExists(t, filepath.Join(dir, "docs/guide.md"), "the user's files stay")
			},
		},
		{
			name:    "the submodule's pointer removed and a repository made in its place",
			command: `rm sub/.git && git init -q sub && git -C sub config core.fsmonitor "touch $PWNED; false"`,
			want:    []string{"sub/.git: the gitdir pointer was replaced by a directory (undone)"},
			check: func(t *testing.T, dir, _ string) {
				assert.Equal(t, "gitdir: ../.git/modules/sub\n", gittest.ReadFile(t, dir, "sub/.git"))
			},
		},
		{
			name:    "the nested repository moved",
			command: `mv nested moved`,
			want:    []string{"moved/.git: the .git directory of nested/.git was moved here", "nested/.git: the .git directory was removed or replaced"},
			check: func(t *testing.T, dir, _ string) {
				assert.DirExists(t, filepath.Join(dir, "moved/.git"), "the user's repository is not deleted")
			},
		},
		{
			name:    "the path to the pointer made a link elsewhere",
			command: `mv sub sub.real && ln -s $OUTSIDE sub`,
			// The pointer, moved with its directory, goes: what it was is
			// recorded, and it cannot be put back through the link.
			want: []string{"sub.real/.git: a .git was created (undone)", "sub/.git: the gitdir pointer was removed"},
			check: func(t *testing.T, _, outside string) {
				assert.NoFileExists(t, filepath.Join(outside, ".git"), "the guard wrote through a link")
			},
		},
		{
			name:    "the workspace's own configuration: left to the sandbox and the auto-commit",
			command: `git config core.fsmonitor false`,
		},
		{
			name:    "ordinary work",
			command: `echo y > sub/y && git -C nested status >/dev/null && git status >/dev/null && mkdir -p a/b && echo z > a/b/z`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := guardedRepo(t)
			// Paths plain enough to stand in shell text (t.TempDir's
			// hold the test's name).
			base, err := os.MkdirTemp("", "gitguard-")
			require.NoError(t, err)
			t.Cleanup(func() { _ = os.RemoveAll(base) })
			marker, outside := filepath.Join(base, "PWNED"), filepath.Join(base, "outside")
			require.NoError(t, os.Mkdir(outside, 0o755))
			command := strings.NewReplacer("$PWNED", marker, "$OUTSIDE", outside).Replace(tt.command)
			ws, err := NewWorkspace(dir)
			require.NoError(t, err)
			t.Cleanup(func() { _ = ws.Close() })
			g, err := NewGitGuard(context.Background(), ws)
			require.NoError(t, err)

			sh(t, dir, command)
			found, err := g.Check(context.Background())
			require.NoError(t, err)
			var got []string
			for _, c := range found {
				g := c.Path + ": " + c.What
				if c.Undone {
					g += " (undone)"
				}
				got = append(got, g)
			}
			assert.Equal(t, tt.want, got)
			if tt.check != nil {
				tt.check(t, dir, outside)
			}
			assert.Equal(t, found, g.Changes())
			again, err := g.Check(context.Background())
			require.NoError(t, err)
			assert.Empty(t, again, "once put back, nothing is left to find; what cannot be is told once")
			assert.Equal(t, found, g.Changes())

			// The user's own git, at the top, in the submodule and in the
			// nested repository, runs nothing a command planted.
			for _, args := range [][]string{{"status"}, {"diff"}, {"-C", "sub", "status"}, {"-C", "nested", "status"}} {
				cmd := exec.Command("git", args...)
				cmd.Dir = dir
				_ = cmd.Run()
			}
			sh(t, dir, `git -c user.name=u -c user.email=e commit -q --allow-empty -m user || true`)
			assert.NoFileExists(t, marker, "the user's git ran a planted command")
		})
	}
}

// TestGitGuardNote checks what the model is told.
func TestGitGuardNote(t *testing.T) {
	t.Parallel()
	dir := guardedRepo(t)
	ws, err := NewWorkspace(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ws.Close() })
	g, err := NewGitGuard(context.Background(), ws)
	require.NoError(t, err)
	assert.Empty(t, g.CheckNote(context.Background()))
	sh(t, dir, `printf 'gitdir: /tmp/x\n' > sub/.git`)
	note := g.CheckNote(context.Background())
	assert.True(t, strings.HasPrefix(note, "[the agent undid changes to git repositories in the workspace: "), note)
	assert.Contains(t, note, "\n- sub/.git: the gitdir pointer changed; put back as it was]")
}

// TestEditFileRefusesGitDirectories checks that edit_file writes nothing
// that would make a directory a git directory, nor in one.
func TestEditFileRefusesGitDirectories(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, p := range []string{"bare.git/objects", "bare.git/refs", "half/objects", "half/refs"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, p), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "bare.git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "wt"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "wt", "HEAD"), []byte("ref: refs/heads/x\n"), 0o644))
	ws, err := NewWorkspace(root)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ws.Close() })
	s := Default(ws, Options{})
	tests := []struct {
		path   string
		refuse bool
	}{
		{"bare.git/config", true},
		{"bare.git/hooks/pre-commit", true},
		{"half/HEAD", true},
		{"half/notes.txt", false},
		{"wt/commondir", true},
		{"wt/gitdir", false},
		{"fresh/HEAD", false},
		{"plain/objects/x", false},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			out := call(t, s, "edit_file", obj{"path": tt.path, "old_str": "", "new_str": "x\n"})
			assert.Equal(t, tt.refuse, out.IsError, out.Content)
			if tt.refuse {
				assert.Contains(t, out.Content, "which git takes for a repository")
				assert.NoFileExists(t, filepath.Join(root, tt.path))
			}
		})
	}
}

// BenchmarkGitGuardCheck measures a check of a workspace of 1,000
// directories of 10 files each with a submodule and a nested repository:
// what the guard adds to every bash command.
func BenchmarkGitGuardCheck(b *testing.B) {
	dir := b.TempDir()
	for _, c := range [][]string{{"init", "-q", "nested"}, {"init", "-q", "sub"}} {
		cmd := exec.Command("git", c...)
		cmd.Dir = dir
		require.NoError(b, cmd.Run())
	}
	require.NoError(b, os.Rename(filepath.Join(dir, "sub", ".git"), filepath.Join(dir, "sub.gitdir")))
	require.NoError(b, os.WriteFile(filepath.Join(dir, "sub", ".git"), []byte("gitdir: ../sub.gitdir\n"), 0o644))
	for i := range 1000 {
		d := filepath.Join(dir, "src", fmt.Sprintf("p%02d", i/100), fmt.Sprintf("d%03d", i))
		require.NoError(b, os.MkdirAll(d, 0o755))
		for j := range 10 {
			require.NoError(b, os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d.go", j)), []byte("package x\n"), 0o644))
		}
	}
	ws, err := NewWorkspace(dir)
	require.NoError(b, err)
	defer ws.Close()
	g, err := NewGitGuard(context.Background(), ws)
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		if found, err := g.Check(context.Background()); err != nil || len(found) > 0 {
			b.Fatal(found, err)
		}
	}
}

// TestGitGuardUnusual checks what the guard finds odd when it starts: a
// gitdir pointer out of every .git, and a bare repository.
func TestGitGuardUnusual(t *testing.T) {
	t.Parallel()
	dir := guardedRepo(t)
	ws, err := NewWorkspace(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ws.Close() })
	g, err := NewGitGuard(context.Background(), ws)
	require.NoError(t, err)
	assert.Empty(t, g.Unusual(), "a submodule and a nested repository are usual")

	sh(t, dir, `cp -r .git/modules/sub evil && printf 'gitdir: ../evil\n' > sub/.git && git init -q --bare x.git`)
	g, err = NewGitGuard(context.Background(), ws)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"evil is a git repository outside a .git (a bare repository)",
		"sub/.git points to evil, outside every .git directory",
		"x.git is a git repository outside a .git (a bare repository)",
	}, g.Unusual())
}
