package autocommit

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/tools"
	"github.com/fsmgen/fsmgen/internal/atomicfile"
	"github.com/fsmgen/fsmgen/internal/gittest"
)

// markerScript writes an executable script that creates the file marker
// (and ignores its arguments and input) and returns the script's path.
func markerScript(t *testing.T, marker string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "run.sh")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\ntouch '"+marker+"'\ncat >/dev/null 2>&1 || true\n"), 0o755))
	return p
}

// appendFile appends text to the file at p, as a tool could.
func appendFile(t *testing.T, p, text string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	require.NoError(t, err)
	_, err = f.WriteString(text)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func TestCommitRefusesConfigChanges(t *testing.T) {
	gittest.IsolateGit(t)
	tests := []struct {
		name string
		// tamper changes the configuration after Open, as a tool could;
		// run is a command that creates the marker when git runs it.
		tamper   func(t *testing.T, dir, run string)
		wantKeys []string
	}{
		{
			name: "core.fsmonitor in .git/config",
			tamper: func(t *testing.T, dir, run string) {
				appendFile(t, filepath.Join(dir, ".git", "config"), "[core]\n\tfsmonitor = "+run+"\n")
			},
			wantKeys: []string{"core.fsmonitor (added in /", "/.git/config; runs a command)"},
		},
		{
			name: "a filter and .gitattributes",
			tamper: func(t *testing.T, dir, run string) {
				appendFile(t, filepath.Join(dir, ".git", "config"), "[filter \"x\"]\n\tclean = "+run+"\n")
				gittest.WriteFile(t, dir, ".gitattributes", "* filter=x\n")
			},
			wantKeys: []string{"filter.x.clean (added in", "runs a command"},
		},
		{
			name: "a textconv driver",
			tamper: func(t *testing.T, dir, run string) {
				appendFile(t, filepath.Join(dir, ".git", "config"), "[diff \"x\"]\n\ttextconv = "+run+"\n")
				gittest.WriteFile(t, dir, ".gitattributes", "* diff=x\n")
			},
			wantKeys: []string{"diff.x.textconv (added in"},
		},
		{
			name: "an included file",
			tamper: func(t *testing.T, dir, run string) {
				inc := filepath.Join(dir, "inc.cfg")
				gittest.WriteFile(t, dir, "inc.cfg", "[core]\n\tfsmonitor = "+run+"\n")
				appendFile(t, filepath.Join(dir, ".git", "config"), "[include]\n\tpath = "+inc+"\n")
			},
			wantKeys: []string{"core.fsmonitor (added in", "inc.cfg; runs a command)", "include.path (added in"},
		},
		{
			name: "a changed value",
			tamper: func(t *testing.T, dir, run string) {
				gittest.Git(t, dir, "config", "user.name", "Someone Else")
			},
			wantKeys: []string{"user.name (changed in"},
		},
		{
			name: "a removed setting",
			tamper: func(t *testing.T, dir, run string) {
				gittest.Git(t, dir, "config", "--unset", "user.email")
			},
			wantKeys: []string{"user.email (removed from", ".git/config"},
		},
		{
			name: "the global configuration",
			tamper: func(t *testing.T, dir, run string) {
				appendFile(t, os.Getenv("GIT_CONFIG_GLOBAL"), "[core]\n\tsshCommand = "+run+"\n")
			},
			wantKeys: []string{"core.sshcommand (added in", "gitconfig; runs a command)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := newRepo(t, repoOptions{})
			marker := filepath.Join(t.TempDir(), "ran")
			run := markerScript(t, marker)
			c := open(t, dir)
			head := gittest.Git(t, dir, "rev-parse", "HEAD")
			gittest.WriteFile(t, dir, "x.txt", "x\n")
			tt.tamper(t, dir, run)

			res, err := commitRound(context.Background(), c, editAndBash)
			require.ErrorIs(t, err, ErrConfigChanged)
			for _, k := range tt.wantKeys {
				assert.Contains(t, err.Error(), k)
			}
			assert.Contains(t, err.Error(), "Review .git/config")
			assert.Equal(t, Result{}, res)
			assert.NoFileExists(t, marker, "git ran the command a tool configured")
			assert.Equal(t, head, gittest.Git(t, dir, "rev-parse", "HEAD"), "a commit was made")
		})
	}
}

func TestCommitRunsNoHookNorConfiguredCommand(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, repoOptions{})
	markers := t.TempDir()
	mark := func(name string) string { return filepath.Join(markers, name) }
	// The user's configuration at start, trusted, but with commands that
	// the auto-commit still does not run.
	gittest.Git(t, dir, "config", "core.fsmonitor", markerScript(t, mark("fsmonitor")))
	gittest.Git(t, dir, "config", "commit.gpgSign", "true")
	gittest.Git(t, dir, "config", "gpg.program", markerScript(t, mark("gpg")))
	hooks := []string{"pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-index-change", "reference-transaction"}
	for _, h := range hooks {
		body := fmt.Sprintf("#!/bin/sh\ntouch '%s'\n", mark(h))
		if h == "pre-commit" {
			body += "sleep 600\n" // would block the agent
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, ".git", "hooks", h), []byte(body), 0o755))
	}
	c := open(t, dir)
	gittest.WriteFile(t, dir, "x.txt", "x\n")

	res, err := commitRound(context.Background(), c, editAndBash)
	require.NoError(t, err)
	assert.True(t, res.Committed)
	entries, err := os.ReadDir(markers)
	require.NoError(t, err)
	var ran []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".sh") && e.Type().IsRegular() {
			ran = append(ran, e.Name())
		}
	}
	assert.Empty(t, ran, "hooks or configured commands ran")

	// Control: the same repository makes a plain git run them.
	gittest.WriteFile(t, dir, "y.txt", "y\n")
	cmd := exec.Command("git", "commit", "--quiet", "--no-gpg-sign", "-m", "by hand", "--", "y.txt")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
	_ = exec.Command("git", "-C", dir, "add", "y.txt").Run()
	require.NoError(t, os.Remove(filepath.Join(dir, ".git", "hooks", "pre-commit")))
	_ = cmd.Run()
	assert.FileExists(t, mark("fsmonitor"), "the control did not run the file system monitor: the test proves nothing")
	assert.FileExists(t, mark("commit-msg"), "the control did not run the hooks: the test proves nothing")
}

