package autocommit

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

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/internal/gittest"
)

// gitTry runs git in dir and returns its trimmed combined output.
func gitTry(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// repoOptions says how newRepo sets a repository up.
type repoOptions struct {
	noIdentity bool // leave user.name and user.email unset
	noCommit   bool // leave the branch unborn
}

// newRepo creates a git repository in a temporary directory with a
// committed README.md and a .gitignore for *.log and build/.
func newRepo(t *testing.T, opt repoOptions) string {
	t.Helper()
	dir := t.TempDir()
	gittest.Git(t, dir, "init", "--quiet", "--initial-branch=main")
	if !opt.noIdentity {
		gittest.Git(t, dir, "config", "user.name", "Test User")
		gittest.Git(t, dir, "config", "user.email", "test@example.com")
	}
	gittest.WriteFile(t, dir, "README.md", "# test\n")
	gittest.WriteFile(t, dir, ".gitignore", "*.log\nbuild/\n")
	if !opt.noCommit {
		gittest.Git(t, dir, "add", ".")
		gittest.Git(t, dir, "-c", "user.name=Setup", "-c", "user.email=setup@example.com", "commit", "--quiet", "-m", "initial")
	}
	return dir
}

// committedFiles lists the files of HEAD's tree.
func committedFiles(t *testing.T, dir string) []string {
	t.Helper()
	return strings.Split(gittest.Git(t, dir, "ls-tree", "-r", "--name-only", "HEAD"), "\n")
}

// open opens a committer for dir, failing the test on error.
func open(t *testing.T, dir string) *Committer {
	t.Helper()
	c, err := Open(context.Background(), dir, Options{})
	require.NoError(t, err)
	return c
}

var editAndBash = []chat.CompletedTool{
	{CallID: "c1", ToolName: "edit_file", Succeeded: true},
	{CallID: "c2", ToolName: "bash", Succeeded: false},
}

// editAndBashMessage is the message of commitRound's commit that
// changed files.
func editAndBashMessage(files ...FileChange) string {
	return TurnMessage(Turn{Prompt: "Go.", Summary: "Done.", Tools: editAndBash}, files)
}

func TestCommit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		repo        repoOptions
		change      func(t *testing.T, dir string)
		wantSkipped string
		wantFiles   []string // HEAD's tree after a commit
	}{
		{
			name: "modified, added and deleted files are committed",
			change: func(t *testing.T, dir string) {
				gittest.WriteFile(t, dir, "README.md", "# changed\n")
				gittest.WriteFile(t, dir, "src/main.go", "package main\n")
				require.NoError(t, os.Remove(filepath.Join(dir, ".gitignore")))
			},
			wantFiles: []string{"README.md", "src/main.go"},
		},
		{
			name: "ignored files are not committed",
			change: func(t *testing.T, dir string) {
				gittest.WriteFile(t, dir, "main.go", "package main\n")
				gittest.WriteFile(t, dir, "debug.log", "noise\n")
				gittest.WriteFile(t, dir, "build/out.bin", "binary\n")
			},
			wantFiles: []string{".gitignore", "README.md", "main.go"},
		},
		{
			name:      "a repository without identity uses the fallback",
			repo:      repoOptions{noIdentity: true},
			change:    func(t *testing.T, dir string) { gittest.WriteFile(t, dir, "new.txt", "x\n") },
			wantFiles: []string{".gitignore", "README.md", "new.txt"},
		},
		{
			name: "the first commit of a new repository",
			repo: repoOptions{noCommit: true},
			change: func(t *testing.T, dir string) {
				gittest.WriteFile(t, dir, "debug.log", "noise\n")
				gittest.WriteFile(t, dir, "main.go", "package main\n")
			},
			wantFiles: []string{"main.go"},
		},
		{
			name:        "no change is skipped",
			change:      func(*testing.T, string) {},
			wantSkipped: SkippedNoChanges,
		},
		{
			name: "only ignored changes are skipped",
			change: func(t *testing.T, dir string) {
				gittest.WriteFile(t, dir, "debug.log", "noise\n")
				gittest.WriteFile(t, dir, "build/out.bin", "binary\n")
			},
			wantSkipped: SkippedNoChanges,
		},
		{
			name: "a file rewritten with the same content is skipped",
			change: func(t *testing.T, dir string) {
				gittest.WriteFile(t, dir, "README.md", "# test\n")
			},
			wantSkipped: SkippedNoChanges,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := newRepo(t, tt.repo)
			before, _ := gitTry(dir, "rev-parse", "HEAD")
			c := open(t, dir)
			userStatus := gittest.Git(t, dir, "status", "--porcelain")
			tt.change(t, dir)

			res, err := commitRound(context.Background(), c, editAndBash)
			require.NoError(t, err)
			if tt.wantSkipped != "" {
				assert.Equal(t, Result{Skipped: tt.wantSkipped}, res)
				after, _ := gitTry(dir, "rev-parse", "HEAD")
				assert.Equal(t, before, after, "a commit was made")
				return
			}
			assert.True(t, res.Committed)
			assert.Empty(t, res.Skipped)
			assert.True(t, strings.HasPrefix(res.Message, "agent: Done.\n\nAsked: Go.\n\nFiles:\n"), res.Message)
			assert.Equal(t, gittest.Git(t, dir, "rev-parse", "HEAD"), res.Commit)
			assert.Equal(t, res.Message, gittest.Git(t, dir, "log", "-1", "--format=%B"))
			assert.Equal(t, AgentName+" <"+AgentEmail+">", gittest.Git(t, dir, "log", "-1", "--format=%an <%ae>"), "the agent's identity, not the user's")
			assert.Equal(t, AgentName+" <"+AgentEmail+">", gittest.Git(t, dir, "log", "-1", "--format=%cn <%ce>"))
			assert.Equal(t, tt.wantFiles, committedFiles(t, dir))
			assert.Equal(t, userStatus, gittest.Git(t, dir, "status", "--porcelain"), "the agent's changes were left uncommitted, or the user's committed")

			again, err := commitRound(context.Background(), c, editAndBash)
			require.NoError(t, err)
			assert.Equal(t, Result{Skipped: SkippedNoChanges}, again, "a second commit with nothing new")
		})
	}
}

