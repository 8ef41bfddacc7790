package tools

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
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
	set, err := Default(ws, Options{Search: true, Sandbox: sb}).With(Task(nil))
	require.NoError(t, err)
	schemas := map[string]any{}
	for _, spec := range set.Specs() {
		var schema any
		require.NoError(t, json.Unmarshal(spec.InputSchema, &schema), "%s's schema", spec.Name)
		schemas[spec.Name] = schema
	}
	require.Len(t, schemas, 6, "every tool")
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

func TestArgsSchema(t *testing.T) {
	t.Parallel()
	type required struct {
		Name *string `json:"name" jsonschema:"The name, e.g. \"x\"."`
	}
	type optional struct {
		Name  *string `json:"name" jsonschema:"The name."`
		Count *int    `json:"count,omitempty" jsonschema:"How many."`
		Dry   *bool   `json:"dry_run,omitempty"`
	}
	type none struct{}
	type notPointer struct {
		Name string `json:"name"`
	}
	type unsupported struct {
		F *func() `json:"f"`
	}
	tests := []struct {
		name   string
		schema func() json.RawMessage
		want   string // JSON; empty: argsSchema panics
	}{
		{"a required argument with its description", argsSchema[required],
			`{"type": "object", "properties": {"name": {"type": "string", "description": "The name, e.g. \"x\"."}}, "required": ["name"], "additionalProperties": false}`},
		{"omitempty: optional; each its type", argsSchema[optional],
			`{"type": "object", "properties": {"name": {"type": "string", "description": "The name."}, "count": {"type": "integer", "description": "How many."}, "dry_run": {"type": "boolean"}}, "required": ["name"], "additionalProperties": false}`},
		{"no arguments", argsSchema[none], `{"type": "object", "properties": {}, "additionalProperties": false}`},
		{"a field that is no pointer", argsSchema[notPointer], ""},
		{"a type JSON has not", argsSchema[unsupported], ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.want == "" {
				assert.Panics(t, func() { tt.schema() })
				return
			}
			got := tt.schema()
			assert.JSONEq(t, tt.want, string(got))
		})
	}
}

// TestArgsSchemaOrder checks that the properties come in the order of the
// struct's fields, as the model is shown them.
func TestArgsSchemaOrder(t *testing.T) {
	t.Parallel()
	got := string(editFileSchema)
	path, old, new := strings.Index(got, `"path"`), strings.Index(got, `"old_str"`), strings.Index(got, `"new_str"`)
	assert.True(t, 0 < path && path < old && old < new, "%s", got)
}