func TestCommitRefusesAChangedRepository(t *testing.T) {
	t.Parallel()
	// fakeRepo makes a repository whose configuration and hooks run the
	// marker script, and returns its git directory.
	fakeRepo := func(t *testing.T, run string) string {
		fake := t.TempDir()
		gittest.Git(t, fake, "init", "--quiet")
		gittest.Git(t, fake, "config", "core.fsmonitor", run)
		for _, h := range []string{"pre-commit", "post-commit"} {
			require.NoError(t, os.WriteFile(filepath.Join(fake, ".git", "hooks", h), []byte("#!/bin/sh\n"+run+"\n"), 0o755))
		}
		return filepath.Join(fake, ".git")
	}
	tests := []struct {
		name string
		repo bool // whether the workspace is in a repository at Open
		sub  bool // whether the workspace is a subdirectory of base
		// plant changes the layout after Open; base is the repository's
		// top or the workspace's parent, ws the workspace.
		plant   func(t *testing.T, base, ws, run string)
		wantErr string
	}{
		{
			name: "a .git file planted in a workspace that is no repository",
			plant: func(t *testing.T, _, ws, run string) {
				gittest.WriteFile(t, ws, ".git", "gitdir: "+fakeRepo(t, run)+"\n")
			},
			wantErr: "was absent when the agent started",
		},
		{
			name: "git init in a workspace that is no repository",
			plant: func(t *testing.T, _, ws, run string) {
				gittest.Git(t, ws, "init", "--quiet")
				gittest.Git(t, ws, "config", "core.fsmonitor", run)
			},
			wantErr: "is a directory now",
		},
		{
			name: "a .git directory above a workspace that is no repository",
			sub:  true,
			plant: func(t *testing.T, base, _, run string) {
				require.NoError(t, os.Rename(fakeRepo(t, run), filepath.Join(base, ".git")))
			},
			wantErr: "was absent when the agent started",
		},
		{
			name: "a .git file planted in a subdirectory workspace",
			repo: true, sub: true,
			plant: func(t *testing.T, _, ws, run string) {
				gittest.WriteFile(t, ws, ".git", "gitdir: "+fakeRepo(t, run)+"\n")
			},
			wantErr: "was absent when the agent started and is a file saying",
		},
		{
			name: "the .git directory replaced",
			repo: true,
			plant: func(t *testing.T, base, _, run string) {
				require.NoError(t, os.Rename(filepath.Join(base, ".git"), filepath.Join(t.TempDir(), "moved")))
				require.NoError(t, os.Rename(fakeRepo(t, run), filepath.Join(base, ".git")))
			},
			wantErr: "was moved or replaced",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			if tt.repo {
				base, err = filepath.EvalSymlinks(newRepo(t, repoOptions{}))
				require.NoError(t, err)
			}
			ws := base
			if tt.sub {
				ws = filepath.Join(base, "ws")
				require.NoError(t, os.Mkdir(ws, 0o755))
			}
			marker := filepath.Join(t.TempDir(), "ran")
			run := markerScript(t, marker)
			c := open(t, ws)
			gittest.WriteFile(t, ws, "main.go", "package main\n")
			tt.plant(t, base, ws, run)

			res, err := commitRound(context.Background(), c, editAndBash)
			require.ErrorIs(t, err, ErrRepositoryChanged)
			assert.ErrorContains(t, err, tt.wantErr)
			assert.Equal(t, Result{}, res)
			assert.NoFileExists(t, marker, "git ran a command of the planted repository")
			for _, d := range []string{ws, base} {
				out, _ := gitTry(d, "log", "--all", "--format=%s")
				assert.NotContains(t, out, "agent:", "a commit was made")
			}
		})
	}
}

