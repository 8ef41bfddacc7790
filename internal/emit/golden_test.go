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
			m, diags := fsm.Build(sf)
			require.NotNil(t, m, "%s", diags)
			require.Empty(t, diags, "a golden spec has no warnings")
			return m
		}
	}
	t.Fatal("archive has no spec.yaml")
	return nil
}

// TestGolden generates every archive's spec and compares each output
// with the archive's file of the same name; -update rewrites them. Files
// of the archive that generation does not produce are inputs.
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
			if *update {
				var kept []txtar.File
				generated := map[string]bool{}
				for _, f := range files {
					generated[f.Path] = true
				}
				for _, f := range ar.Files {
					if !generated[f.Name] {
						kept = append(kept, f)
					}
				}
				for _, f := range files {
					kept = append(kept, txtar.File{Name: f.Path, Data: f.Content})
				}
				ar.Files = kept
				require.NoError(t, os.WriteFile(path, txtar.Format(ar), 0o644))
				return
			}
			have := map[string][]byte{}
			for _, f := range ar.Files {
				have[f.Name] = f.Data
			}
			for _, f := range files {
				want, ok := have[f.Path]
				if !assert.True(t, ok, "%s: no golden file %s (run go test -update)", path, f.Path) {
					continue
				}
				assert.Equal(t, string(want), string(f.Content), "%s: %s differs (run go test -update if the change is intended)", path, f.Path)
			}
		})
	}
}

// TestDeterministic checks that emitting the same machine twice gives the
// same bytes.
func TestDeterministic(t *testing.T) {
	ar, err := txtar.ParseFile("testdata/golden/tcp.txtar")
	require.NoError(t, err)
	first, err := emit.All(build(t, ar))
	require.NoError(t, err)
	for range 5 {
		again, err := emit.All(build(t, ar))
		require.NoError(t, err)
		assert.Equal(t, first, again)
	}
}
