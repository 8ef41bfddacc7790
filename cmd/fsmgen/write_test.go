package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/emit"
	"github.com/fsmgen/fsmgen/internal/compiler/generate"
)

func TestWriteOutputs(t *testing.T) {
	t.Parallel()
	// gen is a generated file's content.
	gen := func(s string) string { return "// " + emit.Header + "\n" + s }
	tests := []struct {
		name    string
		before  map[string]string // the files on disk before, by name
		outputs [][]string        // each result's outputs: name, then content, ...
		want    string            // what writeOutputs says, DIR for the directory
		wantErr string
		after   map[string]string // the files on disk after
	}{
		{name: "every result's outputs", outputs: [][]string{{"a.go", gen("a")}, {"b.go", gen("b"), "c.md", gen("c")}},
			want:  "wrote DIR/a.go\nwrote DIR/b.go\nwrote DIR/c.md\n",
			after: map[string]string{"a.go": gen("a"), "b.go": gen("b"), "c.md": gen("c")}},
		{name: "an unchanged file is neither written nor said", before: map[string]string{"a.go": gen("a")},
			outputs: [][]string{{"a.go", gen("a"), "b.go", gen("b")}},
			want:    "wrote DIR/b.go\n",
			after:   map[string]string{"a.go": gen("a"), "b.go": gen("b")}},
		{name: "no results"},
		{name: "a file fsmgen did not write: nothing is written", before: map[string]string{"b.go": "hand-written"},
			outputs: [][]string{{"a.go", gen("a")}, {"b.go", gen("b")}},
			wantErr: "refusing to overwrite DIR/b.go",
			after:   map[string]string{"b.go": "hand-written"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for name, s := range tt.before {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644))
			}
			var results []*generate.Result
			for _, outs := range tt.outputs {
				r := &generate.Result{Spec: "spec.yaml"}
				for i := 0; i < len(outs); i += 2 {
					r.Outputs = append(r.Outputs, generate.Output{Path: filepath.Join(dir, outs[i]), Content: []byte(outs[i+1])})
				}
				results = append(results, r)
			}
			var w bytes.Buffer
			err := writeOutputs(results, &w)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), strings.ReplaceAll(tt.wantErr, "DIR", dir))
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, strings.ReplaceAll(tt.want, "DIR", dir), w.String())
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Len(t, entries, len(tt.after), "no other file")
			for name, want := range tt.after {
				got, err := os.ReadFile(filepath.Join(dir, name))
				require.NoError(t, err)
				assert.Equal(t, want, string(got), name)
			}
		})
	}
}
