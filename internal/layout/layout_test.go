package layout

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// module is the import path of the repository's main module.
const module = "github.com/fsmgen/fsmgen"

// part is one part of the repository: the packages under its prefixes,
// and the project's packages they may import (their own part's always).
type part struct {
	name     string
	prefixes []string
	// imports are what the part's packages may import besides their own
	// part; tests are what their tests may import besides.
	imports, tests []string
}

// utilities are the small shared packages every part may use.
var utilities = []string{"internal/atomicfile", "internal/backoff", "internal/proclock", "internal/suggest"}

// parts are the repository's parts (see the package doc).
var parts = []part{
	{name: "the generator", prefixes: []string{"cmd/fsmgen", "internal/compiler", "templates"},
		imports: append([]string{"runtime/fsmrt"}, utilities...), tests: []string{"internal/gittest", "runtime/fsmrt/fsmtest"}},
	{name: "the runtime", prefixes: []string{"runtime"},
		imports: []string{"internal/suggest"}},
	{name: "the agent", prefixes: []string{"cmd/agent", "agent", "gen/agent"},
		imports: append([]string{"runtime", "internal/threadwire"}, utilities...), tests: []string{"internal/gittest", "internal/proctest"}},
	{name: "the server", prefixes: []string{"cmd/server", "server", "gen/monitor", "gen/job"},
		imports: append([]string{"runtime", "internal/threadwire"}, utilities...), tests: []string{"agent/chat", "internal/proctest"}},
	{name: "the examples", prefixes: []string{"examples"},
		imports: append([]string{"runtime"}, utilities...), tests: []string{"internal/proctest"}},
	{name: "the thread's format", prefixes: []string{"internal/threadwire"},
		imports: []string{"agent/chat"}},
	{name: "a shared utility", prefixes: append([]string{"internal/gittest", "internal/proctest"}, utilities...)},
	{name: "the layout's rules", prefixes: []string{"internal/layout"}},
}

// under reports whether path is prefix or a package beneath it.
func under(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// partOf returns the part of the package at path (relative to the
// module): the one with the longest prefix that holds it, or nil.
func partOf(path string) *part {
	var best *part
	longest := -1
	for i := range parts {
		for _, p := range parts[i].prefixes {
			if under(path, p) && len(p) > longest {
				best, longest = &parts[i], len(p)
			}
		}
	}
	return best
}

// check says why the package from may not import to (both relative to
// the module), as a test's import when test is set; nil when it may.
func check(from, to string, test bool) error {
	p := partOf(from)
	if p == nil {
		return fmt.Errorf("%s is in no part of the layout: add its folder to the rules of package layout", from)
	}
	if partOf(to) == p {
		return nil
	}
	allowed := p.imports
	if test {
		allowed = append(append([]string(nil), p.imports...), p.tests...)
	}
	for _, a := range allowed {
		if under(to, a) {
			return nil
		}
	}
	other := "a package of no part"
	if q := partOf(to); q != nil {
		other = q.name
	}
	what := "imports"
	if test {
		what = "imports in a test"
	}
	return fmt.Errorf("%s (%s) %s %s (%s), which the layout does not allow: see package internal/layout", from, p.name, what, to, other)
}

// TestRules checks the rules themselves, with imports planted in the
// wrong places, and some that belong.
func TestRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		from, to string
		test, ok bool
	}{
		{from: "runtime/loop", to: "runtime/fsmrt", ok: true},
		{from: "runtime/fsmrt", to: "internal/suggest", ok: true},
		{from: "runtime/loop", to: "agent/chat"},
		{from: "runtime/fsmrt", to: "server/monitors"},
		{from: "runtime/loop", to: "internal/threadwire"},
		{from: "internal/compiler/fsm", to: "gen/agent"},
		{from: "internal/compiler/emit", to: "runtime/fsmrt", ok: true},
		{from: "cmd/fsmgen", to: "internal/gittest", test: true, ok: true},
		{from: "cmd/fsmgen", to: "internal/gittest"},
		{from: "server/internal/api", to: "internal/threadwire", ok: true},
		{from: "server/internal/api", to: "agent/internal/thread"},
		{from: "server/internal/api", to: "agent/behavior"},
		{from: "server/internal/api", to: "agent/chat"},
		{from: "server/app", to: "agent/chat", test: true, ok: true},
		{from: "agent/app", to: "server/internal/api"},
		{from: "agent/internal/threadsync", to: "internal/threadwire", ok: true},
		{from: "gen/agent", to: "agent/chat", ok: true},
		{from: "gen/monitor", to: "server/monitors", ok: true},
		{from: "gen/monitor", to: "agent/chat"},
		{from: "examples/order/orderd", to: "internal/atomicfile", ok: true},
		{from: "examples/order", to: "gen/agent"},
		{from: "internal/threadwire", to: "agent/chat", ok: true},
		{from: "internal/threadwire", to: "agent/internal/thread"},
		{from: "internal/atomicfile", to: "server/jobs"},
		{from: "server/jobs", to: "internal/backoff", ok: true},
		{from: "agent/behavior", to: "internal/backoff", ok: true},
		{from: "server/app", to: "internal/proctest", test: true, ok: true},
		{from: "examples/order/orderd", to: "internal/proctest", test: true, ok: true},
		{from: "agent/app", to: "internal/proctest"},
		{from: "runtime/loop", to: "internal/backoff"},
		{from: "tools/x", to: "runtime/fsmrt"},
	}
	for _, tt := range tests {
		err := check(tt.from, tt.to, tt.test)
		if tt.ok {
			assert.NoError(t, err, "%s -> %s (test %v)", tt.from, tt.to, tt.test)
		} else {
			assert.Error(t, err, "%s -> %s (test %v)", tt.from, tt.to, tt.test)
		}
	}
}

// TestLayout checks every import of the module's packages, and of their
// tests, against the rules.
func TestLayout(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("go", "list", "-e", "-f", "{{.ImportPath}}\t{{join .Imports \" \"}}\t{{join .TestImports \" \"}} {{join .XTestImports \" \"}}\t{{.Error}}", "./...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list: %s", &stderr)
	rel := func(p string) (string, bool) {
		if p == module {
			return "", true
		}
		r, ok := strings.CutPrefix(p, module+"/")
		return r, ok
	}
	packages := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		require.Len(t, fields, 4, "go list's line %q", sc.Text())
		from, ok := rel(fields[0])
		if !ok {
			continue
		}
		if fields[3] != "<nil>" {
			t.Errorf("%s: %s", from, fields[3])
		}
		packages++
		for i, list := range fields[1:3] {
			for _, imp := range strings.Fields(list) {
				to, ok := rel(imp)
				if !ok || to == from {
					continue
				}
				if err := check(from, to, i == 1); err != nil {
					t.Error(err)
				}
			}
		}
	}
	require.NoError(t, sc.Err())
	assert.Greater(t, packages, 50, "go list listed the module's packages")
}
