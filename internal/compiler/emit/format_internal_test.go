package emit

import (
	"bytes"
	"go/format"
	"testing"

	"github.com/dave/jennifer/jen"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
	"github.com/fsmgen/fsmgen/internal/compiler/testspecs"
)

// TestFormatGo checks that formatting generated Go in pieces, cut at every
// place formatGo may cut, gives the bytes go/format gives for the whole
// file, for the specs of the repository that check without their Go
// packages around them (all but those naming types of their own package).
func TestFormatGo(t *testing.T) {
	specs, err := testspecs.Valid("../../..")
	require.NoError(t, err)
	checked := 0
	for _, s := range specs {
		f, diags := spec.Parse(s.Name, s.Src)
		require.False(t, diags.HasErrors(), "%s", diags)
		m, _ := fsm.Build(f, fsm.Env{})
		if m == nil {
			continue
		}
		checked++
		t.Run(s.Name, func(t *testing.T) {
			for _, jf := range []*jen.File{GoFile(m), TestFile(m)} {
				jf.NoFormat = true
				var buf bytes.Buffer
				require.NoError(t, jf.Render(&buf))
				src := groupImports(buf.Bytes())
				require.NotEmpty(t, cutPoints(src, 1), "a generated file has places to cut")
				whole, err := format.Source(src)
				require.NoError(t, err)
				pieces, err := formatPieces(src, 1)
				require.NoError(t, err)
				assert.Equal(t, string(whole), string(pieces))
			}
		})
	}
	assert.GreaterOrEqual(t, checked, 10, "the specs formatted")
}
