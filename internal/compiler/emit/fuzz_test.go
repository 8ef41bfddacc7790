package emit_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/emit"
	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/fuzzwatch"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
	"github.com/fsmgen/fsmgen/internal/compiler/testspecs"
)

// seedSpecs adds every spec in the repository to the fuzz corpus.
func seedSpecs(f *testing.F) {
	specs, err := testspecs.All("../../..")
	require.NoError(f, err)
	require.NotEmpty(f, specs)
	for _, s := range specs {
		f.Add(s.Src)
	}
}

// FuzzEmit generates every spec that passes the check and verifies the
// output: the Go parses, declares exactly what the spec implies, has only
// plain comments and type-checks; the diagram and table keep their shape.
func FuzzEmit(f *testing.F) {
	seedSpecs(f)
	f.Fuzz(func(t *testing.T, src []byte) { fuzzwatch.Run(src, func() { fuzzEmit(t, src) }) })
}

func fuzzEmit(t *testing.T, src []byte) {
	{
		sf, diags := spec.Parse("fuzz.yaml", src)
		if sf == nil || diags.HasErrors() {
			return
		}
		m, _ := fsm.Build(sf, fsm.Env{})
		if m == nil {
			return
		}
		m.Output = fsm.Output{GoDir: "out", Diagram: "out/diagram.mmd", Table: "out/table.md"}
		files, err := emit.All(m)
		require.NoError(t, err)
		require.NoError(t, verifyGo(m, files))
		require.NoError(t, verifyDocs(m, files))
	}
}

// TestVerifyAgent runs the same verification on spec/agent.yaml.
func TestVerifyAgent(t *testing.T) {
	src, err := os.ReadFile("../../../spec/agent.yaml")
	require.NoError(t, err)
	sf, diags := spec.Parse("agent.yaml", src)
	require.False(t, diags.HasErrors(), "%s", diags)
	m, diags := fsm.Build(sf, fsm.Env{})
	require.NotNil(t, m, "%s", diags)
	files, err := emit.All(m)
	require.NoError(t, err)
	require.NoError(t, verifyGo(m, files))
	require.NoError(t, verifyDocs(m, files))
}

// TestHostileSpecFileName checks that a spec file name cannot inject a
// directive into the generated package doc.
func TestHostileSpecFileName(t *testing.T) {
	sf, diags := spec.Parse("x\n//go:build ignore\n.yaml", []byte("version: 2\nmachine: M\npackage: m\nstates:\n  A:\n    initial: true\n    terminal: true\n    ignore: [E]\nevents:\n  E: {}\n"))
	require.False(t, diags.HasErrors(), "%s", diags)
	m, diags := fsm.Build(sf, fsm.Env{})
	require.NotNil(t, m, "%s", diags)
	m.Output = fsm.Output{GoDir: "out", Diagram: "out/d.mmd", Table: "out/t.md"}
	files, err := emit.All(m)
	require.NoError(t, err)
	require.NoError(t, verifyGo(m, files))
	require.NoError(t, verifyDocs(m, files))
}
