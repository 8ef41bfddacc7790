package autocommit

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/redact"
	"github.com/fsmgen/fsmgen/internal/gittest"
)

// wrapLines breaks s into lines of width characters.
func wrapLines(s string, width int) string {
	var b strings.Builder
	for len(s) > width {
		b.WriteString(s[:width] + "\n")
		s = s[width:]
	}
	return b.String() + s + "\n"
}

// TestSecretsWithheld checks that changed files holding a secret, raw or
// encoded, stay out of the commit, and the rest is committed.
func TestSecretsWithheld(t *testing.T) {
	t.Parallel()
	const key = "sk-test-0123456789-secret"
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
			name: "encodings broken over lines, and a piece of the key",
			files: map[string]string{
				"enc_b64.txt": wrapLines(base64.StdEncoding.EncodeToString([]byte("KEY="+key+"\n"+strings.Repeat("padding ", 20))), 76),
				"enc_hex.txt": wrapLines(hex.EncodeToString([]byte(key)), 16),
				"piece.txt":   "it starts " + key[:redact.MinRun] + "\n",
				"fine.txt":    "nothing\n",
			},
			wantWithheld: []string{"enc_b64.txt", "enc_hex.txt", "piece.txt"},
			wantCommit:   []string{"fine.txt"},
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
			wantCommit:   []string{"ok.txt"}, // the repository's own files are the user's
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
			t.Parallel()
			top := newRepo(t, tt.opt)
			dir := filepath.Join(top, tt.sub)
			require.NoError(t, os.MkdirAll(dir, 0o755))
			c, err := Open(context.Background(), dir, Options{Secrets: redact.New(key)})
			require.NoError(t, err)
			for name, content := range tt.files {
				gittest.WriteFile(t, top, name, content)
			}
			res, err := commitRound(context.Background(), c, editAndBash)
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

// TestSecretsInNamesWithheld checks that changed paths named with a secret
// and symbolic links to one stay out of the commit, the index and the
// Result: git grep searches the contents of regular files only.
func TestSecretsInNamesWithheld(t *testing.T) {
	t.Parallel()
	const key = "sk-ant-review-secret-0123456789"
	tests := []struct {
		name         string
		script       string // run by bash in the workspace after Open, with .env holding the key
		wantWithheld []string
	}{
		{
			name:         "the reviewer's command",
			script:       `K=$(cut -d= -f2 .env); ln -s "$K" link1; mkdir "d-$K"; echo x > "d-$K/f"`,
			wantWithheld: []string{"d-" + redact.Mark + "/f", "link1"},
		},
		{
			name:         "a link to a path holding the key in base64",
			script:       `ln -s "/tmp/$(cut -d= -f2 .env | tr -d '\n' | base64 -w0)/x" link2`,
			wantWithheld: []string{"link2"},
		},
		{
			name:         "a file named with the key in hex, and a link named with it",
			script:       `H=$(cut -d= -f2 .env | tr -d '\n' | xxd -p -c 256); echo x > "f-$H.txt"; ln -s ok.go "l-$H"`,
			wantWithheld: []string{"f-" + redact.Mark + ".txt", "l-" + redact.Mark},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if strings.Contains(tt.script, "xxd") {
				if _, err := exec.LookPath("xxd"); err != nil {
					t.Skip("xxd is not installed")
				}
			}
			dir := newRepo(t, repoOptions{})
			gittest.WriteFile(t, dir, ".gitignore", "*.log\nbuild/\n.env\n")
			gittest.Git(t, dir, "commit", "--quiet", "-am", "ignore .env")
			gittest.WriteFile(t, dir, ".env", "KEY="+key+"\n")
			c, err := Open(context.Background(), dir, Options{Secrets: redact.New(key)})
			require.NoError(t, err)
			bash(t, dir, t.TempDir(), tt.script)
			gittest.WriteFile(t, dir, "ok.go", "package ok\n")

			res, err := commitRound(context.Background(), c, editAndBash)
			require.NoError(t, err)
			assert.True(t, res.Committed, "%+v", res)
			assert.Equal(t, tt.wantWithheld, res.Withheld)
			assert.Equal(t, []string{".gitignore", "README.md", "ok.go"}, committedFiles(t, dir))
			for _, what := range [][]string{
				{"log", "--all", "-p", "--format=%H %B"},
				{"ls-tree", "-r", "HEAD"},
				{"ls-files", "--stage"},
			} {
				out := gittest.Git(t, dir, what...)
				assert.False(t, redact.New(key).Contains([]byte(out)), "git %s shows the key:\n%s", what[0], out)
			}
			j, err := json.Marshal(res)
			require.NoError(t, err)
			assert.False(t, redact.New(key).Contains(j), "the result shows the key: %s", j)
			assert.Empty(t, gittest.Git(t, dir, "diff", "--cached", "--name-only"), "nothing is left staged")
		})
	}
}

// TestSecretsNotOnCommandLines checks that no git command of a commit that
// withholds files named with the key has the key in its arguments, where
// other users of the machine could read it: a git on PATH that records
// every command line, then runs the real git, stands in for git.
func TestSecretsNotOnCommandLines(t *testing.T) {
	const key = "sk-ant-review-secret-0123456789"
	gittest.IsolateGit(t)
	real, err := exec.LookPath("git")
	require.NoError(t, err)
	bin, logFile := t.TempDir(), filepath.Join(t.TempDir(), "args")
	wrapper := "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '" + logFile + "'\nexec '" + real + "' \"$@\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(bin, "git"), []byte(wrapper), 0o755))

	dir := newRepo(t, repoOptions{})
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	c, err := Open(context.Background(), dir, Options{Secrets: redact.New(key)})
	require.NoError(t, err)
	gittest.WriteFile(t, dir, "README.md", "# changed\n") // a tracked file, so that the commit has something to commit
	bash(t, dir, t.TempDir(), `K=`+key+`; ln -s "$K" link1; mkdir "d-$K"; echo x > "d-$K/f"; mkdir "r-$K" && git -C "r-$K" init -q`)
	require.NoError(t, os.Remove(logFile)) // the tool's own git commands

	res, err := commitRound(context.Background(), c, editAndBash)
	require.NoError(t, err)
	assert.True(t, res.Committed, "%+v", res)
	assert.Equal(t, []string{"d-" + redact.Mark + "/f", "link1"}, res.Withheld)
	assert.Equal(t, []string{"r-" + redact.Mark}, res.Repositories)
	args, err := os.ReadFile(logFile)
	require.NoError(t, err)
	assert.True(t, strings.Contains(string(args), "pathspec-from-file"), "the wrapper did not record the commands")
	for line := range strings.SplitSeq(string(args), "\n") {
		assert.False(t, strings.Contains(line, key), "a command line holds the key: %s", redact.New(key).String(line))
	}
}
