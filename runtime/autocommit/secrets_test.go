package autocommit

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/runtime/gittest"
	"github.com/fsmgen/fsmgen/runtime/redact"
)

// TestSecretsWithheld checks that changed files holding a secret, raw or
// encoded, stay out of the commit, and the rest is committed.
func TestSecretsWithheld(t *testing.T) {
	const key = "sk-test-0123456789-secret"
	gittest.IsolateGit(t)
	tests := []struct {
		name         string
		opt          repoOptions
		sub          string // the workspace, below the repository's top
		files        map[string]string
		wantWithheld []string
		wantCommit   []string // files in the commit
	}{
		{
			name:         "a new file and a changed one",
			files:        map[string]string{"notes.txt": "key=" + key + "\n", "README.md": "# test\n" + base64.StdEncoding.EncodeToString([]byte("u:"+key)) + "\n", "ok.go": "package ok\n"},
			wantWithheld: []string{"README.md", "notes.txt"},
			wantCommit:   []string{"ok.go"},
		},
		{
			name:         "nothing else changed",
			files:        map[string]string{"notes.txt": key},
			wantWithheld: []string{"notes.txt"},
		},
		{
			name:         "first commit",
			opt:          repoOptions{noCommit: true},
			files:        map[string]string{"a b*.txt": key, "ok.txt": "fine\n"},
			wantWithheld: []string{"a b*.txt"},
			wantCommit:   []string{".gitignore", "README.md", "ok.txt"},
		},
		{
			name:         "a subdirectory workspace",
			sub:          "sub",
			files:        map[string]string{"sub/leak.txt": key, "sub/fine.txt": "x\n"},
			wantWithheld: []string{"leak.txt"},
			wantCommit:   []string{"sub/fine.txt"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top := newRepo(t, tt.opt)
			dir := filepath.Join(top, tt.sub)
			require.NoError(t, os.MkdirAll(dir, 0o755))
			c, err := Open(context.Background(), dir, Options{Secrets: redact.New(key)})
			require.NoError(t, err)
			for name, content := range tt.files {
				gittest.WriteFile(t, top, name, content)
			}
			res, err := c.Commit(context.Background(), editAndBash)
			require.NoError(t, err)
			assert.Equal(t, tt.wantWithheld, res.Withheld)
			assert.Equal(t, len(tt.wantCommit) > 0, res.Committed, "%+v", res)
			if res.Committed {
				files := gittest.Git(t, top, "show", "--name-only", "--format=", "HEAD")
				assert.Equal(t, tt.wantCommit, strings.Split(files, "\n"))
			}
			log := gittest.Git(t, top, "log", "--all", "-p", "--format=")
			assert.NotContains(t, log, key, "the key is in the history")
			for _, w := range tt.wantWithheld {
				b, err := os.ReadFile(filepath.Join(dir, w))
				require.NoError(t, err, "a withheld file stays in the work tree")
				assert.NotEmpty(t, b)
			}
			assert.Empty(t, gittest.Git(t, top, "diff", "--cached", "--name-only"), "nothing is left staged")
		})
	}
}
