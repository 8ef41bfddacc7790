package query_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/query"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox/sandboxtest"
)

// TestEnvironmentRunsNoWorkspaceToolchain plants, in a workspace that is
// the agent's working directory, the files by which toolchain managers
// pick the program to run (rust-toolchain.toml's path, read by a rustup
// shim; go.mod's toolchain line, which makes go run the go1.99.0 of PATH
// under GOTOOLCHAIN=auto), each naming a script that leaves a marker file:
// the environment query runs none of them, confined or not, and still
// reports the real go.
func TestEnvironmentRunsNoWorkspaceToolchain(t *testing.T) {
	goPath, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not in PATH")
	}
	marker := filepath.Join(t.TempDir(), "ran")
	evil := t.TempDir() // a toolchain: bin/rustc, bin/go1.99.0
	script := "#!/bin/sh\necho ran >" + marker + "\necho evil 6.6.6\n"
	require.NoError(t, os.MkdirAll(filepath.Join(evil, "bin"), 0o755))
	for _, name := range []string{"rustc", "go1.99.0"} {
		require.NoError(t, os.WriteFile(filepath.Join(evil, "bin", name), []byte(script), 0o755))
	}
	// A shim as rustup's: the working directory's rust-toolchain.toml, or
	// RUSTUP_TOOLCHAIN, chooses the toolchain.
	shims := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(shims, "rustc"), []byte(`#!/bin/sh
tc=$(sed -n 's/^path = "\(.*\)"$/\1/p' rust-toolchain.toml 2>/dev/null)
[ -n "$tc" ] || tc=$RUSTUP_TOOLCHAIN
[ -n "$tc" ] && exec "$tc/bin/rustc" "$@"
echo rustc 1.0.0-shim
`), 0o755))
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "rust-toolchain.toml"), []byte("[toolchain]\npath = \""+evil+"\"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "go.mod"), []byte("module example.com/m\n\ngo 1.21\n\ntoolchain go1.99.0\n"), 0o644))
	// The user's go env file asks for automatic toolchain switching.
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".config", "go"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".config", "go", "env"), []byte("GOTOOLCHAIN=auto\n"), 0o644))
	t.Setenv("HOME", home)
	t.Setenv("GOTOOLCHAIN", "auto")
	t.Setenv("RUSTUP_TOOLCHAIN", evil)
	t.Setenv("PATH", shims+string(filepath.ListSeparator)+filepath.Join(evil, "bin")+string(filepath.ListSeparator)+filepath.Dir(goPath)+string(filepath.ListSeparator)+"/usr/bin:/bin")
	t.Chdir(ws)

	tests := []struct {
		name    string
		sandbox func(t *testing.T) *sandbox.Sandbox
		want    []string
	}{
		{"no sandbox", func(*testing.T) *sandbox.Sandbox { return nil },
			[]string{"outside the sandbox, as no sandbox was given", "rustc: rustc 1.0.0-shim"}},
		{"sandbox off", func(t *testing.T) *sandbox.Sandbox { return sandboxtest.New(t, sandbox.Options{Mode: sandbox.Off}) },
			[]string{"outside the sandbox, as the sandbox is off", "rustc: rustc 1.0.0-shim"}},
		{"sandbox", func(t *testing.T) *sandbox.Sandbox { return sandboxtest.New(t, sandbox.Options{}) },
			[]string{"inside the sandbox"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			facts := query.Facts{Workspace: ws, Sandbox: tt.sandbox(t)}
			out := facts.Environment(context.Background())
			assert.NoFileExists(t, marker, out)
			assert.NotContains(t, out, "evil")
			assert.Regexp(t, `go: go version go1\.\d+`, out)
			for _, w := range tt.want {
				assert.Contains(t, out, w)
			}
			_ = os.Remove(marker)
		})
	}
}

// TestEnvironmentSkipsWorkspacePrograms puts a toolchain in the workspace
// and the workspace in PATH: the environment query names it without
// running it.
func TestEnvironmentSkipsWorkspacePrograms(t *testing.T) {
	ws := t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	require.NoError(t, os.WriteFile(filepath.Join(ws, "node"), []byte("#!/bin/sh\necho ran >"+marker+"\n"), 0o755))
	facts := query.Facts{Workspace: ws, LookPath: func(name string) (string, error) {
		if name == "node" {
			return filepath.Join(ws, "node"), nil
		}
		return "", exec.ErrNotFound
	}}
	out := facts.Environment(context.Background())
	assert.Contains(t, out, "node: version unknown (not run: it lies in the workspace)")
	assert.NoFileExists(t, marker)
}

// TestEnvironmentSkipsWorkspacePATH (issue 29 item 1): with the
// workspace's .venv/bin first on the environment's PATH, the toolchains
// planted there are neither reported nor run: the query finds the go
// installed, and runs it with a PATH that leaves the workspace out.
func TestEnvironmentSkipsWorkspacePATH(t *testing.T) {
	t.Parallel()
	goPath, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not in PATH")
	}
	ws := t.TempDir()
	bin := filepath.Join(ws, ".venv", "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	marker := filepath.Join(t.TempDir(), "ran")
	for _, name := range []string{"go", "git", "python3"} {
		require.NoError(t, os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\necho ran >"+marker+"\n"), 0o755))
	}
	path := bin + string(filepath.ListSeparator) + filepath.Dir(goPath) + string(filepath.ListSeparator) + os.Getenv("PATH")
	f := query.Facts{Workspace: ws, Environ: func() []string { return []string{"PATH=" + path, "HOME=" + t.TempDir()} }}
	out := f.Environment(context.Background())
	assert.NoFileExists(t, marker)
	assert.Contains(t, out, "go: go version go1.")
	assert.Contains(t, out, "("+goPath+")")
	assert.NotContains(t, out, ".venv")
}
