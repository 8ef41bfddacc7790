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

// TestHandClashes checks that a hand-written declaration of the output
// package that takes a generated name (which the compiler would report
// in the generated file) is refused where it is declared, and that what
// is not the user's to rename is left alone: another fsmgen's output, a
// file the build leaves out, an external test package.
func TestHandClashes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
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
		name:  "a test named as a generated one",
		files: map[string]string{"door_test.go": "package door\n\nimport \"testing\"\n\nfunc TestRules(t *testing.T) {}\n"},
		want:  []string{"door_test.go:5:6: hand-written func TestRules takes the name of the generated func TestRules (door_gen_test.go)"},
	}, {
		name: "not the user's to rename",
		files: map[string]string{
			"ext_test.go":   "package door_test\n\nimport \"testing\"\n\nfunc TestRules(t *testing.T) {}\n",
			"ignored.go":    "//go:build ignore\n\npackage door\n\ntype Machine struct{}\n",
			"old_gen.go":    emit.Header + "\n\npackage door\n\ntype Machine struct{}\n",
			"otherwise.txt": "type Machine struct{}\n",
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			spec := filepath.Join(dir, "door.yaml")
			require.NoError(t, os.WriteFile(spec, []byte(clashSpec), 0o644))
			for name, content := range tc.files {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
			}
			res, err := generate.Load(spec)
			require.NoError(t, err)
			if len(tc.want) == 0 {
				assert.Empty(t, res.Diags)
				assert.NotNil(t, res.Machine)
				return
			}
			assert.Nil(t, res.Machine, "a spec whose package would not compile writes nothing")
			assert.Empty(t, res.Outputs)
			require.Len(t, res.Diags, len(tc.want), "%s", res.Diags)
			for i, d := range res.Diags {
				assert.Equal(t, "go-name-clash", d.Rule)
				got, want := d.Pos.String()+": "+d.Msg, dir+string(filepath.Separator)+tc.want[i]
				assert.True(t, strings.HasPrefix(got, want), "%s\ndoes not start with\n%s", got, want)
			}
		})
	}
}
