package generate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTemporalGlueBuilds generates the Temporal glue of machines whose
// actions are pure in each way the glue must handle (all of them, with
// fields; one without fields beside an activity, with a Behavior), into a
// temporary module that requires the temporal module as this repository
// has it, and vets it there: the glue compiles against fsmtemporal and the
// SDK, and vets clean. temporal/expenseflow compiles the glue of a real
// example; this covers the shapes it does not have.
func TestTemporalGlueBuilds(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the Temporal SDK in a temporary module")
	}
	root := repoRoot(t)
	dir := t.TempDir()
	sdk := requiredVersion(t, filepath.Join(root, "temporal", "go.mod"), "go.temporal.io/sdk")
	gomod := "module example.com/support\n\ngo 1.26\n\nrequire (\n\tgithub.com/fsmgen/fsmgen v0.0.0\n\tgithub.com/fsmgen/fsmgen/temporal v0.0.0\n\tgo.temporal.io/sdk " + sdk + "\n)\n\n" +
		"replace github.com/fsmgen/fsmgen => " + root + "\n\nreplace github.com/fsmgen/fsmgen/temporal => " + filepath.Join(root, "temporal") + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644))
	var sum []byte
	for _, f := range []string{"go.sum", filepath.Join("temporal", "go.sum")} {
		data, err := os.ReadFile(filepath.Join(root, f))
		require.NoError(t, err)
		sum = append(sum, data...)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))

	// withLog is the ticket with a pure action without fields, Log, beside
	// Reply, and a guard, so a Behavior.
	withLog := strings.NewReplacer(
		"actions:\n", "actions:\n  Log: {pure: true}\n",
		"    on: Close\n    to: Closed\n", "    on: Close\n    guards:\n      - if: answered\n        to: Closed\n        action: Log\n      - else: true\n        reject: not answered\n",
	).Replace(ticketV1) + "guards:\n  answered: {}\n"
	specs := map[string]string{
		"allpure":  strings.Replace(ticketV1, "  Reply:\n", "  Reply:\n    pure: true\n", 1),
		"somepure": withLog,
	}
	for name, src := range specs {
		pkg := filepath.Join(dir, name, "ticket")
		require.NoError(t, os.MkdirAll(pkg, 0o755))
		spec := filepath.Join(pkg, "ticket.yaml")
		require.NoError(t, os.WriteFile(spec, []byte(src), 0o644))
		require.Empty(t, generateTicket(t, spec), name)
		_, err := os.Stat(filepath.Join(dir, name, "flow", "ticket_temporal_gen.go"))
		require.NoError(t, err, "%s: the glue is written", name)
	}
	// No -trimpath: the SDK and its dependencies come from the build cache
	// the temporal module's own tests fill (make test runs them), instead of
	// a second, trimmed build of them (minutes on two cores).
	goWith(t, "-mod=mod", dir, "vet", "./...")
}
