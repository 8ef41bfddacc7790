package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/generate"
)

// TestSourceExcerpt checks that a diagnostic in a hand-written Go file of
// the output package is shown with that file's line, not the spec's line
// of the same number.
func TestSourceExcerpt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	goFile := filepath.Join(dir, "rules.go")
	require.NoError(t, os.WriteFile(goFile, []byte("package door\n\ntype Rules struct{}\n"), 0o644))
	r := &generate.Result{Spec: filepath.Join(dir, "door.yaml"), Source: []byte("version: 2\nmachine: Door\nbehavior: Rules{}\n")}
	for _, tc := range []struct {
		name string
		pos  diag.Pos
		want string
	}{
		{"the spec's", diag.Pos{File: r.Spec, Line: 3, Col: 11}, "    behavior: Rules{}\n              ^\n"},
		{"a Go file's", diag.Pos{File: goFile, Line: 3, Col: 6}, "    type Rules struct{}\n         ^\n"},
		{"a file gone", diag.Pos{File: filepath.Join(dir, "gone.go"), Line: 3, Col: 6}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := diag.Diagnostic{Pos: tc.pos, Msg: "m"}
			assert.Equal(t, tc.want, diag.Excerpt(source(r, d), d))
		})
	}
}