func TestCommitKeepsConfigUnchanged(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, repoOptions{noIdentity: true})
	c := open(t, dir)
	gittest.WriteFile(t, dir, "new.txt", "x\n")
	configBefore, err := os.ReadFile(filepath.Join(dir, ".git", "config"))
	require.NoError(t, err)

	res, err := commitRound(context.Background(), c, editAndBash)
	require.NoError(t, err)
	require.True(t, res.Committed)

	configAfter, err := os.ReadFile(filepath.Join(dir, ".git", "config"))
	require.NoError(t, err)
	assert.Equal(t, string(configBefore), string(configAfter))
	_, err = gitTry(dir, "config", "--get", "user.name")
	assert.Error(t, err, "user.name was written to the configuration")
}

func TestCommitNotARepository(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := open(t, dir)
	assert.Empty(t, c.Repository())
	gittest.WriteFile(t, dir, "main.go", "package main\n")
	res, err := commitRound(context.Background(), c, editAndBash)
	require.NoError(t, err)
	assert.Equal(t, Result{Skipped: SkippedNotRepo}, res)
	assert.NoDirExists(t, filepath.Join(dir, ".git"))
}

func TestCommitOnlyTheWorkspace(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, repoOptions{})
	gittest.WriteFile(t, repo, "ws/code.go", "package ws\n")
	gittest.WriteFile(t, repo, "other/notes.txt", "notes\n")
	gittest.Git(t, repo, "add", ".")
	gittest.Git(t, repo, "commit", "--quiet", "-m", "layout")
	ws, other := open(t, filepath.Join(repo, "ws")), open(t, filepath.Join(repo, "other"))
	gitDir, err := filepath.EvalSymlinks(filepath.Join(repo, ".git"))
	require.NoError(t, err)
	assert.Equal(t, gitDir, ws.Repository())

	// The user's own work outside the workspace: one staged, one not.
	gittest.WriteFile(t, repo, "README.md", "# staged by the user\n")
	gittest.Git(t, repo, "add", "README.md")
	gittest.WriteFile(t, repo, "other/notes.txt", "unstaged edit\n")
	// The agent's work inside it.
	gittest.WriteFile(t, repo, "ws/code.go", "package ws // edited\n")
	gittest.WriteFile(t, repo, "ws/new.go", "package ws\n")

	res, err := commitRound(context.Background(), ws, editAndBash)
	require.NoError(t, err)
	require.True(t, res.Committed, res.Skipped)
	assert.Equal(t, "ws/code.go\nws/new.go", gittest.Git(t, repo, "show", "--name-only", "--format=", "HEAD"))
	assert.Equal(t, "M  README.md\n M other/notes.txt", gittest.Git(t, repo, "status", "--porcelain"),
		"the user's changes outside the workspace must stay as they were")

	res, err = commitRound(context.Background(), other, nil)
	require.NoError(t, err)
	require.True(t, res.Committed)
	assert.Equal(t, "other/notes.txt", gittest.Git(t, repo, "show", "--name-only", "--format=", "HEAD"))
}

func TestCommitErrors(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, repoOptions{})
	c := open(t, dir)
	gittest.WriteFile(t, dir, "x.txt", "x\n")

	_, err := Open(context.Background(), filepath.Join(dir, "missing"), Options{})
	assert.ErrorContains(t, err, "give an existing directory")

	_, err = Open(context.Background(), filepath.Join(dir, "x.txt"), Options{})
	assert.ErrorContains(t, err, "not a directory")

	_, err = c.Hook(context.Background(), t.TempDir(), editAndBash)
	assert.ErrorContains(t, err, "open a committer for each workspace")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = commitRound(ctx, c, editAndBash)
	assert.ErrorIs(t, err, context.Canceled)
	_, err = Open(ctx, dir, Options{})
	assert.ErrorIs(t, err, context.Canceled)

	// Another git holding the index: the error carries git's output.
	lock := filepath.Join(dir, ".git", "index.lock")
	require.NoError(t, os.WriteFile(lock, nil, 0o644))
	_, err = commitRound(context.Background(), c, editAndBash)
	assert.ErrorContains(t, err, "index.lock': File exists")
	require.NoError(t, os.Remove(lock))

	res, err := commitRound(context.Background(), c, editAndBash)
	require.NoError(t, err)
	assert.True(t, res.Committed)
	assert.Contains(t, res.Message, "The auto-commit of an earlier turn failed: this commit holds that turn's changes too.",
		"the commit that takes over a failed one's changes says so")
	assert.Equal(t, res.Message, gittest.Git(t, dir, "log", "-1", "--format=%B"))

	gittest.WriteFile(t, dir, "again.txt", "again\n")
	res, err = commitRound(context.Background(), c, editAndBash)
	require.NoError(t, err)
	assert.Equal(t, editAndBashMessage(FileChange{'A', "again.txt"}), res.Message, "only once")
}

