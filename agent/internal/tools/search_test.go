package tools

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/mask"
	"github.com/fsmgen/fsmgen/agent/internal/redact"
)

// TestSearchFiles checks search_files: matching lines as path:line: text,
// a directory or a file searched, .git, binary and masked files skipped,
// links to outside never followed.
func TestSearchFiles(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const key = "sk-search-TEST-KEY-0123456789abcdef"
	files := map[string]string{
		"src/main.go":   "package main\n\n// TODO: flags\nfunc main() {}\n",
		"src/util.go":   "package main\n// TODO: tests\n",
		"docs/a.md":     "nothing here\n",
		".git/config":   "TODO in git\n",
		"bin/tool":      "TODO\x00binary",
		".env":          "KEY=" + key + " TODO\n",
		"notes/big.txt": "no match\r\nTODO with CRLF\r\n",
	}
	for name, content := range files {
		p := filepath.Join(f.root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	set, err := mask.Scan(context.Background(), f.root, redact.New(key), mask.Options{})
	require.NoError(t, err)
	f.ws.SetMasked(set)
	s := Default(f.ws, Options{Search: true})

	tests := []struct {
		name    string
		args    obj
		want    string
		isError bool
	}{
		{"whole workspace", obj{"pattern": "TODO"},
			"notes/big.txt:2: TODO with CRLF\nsrc/main.go:3: // TODO: flags\nsrc/util.go:2: // TODO: tests\n[1 file skipped: binary, unreadable or over 4 MiB]\n[1 file not searched: masked, they hold the agent's API key]", false},
		{"a directory", obj{"pattern": "TODO", "path": "src"}, "src/main.go:3: // TODO: flags\nsrc/util.go:2: // TODO: tests", false},
		{"one file", obj{"pattern": "func", "path": "src/main.go"}, "src/main.go:4: func main() {}", false},
		{"no match", obj{"pattern": "absent", "path": "docs"}, `no line of the 1 file searched holds "absent"`, false},
		{"no pattern", obj{"path": "src"}, "", true},
		{"missing path", obj{"pattern": "x", "path": "nope"}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := call(t, s, "search_files", tt.args)
			require.Equal(t, tt.isError, out.IsError, out.Content)
			if !tt.isError {
				assert.Equal(t, tt.want, out.Content)
			}
			assert.NotContains(t, out.Content, key)
		})
	}
}
