package conformance

import (
	_ "embed"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The driver and the adapter template are copied into the temporary
// module; see doc.go.
var (
	//go:embed testdata/driver/driver.go
	driverSource []byte
	//go:embed testdata/adapter.go.tmpl
	adapterSource string
)

// module is the temporary module's path.
const module = "example.com/conformance"

// TestConformance runs the corpus: every testdata/*.txtar is generated
// in-process; the cases that must not build are checked against their
// diagnostics, the others are compiled, all into one program, and their
// scripts run on the generated machines. In -short mode nothing is
// compiled: only the specs and scripts are checked.
func TestConformance(t *testing.T) {
	archives, err := filepath.Glob("testdata/*.txtar")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(archives), 25, "the corpus")

	dir := t.TempDir()
	// The generated packages import fsmgen's runtime: the module requires
	// this checkout, with its go.sum, and builds offline.
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	gosum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	gomod := "module " + module + "\n\ngo 1.26\n\nrequire github.com/fsmgen/fsmgen v0.0.0\n\nreplace github.com/fsmgen/fsmgen => " + root + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), gosum, 0o644))
	var runnable []*prepared
	for _, path := range archives {
		c, err := loadCase(path)
		if err != nil {
			t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) { t.Fatal(err) })
			continue
		}
		p := prepare(t, dir, c)
		if p.buildErrors != nil {
			t.Run(c.name, func(t *testing.T) { checkBuildErrors(t, p) })
			continue
		}
		runnable = append(runnable, p)
	}
	if testing.Short() {
		for _, p := range runnable {
			t.Run(p.c.name, func(t *testing.T) {
				require.NoError(t, p.err)
				t.Skip("-short: the generated machine is not compiled")
			})
		}
		return
	}
	start := time.Now()
	results, buildFailed := buildAndRun(t, dir, runnable)
	t.Logf("built and ran %d generated machines in %s", len(runnable), time.Since(start).Round(time.Millisecond))
	for _, p := range runnable {
		t.Run(p.c.name, func(t *testing.T) {
			require.NoError(t, p.err)
			require.Empty(t, buildFailed[p.c.name], "the generated package does not compile")
			records, ok := results[p.c.name]
			require.True(t, ok, "the driver returned nothing for the case")
			runChecks(t, p, records)
		})
	}
}
