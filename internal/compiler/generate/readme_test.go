package generate_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/generate"
)

// readmeExample is the heading of the README's section that shows a
// machine of one's own, start to end.
const readmeExample = "## A traffic light"

// codeBlock is a fenced code block of a Markdown page.
type codeBlock struct {
	lang, body string
}

// codeBlocks returns the fenced code blocks of a Markdown text, in order.
func codeBlocks(text string) []codeBlock {
	fence := regexp.MustCompile("(?m)^```(\\w*)\n((?s:.*?))^```$")
	var blocks []codeBlock
	for _, m := range fence.FindAllStringSubmatch(text, -1) {
		blocks = append(blocks, codeBlock{lang: m[1], body: m[2]})
	}
	return blocks
}

// readmeSection returns the README's section under heading.
func readmeSection(t *testing.T, readme, heading string) string {
	t.Helper()
	start := strings.Index(readme, "\n"+heading+"\n")
	require.GreaterOrEqual(t, start, 0, "README.md has no section %q", heading)
	section := readme[start+1:]
	if end := strings.Index(section[len(heading):], "\n## "); end >= 0 {
		section = section[:len(heading)+end]
	}
	return section
}

// TestReadme follows the README's traffic light as a newcomer would: its
// spec must check without a problem, and, generated into a module of the
// name its go mod init gives, beside its generate.go and its test file, the
// module must vet and pass its tests, the example's output included. It
// also keeps the README a front door: at most 200 lines.
func TestReadme(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a temporary module")
	}
	t.Parallel()
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	readme := string(data)
	assert.LessOrEqual(t, strings.Count(readme, "\n"), 200, "README.md is a front door: at most 200 lines; the rest goes to docs/")

	section := readmeSection(t, readme, readmeExample)
	var spec, generateGo, exampleGo, shell []string
	for _, b := range codeBlocks(section) {
		switch {
		case b.lang == "yaml":
			spec = append(spec, b.body)
		case b.lang == "go" && strings.Contains(b.body, "//go:generate"):
			generateGo = append(generateGo, b.body)
		case b.lang == "go":
			exampleGo = append(exampleGo, b.body)
		case b.lang == "sh":
			shell = append(shell, b.body)
		}
	}
	require.Len(t, spec, 1, "the section's spec (a yaml block)")
	require.Len(t, generateGo, 1, "the section's generate.go (a go block with the go:generate line)")
	require.Len(t, exampleGo, 1, "the section's Go that drives the machine")
	require.Len(t, shell, 2, "the section's commands, and the replace that uses a checkout instead (TestGoTool runs it)")
	if !strings.Contains(shell[0], "go mod init") {
		shell[0], shell[1] = shell[1], shell[0]
	}
	assert.Contains(t, shell[1], "go mod edit -replace github.com/fsmgen/fsmgen=", "the second sh block uses a checkout through a local replace")
	assert.LessOrEqual(t, strings.Count(spec[0], "\n"), 40, "the README's spec is a short one")

	// The names the section gives: the module, the spec file, the test file.
	assert.Contains(t, shell[0], "go get -tool github.com/fsmgen/fsmgen/cmd/fsmgen")
	module := regexp.MustCompile(`(?m)^go mod init (\S+)`).FindStringSubmatch(shell[0])
	require.NotNil(t, module, "the commands start the module with go mod init")
	directive := regexp.MustCompile(`(?m)^//go:generate go tool fsmgen generate (\S+\.yaml)$`).FindStringSubmatch(generateGo[0])
	require.NotNil(t, directive, "generate.go runs go tool fsmgen generate on the spec")
	testFile := regexp.MustCompile("`(\\w+_test\\.go)`").FindStringSubmatch(section)
	require.NotNil(t, testFile, "the section names the file the Go that drives the machine goes in")
	require.Contains(t, exampleGo[0], `"`+module[1]+`"`, "the Go imports the module's package")

	dir := t.TempDir()
	requireCheckout(t, dir, module[1])
	specPath := filepath.Join(dir, directive[1])
	require.NoError(t, os.WriteFile(specPath, []byte(spec[0]), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "generate.go"), []byte(generateGo[0]), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, testFile[1]), []byte(exampleGo[0]), 0o644))

	res, err := generate.Load(specPath)
	require.NoError(t, err)
	require.NotNil(t, res.Machine, "the README's spec does not check:\n%s", res.Diags)
	assert.Empty(t, res.Diags, "the README's spec checks without a warning")
	_, err = generate.Write(res.Outputs)
	require.NoError(t, err)

	goIn(t, dir, "vet", "./...")
	out := goIn(t, dir, "test", "-count=1", "-v", "./...")
	assert.Contains(t, out, "--- PASS: Example", "the README's example ran and printed what it shows")
}
