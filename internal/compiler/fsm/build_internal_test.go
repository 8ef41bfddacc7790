package fsm

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// builtFile parses and builds the spec at path, which must build.
func builtFile(t *testing.T, path string) *Machine {
	t.Helper()
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	sf, diags := spec.Parse(filepath.Base(path), src)
	require.False(t, diags.HasErrors(), "%s", diags)
	m, diags := Build(sf, Env{})
	require.NotNil(t, m, "%s", diags)
	return m
}

// machineState returns machine m's state name (a composite state, a
// region's or a history's too), which must exist.
func machineState(t *testing.T, m *Machine, name string) *State {
	t.Helper()
	for _, s := range append(slices.Clone(m.States), m.Histories...) {
		for ; s != nil; s = s.Parent {
			if s.Name == name {
				return s
			}
		}
	}
	require.Fail(t, "no state "+name)
	return nil
}
