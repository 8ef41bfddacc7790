package generate_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"

	"github.com/fsmgen/fsmgen/internal/generate"
)

// TestEndToEnd generates each golden spec (a traffic light, a TCP
// connection, hostile docs) into a temporary module with the archive's
// hand-written files, and runs go vet and go test there: the generated
// code must compile, vet clean, and pass its own generated tests.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds temporary modules")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	gosum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	testify := requiredVersion(t, filepath.Join(root, "go.mod"), "github.com/stretchr/testify")
	archives, err := filepath.Glob("../emit/testdata/golden/*.txtar")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(archives), 2)
	for _, path := range archives {
		name := strings.TrimSuffix(filepath.Base(path), ".txtar")
		t.Run(name, func(t *testing.T) {
			ar, err := txtar.ParseFile(path)
			require.NoError(t, err)
			dir := t.TempDir()
			gomod := "module example.com/" + name + "\n\ngo 1.26\n\nrequire github.com/stretchr/testify " + testify + "\n"
			require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), gosum, 0o644))
			for _, f := range ar.Files {
				if f.Name == "spec.yaml" {
					require.NoError(t, os.WriteFile(filepath.Join(dir, "spec.yaml"), f.Data, 0o644))
				}
			}
			res, err := generate.Load(filepath.Join(dir, "spec.yaml"))
			require.NoError(t, err)
			require.NotNil(t, res.Machine, "%s", res.Diags)
			generated := map[string]bool{}
			for _, o := range res.Outputs {
				generated[o.Path] = true
			}
			// Copy the hand-written inputs; the golden outputs are generated afresh.
			for _, f := range ar.Files {
				p := filepath.Join(dir, filepath.FromSlash(f.Name))
				if f.Name == "spec.yaml" || generated[p] {
					continue
				}
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, f.Data, 0o644))
			}
			wrote, err := generate.Write(res.Outputs)
			require.NoError(t, err)
			require.Len(t, wrote, len(res.Outputs))

			for _, args := range [][]string{{"vet", "./..."}, {"test", "-count=1", "./..."}} {
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
				cmd := exec.CommandContext(ctx, "go", args...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
				out, err := cmd.CombinedOutput()
				cancel()
				require.NoError(t, err, "go %s in the generated module:\n%s", strings.Join(args, " "), out)
			}
		})
	}
}

// tempModule returns a new module in a temporary directory that requires
// this repository's module through a replace, with the repository's
// go.sum, so that specs importing its packages (chat) load there offline.
func tempModule(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	gosum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	testify := requiredVersion(t, filepath.Join(root, "go.mod"), "github.com/stretchr/testify")
	dir := t.TempDir()
	gomod := "module example.com/m\n\ngo 1.26\n\nrequire (\n\tgithub.com/fsmgen/fsmgen v0.0.0\n\tgithub.com/stretchr/testify " + testify + "\n)\n\nreplace github.com/fsmgen/fsmgen => " + root + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), gosum, 0o644))
	// The module is not tidy (its go.mod lists no indirect requirements):
	// let the go command that loads the spec's imports complete it, offline.
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOWORK", "off")
	return dir
}

// requiredVersion returns the version go.mod requires of module.
func requiredVersion(t *testing.T, gomod, module string) string {
	data, err := os.ReadFile(gomod)
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 2 && fields[0] == module {
			return fields[1]
		}
	}
	t.Fatalf("%s does not require %s", gomod, module)
	return ""
}
