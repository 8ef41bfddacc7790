package spec_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v4"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
	"github.com/fsmgen/fsmgen/internal/compiler/testspecs"
)

// compileSchema compiles the embedded schema with a real JSON Schema
// validator.
func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(spec.Schema))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("fsmgen.schema.json", doc))
	sch, err := c.Compile("fsmgen.schema.json")
	require.NoError(t, err)
	return sch
}

// instance turns YAML into the JSON value a YAML language server validates.
func instance(t *testing.T, src []byte) any {
	t.Helper()
	var v any
	require.NoError(t, yaml.Unmarshal(src, &v))
	data, err := json.Marshal(v)
	require.NoError(t, err)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	require.NoError(t, err)
	return inst
}

func TestSchemaAcceptsRepoSpecs(t *testing.T) {
	sch := compileSchema(t)
	specs, err := testspecs.Valid("../../..")
	require.NoError(t, err)
	require.NotEmpty(t, specs)
	for _, s := range specs {
		t.Run(filepath.Base(s.Name), func(t *testing.T) {
			assert.NoError(t, sch.Validate(instance(t, s.Src)))
		})
	}
}

func TestSpecsNameTheSchema(t *testing.T) {
	paths, err := filepath.Glob("../../../spec/*.yaml")
	require.NoError(t, err)
	for _, p := range paths {
		src, err := os.ReadFile(p)
		require.NoError(t, err)
		first, _, _ := strings.Cut(string(src), "\n")
		assert.Equal(t, "# yaml-language-server: $schema=../docs/fsmgen.schema.json", first, "%s: first line", p)
	}
}

func TestSchemaFileIsCurrent(t *testing.T) {
	committed, err := os.ReadFile("../../../docs/fsmgen.schema.json")
	require.NoError(t, err)
	assert.Equal(t, string(spec.Schema), string(committed), "docs/fsmgen.schema.json is stale: run make generate")
}

// TestSchemaAccepts checks that the schema accepts specs fsmgen accepts
// that use keys in places the repository's specs do not, so that editors
// do not flag them.
func TestSchemaAccepts(t *testing.T) {
	sch := compileSchema(t)
	// call is a composite state whose timer moves into its own substate
	// without leaving it.
	call := `version: 2
machine: Phone
package: phone
states:
  Idle:
    initial: true
    ignore: [Hang]
  Call:
    ignore: [Dial]
    after:
      delay: 30s
      to: Held
      local: true
    states:
      Talking:
        initial: true
      Held: {}
events:
  Dial: {}
  Hang: {}
transitions:
  - from: Idle
    on: Dial
    to: Call
  - from: Call
    on: Hang
    to: Idle
`
	tests := map[string]string{
		"local inside after": call,
		"local inside a timer's branch": strings.Replace(call, "      to: Held\n      local: true\n",
			"      guards:\n        - if: quiet\n          to: Held\n          local: true\n        - else: true\n          ignore: true\n", 1) +
			"guards:\n  quiet: {}\n",
	}
	for name, src := range tests {
		t.Run(name, func(t *testing.T) {
			f, diags := spec.Parse("x.yaml", []byte(src))
			if !diags.HasErrors() {
				_, diags = fsm.Build(f, fsm.Env{})
			}
			require.False(t, diags.HasErrors(), "fsmgen refuses the spec: %v", diags)
			assert.NoError(t, sch.Validate(instance(t, []byte(src))))
		})
	}
}

// TestSchemaRejects checks that the schema refuses what the parser refuses
// for its shape, so editors flag it as you type.
func TestSchemaRejects(t *testing.T) {
	sch := compileSchema(t)
	base := "version: 2\nmachine: Door\npackage: door\nstates:\n  Closed:\n    initial: true\nevents:\n  Push: {}\n"
	tests := map[string]string{
		"unknown top-level key":     base + "outptu: {}\n",
		"missing states":            "version: 2\nmachine: Door\npackage: door\nevents:\n  Push: {}\n",
		"unsupported version":       strings.Replace(base, "version: 2", "version: 1", 1),
		"package not lower case":    strings.Replace(base, "package: door", "package: Door", 1),
		"state name not identifier": strings.Replace(base, "  Closed:", "  Clo-sed:", 1),
		"unknown state key":         base[:len(base)-len("events:\n  Push: {}\n")] + "    termnal: true\nevents:\n  Push: {}\n",
		"initial not a boolean":     strings.Replace(base, "initial: true", "initial: yes please", 1),
		"field named kind":          strings.Replace(base, "    initial: true\n", "    initial: true\n    fields:\n      kind: int\n", 1),
		"transitions not a list":    base + "transitions:\n  from: Closed\n",
		"transition without from":   base + "transitions:\n  - on: Push\n    to: Closed\n",
		"unknown transition key":    base + "transitions:\n  - from: Closed\n    on: Push\n    too: Closed\n",
		"branch with if and else":   base + "transitions:\n  - from: Closed\n    on: Push\n    guards:\n      - if: g\n        else: true\n",
		"branch with neither":       base + "transitions:\n  - from: Closed\n    on: Push\n    guards:\n      - to: Closed\n",
		"ignore false":              base + "transitions:\n  - from: Closed\n    on: Push\n    ignore: false\n",
		"empty reject reason":       base + "transitions:\n  - from: Closed\n    on: Push\n    reject: \"\"\n",
		"field type not a string":   strings.Replace(base, "    initial: true\n", "    initial: true\n    fields:\n      n: [int]\n", 1),
		"output key misspelled":     base + "output:\n  goo: out\n",
		"ignore list of non-names":  strings.Replace(base, "    initial: true\n", "    initial: true\n    ignore: [\"a b\"]\n", 1),
		"import alias not ident":    base + "imports:\n  9x: example.com/x\n",
		"guard declaration unknown": base + "guards:\n  g:\n    docs: x\n",
		"events given as a list":    "version: 2\nmachine: Door\npackage: door\nstates:\n  Closed: {}\nevents: [Push]\n",
		"a timer that rejects":      strings.Replace(base, "    initial: true\n", "    initial: true\n    after:\n      delay: 1s\n      reject: too late\n", 1),
		"a pure event":              strings.Replace(base, "Push: {}", "Push: {pure: true}", 1),
		"pure not a boolean":        base + "actions:\n  Log: {pure: \"yes\"}\n",
	}
	for name, src := range tests {
		t.Run(name, func(t *testing.T) {
			assert.Error(t, sch.Validate(instance(t, []byte(src))))
			f, diags := spec.Parse("x.yaml", []byte(src))
			if !diags.HasErrors() {
				_, diags = fsm.Build(f, fsm.Env{})
			}
			assert.True(t, diags.HasErrors(), "fsmgen accepts what the schema refuses")
		})
	}
}
