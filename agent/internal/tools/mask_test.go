package tools

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/mask"
	"github.com/fsmgen/fsmgen/agent/internal/redact"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
)

// TestMaskedFiles checks that the files holding the API key are kept from
// every tool: the file tools refuse them, with a message that says why,
// list_files marks them, bash reads a notice in their place; and a file
// that comes to hold the key after the scan is masked once a file tool
// has met it.
func TestMaskedFiles(t *testing.T) {
	t.Parallel()
	const key = "sk-test-TOOLS-MASKED-KEY-0a1b2c3d"
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			ws := newWorkspace(t)
			root := ws.Root()
			files := map[string]string{
				".env":         "ANTHROPIC_API_KEY=" + key + "\n",
				"conf/b64.yml": "auth: " + base64.StdEncoding.EncodeToString([]byte(key)) + "\n",
				"main.go":      "package main\n",
			}
			for name, content := range files {
				require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(content), 0o644))
			}
			require.NoError(t, os.Symlink(".env", filepath.Join(root, "link.env")))
			set, err := mask.Scan(context.Background(), root, redact.New(key), mask.Options{})
			require.NoError(t, err)
			require.Equal(t, []string{".env", "conf/b64.yml"}, set.Names())
			ws.SetMasked(set)
			s := bashSet(t, mode, ws, Options{})

			masked := `is masked: it holds the agent's API key, so the file tools and bash can neither read nor change it`
			for _, c := range []struct {
				tool string
				args obj
			}{
				{"read_file", obj{"path": ".env"}},
				{"read_file", obj{"path": "link.env"}},
				{"read_file", obj{"path": "conf/b64.yml"}},
				{"edit_file", obj{"path": ".env", "old_str": "ANTHROPIC", "new_str": "X"}},
				{"edit_file", obj{"path": "link.env", "old_str": "ANTHROPIC", "new_str": "X"}},
				{"edit_file", obj{"path": ".env", "old_str": "", "new_str": "X"}}, // create: it exists
			} {
				out := call(t, s, c.tool, c.args)
				assert.True(t, out.IsError, "%s %v: %s", c.tool, c.args, out.Content)
				assert.NotContains(t, out.Content, key)
				assert.Contains(t, out.Content, masked, "%s %v", c.tool, c.args)
			}
			assert.Equal(t, files[".env"], readString(t, filepath.Join(root, ".env")), "unchanged")

			out := call(t, s, "list_files", obj{})
			assert.Equal(t, ".env"+maskedNote+"\nconf/\nconf/b64.yml"+maskedNote+"\nlink.env\nmain.go", out.Content)

			// A file that comes to hold the key after the scan.
			require.NoError(t, os.WriteFile(filepath.Join(root, "later.txt"), []byte("token="+key), 0o644))
			out = call(t, s, "read_file", obj{"path": "later.txt"})
			assert.True(t, out.IsError)
			assert.Contains(t, out.Content, `"later.txt" `+masked)
			require.NoError(t, os.WriteFile(filepath.Join(root, "later2.txt"), []byte("token="+key), 0o644))
			out = call(t, s, "edit_file", obj{"path": "later2.txt", "old_str": "token", "new_str": "t"})
			assert.Contains(t, out.Content, `"later2.txt" `+masked)
			assert.Equal(t, []string{".env", "conf/b64.yml", "later.txt", "later2.txt"}, set.Names())

			out = call(t, s, "bash", obj{"command": "cat .env link.env conf/b64.yml later.txt | base32; cat main.go"})
			if mode == sandbox.Off {
				assert.Contains(t, out.Content, "IFHFIS", "unconfined, bash reads them (ANTHROPIC in base32)")
				return
			}
			require.False(t, out.IsError, out.Content)
			assert.NotContains(t, out.Content, "IFHFIS")
			out = call(t, s, "bash", obj{"command": "cat .env later.txt; rm .env; echo x > later.txt; mv conf/b64.yml x; cat main.go"})
			assert.Equal(t, strings.Repeat(sandbox.MaskNotice, 2), out.Content[:2*len(sandbox.MaskNotice)], out.Content)
			assert.Contains(t, out.Content, "package main\n")
			assert.Equal(t, 3, strings.Count(out.Content, "Device or resource busy")+strings.Count(out.Content, "Read-only file system"), out.Content)
			for name, content := range files {
				assert.Equal(t, content, readString(t, filepath.Join(root, name)), name)
			}
		})
	}
}
