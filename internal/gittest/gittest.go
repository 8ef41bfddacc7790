// Package gittest sets up what tests that run git work in (the agent's,
// fsmgen diff's): git repositories isolated from the machine's git
// configuration, per test (IsolateGit) or for a whole test binary
// (Isolate, from TestMain).
package gittest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// identityVars are the variables that would give git an identity or a
// repository of the machine's; isolation unsets them.
var identityVars = []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL", "GIT_DIR", "GIT_WORK_TREE"}

// IsolateGit keeps the machine's git configuration and identity variables
// out of the test; it skips the test when git is not installed. It sets
// the process's environment for the test (t.Setenv), which keeps the test
// from running in parallel: a package whose TestMain calls Isolate needs
// it only in a test that changes git's global configuration.
func IsolateGit(t *testing.T) {
	t.Helper()
	requireGit(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(home, "gitconfig"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, v := range identityVars {
		t.Setenv(v, "")
		_ = os.Unsetenv(v)
	}
}

// Isolate keeps the machine's git configuration and identity variables
// out of every test of the test binary, as IsolateGit does for one: HOME
// and XDG_CONFIG_HOME become a new temporary directory, with git's global
// configuration file in it, git reads no system configuration, and the
// identity and repository variables are unset. Call it from TestMain,
// before m.Run, and call the function it returns after: it removes the
// directory. The tests then share one global configuration, which none
// may change, and may run in parallel.
func Isolate() (cleanup func(), err error) {
	home, err := os.MkdirTemp("", "gittest-home-")
	if err != nil {
		return nil, fmt.Errorf("gittest: a home directory for the tests: %w", err)
	}
	cleanup = func() { _ = os.RemoveAll(home) }
	set := [][2]string{{"HOME", home}, {"XDG_CONFIG_HOME", home},
		{"GIT_CONFIG_GLOBAL", filepath.Join(home, "gitconfig")}, {"GIT_CONFIG_NOSYSTEM", "1"}}
	for _, kv := range set {
		if err := os.Setenv(kv[0], kv[1]); err != nil {
			cleanup()
			return nil, fmt.Errorf("gittest: set %s: %w", kv[0], err)
		}
	}
	for _, v := range identityVars {
		_ = os.Unsetenv(v)
	}
	return cleanup, nil
}

// requireGit skips the test when git is not installed.
func requireGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
}

// NewRepo creates a git repository in a temporary directory with a local
// identity and one commit holding files (name → content); it skips the
// test when git is not installed.
func NewRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	requireGit(t)
	dir := t.TempDir()
	Git(t, dir, "init", "--quiet", "--initial-branch=main")
	Git(t, dir, "config", "user.name", "Test User")
	Git(t, dir, "config", "user.email", "test@example.com")
	for name, content := range files {
		WriteFile(t, dir, name, content)
	}
	Git(t, dir, "add", "--all")
	Git(t, dir, "commit", "--quiet", "--allow-empty", "-m", "initial")
	return dir
}

// Git runs git in dir and returns its trimmed output, failing the test on
// error.
func Git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// WriteFile writes content to dir/name, creating parent directories.
func WriteFile(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ReadFile returns the content of dir/name, failing the test on error.
func ReadFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
