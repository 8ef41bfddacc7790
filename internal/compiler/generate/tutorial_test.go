package generate_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/generate"
)

// tutorialBlocks returns the fenced code blocks of the tutorial (the page
// docs/tutorial.md, up to its first second-level heading), without the
// indentation of the list items they sit in.
func tutorialBlocks(t *testing.T, page string) []string {
	start := strings.Index(page, "# Tutorial: add a state to the agent")
	require.GreaterOrEqual(t, start, 0, "docs/tutorial.md has no tutorial")
	section := page[start:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	fence := regexp.MustCompile("(?m)^( *)```(\\w*)\n((?s:.*?))^ *```$")
	var blocks []string
	for _, m := range fence.FindAllStringSubmatch(section, -1) {
		indent := m[1]
		var lines []string
		for _, l := range strings.Split(strings.TrimSuffix(m[3], "\n"), "\n") {
			lines = append(lines, strings.TrimPrefix(l, indent))
		}
		blocks = append(blocks, m[2]+"\n"+strings.Join(lines, "\n")+"\n")
	}
	return blocks
}

// TestTutorial follows the tutorial (docs/tutorial.md) on a copy of the
// repository, with the page's own code blocks: after the spec edits the build must
// fail for want of the guard, and once it is written the packages that
// use the generated machine must vet, the spec must check, and the
// tests of every package the tutorial touches must pass.
// In a checkout where the tutorial has been followed already, there is
// nothing to apply: the test says so and skips, and the rest of make test
// checks the result.
func TestTutorial(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a copy of the repository")
	}
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	page, err := os.ReadFile(filepath.Join(root, "docs", "tutorial.md"))
	require.NoError(t, err)
	blocks := tutorialBlocks(t, string(page))
	require.Len(t, blocks, 6, "the tutorial's code blocks: state, guard, transitions, breaks, commands, Go")
	body := func(i, lang string) string {
		b := blocks[map[string]int{"state": 0, "guard": 1, "transitions": 2, "breaks": 3, "go": 5}[i]]
		require.True(t, strings.HasPrefix(b, lang+"\n"), "block %s is %s", i, lang)
		return strings.TrimPrefix(b, lang+"\n")
	}
	original, err := os.ReadFile(filepath.Join(root, "spec", "agent.yaml"))
	require.NoError(t, err)
	if regexp.MustCompile(`\n +Paused:\n`).Match(original) {
		t.Skip("the tutorial has been followed in this checkout (spec/agent.yaml has Paused): nothing to apply")
	}

	dir := t.TempDir()
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	for _, e := range entries {
		// The whole module, but for git's files and the bench module.
		if e.Name() == ".git" || e.Name() == "bench" {
			continue
		}
		out, err := exec.Command("cp", "-r", filepath.Join(root, e.Name()), filepath.Join(dir, e.Name())).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}

	specPath := filepath.Join(dir, "spec", "agent.yaml")
	s := string(original)
	// Step 1: the state, just before ShuttingDown.
	i := strings.Index(s, "\n  ShuttingDown:\n")
	require.Greater(t, i, 0)
	s = s[:i+1] + body("state", "yaml") + s[i+1:]
	// Step 2: the guard, first under guards.
	i = strings.Index(s, "\nguards:\n")
	require.Greater(t, i, 0)
	s = s[:i+len("\nguards:\n")] + body("guard", "yaml") + s[i+len("\nguards:\n"):]
	// Step 3: replace the first transition.
	i = strings.Index(s, "\ntransitions:\n")
	require.Greater(t, i, 0)
	first := i + len("\ntransitions:\n")
	next := strings.Index(s[first+1:], "\n  - from: ")
	require.Greater(t, next, 0)
	require.Contains(t, s[first:first+1+next], "on: UserInput")
	s = s[:first] + body("transitions", "yaml") + s[first+1+next+1:]
	// Step 4: the break, at the end of breaks:, the spec's last list.
	require.Contains(t, s, "\nbreaks:\n")
	require.True(t, strings.HasSuffix(s, "\n"))
	s += body("breaks", "yaml")
	// The tutorial quotes the error a forgotten event gives: check it.
	quoted := regexp.MustCompile("`(spec/agent.yaml:\\d+:\\d+: state Paused does not handle event) …`").FindStringSubmatch(string(page))
	require.NotNil(t, quoted, "the tutorial quotes the forgotten-event error")
	state := body("state", "yaml")
	forgot := strings.Replace(s, state, strings.Replace(state, ", RetryTimeoutFired]", "]", 1), 1)
	require.NotEqual(t, s, forgot)
	require.NoError(t, os.WriteFile(specPath, []byte(forgot), 0o644))
	res, err := generate.Load(specPath)
	require.NoError(t, err)
	require.Contains(t, res.Diags.Error(), strings.Replace(quoted[1], "spec/agent.yaml", specPath, 1)+" RetryTimeoutFired")
	require.NoError(t, os.WriteFile(specPath, []byte(s), 0o644))

	// The go commands are bounded by the test's own deadline (goContext).
	// No -trimpath: the copy's dependencies are those of the checkout, in
	// the module cache, which the build cache knows already by their
	// directory; the copy's own packages are built again all the same.
	ctx := goContext(t)
	goCmd := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// Step 5: regenerate (what make generate runs), then build: it fails.
	out, err := goCmd("generate", "./...")
	require.NoError(t, err, "%s", out)
	// What the tutorial changes: the generated machine and the packages
	// that import it (the agent's: the server may not, see
	// internal/layout), built and vetted; the copy's other packages are
	// the checkout's, which the rest of make test builds and vets.
	const machine = "github.com/fsmgen/fsmgen/gen/agent"
	out, err = goCmd("list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, "./...")
	require.NoError(t, err, "%s", out)
	var changed []string
	for line := range strings.Lines(out) {
		fields := strings.Fields(line)
		if len(fields) > 0 && (fields[0] == machine || slices.Contains(fields[1:], machine)) {
			changed = append(changed, fields[0])
		}
	}
	require.Contains(t, changed, "github.com/fsmgen/fsmgen/agent/behavior")
	require.Contains(t, changed, "github.com/fsmgen/fsmgen/cmd/agent")
	out, err = goCmd(append([]string{"build"}, changed...)...)
	require.Error(t, err, "the build must fail until the guard is written")
	require.Contains(t, out, "*Agent does not implement agent.Behavior (missing method IsPause)")

	// Step 6: implement the guard; step 7: everything passes.
	bpath := filepath.Join(dir, "agent", "behavior", "agent.go")
	b, err := os.ReadFile(bpath)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bpath, append(b, []byte("\n"+body("go", "go"))...), 0o644))
	out, err = goCmd(append([]string{"vet"}, changed...)...)
	require.NoError(t, err, "%s", out)
	out, err = goCmd("run", "./cmd/fsmgen", "check", "spec/agent.yaml")
	require.NoError(t, err, "%s", out)
	// The tests of what the tutorial changes: the generated machine (its
	// rules, witnesses and examples, run through the behaviour) and the
	// behaviour; vet above compiled everything that uses them, tests
	// included.
	out, err = goCmd("test", "-count=1", "./gen/agent/", "./agent/behavior/")
	require.NoError(t, err, "%s", out)
	require.Contains(t, out, "ok  \tgithub.com/fsmgen/fsmgen/gen/agent")
	// The tests of the generator that read the agent's spec, this one
	// included: in the copy, where the tutorial has been followed, it skips.
	out, err = goCmd("test", "-count=1", "-v", "./internal/compiler/generate/", "-run", "TestTutorial|TestAgentSpec|TestGeneratedCoverage")
	require.NoError(t, err, "%s", out)
	require.Contains(t, out, "the tutorial has been followed in this checkout")
}
