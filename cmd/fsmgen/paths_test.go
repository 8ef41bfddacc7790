package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// TestPaths prints the witness paths of the golden parallel_restored_only,
// as text and as JSON: On's ignore of Go answers configurations New never
// leads to, and has no path, which both say.
func TestPaths(t *testing.T) {
	ar, err := txtar.ParseFile("../../internal/compiler/emit/testdata/golden/parallel_restored_only.txtar")
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "gate.yaml"), ar.Files[0].Data, 0o644))

	code, out, errOut := cli(t, dir, "paths", "gate.yaml")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "rule 0 (gate.yaml:31:5): Off --Power--> On\n  1. in Off, send Power → On\n")
	assert.Contains(t, out, "On --Go--> ignored\n  no path from New: it answers configurations of On's regions that New never leads to and Restore accepts\n")
	assert.Equal(t, 7, strings.Count(out, "\nrule ")+1, "a record for every rule")

	code, out, errOut = cli(t, dir, "paths", "-json", "gate.yaml")
	require.Equal(t, 0, code, errOut)
	var recs []fsm.PathRecord
	require.NoError(t, json.Unmarshal([]byte(out), &recs))
	require.Len(t, recs, 7)
	for _, r := range recs {
		if r.Label == "On --Go--> ignored" {
			assert.Empty(t, r.Steps)
			assert.Contains(t, out, `"steps": []`)
			continue
		}
		assert.NotEmpty(t, r.Steps, r.Label)
	}
}
