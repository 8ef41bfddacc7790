package emit_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"

	"github.com/fsmgen/fsmgen/internal/emit"
	"github.com/fsmgen/fsmgen/internal/fsm"
	"github.com/fsmgen/fsmgen/internal/spec"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// build parses and checks the archive's spec.yaml.
func build(t *testing.T, ar *txtar.Archive) *fsm.Machine {
	t.Helper()
	for _, f := range ar.Files {
		if f.Name == "spec.yaml" {
			sf, diags := spec.Parse("spec.yaml", f.Data)
			require.False(t, diags.HasErrors(), "%s", diags)
			m, diags := fsm.Build(sf, stdEnv())
			require.NotNil(t, m, "%s", diags)
			require.Empty(t, diags, "a golden spec has no warnings")
			return m
		}
	}
	t.Fatal("archive has no spec.yaml")
	return nil
}

// TestGolden generates every archive's spec and compares the outputs the
// archive pins (its files of the same name) whole; -update rewrites them.
// An archive pins the outputs its feature shows (every output, when it
// pins none yet); the rest only need to build and pass their tests, which
// the end-to-end test checks.
func TestGolden(t *testing.T) {
	paths, err := filepath.Glob("testdata/golden/*.txtar")
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			ar, err := txtar.ParseFile(path)
			require.NoError(t, err)
			m := build(t, ar)
			files, err := emit.All(m)
			require.NoError(t, err)
			require.NoError(t, verifyGo(m, files))
			require.NoError(t, verifyDocs(m, files))
			out := map[string][]byte{}
			for _, f := range files {
				out[f.Path] = f.Content
			}
			pinned := 0
			for _, f := range ar.Files {
				if _, ok := out[f.Name]; ok {
					pinned++
				}
			}
			if *update {
				for i, f := range ar.Files {
					if content, ok := out[f.Name]; ok {
						ar.Files[i].Data = content
					}
				}
				if pinned == 0 {
					for _, f := range files {
						ar.Files = append(ar.Files, txtar.File{Name: f.Path, Data: f.Content})
					}
				}
				require.NoError(t, os.WriteFile(path, txtar.Format(ar), 0o644))
				return
			}
			require.NotZero(t, pinned, "%s pins no output (run go test -update)", path)
			for _, f := range ar.Files {
				if content, ok := out[f.Name]; ok {
					assert.Equal(t, string(f.Data), string(content), "%s: %s differs (run go test -update if the change is intended)", path, f.Name)
				}
			}
		})
	}
}

// TestDeterministic checks that emitting the same machine twice gives the
// same bytes.
func TestDeterministic(t *testing.T) {
	ar, err := txtar.ParseFile("testdata/golden/fields.txtar")
	require.NoError(t, err)
	first, err := emit.All(build(t, ar))
	require.NoError(t, err)
	for range 5 {
		again, err := emit.All(build(t, ar))
		require.NoError(t, err)
		assert.Equal(t, first, again)
	}
}
