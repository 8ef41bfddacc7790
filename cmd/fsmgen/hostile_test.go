package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHostileFiles runs fsmgen generate on files that are not specs: each
// must exit 1 with a message naming the file, write nothing, and not panic.
func TestHostileFiles(t *testing.T) {
	valid := "version: 2\nmachine: M\npackage: m\noutput:\n  go: out\nstates:\n  A:\n    initial: true\n    terminal: true\n    ignore: [E]\nevents:\n  E: {}\n"
	tests := []struct {
		name    string
		content []byte
		want    string
	}{
		{"empty", nil, `spec is empty`},
		{"binary", []byte("\x7fELF\x02\x01\x01\x00\x00\x00"), `contains a NUL byte`},
		{"invalid UTF-8", []byte("version: 2\nmachine: \xc3\x28\n"), `spec is not valid UTF-8`},
		{"tabs", []byte("version: 2\nstates:\n\tA: {}\n"), `tabs cannot indent YAML`},
		{"list root", []byte("- version: 2\n"), `spec must be a mapping`},
		{"unknown key", []byte(strings.Replace(valid, "machine:", "machin:", 1)), `unknown key "machin" \(did you mean "machine"\?\)`},
		{"version", []byte(strings.Replace(valid, "version: 2", "version: 3", 1)), `unsupported spec version "3"`},
		{"alias bomb", []byte("version: 2\na: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"), `too many aliases`},
		{"deep", []byte("version: 2\ndoc: " + strings.Repeat("{a: ", 60) + "1" + strings.Repeat("}", 60) + "\n"), `nested more than 48 levels deep`},
		{"huge", []byte("version: 2\ndoc: \"" + strings.Repeat("x", 2<<20) + "\"\n"), `larger than the 1048576-byte limit`},
		{"absolute output", []byte(strings.Replace(valid, "go: out", "go: /etc/evil", 1)), `output path "/etc/evil" must be relative`},
		{"odd output", []byte(strings.Replace(valid, "go: out", "go: \"out\\n//x\"", 1)), `output path .* may use only letters`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "spec.yaml")
			require.NoError(t, os.WriteFile(path, tt.content, 0o644))
			var stdout, stderr bytes.Buffer
			code := run([]string{"generate", path}, &stdout, &stderr)
			assert.Equal(t, exitError, code, "stderr: %s", stderr.String())
			assert.Regexp(t, `(?m)^`+regexpQuote(path)+`(:\d+(:\d+)?)?: .*`+tt.want, stderr.String())
			assert.Empty(t, stdout.String())
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Len(t, entries, 1, "nothing but the spec in the directory")
		})
	}
}

func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteRune('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TestOutputLeavesModule checks that a spec cannot write outside the
// module that holds it.
func TestOutputLeavesModule(t *testing.T) {
	root := t.TempDir()
	mod := filepath.Join(root, "mod")
	require.NoError(t, os.MkdirAll(filepath.Join(mod, "spec"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/m\n"), 0o644))
	valid := "version: 2\nmachine: M\npackage: m\noutput:\n  go: ../../outside\nstates:\n  A:\n    initial: true\n    terminal: true\n    ignore: [E]\nevents:\n  E: {}\n"
	path := filepath.Join(mod, "spec", "m.yaml")
	require.NoError(t, os.WriteFile(path, []byte(valid), 0o644))
	var stdout, stderr bytes.Buffer
	code := run([]string{"generate", path}, &stdout, &stderr)
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr.String(), `m.yaml:5:7: output path "../../outside" leads out of `+mod)
	assert.NoDirExists(t, filepath.Join(root, "outside"))

	inside := strings.Replace(valid, "../../outside", "../gen/m", 1)
	require.NoError(t, os.WriteFile(path, []byte(inside), 0o644))
	stderr.Reset()
	assert.Equal(t, exitOK, run([]string{"generate", path}, &stdout, &stderr), "stderr: %s", stderr.String())
	assert.FileExists(t, filepath.Join(mod, "gen", "m", "m_gen.go"))
}