func TestCommitExcludesTemporaryFiles(t *testing.T) {
	t.Parallel()
	assert.Equal(t, tools.EditTempPattern, EditTempPattern, "edit_file's temporary files are named differently")
	assert.Equal(t, atomicfile.TempPattern("*"), AtomicTempPattern, "atomic writes' temporary files are named differently")
	temps := []string{".fsmgen-edit-123.tmp", "sub/.fsmgen-edit-9.tmp", ".T-1.json.fsmgen-tmp-42", "sub/.main.go.fsmgen-tmp-7"}

	t.Run("only temporary files: nothing to commit", func(t *testing.T) {
		t.Parallel()
		dir := newRepo(t, repoOptions{})
		c := open(t, dir)
		for _, p := range temps {
			gittest.WriteFile(t, dir, p, "partial")
		}
		res, err := commitRound(context.Background(), c, editAndBash)
		require.NoError(t, err)
		assert.Equal(t, Result{Skipped: SkippedNoChanges}, res)
	})
	t.Run("a subdirectory workspace: nothing to commit", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t, repoOptions{})
		ws := filepath.Join(repo, "ws")
		require.NoError(t, os.Mkdir(ws, 0o755))
		c := open(t, ws)
		for _, p := range temps {
			gittest.WriteFile(t, ws, p, "partial")
		}
		res, err := commitRound(context.Background(), c, editAndBash)
		require.NoError(t, err)
		assert.Equal(t, Result{Skipped: SkippedNoChanges}, res)
	})
	t.Run("committed without them, then cleaned at start", func(t *testing.T) {
		t.Parallel()
		dir := newRepo(t, repoOptions{})
		c := open(t, dir)
		for _, p := range temps {
			gittest.WriteFile(t, dir, p, "partial")
		}
		gittest.WriteFile(t, dir, "sub/main.go", "package main\n")
		// Files of the user's named like generic temporary files.
		gittest.WriteFile(t, dir, ".a.tmp-1", "mine")
		gittest.WriteFile(t, dir, "sub/.notes.txt.tmp-2", "mine")
		res, err := commitRound(context.Background(), c, editAndBash)
		require.NoError(t, err)
		require.True(t, res.Committed)
		assert.Equal(t, []string{".a.tmp-1", ".gitignore", "README.md", "sub/.notes.txt.tmp-2", "sub/main.go"}, committedFiles(t, dir))

		ws, err := tools.NewWorkspace(dir)
		require.NoError(t, err)
		defer ws.Close()
		removed, err := tools.CleanTemp(context.Background(), ws)
		require.NoError(t, err)
		assert.Equal(t, []string{".fsmgen-edit-123.tmp", "sub/.fsmgen-edit-9.tmp"}, removed)
	})
}

