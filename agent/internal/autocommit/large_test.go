package autocommit

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/gittest"
)

func TestCommitLeavesOutLargeNewFiles(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 2000)
	tests := []struct {
		name      string
		limit     int64 // Options.MaxNewFileBytes
		change    func(t *testing.T, dir string)
		wantLarge []string
		wantFiles []string // HEAD's tree after the commit
	}{
		{
			name:      "a new file over the limit",
			limit:     1000,
			change:    func(t *testing.T, dir string) { gittest.WriteFile(t, dir, "bin/agent", big) },
			wantLarge: []string{"bin/agent"},
			wantFiles: []string{".gitignore", "README.md", "main.go"},
		},
		{
			name:      "a new file of the limit's size",
			limit:     2000,
			change:    func(t *testing.T, dir string) { gittest.WriteFile(t, dir, "data.txt", big) },
			wantFiles: []string{".gitignore", "README.md", "data.txt", "main.go"},
		},
		{
			name:      "a tracked file grown over the limit",
			limit:     1000,
			change:    func(t *testing.T, dir string) { gittest.WriteFile(t, dir, "README.md", big) },
			wantFiles: []string{".gitignore", "README.md", "main.go"},
		},
		{
			name:      "no limit",
			limit:     -1,
			change:    func(t *testing.T, dir string) { gittest.WriteFile(t, dir, "bin/agent", big) },
			wantFiles: []string{".gitignore", "README.md", "bin/agent", "main.go"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := newRepo(t, repoOptions{})
			c, err := Open(context.Background(), dir, Options{MaxNewFileBytes: tt.limit})
			require.NoError(t, err)
			tt.change(t, dir)
			gittest.WriteFile(t, dir, "main.go", "package main\n")

			res, err := commitRound(context.Background(), c, editAndBash)
			require.NoError(t, err)
			assert.True(t, res.Committed, "%+v", res)
			assert.Equal(t, tt.wantLarge, res.TooLarge)
			assert.Equal(t, tt.wantFiles, committedFiles(t, dir))
			assert.Empty(t, gittest.Git(t, dir, "diff", "--cached", "--name-only"), "nothing is left staged")
			if len(tt.wantLarge) == 0 {
				return
			}
			assert.Equal(t, "?? bin/", gittest.Git(t, dir, "status", "--porcelain"), "the large file is left untracked")

			// Named once for each content.
			again, err := commitRound(context.Background(), c, editAndBash)
			require.NoError(t, err)
			assert.Equal(t, Result{Skipped: SkippedNoChanges}, again)
			gittest.WriteFile(t, dir, "bin/agent", big+"y")
			again, err = commitRound(context.Background(), c, editAndBash)
			require.NoError(t, err)
			assert.Equal(t, Result{Skipped: SkippedNoChanges, TooLarge: tt.wantLarge}, again)
		})
	}
	t.Run("the default limit", func(t *testing.T) {
		t.Parallel()
		c := open(t, newRepo(t, repoOptions{}))
		assert.Equal(t, int64(DefaultMaxNewFileBytes), c.maxNew)
	})
}
