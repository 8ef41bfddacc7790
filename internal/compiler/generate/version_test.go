package generate_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/generate"
	"github.com/fsmgen/fsmgen/runtime/fsmrt"
)

// TestVersionCheck builds a generated package against copies of package
// fsmrt that support only newer, or only older, generated code than this
// fsmgen writes: the build fails, and the compiler's message names fsmgen
// and what to do. The unchanged copy builds.
func TestVersionCheck(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds temporary modules")
	}
	root := repoRoot(t)
	spec := filepath.Join(t.TempDir(), "door.yaml")
	require.NoError(t, os.WriteFile(spec, []byte(versionSpec), 0o644))
	res, err := generate.Load(spec)
	require.NoError(t, err)
	require.NotNil(t, res.Machine, "%s", res.Diags)
	var code []byte
	for _, o := range res.Outputs {
		if strings.HasSuffix(o.Path, "_gen.go") {
			code = o.Content
		}
	}
	require.NotNil(t, code)

	tests := []struct {
		name     string
		min, max int
		want     string // the compiler's message; "" when the build succeeds
	}{
		{"the same version", fsmrt.GenVersion, fsmrt.GenVersion, ""},
		{"a runtime newer than the file", fsmrt.GenVersion + 1, fsmrt.GenVersion + 1, "constant -1 overflows fsmrt.RegenerateWithNewerFsmgen"},
		{"a runtime older than the file", fsmrt.GenVersion - 1, fsmrt.GenVersion - 1, "constant -1 overflows fsmrt.UpgradeFsmgenRuntime"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			runtimeDir := filepath.Join(dir, "fsmgen", "runtime", "fsmrt")
			require.NoError(t, os.MkdirAll(runtimeDir, 0o755))
			// What fsmrt imports of the module besides.
			suggest := filepath.Join(dir, "fsmgen", "internal", "suggest")
			require.NoError(t, os.MkdirAll(suggest, 0o755))
			src, err := os.ReadFile(filepath.Join(root, "internal", "suggest", "suggest.go"))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(suggest, "suggest.go"), src, 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "fsmgen", "go.mod"), []byte("module github.com/fsmgen/fsmgen\n\ngo 1.26\n"), 0o644))
			sources, err := filepath.Glob(filepath.Join(root, "runtime", "fsmrt", "*.go"))
			require.NoError(t, err)
			versions := regexp.MustCompile(`(?m)^(\s*)(MinVersion|MaxVersion) = .*$`)
			for _, src := range sources {
				if strings.HasSuffix(src, "_test.go") {
					continue
				}
				data, err := os.ReadFile(src)
				require.NoError(t, err)
				data = versions.ReplaceAllFunc(data, func(line []byte) []byte {
					m := versions.FindSubmatch(line)
					v := tt.min
					if string(m[2]) == "MaxVersion" {
						v = tt.max
					}
					return fmt.Appendf(nil, "%s%s = %d", m[1], m[2], v)
				})
				require.NoError(t, os.WriteFile(filepath.Join(runtimeDir, filepath.Base(src)), data, 0o644))
			}
			app := filepath.Join(dir, "app")
			require.NoError(t, os.MkdirAll(app, 0o755))
			gomod := "module example.com/app\n\ngo 1.26\n\nrequire github.com/fsmgen/fsmgen v0.0.0\n\nreplace github.com/fsmgen/fsmgen => ../fsmgen\n"
			require.NoError(t, os.WriteFile(filepath.Join(app, "go.mod"), []byte(gomod), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(app, "door_gen.go"), code, 0o644))
			cmd := exec.Command("go", "build", "./...")
			cmd.Dir = app
			cmd.Env = append(os.Environ(), "GOFLAGS="+tempGoFlags, "GOPROXY=off", "GOWORK=off")
			out, err := cmd.CombinedOutput()
			if tt.want == "" {
				require.NoError(t, err, "%s", out)
				return
			}
			require.Error(t, err, "the build must fail")
			assert.Contains(t, string(out), tt.want)
			assert.Contains(t, string(out), "door_gen.go", "the message points at the generated file")
		})
	}
}

// versionSpec is a spec of the smallest kind.
const versionSpec = `version: 2
machine: Door
package: door
output:
  go: .
states:
  Closed:
    initial: true
  Open: {}
events:
  Push: {}
transitions:
  - from: Closed
    on: Push
    to: Open
  - from: Open
    on: Push
    to: Closed
`