// TestCommitHugeRound commits after a round of thousands of calls with
// long names, whose full list would not fit in one command-line argument.
func TestCommitHugeRound(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, repoOptions{})
	c, err := Open(context.Background(), dir, Options{})
	require.NoError(t, err)
	gittest.WriteFile(t, dir, "a.txt", "a\n")
	var tools []chat.CompletedTool
	for i := range 3000 {
		tools = append(tools, chat.CompletedTool{CallID: fmt.Sprint(i), ToolName: fmt.Sprintf("tool_%04d_%s", i, strings.Repeat("x", 60)), Succeeded: i%2 == 0})
	}
	res, err := commitRound(context.Background(), c, tools)
	require.NoError(t, err)
	assert.True(t, res.Committed)
	assert.Less(t, len(res.Message), 8<<10)
	assert.Equal(t, res.Message, gittest.Git(t, dir, "log", "-1", "--format=%B"))
	assert.True(t, strings.HasSuffix(res.Message, "and 2992 more tools"), res.Message)
}

// TestTurnMessage checks the message of a turn's commit: a subject from
// the reply, the request, the files, the tools.
func TestTurnMessage(t *testing.T) {
	t.Parallel()
	files := []FileChange{{'M', "main.go"}, {'A', "gen/b.txt"}, {'D', "old.txt"}}
	tests := []struct {
		name  string
		turn  Turn
		files []FileChange
		want  string
	}{
		{
			name:  "reply, request, files and tools",
			turn:  Turn{Prompt: "Fix the\nfailing test", Summary: "## Fixed the off-by-one in main.go\n\nThe loop ran once too often.", Tools: editAndBash},
			files: files,
			want:  "agent: Fixed the off-by-one in main.go\n\nAsked: Fix the failing test\n\nFiles:\n  M main.go\n  A gen/b.txt\n  D old.txt\n\nTools: edit_file ×1, bash ×1 (1 failed)",
		},
		{
			name:  "no reply: the request is the subject",
			turn:  Turn{Prompt: "Add a README"},
			files: files[1:2],
			want:  "agent: Add a README\n\nAsked: Add a README\n\nFiles:\n  A gen/b.txt",
		},
		{
			name:  "long subject, odd tool names",
			turn:  Turn{Summary: strings.Repeat("a", 100), Tools: []chat.CompletedTool{{ToolName: "evil\nname, x", Succeeded: true}, {ToolName: "", Succeeded: true}}},
			files: files[:1],
			want:  "agent: " + strings.Repeat("a", 71) + "…\n\nFiles:\n  M main.go\n\nTools: evil_name__x ×1, (unnamed) ×1",
		},
		{
			name: "many files and tools",
			turn: Turn{Summary: "Done.", Tools: func() []chat.CompletedTool {
				var tools []chat.CompletedTool
				for i := range 20 {
					tools = append(tools, chat.CompletedTool{ToolName: fmt.Sprintf("t%d", i%10), Succeeded: true})
				}
				return tools
			}()},
			files: func() []FileChange {
				var fs []FileChange
				for i := range 102 {
					fs = append(fs, FileChange{'A', fmt.Sprintf("f%03d", i)})
				}
				return fs
			}(),
			want: func() string {
				var b strings.Builder
				b.WriteString("agent: Done.\n\nFiles:\n")
				for i := range 100 {
					fmt.Fprintf(&b, "  A f%03d\n", i)
				}
				b.WriteString("  and 2 more\n\nTools: t0 ×2, t1 ×2, t2 ×2, t3 ×2, t4 ×2, t5 ×2, t6 ×2, t7 ×2, and 2 more tools")
				return b.String()
			}(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, TurnMessage(tt.turn, tt.files))
		})
	}
}

// commitRound notes what a round of tools changed since the last
// snapshot and commits it as a turn of its own.
func commitRound(ctx context.Context, c *Committer, tools []chat.CompletedTool) (Result, error) {
	res, err := c.Hook(ctx, c.Dir(), tools)
	if err != nil || res.Skipped == SkippedNotRepo {
		return res, err
	}
	commit, err := c.CommitTurn(ctx, Turn{Prompt: "Go.", Summary: "Done.", Tools: tools})
	return commit, err
}
