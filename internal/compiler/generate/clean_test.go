package generate_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cleanSpec is the machine of TestGenerateFromClean: a cart placed when
// it has items, with an example for each branch of the guard, run
// through the behaviour BEHAVIOR made with the spec's IMPORTS.
const cleanSpec = `version: 2
machine: Cart
package: PACKAGE
IMPORTS
behavior: 'BEHAVIOR'
output:
  go: .
states:
  Filling:
    initial: true
    fields:
      items: int
  Placed:
    terminal: true
    ignore: [Checkout]
events:
  Checkout: {}
transitions:
  - from: Filling
    on: Checkout
    guards:
      - if: hasItems
        to: Placed
        examples:
          - name: a cart with items is placed
            state: {items: 2}
      - else: true
        ignore: true
        examples:
          - name: an empty cart is not
            state: {items: 0}
guards:
  hasItems:
    reads:
      items: int
`

// withoutExamples returns the spec src without its behavior and its
// examples.
func withoutExamples(src string) string {
	var lines []string
	for _, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "behavior:") || trimmed == "examples:" ||
			strings.HasPrefix(trimmed, "- name:") || strings.HasPrefix(trimmed, "state: {items:") {
			continue
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// TestGenerateFromClean generates, from a clean state (no generated file
// yet, as in CI or a fresh checkout that does not commit them), machines
// whose behaviour lives in each place it can: the generated package
// itself (qualified with an import of it, unqualified, unexported), a
// package beside it that imports it, and a package apart that does not,
// named with the spec's imports, with and without an error result; and
// none (no behavior, no examples). One
// go generate must be enough for go vet and go test to pass, every
// example to run, and fsmgen check to find nothing stale: what fsmgen
// writes does not depend on whether the behaviour's package loads.
func TestGenerateFromClean(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a temporary module")
	}
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin, "./cmd/fsmgen")
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build fsmgen:\n%s", out)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	dir := tempModule(t)
	const mod = "example.com/m"
	// behaviour is the hand-written HasItems of each case.
	const hasItems = "// HasItems reports whether the cart has items.\nfunc (RECV) HasItems(items int) bool { return items > 0 }\n"
	cases := []struct {
		name, pkg, behavior, imports string
		files                        map[string]string // beside the spec, or in a package of their own
	}{{
		name: "inself", pkg: "inself",
		imports:  "imports:\n  cart: " + mod + "/inself",
		behavior: "cart.Workflow{}",
		files: map[string]string{"inself/workflow.go": "package inself\n\n// Workflow is the cart's behaviour.\ntype Workflow struct{}\n\n" +
			strings.Replace(hasItems, "RECV", "Workflow", 1) + "\nvar _ Behavior = Workflow{}\n"},
	}, {
		name: "unqualified with an error", pkg: "unqualified",
		behavior: "NewWorkflow(1)",
		files: map[string]string{"unqualified/workflow.go": "package unqualified\n\n// Workflow is the cart's behaviour.\ntype Workflow struct{ min int }\n\n" +
			"// NewWorkflow returns the behaviour placing carts of min items or more.\nfunc NewWorkflow(min int) (Workflow, error) { return Workflow{min: min}, nil }\n\n" +
			"// HasItems reports whether the cart has enough items.\nfunc (w Workflow) HasItems(items int) bool { return items >= w.min }\n\nvar _ Behavior = Workflow{}\n"},
	}, {
		name: "unexported, in a package named with an underscore", pkg: "cart_flow",
		behavior: "newWorkflow()",
		files: map[string]string{"unexported/workflow.go": "package cart_flow\n\ntype workflow struct{}\n\nfunc newWorkflow() *workflow { return &workflow{} }\n\n" +
			strings.Replace(hasItems, "RECV", "*workflow", 1) + "\nvar _ Behavior = (*workflow)(nil)\n"},
	}, {
		name: "beside, importing it, with an error", pkg: "beside",
		imports:  "imports:\n  rules: " + mod + "/beside/rules",
		behavior: "rules.New(1)",
		files: map[string]string{"beside/rules/rules.go": "// Package rules holds the cart's guards.\npackage rules\n\nimport (\n\t\"errors\"\n\n\t\"" + mod + "/beside\"\n)\n\n" +
			"// Rules is the cart's behaviour.\ntype Rules struct{ min int }\n\nvar _ beside.Behavior = (*Rules)(nil)\n\n" +
			"// New returns the rules for carts of min items or more.\nfunc New(min int) (*Rules, error) {\n\tif min < 1 {\n\t\treturn nil, errors.New(\"a cart has at least one item\")\n\t}\n\treturn &Rules{min: min}, nil\n}\n\n" +
			"// HasItems reports whether the cart has enough items.\nfunc (r *Rules) HasItems(items int) bool { return items >= r.min }\n"},
	}, {
		name: "beside, importing it", pkg: "besidelit",
		imports:  "imports:\n  rules: " + mod + "/besidelit/rules",
		behavior: "rules.Rules{Min: 1}",
		files: map[string]string{"besidelit/rules/rules.go": "// Package rules holds the cart's guards.\npackage rules\n\nimport \"" + mod + "/besidelit\"\n\n" +
			"// Rules is the cart's behaviour.\ntype Rules struct{ Min int }\n\nvar _ besidelit.Behavior = Rules{}\n\n" +
			"// HasItems reports whether the cart has enough items.\nfunc (r Rules) HasItems(items int) bool { return items >= r.Min }\n"},
	}, {
		name: "apart, with the spec's imports and an error", pkg: "apart",
		imports:  "imports:\n  policy: " + mod + "/policy\n  time: time",
		behavior: "policy.New(policy.Config{Min: 1}, time.Second)",
		files: map[string]string{"policy/policy.go": "// Package policy holds carts' rules, for any machine.\npackage policy\n\nimport \"time\"\n\n" +
			"// Config says how many items a cart needs.\ntype Config struct{ Min int }\n\n// Policy is a cart's behaviour.\ntype Policy struct {\n\tcfg Config\n\tttl time.Duration\n}\n\n" +
			"// New returns the policy.\nfunc New(cfg Config, ttl time.Duration) (*Policy, error) { return &Policy{cfg: cfg, ttl: ttl}, nil }\n\n" +
			"// HasItems reports whether the cart has enough items.\nfunc (p *Policy) HasItems(items int) bool { return items >= p.cfg.Min }\n\n" +
			"// Default is the policy of one item.\nvar Default = &Policy{cfg: Config{Min: 1}}\n"},
	}, {
		name: "apart, a variable", pkg: "apartvar",
		imports:  "imports:\n  policy: " + mod + "/policy",
		behavior: "policy.Default",
	}, {
		name: "none: no behavior, no examples", pkg: "none",
	}}
	var specs []string
	for _, c := range cases {
		pkgDir := c.pkg
		if c.name == "unexported, in a package named with an underscore" {
			pkgDir = "unexported"
		}
		src := strings.NewReplacer("PACKAGE", c.pkg, "IMPORTS", c.imports, "BEHAVIOR", c.behavior).Replace(cleanSpec)
		if c.behavior == "" {
			src = withoutExamples(src)
		}
		files := map[string]string{
			pkgDir + "/cart.yaml":   src,
			pkgDir + "/generate.go": "package " + c.pkg + "\n\n//go:generate fsmgen generate cart.yaml\n",
		}
		for name, content := range c.files {
			files[name] = content
		}
		for name, content := range files {
			p := filepath.Join(dir, filepath.FromSlash(name))
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		}
		specs = append(specs, filepath.Join(pkgDir, "cart.yaml"))
	}

	goIn(t, dir, "generate", "./...")
	withBehavior := 0
	for i, spec := range specs {
		examples := filepath.Join(dir, filepath.Dir(spec), "cart_examples_gen_test.go")
		if cases[i].behavior == "" {
			require.NoFileExists(t, examples)
			continue
		}
		require.FileExists(t, examples)
		withBehavior++
	}
	goIn(t, dir, "vet", "./...")
	out = []byte(goIn(t, dir, "test", "-count=1", "-v", "-run", "TestExamples|TestRules", "./..."))
	assert.Equal(t, withBehavior, strings.Count(string(out), "--- PASS: TestExamples "), "every package's examples ran:\n%s", out)
	assert.Equal(t, len(cases), strings.Count(string(out), "--- PASS: TestRules "), "every package's generated tests ran:\n%s", out)
	assert.NotContains(t, string(out), "FAIL")
	// Generating again, now that every package loads, changes nothing.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	check := exec.CommandContext(ctx, "fsmgen", append([]string{"check"}, specs...)...)
	check.Dir = dir
	out, err = check.CombinedOutput()
	require.NoError(t, err, "fsmgen check after one generate:\n%s", out)
}
