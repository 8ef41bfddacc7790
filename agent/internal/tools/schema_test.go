package tools

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
)

var update = flag.Bool("update", false, "rewrite testdata/schemas.json from the tools' schemas")

// schemasFile holds the JSON Schema of every tool's arguments as the
// model is offered it, each object's keys sorted: two schemas that say
// the same are the same file.
var schemasFile = filepath.Join("testdata", "schemas.json")

// TestSchemas checks the tools' argument schemas against
// testdata/schemas.json (go test -run TestSchemas -update rewrites it):
// the descriptions, required arguments and types the model sees change
// only with that file, in review.
func TestSchemas(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t)
	sb, err := sandbox.New(t.Context(), sandbox.Options{Mode: sandbox.Off})
	require.NoError(t, err)
	set := Default(ws, Options{Search: true, Sandbox: sb})
	schemas := map[string]any{}
	for _, spec := range set.Specs() {
		var schema any
		require.NoError(t, json.Unmarshal(spec.InputSchema, &schema), "%s's schema", spec.Name)
		schemas[spec.Name] = schema
	}
	require.Len(t, schemas, 5, "every tool")
	var b bytes.Buffer
	enc := json.NewEncoder(&b) // maps: keys sorted
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	require.NoError(t, enc.Encode(schemas))
	got := b.Bytes()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(schemasFile), 0o755))
		require.NoError(t, os.WriteFile(schemasFile, got, 0o644))
	}
	want, err := os.ReadFile(schemasFile)
	require.NoError(t, err, "run go test -run TestSchemas -update to write it")
	assert.Equal(t, string(want), string(got), "the tools' schemas changed: if that is meant, run go test -run TestSchemas -update and review the change of %s", schemasFile)
}
