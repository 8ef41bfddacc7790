package generate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/emit"
	"github.com/fsmgen/fsmgen/internal/compiler/generate"
)

// clashSpec is a small machine generated into its own directory.
const clashSpec = `version: 2
machine: Door
package: door
output:
  go: .
states:
  Open:
    initial: true
  Shut:
    terminal: true
    ignore: [Close]
events:
  Close: {}
transitions:
  - {from: Open, on: Close, to: Shut}
`

// behaviorSpec is clashSpec with a guard whose examples run through the
// behaviour policy declares, in the external test package door_test.
var behaviorSpec = strings.NewReplacer(
	"output:", "behavior: Policy{}\noutput:",
	"transitions:\n  - {from: Open, on: Close, to: Shut}\n",
	"guards:\n  latched: {}\ntransitions:\n  - from: Open\n    on: Close\n    guards:\n      - if: latched\n        to: Shut\n        examples:\n          - name: a latched door shuts\n      - else: true\n        ignore: true\n",
).Replace(clashSpec)

// gomod makes the directory a module, whose import path the generated
// external test package imports.
const gomod = "module example.com/door\n\ngo 1.26\n"

// policy is the behaviour of behaviorSpec.
const policy = "package door\n\n// Policy is the door's behaviour.\ntype Policy struct{}\n\n// Latched reports true.\nfunc (Policy) Latched() bool { return true }\n"

// TestHandClashes checks that a hand-written declaration of the output
// package that takes a generated name (which the compiler would report
// in the generated file) is refused where it is declared, and that what
// is not the user's to rename is left alone: another fsmgen's output, a
// file the build leaves out, an external test package.
func TestHandClashes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		spec  string // clashSpec when empty
		files map[string]string
		want  []string // "file:line:col: message start"; none when clean
	}{{
		name:  "a helper of its own",
		files: map[string]string{"helper.go": "package door\n\nfunc helper() {}\n\n// Label names the door.\nfunc (m *Machine) Label() string { return \"door\" }\n"},
	}, {
		name:  "a type named as a generated function",
		files: map[string]string{"rules.go": "package door\n\n// Rules is mine.\ntype Rules struct{}\n"},
		want:  []string{"rules.go:4:6: hand-written type Rules takes the name of the generated func Rules (door_gen.go), in package door"},
	}, {
		name:  "a method of the generated machine",
		files: map[string]string{"state.go": "package door\n\n// State is mine.\nfunc (m *Machine) State() State { return nil }\n"},
		want:  []string{"state.go:4:19: hand-written method Machine.State takes the name of the generated method Machine.State (door_gen.go)"},
	}, {
		name:  "a method named as a generated field, its receiver in parentheses",
		files: map[string]string{"shut.go": "package door\n\n// core is mine.\nfunc (m (*Machine)) core() {}\n"},
		want:  []string{"shut.go:4:21: hand-written method Machine.core takes the name of the generated field Machine.core (door_gen.go)"},
	}, {
		name:  "a test named as a generated one",
		files: map[string]string{"door_test.go": "package door\n\nimport \"testing\"\n\nfunc TestRules(t *testing.T) {}\n"},
		want:  []string{"door_test.go:5:6: hand-written func TestRules takes the name of the generated func TestRules (door_gen_test.go)"},
	}, {
		name: "not the user's to rename",
		files: map[string]string{
			"ext_test.go":   "package door_test\n\nimport \"testing\"\n\nfunc TestRules(t *testing.T) {}\n",
			"ignored.go":    "//go:build ignore\n\npackage door\n\ntype Machine struct{}\n",
			"otherwise.txt": "type Machine struct{}\n",
		},
	}, {
		name:  "what the spec generated under another machine name",
		files: map[string]string{"gate_gen.go": "// " + emit.Header + "\n// source: door.yaml\n\npackage door\n\ntype Machine struct{}\n\nfunc New() {}\n"},
		want:  []string{"gate_gen.go: fsmgen generated gate_gen.go from door.yaml before, under another machine name: it declares Machine, New, as the outputs now do (door_gen.go, door_gen_test.go), so the package would not compile; delete gate_gen.go"},
	}, {
		name:  "another spec's machine",
		files: map[string]string{"gate_gen.go": "// " + emit.Header + "\n// source: gate.yaml\n\npackage door\n\ntype Machine struct{}\n"},
		want:  []string{"gate_gen.go: gate_gen.go, generated from gate.yaml, declares Machine, as the outputs of door.yaml do, in package door: two machines cannot share a package"},
	}, {
		name:  "a test of the package named as the generated examples' test, in door_test",
		spec:  behaviorSpec,
		files: map[string]string{"go.mod": gomod, "policy.go": policy, "mine_test.go": "package door\n\nimport \"testing\"\n\nfunc TestExamples(t *testing.T) {}\n"},
	}, {
		name:  "an external test named as the generated examples' test",
		spec:  behaviorSpec,
		files: map[string]string{"go.mod": gomod, "policy.go": policy, "mine_test.go": "package door_test\n\nimport \"testing\"\n\nfunc TestExamples(t *testing.T) {}\n"},
		want:  []string{"mine_test.go:5:6: hand-written func TestExamples takes the name of the generated func TestExamples (door_examples_gen_test.go), in package door_test"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			spec := filepath.Join(dir, "door.yaml")
			src := clashSpec
			if tc.spec != "" {
				src = tc.spec
			}
			require.NoError(t, os.WriteFile(spec, []byte(src), 0o644))
			for name, content := range tc.files {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
			}
			res, err := generate.Load(spec)
			require.NoError(t, err)
			if len(tc.want) == 0 {
				assert.Empty(t, res.Diags.Error())
				assert.True(t, res.Machine != nil)
				return
			}
			assert.True(t, res.Machine == nil, "a spec whose package would not compile writes nothing")
			assert.Zero(t, len(res.Outputs))
			require.Len(t, res.Diags, len(tc.want), "%s", res.Diags)
			for i, d := range res.Diags {
				assert.Equal(t, "go-name-clash", d.Rule)
				got, want := d.Pos.String()+": "+d.Msg, dir+string(filepath.Separator)+tc.want[i]
				assert.True(t, strings.HasPrefix(got, want), "%s\ndoes not start with\n%s", got, want)
			}
		})
	}
}

// TestSharedPackage checks that two specs generating Go into one
// directory, each of whose files declares Machine, New and the rest, are
// refused together, before either is written.
func TestSharedPackage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var paths []string
	for _, name := range []string{"door", "gate"} {
		path := filepath.Join(dir, name+".yaml")
		require.NoError(t, os.WriteFile(path, []byte(strings.Replace(clashSpec, "machine: Door", "machine: "+strings.ToUpper(name[:1])+name[1:], 1)), 0o644))
		paths = append(paths, path)
	}
	_, err := generate.LoadAll(paths)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "door.yaml and "+paths[1]+" both generate Go into "+dir+": two machines cannot share a package; give one of them an output.go of its own")

	// Each alone is fine.
	for _, p := range paths {
		res, err := generate.LoadAll([]string{p})
		require.NoError(t, err)
		require.NotNil(t, res[0].Machine, "%s", res[0].Diags)
	}
}
