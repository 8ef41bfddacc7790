package autocommit

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/gittest"
)

// bash runs script with bash in dir, as the agent's bash tool would (but
// without its sandbox), with M set to markers and a git identity in the
// environment; it fails the test when the script fails.
func bash(t *testing.T, dir, markers, script string) {
	t.Helper()
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "M="+markers,
		"GIT_AUTHOR_NAME=Tool", "GIT_AUTHOR_EMAIL=tool@example.com", "GIT_COMMITTER_NAME=Tool", "GIT_COMMITTER_EMAIL=tool@example.com")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s\n%s", script, out)
}

// ran lists the markers the commands configured in the nested
// repositories created.
func ran(t *testing.T, markers string) []string {
	t.Helper()
	entries, err := os.ReadDir(markers)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// gitlinks lists the gitlinks of git ls-files --stage or ls-tree output.
func gitlinks(listing string) []string {
	var links []string
	for line := range strings.SplitSeq(listing, "\n") {
		if strings.HasPrefix(line, modeGitlink+" ") {
			links = append(links, line[strings.IndexByte(line, '\t')+1:])
		}
	}
	return links
}

// plainStatus runs git status in dir as the user would: no hardening.
func plainStatus(t *testing.T, dir string) {
	t.Helper()
	cmd := exec.Command("git", "status")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// The reviewer's command: a repository created inside the workspace whose
// configuration runs commands, with a commit so that git add would make it
// a gitlink.
const nestedRepoScript = `mkdir sub && cd sub && git init -q && git config core.fsmonitor "touch $M/fsmonitor; false" && ` +
	`git config core.hooksPath /nonexist && git config filter.x.clean "touch $M/filter; cat" && ` +
	`git config diff.x.textconv "touch $M/textconv; cat" && echo '* filter=x diff=x' > .gitattributes && echo a > a && ` +
	`git commit --allow-empty -qm x`

func TestCommitLeavesOutNestedRepositories(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		sub  string // the workspace, below the repository's top
		// before runs before Open (the user's), script after (a tool's).
		before, script string
		wantRepos      []string
		wantFiles      []string // HEAD's tree after the commit
	}{
		{
			name:      "the reviewer's command",
			script:    nestedRepoScript,
			wantRepos: []string{"sub"},
			wantFiles: []string{".gitignore", "README.md", "main.go"},
		},
		{
			name:      "in a subdirectory workspace",
			sub:       "ws",
			script:    nestedRepoScript,
			wantRepos: []string{"sub"},
			wantFiles: []string{".gitignore", "README.md", "ws/main.go"},
		},
		{
			name:      "a repository without a commit (git add would fail)",
			script:    `mkdir -p a/b && cd a/b && git init -q && git config core.fsmonitor "touch $M/fsmonitor; false" && echo x > f`,
			wantRepos: []string{"a/b"},
			wantFiles: []string{".gitignore", "README.md", "main.go"},
		},
		{
			name: "a .git file naming a repository",
			script: `git init -q "$M/../other" && git -C "$M/../other" config core.fsmonitor "touch $M/fsmonitor; false" && ` +
				`git -C "$M/../other" commit --allow-empty -qm x && mkdir g && echo "gitdir: $M/../other/.git" > g/.git`,
			wantRepos: []string{"g"},
			wantFiles: []string{".gitignore", "README.md", "main.go"},
		},
		{
			name:      "a tracked directory made a repository",
			before:    `mkdir lib && echo 'package lib' > lib/lib.go && git add lib && git commit -qm lib`,
			script:    `cd lib && git init -q && git config core.fsmonitor "touch $M/fsmonitor; false" && git add . && git commit -qm x && echo changed >> lib.go`,
			wantRepos: []string{"lib"}, // git status does not show it: its files are the workspace's
			wantFiles: []string{".gitignore", "README.md", "lib/lib.go", "main.go"},
		},
		{
			name:      "a .git file naming no repository, in a new directory",
			script:    `mkdir x && echo "gitdir: /nowhere" > x/.git && echo a > x/a`,
			wantRepos: []string{"x"},
			wantFiles: []string{".gitignore", "README.md", "main.go", "x/a"},
		},
		{
			name:      "a .git file naming no repository, alone in a tracked directory",
			before:    `mkdir -p lib/deep && echo 'package deep' > lib/deep/deep.go && git add lib && git commit -qm lib`,
			script:    `echo "gitdir: /nowhere" > lib/.git`,
			wantRepos: []string{"lib"},
			wantFiles: []string{".gitignore", "README.md", "lib/deep/deep.go", "main.go"},
		},
		{
			name:      "the user's untracked repository is neither committed nor named",
			before:    `mkdir mine && cd mine && git init -q && git commit --allow-empty -qm x`,
			script:    `cd mine && git commit --allow-empty -qm y`,
			wantFiles: []string{".gitignore", "README.md", "main.go"},
		},
		{
			name:      "the user's untracked repository, its configuration changed",
			before:    `mkdir mine && cd mine && git init -q && git commit --allow-empty -qm x`,
			script:    `git -C mine config core.fsmonitor "touch $M/fsmonitor; false"`,
			wantRepos: []string{"mine"},
			wantFiles: []string{".gitignore", "README.md", "main.go"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			top := newRepo(t, repoOptions{})
			dir := filepath.Join(top, tt.sub)
			require.NoError(t, os.MkdirAll(dir, 0o755))
			markers := filepath.Join(t.TempDir(), "markers")
			require.NoError(t, os.Mkdir(markers, 0o755))
			if tt.before != "" {
				bash(t, dir, markers, tt.before)
			}
			c := open(t, dir)
			bash(t, dir, markers, tt.script)
			gittest.WriteFile(t, dir, "main.go", "package main\n")
			// The tool's own git commands may have run the commands: only
			// what runs from here on counts.
			require.NoError(t, os.RemoveAll(markers))
			require.NoError(t, os.Mkdir(markers, 0o755))

			res, err := commitRound(context.Background(), c, editAndBash)
			require.NoError(t, err)
			assert.True(t, res.Committed, "%+v", res)
			assert.Equal(t, tt.wantRepos, res.Repositories)
			assert.Empty(t, ran(t, markers), "the auto-commit ran a nested repository's commands")
			assert.Equal(t, tt.wantFiles, committedFiles(t, top))
			assert.Empty(t, gitlinks(gittest.Git(t, top, "ls-tree", "-r", "HEAD")), "a repository was committed")
			assert.Empty(t, gitlinks(gittest.Git(t, top, "ls-files", "--stage")), "a repository was left staged")

			plainStatus(t, dir)
			plainStatus(t, top)
			assert.Empty(t, ran(t, markers), "the user's git status ran a nested repository's commands")

			// Named once: a second round does not repeat it.
			gittest.WriteFile(t, dir, "main.go", "package main // again\n")
			res, err = commitRound(context.Background(), c, editAndBash)
			require.NoError(t, err)
			assert.True(t, res.Committed, "%+v", res)
			assert.Empty(t, res.Repositories)
			assert.Empty(t, gitlinks(gittest.Git(t, top, "ls-tree", "-r", "HEAD")), "a repository was committed")
		})
	}

	t.Run("control: committed, the repository runs its commands in the user's git status", func(t *testing.T) {
		t.Parallel()
		dir := newRepo(t, repoOptions{})
		markers := t.TempDir()
		bash(t, dir, markers, nestedRepoScript)
		require.NoError(t, os.RemoveAll(markers))
		require.NoError(t, os.Mkdir(markers, 0o755))
		gittest.Git(t, dir, "add", "sub") // what the auto-commit did before
		plainStatus(t, dir)
		assert.NotEmpty(t, ran(t, markers), "the test proves nothing")
	})
}

func TestCommitSubmodules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// script runs in the workspace after Open (a tool's).
		script    string
		wantRepos []string
		wantMoved bool // the commit records the submodule's new commit
	}{
		{
			name:      "a new commit checked out in the user's submodule is committed",
			script:    `cd lib && git checkout -q HEAD~1`,
			wantMoved: true,
		},
		{
			name:      "a submodule whose configuration a tool changed is left out and named",
			script:    `cd lib && git config core.fsmonitor "touch $M/fsmonitor; false" && git checkout -q HEAD~1`,
			wantRepos: []string{"lib"},
		},
		{
			name:      "a submodule whose .git a tool replaced is left out and named",
			script:    `cd lib && rm .git && git init -q && git config core.fsmonitor "touch $M/fsmonitor; false" && git commit --allow-empty -qm x`,
			wantRepos: []string{"lib"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			upstream := gittest.NewRepo(t, map[string]string{"a.txt": "1\n"})
			gittest.WriteFile(t, upstream, "a.txt", "2\n")
			gittest.Git(t, upstream, "commit", "--quiet", "-am", "second")
			dir := newRepo(t, repoOptions{})
			markers := t.TempDir()
			bash(t, dir, markers, `git -c protocol.file.allow=always submodule --quiet add "`+upstream+`" lib && git commit -qm "add lib"`)
			before := gittest.Git(t, dir, "rev-parse", "HEAD:lib")
			c := open(t, dir)
			bash(t, dir, markers, tt.script)
			gittest.WriteFile(t, dir, "main.go", "package main\n")
			require.NoError(t, os.RemoveAll(markers))
			require.NoError(t, os.Mkdir(markers, 0o755))

			res, err := commitRound(context.Background(), c, editAndBash)
			require.NoError(t, err)
			assert.True(t, res.Committed, "%+v", res)
			assert.Equal(t, tt.wantRepos, res.Repositories)
			assert.Empty(t, ran(t, markers), "the auto-commit ran a nested repository's commands")
			after := gittest.Git(t, dir, "rev-parse", "HEAD:lib")
			if tt.wantMoved {
				assert.NotEqual(t, before, after, "the submodule's new commit was not committed")
				assert.Equal(t, gittest.Git(t, filepath.Join(dir, "lib"), "rev-parse", "HEAD"), after)
			} else {
				assert.Equal(t, before, after, "the replaced submodule's commit was committed")
			}
			assert.Equal(t, []string{"lib"}, gitlinks(gittest.Git(t, dir, "ls-tree", "-r", "HEAD")))
			assert.Contains(t, committedFiles(t, dir), "main.go")
		})
	}
}
