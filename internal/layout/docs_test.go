package layout

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mdLink matches a Markdown link or image, [text](target) with an optional
// "title", capturing the target.
var mdLink = regexp.MustCompile(`\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\)`)

// mdHeading matches an ATX heading, capturing its text.
var mdHeading = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)

// htmlAnchor matches an HTML anchor's id or name.
var htmlAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)

// urlScheme matches the start of a URL: a link to the web, not checked.
var urlScheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)

// mdLinkText matches a link inside a heading, capturing its text.
var mdLinkText = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// codeSpan matches an inline code span.
var codeSpan = regexp.MustCompile("`+[^`]*`+")

// mdDoc is what a Markdown file offers and asks for: its prose lines (code
// blocks left out, code spans blanked) and the anchors of its headings.
type mdDoc struct {
	lines   []string // prose lines, by line number - 1 ("" in code blocks)
	anchors map[string]bool
}

// readMarkdown reads the Markdown file at path.
func readMarkdown(t *testing.T, path string) *mdDoc {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	d := &mdDoc{anchors: map[string]bool{}}
	seen := map[string]int{}
	fence := ""
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")) {
			fence = trimmed[:3]
			d.lines = append(d.lines, "")
			continue
		}
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			d.lines = append(d.lines, "")
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			d.anchors[m[1]] = true
		}
		if m := mdHeading.FindStringSubmatch(line); m != nil {
			slug := slugify(m[1])
			if n := seen[slug]; n > 0 {
				d.anchors[slug+"-"+strconv.Itoa(n)] = true
			} else {
				d.anchors[slug] = true
			}
			seen[slug]++
		}
		d.lines = append(d.lines, codeSpan.ReplaceAllStringFunc(line, func(s string) string { return strings.Repeat(" ", len(s)) }))
	}
	return d
}

// slugify makes a heading's anchor as GitHub does: the text in lower case,
// links reduced to their text, punctuation but hyphens and underscores
// dropped, spaces made hyphens.
func slugify(heading string) string {
	heading = mdLinkText.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestDocLinks checks every relative link of the repository's Markdown
// files: the file or folder it names exists, and the heading its #anchor
// names (in a Markdown file) is there. Links to the web are not followed.
func TestDocLinks(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	var files []string
	require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "out" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return nil
	}))
	require.Contains(t, files, filepath.Join(root, "README.md"))
	docs := map[string]*mdDoc{}
	doc := func(path string) *mdDoc {
		if docs[path] == nil {
			docs[path] = readMarkdown(t, path)
		}
		return docs[path]
	}
	links := 0
	for _, file := range files {
		rel, err := filepath.Rel(root, file)
		require.NoError(t, err)
		for i, line := range doc(file).lines {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if urlScheme.MatchString(target) {
					continue // a URL
				}
				links++
				where := rel + ":" + strconv.Itoa(i+1) + ": link " + target
				path, anchor, _ := strings.Cut(target, "#")
				dest := file
				if path != "" {
					dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s: no such file or folder", where)
						continue
					}
				}
				if anchor != "" && strings.HasSuffix(dest, ".md") {
					if !doc(dest).anchors[anchor] {
						t.Errorf("%s: %s has no heading with the anchor #%s", where, filepath.Base(dest), anchor)
					}
				}
			}
		}
	}
	assert.Greater(t, links, 100, "the links checked")
}

// TestArchitecture checks that docs/architecture.md names every package of
// the module, as `path/of/the/package`, and names none that is gone.
func TestArchitecture(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("go", "list", "-e", "-f", "{{.ImportPath}}", "./...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list: %s", &stderr)
	page, err := os.ReadFile("../../docs/architecture.md")
	require.NoError(t, err)
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z][a-z0-9_/]*)`").FindAllStringSubmatch(string(page), -1) {
		named[m[1]] = true
	}
	packages := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		rel, ok := strings.CutPrefix(p, module+"/")
		if !ok {
			continue
		}
		packages[rel] = true
		assert.True(t, named[rel], "docs/architecture.md does not name the package %s: add it to its part's table", rel)
	}
	require.Greater(t, len(packages), 50, "the packages go list found")
	// A name under a folder of packages that is no package is one that moved
	// or went (the folders of the tables' first column are left out).
	for name := range named {
		for _, root := range []string{"agent/", "server/", "runtime/", "internal/", "cmd/", "gen/", "examples/"} {
			if strings.HasPrefix(name, root) && !packages[name] && !strings.HasSuffix(name, "/") {
				if _, err := os.Stat(filepath.Join("../..", name)); err != nil {
					t.Errorf("docs/architecture.md names %s, which does not exist", name)
				}
			}
		}
	}
}
