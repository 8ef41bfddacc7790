package sandbox_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
)

// TestServerCommand starts a command as a long-lived server is started
// (an MCP server): it reads its standard input, gets the variables its
// caller grants whatever their names, and sees a path exposed under /tmp
// (a fresh file system in the sandbox).
func TestServerCommand(t *testing.T) {
	for _, v := range allVariants {
		t.Run(v.name, func(t *testing.T) {
			dir, err := os.MkdirTemp("", "fsmgen-server-test-") // under /tmp, reachable by nobody
			require.NoError(t, err)
			t.Cleanup(func() { _ = os.RemoveAll(dir) })
			require.NoError(t, os.WriteFile(filepath.Join(dir, "tool.txt"), []byte("from /tmp\n"), 0o644))
			require.NoError(t, os.Chmod(dir, 0o755))
			f := newFixture(t, v, sandbox.Options{Expose: []sandbox.Exposure{{Path: dir}}})
			inR, inW, err := os.Pipe()
			require.NoError(t, err)
			outR, outW, err := os.Pipe()
			require.NoError(t, err)
			p, err := f.sb.Start(sandbox.Command{Workspace: f.ws, Stdin: inR, Stdout: outW,
				Env:  map[string]string{"GRANTED_TOKEN": "t0k", "TMPDIR": "/elsewhere"},
				Args: []string{"bash", "-c", `read -r line; echo "$line $GRANTED_TOKEN $TMPDIR"; cat ` + filepath.Join(dir, "tool.txt")}})
			require.NoError(t, err)
			inR.Close()
			outW.Close()
			_, err = inW.WriteString("hello\n")
			require.NoError(t, err)
			inW.Close()
			var out bytes.Buffer
			_, err = out.ReadFrom(outR)
			require.NoError(t, err)
			require.NoError(t, p.Wait())
			wantTmp := "/tmp" // the sandbox's own wins
			if !v.confined() {
				wantTmp = "/elsewhere"
			}
			assert.Equal(t, "hello t0k "+wantTmp+"\nfrom /tmp\n", out.String())
		})
	}
}
