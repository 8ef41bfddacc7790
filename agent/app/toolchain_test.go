package app

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
)

// TestToolchainCacheWarm runs go test in the sandbox in two sessions of
// one workspace, without the network: the module it needs comes from the
// user's module cache (read-only) into the workspace's own, the second
// session's go test is answered from the workspace's build cache, and
// the user's own build cache is never written.
func TestToolchainCacheWarm(t *testing.T) {
	t.Parallel()
	goenv := exec.Command("go", "env", "GOMODCACHE")
	goenv.Env = goEnv // the machine's module cache, not the isolated HOME's
	out, err := goenv.Output()
	require.NoError(t, err)
	modCache := strings.TrimSpace(string(out))
	if _, err := os.Stat(filepath.Join(modCache, "cache", "download", "github.com", "pmezard", "go-difflib", "@v", "v1.0.0.zip")); err != nil {
		t.Skipf("the module cache lacks github.com/pmezard/go-difflib v1.0.0 (a dependency of this repository): %v", err)
	}
	files := map[string]string{
		"go.mod": "module example.com/w\n\ngo 1.21\n\nrequire github.com/pmezard/go-difflib v1.0.0\n",
		"go.sum": "github.com/pmezard/go-difflib v1.0.0 h1:4DBwDE0NGyQoBHbLQYPwSUPoCMWR5BEzIk/f1lZbAQM=\n" +
			"github.com/pmezard/go-difflib v1.0.0/go.mod h1:iKH77koFhYxTK1pcRnkKkqfTogsbg7gZNVY4sRDYZ/4=\n",
		"w.go":      "package w\n\nimport \"github.com/pmezard/go-difflib/difflib\"\n\nfunc Lines(s string) []string { return difflib.SplitLines(s) }\n",
		"w_test.go": "package w\n\nimport \"testing\"\n\nfunc TestLines(t *testing.T) {\n\tif len(Lines(\"a\\nb\\n\")) != 3 {\n\t\tt.Fatal(Lines(\"a\\nb\\n\"))\n\t}\n}\n",
	}
	e := newEnv(t, fakellm.Anthropic, files)
	userCache := t.TempDir()
	extra := []string{"GOMODCACHE=" + modCache, "GOCACHE=" + userCache, "GOFLAGS=", "GOPROXY=off"}
	for i, want := range []string{"ok  \texample.com/w\t0", "ok  \texample.com/w\t(cached)"} {
		e.srv.Add(fakellm.Reply{ToolCalls: []fakellm.ToolCall{bashCall(t, "c1", "go test ./... 2>&1; go env GOMODCACHE")}}, fakellm.Reply{Text: "Tested."})
		// The first go test compiles the standard library's packages into
		// the workspace's empty build cache: minutes on a loaded machine
		// (past runLimit once, beside make test's other packages), which
		// the tool's timeout and the run's limit leave room for.
		r := e.runFor(t, 12*time.Minute, "", extra, "-p", "Test it.", "-tool-timeout", "10m")
		require.Equal(t, 0, r.code, "session %d:\n%s", i+1, r.stderr)
		results := resultsOf(e.srv.Requests()[len(e.srv.Requests())-1])
		require.Len(t, results, 1)
		assert.Contains(t, results[0], want, "session %d", i+1)
		assert.NotContains(t, results[0], modCache+"\n", "the user's module cache is not the sandbox's")
	}
	entries, err := os.ReadDir(userCache)
	require.NoError(t, err)
	assert.Empty(t, entries, "the user's build cache is untouched")
	mods, err := filepath.Glob(filepath.Join(e.cache, "fsmgen-agent", "sandbox", "*", "go-mod", "github.com", "pmezard", "go-difflib@v1.0.0"))
	require.NoError(t, err)
	assert.Len(t, mods, 1, "the module in the workspace's own module cache")
}
