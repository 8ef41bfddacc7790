package fsm_test

import (
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/spec"
)

// wantRE finds expectations in a spec: `# want` or `# want warning`
// followed by one or more back-quoted regular expressions, on the line the
// diagnostic must point at.
var (
	wantRE    = regexp.MustCompile("#\\s*want(\\s+warning)?((?:\\s+`[^`]*`)+)")
	patternRE = regexp.MustCompile("`([^`]*)`")
)

type want struct {
	line     int
	severity diag.Severity
	re       *regexp.Regexp
	met      bool
}

func parseWants(t *testing.T, src string) []*want {
	var wants []*want
	for i, line := range strings.Split(src, "\n") {
		for _, m := range wantRE.FindAllStringSubmatch(line, -1) {
			sev := diag.Error
			if m[1] != "" {
				sev = diag.Warning
			}
			for _, p := range patternRE.FindAllStringSubmatch(m[2], -1) {
				re, err := regexp.Compile(p[1])
				require.NoError(t, err, "line %d", i+1)
				wants = append(wants, &want{line: i + 1, severity: sev, re: re})
			}
		}
	}
	return wants
}

var (
	stdMu       sync.Mutex
	stdImporter types.Importer
)

// env is what the checker knows in these tests: the standard library (from
// source), and one type written by hand in the output package, Money.
var env = fsm.Env{
	Import: func(path string) (*types.Package, error) {
		stdMu.Lock()
		defer stdMu.Unlock()
		if strings.Contains(strings.Split(path, "/")[0], ".") {
			return nil, fmt.Errorf("no such package in the tests")
		}
		if stdImporter == nil {
			stdImporter = importer.ForCompiler(token.NewFileSet(), "source", nil)
		}
		return stdImporter.Import(path)
	},
	LocalTypes: []string{"Money"},
}

// check parses and builds a spec and returns its diagnostics.
func check(path string, src []byte) diag.List {
	f, diags := spec.Parse(path, src)
	if f == nil || diags.HasErrors() {
		return diags
	}
	_, more := fsm.Build(f, env)
	return append(diags, more...)
}

// TestErrors checks every spec under testdata/errors: each diagnostic must
// be expected by a `# want` on its line, and each expectation met.
func TestErrors(t *testing.T) {
	files, err := filepath.Glob("testdata/errors/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			require.NoError(t, err)
			wants := parseWants(t, string(src))
			for _, d := range check(file, src) {
				require.Equal(t, file, d.Pos.File, "diagnostic names the spec file: %s", d)
				found := false
				for _, w := range wants {
					if w.line == d.Pos.Line && w.severity == d.Severity && w.re.MatchString(d.Msg) {
						w.met, found = true, true
					}
				}
				if !found {
					t.Errorf("unexpected diagnostic %s", d)
				}
			}
			for _, w := range wants {
				if !w.met {
					t.Errorf("%s:%d: no diagnostic matching %q", file, w.line, w.re)
				}
			}
		})
	}
}
