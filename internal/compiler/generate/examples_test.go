package generate_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/generate"
)

// TestExamplesCatchABrokenGuard breaks a hand-written guard of the agent in
// a copy of the module (canRetry then retries errors that are not
// retryable) and checks that the generated example tests fail, naming the
// rule the spec gives the example and the example.
func TestExamplesCatchABrokenGuard(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a copy of the module")
	}
	root := repoRoot(t)
	dir := t.TempDir()
	// The module's packages gen/agent's tests build, as go list finds them
	// (a list written here went stale when a package moved).
	list := exec.Command("go", "list", "-deps", "-test", "-f", "{{if not .Standard}}{{.Dir}}{{end}}", "./gen/agent/")
	list.Dir = root
	deps, err := list.Output()
	require.NoError(t, err, "go list the packages gen/agent's tests need")
	subs := []string{"go.mod", "go.sum"}
	for _, d := range strings.Fields(string(deps)) {
		if rel, err := filepath.Rel(root, d); err == nil && !strings.HasPrefix(rel, "..") && !slices.Contains(subs, rel) {
			subs = append(subs, rel)
		}
	}
	for _, sub := range subs {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, sub)), 0o755))
		out, err := exec.Command("cp", "-r", filepath.Join(root, sub), filepath.Join(dir, sub)).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	guard := filepath.Join(dir, "agent", "behavior", "agent.go")
	src, err := os.ReadFile(guard)
	require.NoError(t, err)
	const right = "return err.Retryable() && retries < a.cfg.MaxRetries"
	require.Contains(t, string(src), right, "canRetry as the test expects to find it")
	broken := strings.Replace(string(src), right, "return retries < a.cfg.MaxRetries", 1)
	require.NoError(t, os.WriteFile(guard, []byte(broken), 0o644))

	cmd := exec.CommandContext(goContext(t), "go", "test", "-count=1", "-run", "TestExamples", "./gen/agent/")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS="+tempGoFlags, "GOPROXY=off", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the example tests must fail: %s", out)
	assert.Contains(t, string(out), "--- FAIL: TestExamples/CallingLlm_--LlmError_[else]-->_WaitingForUserInput_{giveUp}_/_DisplayError:_a_bad_request_is_not_retried", "the failing example, by name")
	assert.Contains(t, string(out), "the spec says this example takes CallingLlm --LlmError [else]--> WaitingForUserInput {giveUp} / DisplayError; the behaviour made the machine take")
}

// TestImportAliases generates a machine whose spec imports its packages
// under names the generated code uses for itself (t, b, m, ev, s, rules,
// require, fsmrt: a package of the user's named like fsmgen's runtime;
// the behavior expression uses t and b, the example test's *testing.T and
// behaviour),
// with examples run through the real behaviour, into a module of its own,
// and checks that the package, its tests and its example tests compile,
// vet clean and pass.
func TestImportAliases(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a temporary module")
	}
	dir := tempModule(t)
	files := map[string]string{
		"fsmrt/fsmrt.go": "// Package fsmrt is the user's, named like fsmgen's runtime.\npackage fsmrt\n\n// Level is a brightness.\ntype Level int\n",
		"behave/behave.go": `// Package behave holds the lamp's guards.
package behave

import (
	"time"

	"example.com/m/fsmrt"
)

// B is the lamp's behaviour.
type B struct{ unit time.Duration }

// New returns the behaviour.
func New(unit time.Duration) B { return B{unit: unit} }

// Bright reports whether the level is high enough to light the lamp.
func (B) Bright(level fsmrt.Level) bool { return level > 5 }
`,
		"lamp/lamp.yaml": `version: 2
machine: Lamp
package: lamp
behavior: t.New(b.Second)
imports:
  t: example.com/m/behave
  b: time
  m: math/big
  ev: encoding/json
  s: net/netip
  rules: sort
  require: strings
  fsmrt: example.com/m/fsmrt
output:
  go: .
states:
  Off:
    initial: true
    fields:
      level: fsmrt.Level
  On:
    fields:
      level: fsmrt.Level
      since: b.Duration
      names: rules.StringSlice
      big: "*m.Int"
      raw: ev.Number
      peer: s.Addr
      note: "*require.Builder"
events:
  Switch:
    fields:
      since: b.Duration
      names: rules.StringSlice
      big: "*m.Int"
      raw: ev.Number
      peer: s.Addr
      note: "*require.Builder"
  Dim: {}
transitions:
  - from: Off
    on: Switch
    guards:
      - if: bright
        to: On
        examples:
          - name: a bright lamp lights
            state: {level: 9}
            event: {since: 1000}
      - else: true
        ignore: true
        examples:
          - name: a dim lamp stays off
            state: {level: 1}
  - from: Off
    on: Dim
    ignore: true
  - from: On
    on: Switch
    to: Off
  - from: On
    on: Dim
    to: Off
guards:
  bright:
    reads:
      level: fsmrt.Level
`,
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	res, err := generate.Load(filepath.Join(dir, "lamp", "lamp.yaml"))
	require.NoError(t, err)
	require.NotNil(t, res.Machine, "%s", res.Diags)
	require.Empty(t, res.Diags)
	_, err = generate.Write(res.Outputs)
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(dir, "lamp", "lamp_examples_gen_test.go"))
	goIn(t, dir, "vet", "./...")
	out := goIn(t, dir, "test", "-vet=off", "-count=1", "-v", "./lamp/")
	assert.Contains(t, out, "--- PASS: TestExamples/", "the examples ran")
	assert.Contains(t, out, "--- PASS: TestRules")
}
