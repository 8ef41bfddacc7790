package spec

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v4"
)

// TestSchemaKeysMatchParser compares, for every mapping of the spec
// language, the keys the parser reads with the properties the JSON Schema
// allows there, so that an editor neither flags a key fsmgen accepts nor
// lets through one it refuses as unknown.
func TestSchemaKeysMatchParser(t *testing.T) {
	var schema map[string]any
	require.NoError(t, json.Unmarshal(Schema, &schema))
	p := &parser{}
	tests := []struct {
		name    string
		parser  map[string]func(k, v *yaml.Node)
		pointer string // the schema object, as a JSON pointer
		// refused are keys the parser reads but the checker refuses
		// wherever they appear in this mapping, so the schema refuses them
		// as you type; TestSchemaRejects checks that fsmgen refuses them.
		refused []string
	}{
		{name: "top level", parser: p.fileKeys(&File{}), pointer: ""},
		{name: "output", parser: p.outputKeys(&Output{}), pointer: "/properties/output"},
		{name: "field", parser: p.fieldKeys(&Field{}), pointer: "/$defs/fields/additionalProperties/oneOf/1"},
		{name: "state", parser: p.stateKeys(&State{}), pointer: "/$defs/state"},
		{name: "event", parser: p.declKeys(&Decl{}), pointer: "/$defs/decl"},
		{name: "action", parser: p.actionKeys(&Decl{}), pointer: "/$defs/action"},
		{name: "guard or effect", parser: p.fnKeys(&Func{}), pointer: "/$defs/func"},
		{name: "entry or exit", parser: p.hookKeys(&Hook{}), pointer: "/$defs/hook/oneOf/1"},
		{name: "after", parser: p.afterKeys(&After{}), pointer: "/$defs/after", refused: []string{"reject"}},
		{name: "transition", parser: p.transitionKeys(&Transition{}), pointer: "/$defs/transition"},
		{name: "guard branch", parser: p.branchKeys(&Branch{}), pointer: "/$defs/branch"},
		{name: "example", parser: p.exampleKeys(&Example{}), pointer: "/$defs/example"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := lookup(t, schema, tt.pointer)
			assert.Equal(t, false, obj["additionalProperties"], "the schema must refuse unknown keys here")
			props, ok := obj["properties"].(map[string]any)
			require.True(t, ok, "%q has no properties", tt.pointer)
			want := slices.DeleteFunc(slices.Sorted(maps.Keys(tt.parser)), func(k string) bool { return slices.Contains(tt.refused, k) })
			assert.Equal(t, want, slices.Sorted(maps.Keys(props)), "keys the parser reads (left) and the schema allows (right)")
			for _, k := range tt.refused {
				assert.Contains(t, tt.parser, k, "a refused key the parser does not read")
			}
		})
	}
}

// lookup returns the object at a JSON pointer (RFC 6901) in doc.
func lookup(t *testing.T, doc map[string]any, pointer string) map[string]any {
	t.Helper()
	var cur any = doc
	if pointer != "" {
		for _, tok := range strings.Split(pointer[1:], "/") {
			tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
			switch v := cur.(type) {
			case map[string]any:
				cur = v[tok]
			case []any:
				i, err := strconv.Atoi(tok)
				require.NoError(t, err, "pointer %q", pointer)
				require.Less(t, i, len(v), "pointer %q", pointer)
				cur = v[i]
			default:
				t.Fatalf("pointer %q: %q is inside a value that is neither an object nor an array", pointer, tok)
			}
		}
	}
	obj, ok := cur.(map[string]any)
	require.True(t, ok, "pointer %q does not name an object", pointer)
	return obj
}
