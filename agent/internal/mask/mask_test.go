package mask

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/redact"
)

// key is the secret of the tests.
const key = "sk-test-MASKED-KEY-0123456789abcdef"

// tree writes files (content by path; "-> target" makes a symbolic link)
// under root.
func tree(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		if target, ok := strings.CutPrefix(content, "-> "); ok {
			require.NoError(t, os.Symlink(target, p))
			continue
		}
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

func TestScan(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	// A key across the boundary between two reads.
	straddle := strings.Repeat("x", chunk-len(key)/2) + key + "\n"
	tree(t, root, map[string]string{
		".env":                  "ANTHROPIC_API_KEY=" + key + "\n",
		"config/b64.txt":        "token: " + base64.StdEncoding.EncodeToString([]byte("user:"+key)) + "\n",
		"logs/big.log":          straddle,
		"logs/huge.log":         strings.Repeat("y", 2<<20) + key,
		"src/main.go":           "package main\n",
		"src/almost.txt":        key[:len(key)-1] + "\n",
		"link.env":              "-> .env",
		"outside.env":           "-> " + outside + "/secret.env",
		"outside-clean":         "-> " + outside + "/clean.txt",
		"dangling":              "-> nowhere",
		".git/objects/ab/cdef":  key, // never in the clear there: skipped
		".git/config":           "[remote]\n\turl = https://x:" + key + "@example.com\n",
		"vendor/.git/objects/x": key,
	})
	tree(t, outside, map[string]string{"secret.env": key, "clean.txt": "nothing\n"})
	require.NoError(t, os.Link(filepath.Join(root, ".env"), filepath.Join(root, "hard.env")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644)) // would block a plain open

	s, err := Scan(context.Background(), root, redact.New(key), Options{MaxFileBytes: 1 << 20})
	require.NoError(t, err)
	assert.Equal(t, []string{
		".env", ".git/config", outside + "/secret.env", "config/b64.txt", "hard.env", "logs/big.log",
	}, s.Names())
	assert.Equal(t, []string{"logs/huge.log"}, s.TooLarge(), "files over the limit are listed, not read")
	for _, p := range []string{".env", "link.env", "hard.env", "outside.env"} {
		assert.True(t, s.Masked(filepath.Join(root, p)), p)
	}
	assert.False(t, s.Masked(filepath.Join(root, "src/main.go")))
	assert.Positive(t, s.Scanned())

	none, err := Scan(context.Background(), root, redact.New(), Options{})
	require.NoError(t, err)
	assert.Empty(t, none.Paths())
	assert.Zero(t, none.Scanned(), "without a secret nothing is read")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Scan(ctx, root, redact.New(key), Options{})
	assert.ErrorIs(t, err, context.Canceled)

	_, err = Scan(context.Background(), filepath.Join(root, "missing"), redact.New(key), Options{})
	assert.ErrorContains(t, err, "scan "+filepath.Join(root, "missing")+" for files holding the API key")
}

func TestCheckAndHolds(t *testing.T) {
	root := t.TempDir()
	tree(t, root, map[string]string{"later.env": "KEY=" + key, "clean.txt": "clean"})
	s := New(root, redact.New(key))
	assert.False(t, s.Check(filepath.Join(root, "clean.txt"), []byte("clean")))
	assert.True(t, s.Check(filepath.Join(root, "later.env"), []byte("KEY="+key)), "a file found to hold the key")
	assert.True(t, s.Masked(filepath.Join(root, "later.env")))
	assert.True(t, s.Check(filepath.Join(root, "later.env"), []byte("KEY=")), "masked stays masked")
	assert.Equal(t, []string{"later.env"}, s.Names())

	tests := []struct {
		name    string
		content string
		want    bool
	}{
		{"none", strings.Repeat("a", 3*chunk), false},
		{"raw at the end", strings.Repeat("a", 3*chunk) + key, true},
		{"across reads", strings.Repeat("a", chunk-3) + key, true},
		{"hex", fmt.Sprintf("%x", key), true},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Holds(strings.NewReader(tt.content))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}

	var nilSet *Set
	assert.False(t, nilSet.Masked("/x"))
	assert.False(t, nilSet.Check("/x", []byte(key)))
	nilSet.Add("/x")
	assert.Nil(t, nilSet.Paths())
	got, err := nilSet.Holds(bytes.NewReader([]byte(key)))
	require.NoError(t, err)
	assert.False(t, got)
}

// BenchmarkScan measures the scan the agent makes when it starts, on
// trees of many small files (a node_modules) and of a few large ones,
// with a warm page cache; MB/s is the files' bytes.
func BenchmarkScan(b *testing.B) {
	for _, bc := range []struct {
		files int
		size  int
	}{
		{files: 20000, size: 4 << 10},
		{files: 200, size: 1 << 20},
	} {
		root := b.TempDir()
		line := []byte("some text of a source file, without the key\n")
		content := bytes.Repeat(line, bc.size/len(line)+1)[:bc.size]
		for i := range bc.files {
			dir := filepath.Join(root, fmt.Sprintf("d%03d", i/100))
			if i%100 == 0 {
				require.NoError(b, os.Mkdir(dir, 0o755))
			}
			require.NoError(b, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.txt", i)), content, 0o644))
		}
		red := redact.New(key)
		b.Run(fmt.Sprintf("files=%d/size=%dKiB", bc.files, bc.size>>10), func(b *testing.B) {
			b.SetBytes(int64(bc.files * bc.size))
			for b.Loop() {
				s, err := Scan(context.Background(), root, red, Options{})
				if err != nil || s.Scanned() != bc.files {
					b.Fatal(err, s.Scanned())
				}
			}
		})
	}
}
