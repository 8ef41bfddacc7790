package autocommit

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/gittest"
)

// commitTurnOf runs a turn of thread T1 known by key:
// change, as the turn's tools, then its commit.
func commitTurnOf(t *testing.T, c *Committer, key string, change func()) Result {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, c.Snapshot(ctx))
	change()
	_, err := c.Hook(ctx, c.Dir(), editAndBash)
	require.NoError(t, err)
	res, err := c.CommitTurn(ctx, Turn{Prompt: "Go.", Summary: "Made a.txt.", Tools: editAndBash, Thread: "T1", Key: key})
	require.NoError(t, err)
	return res
}

// exists reports whether the workspace's file rel exists.
func exists(dir, rel string) bool {
	_, err := os.Lstat(filepath.Join(dir, rel))
	return err == nil
}

func TestUndo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// branch is Options.Branch.
		branch string
		// after runs between the turn's commit and the undo.
		after func(t *testing.T, dir string)
		// turn is the turn undone (the committed one is t2).
		turn string
		// check checks the workspace after the undo, which returned res.
		check func(t *testing.T, dir string, res UndoResult, err error)
	}{
		{name: "the turn's commit reverted, the user's work kept", turn: "t2",
			check: func(t *testing.T, dir string, res UndoResult, err error) {
				require.NoError(t, err)
				assert.NotEmpty(t, res.Reverted)
				assert.Equal(t, "main", res.Branch)
				assert.ElementsMatch(t, []FileChange{{'D', "a.txt"}, {'M', "README.md"}, {'A', "old.txt"}, {'D', "sub/dir/b.txt"}}, res.Files)
				assert.False(t, exists(dir, "a.txt"))
				assert.False(t, exists(dir, "sub"), "directories left empty are removed")
				assert.Equal(t, "# test\n", gittest.ReadFile(t, dir, "README.md"))
				assert.Equal(t, "old\n", gittest.ReadFile(t, dir, "old.txt"))
				assert.Equal(t, "mine\n", gittest.ReadFile(t, dir, "NOTES.md"), "the user's untracked file")
				assert.Equal(t, "?? NOTES.md", gittest.Git(t, dir, "status", "--porcelain"), "the index follows HEAD")
				msg := gittest.Git(t, dir, "log", "-1", "--format=%an <%ae>%n%B")
				assert.Contains(t, msg, AgentName+" <"+AgentEmail+">\nagent: undo Made a.txt.")
				assert.Contains(t, msg, TrailerUndoes+": "+res.Reverted)
				assert.Equal(t, res.Reverted, gittest.Git(t, dir, "rev-parse", "HEAD^"), "the turn's commit stays in the history")
			}},
		{name: "on the agent's branch, the checkout untouched", branch: "agent/T1", turn: "t2",
			check: func(t *testing.T, dir string, res UndoResult, err error) {
				require.NoError(t, err)
				assert.Equal(t, "agent/T1", res.Branch)
				assert.False(t, exists(dir, "a.txt"))
				assert.Equal(t, "initial", gittest.Git(t, dir, "log", "-1", "--format=%s", "main"))
				assert.Contains(t, gittest.Git(t, dir, "log", "-1", "--format=%s", "agent/T1"), "agent: undo")
			}},
		{name: "a turn that made no commit", turn: "t5",
			check: func(t *testing.T, dir string, res UndoResult, err error) {
				require.NoError(t, err)
				assert.Zero(t, res)
				assert.True(t, exists(dir, "a.txt"))
			}},
		{name: "undone twice", turn: "t2",
			after: func(t *testing.T, dir string) {
				c := open(t, dir)
				_, err := c.Undo(context.Background(), []string{"T1"}, "t2")
				require.NoError(t, err)
			},
			check: func(t *testing.T, dir string, res UndoResult, err error) {
				require.NoError(t, err)
				assert.Zero(t, res, "the thread's last commit is the undo")
			}},
		{name: "a commit made after it", turn: "t2",
			after: func(t *testing.T, dir string) {
				gittest.WriteFile(t, dir, "later.txt", "later\n")
				gittest.Git(t, dir, "add", "later.txt")
				gittest.Git(t, dir, "commit", "--quiet", "-m", "later")
			},
			check: func(t *testing.T, dir string, res UndoResult, err error) {
				require.ErrorIs(t, err, ErrCannotUndo)
				assert.ErrorContains(t, err, "1 commits were made on main after the turn's commit")
				assert.True(t, exists(dir, "a.txt"), "nothing changed")
				assert.Equal(t, "later", gittest.Git(t, dir, "log", "-1", "--format=%s"))
			}},
		{name: "a file of the turn changed since", turn: "t2",
			after: func(t *testing.T, dir string) { gittest.WriteFile(t, dir, "a.txt", "edited by the user\n") },
			check: func(t *testing.T, dir string, res UndoResult, err error) {
				require.ErrorIs(t, err, ErrCannotUndo)
				assert.ErrorContains(t, err, "a.txt changed since the turn's commit")
				assert.Equal(t, "edited by the user\n", gittest.ReadFile(t, dir, "a.txt"))
			}},
		{name: "a file of the turn staged otherwise", turn: "t2",
			after: func(t *testing.T, dir string) {
				gittest.WriteFile(t, dir, "README.md", "staged\n")
				gittest.Git(t, dir, "add", "README.md")
				gittest.WriteFile(t, dir, "README.md", "turn\n")
			},
			check: func(t *testing.T, dir string, res UndoResult, err error) {
				require.ErrorIs(t, err, ErrCannotUndo)
				assert.ErrorContains(t, err, "README.md changed since")
			}},
		{name: "a file the turn deleted, back again", turn: "t2",
			after: func(t *testing.T, dir string) { gittest.WriteFile(t, dir, "old.txt", "new\n") },
			check: func(t *testing.T, dir string, res UndoResult, err error) {
				require.ErrorIs(t, err, ErrCannotUndo)
				assert.ErrorContains(t, err, "old.txt changed since")
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := newRepo(t, repoOptions{})
			gittest.WriteFile(t, dir, "old.txt", "old\n")
			gittest.Git(t, dir, "add", "old.txt")
			gittest.Git(t, dir, "commit", "--quiet", "-m", "initial")
			gittest.WriteFile(t, dir, "NOTES.md", "mine\n")
			c, err := Open(context.Background(), dir, Options{Branch: tt.branch})
			require.NoError(t, err)
			res := commitTurnOf(t, c, "t2", func() {
				gittest.WriteFile(t, dir, "a.txt", "turn\n")
				gittest.WriteFile(t, dir, "README.md", "turn\n")
				gittest.WriteFile(t, dir, "sub/dir/b.txt", "turn\n")
				require.NoError(t, os.Remove(filepath.Join(dir, "old.txt")))
			})
			require.True(t, res.Committed)
			if tt.after != nil {
				tt.after(t, dir)
			}
			undone, err := c.Undo(context.Background(), []string{"T1"}, tt.turn)
			tt.check(t, dir, undone, err)
		})
	}
}
