package fsm_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/fuzzwatch"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
	"github.com/fsmgen/fsmgen/internal/compiler/testspecs"
)

// FuzzCheck parses and checks arbitrary input: it must never panic, every
// diagnostic must name the file and say something, and a machine is
// returned exactly when there is no error.
func FuzzCheck(f *testing.F) {
	specs, err := testspecs.All("../../..")
	require.NoError(f, err)
	require.NotEmpty(f, specs)
	for _, s := range specs {
		f.Add(s.Src)
	}
	f.Fuzz(func(t *testing.T, src []byte) { fuzzwatch.Run(src, func() { fuzzCheck(t, src) }) })
}

func fuzzCheck(t *testing.T, src []byte) {
	{
		sf, diags := spec.Parse("fuzz.yaml", src)
		checkDiags(t, diags, src)
		if sf == nil || diags.HasErrors() {
			require.True(t, diags.HasErrors(), "no syntax tree but no error")
			return
		}
		m, diags := fsm.Build(sf, fsm.Env{})
		checkDiags(t, diags, src)
		require.Equal(t, m == nil, diags.HasErrors(), "a machine exactly when there is no error: %s", diags)
		if m != nil {
			for i, r := range m.Rules {
				require.Equal(t, i, r.Index)
			}
		}
	}
}

func checkDiags(t *testing.T, diags diag.List, src []byte) {
	lines := len(diag.Lines(src))
	for _, d := range diags {
		require.Equal(t, "fuzz.yaml", d.Pos.File, "%s", d)
		require.NotEmpty(t, d.Msg)
		require.LessOrEqual(t, d.Pos.Line, lines, "%s points past the end", d)
		require.NotContains(t, d.Msg, "\n", "one line per diagnostic")
		_ = diag.Excerpt(src, d)
	}
}