// hangingFilter configures, in dir, a clean filter for *.slow that records
// its process id in pidFile, starts a sleep that leaves the process group
// (its id in escapedFile) and holds git's standard error, then sleeps.
func hangingFilter(t *testing.T, dir, pidFile, escapedFile string) {
	t.Helper()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid is not installed")
	}
	script := filepath.Join(t.TempDir(), "slow.sh")
	body := fmt.Sprintf("#!/bin/sh\nsetsid sleep 600 &\necho $! > '%s.tmp' && mv '%[1]s.tmp' '%[1]s'\necho $$ > '%s.tmp' && mv '%[2]s.tmp' '%[2]s'\nexec sleep 600\n", escapedFile, pidFile)
	require.NoError(t, os.WriteFile(script, []byte(body), 0o755))
	gittest.Git(t, dir, "config", "filter.slow.clean", script)
	gittest.WriteFile(t, dir, ".gitattributes", "*.slow filter=slow\n")
	gittest.Git(t, dir, "add", ".gitattributes")
	gittest.Git(t, dir, "commit", "--quiet", "-m", "attributes")
	t.Cleanup(func() { // the escaped sleep is not the commit's to kill
		if pid := readPid(escapedFile); pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// readPid returns the process id in the file p, or 0.
func readPid(p string) int {
	data, err := os.ReadFile(p)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return pid
}

// gone reports whether the process pid has exited (a zombie counts).
func gone(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == syscall.ESRCH
	}
	// pid (comm) S ...: the state follows the last ')'.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && (s[i+2] == 'Z' || s[i+2] == 'X')
}

func TestCommitStopsAHangingGit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		timeout time.Duration // Options.Timeout
		cancel  bool          // cancel the context once the filter runs
		wantErr error
		wantMsg string
	}{
		{name: "Ctrl-C cancels the context", timeout: time.Hour, cancel: true, wantErr: context.Canceled, wantMsg: "git add stopped"},
		// Long enough for git's other commands on a busy machine: the
		// filter hangs for ten minutes.
		{name: "the timeout passes", timeout: 3 * time.Second, wantErr: errTimedOut, wantMsg: "did not finish within 3s and was stopped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := newRepo(t, repoOptions{})
			state := t.TempDir()
			pidFile, escapedFile := filepath.Join(state, "pid"), filepath.Join(state, "escaped")
			hangingFilter(t, dir, pidFile, escapedFile)
			c, err := Open(context.Background(), dir, Options{Timeout: tt.timeout})
			require.NoError(t, err)
			c.waitDelay = 200 * time.Millisecond // the escaped sleep holds git's stderr for 10 minutes
			gittest.WriteFile(t, dir, "data.slow", "x\n")

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type outcome struct {
				res Result
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				res, err := commitRound(ctx, c, editAndBash)
				done <- outcome{res, err}
			}()
			if tt.cancel {
				require.Eventually(t, func() bool { return readPid(pidFile) > 0 }, 30*time.Second, 10*time.Millisecond, "the filter never ran")
				cancel()
			}
			var got outcome
			select {
			case got = <-done:
			case <-time.After(60 * time.Second): // a liveness bound, far above c.waitDelay
				t.Fatal("Commit did not return after its context was done")
			}
			require.ErrorIs(t, got.err, tt.wantErr)
			assert.ErrorContains(t, got.err, tt.wantMsg)
			assert.False(t, got.res.Committed)
			pid := readPid(pidFile)
			require.Positive(t, pid, "the filter never ran")
			assert.Eventually(t, func() bool { return gone(pid) }, 30*time.Second, 10*time.Millisecond, "the filter's process group was not killed")
		})
	}
}
