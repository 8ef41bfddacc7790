package sandbox

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeBwrap writes a shell script standing in for bubblewrap and returns
// its path.
func fakeBwrap(t *testing.T, script string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "bwrap")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+script+"\n"), 0o755))
	return p
}

func TestNewDetects(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox needs Linux")
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("the fake bubblewrap needs sh")
	}
	missing := filepath.Join(t.TempDir(), "no-bwrap")
	noNamespaces := fakeBwrap(t, `echo "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2; exit 1`)
	noSeccomp := fakeBwrap(t, `echo "bwrap: prctl(PR_SET_SECCOMP): Invalid argument" >&2; exit 1`)
	// Fails with --disable-userns, like bubblewrap before 0.8, and works
	// without: the sandbox does without it.
	old := fakeBwrap(t, `for a; do [ "$a" = --disable-userns ] && { echo "bwrap: Unknown option --disable-userns" >&2; exit 1; }; done
for a; do [ "$a" = --version ] && { echo "bubblewrap 0.4.1"; exit 0; }; done
exit 1`)
	// Knows no --size, like bubblewrap before 0.7: /tmp goes unlimited.
	noSize := fakeBwrap(t, `for a; do [ "$a" = --size ] && { echo "bwrap: Unknown option --size" >&2; exit 1; }; done
for a; do [ "$a" = --version ] && { echo "bubblewrap 0.6.2"; exit 0; }; done
exit 1`)
	tests := []struct {
		name         string
		opt          Options
		wantErr      string // from New
		wantDisabled string // from Disabled, and from Start
		wantString   string
	}{
		{name: "bwrap, not installed", opt: Options{Mode: Bwrap, Bwrap: missing},
			wantErr: "bubblewrap is not installed at " + missing + ": install the bubblewrap package (apt install bubblewrap) or run with -sandbox=off to run bash unconfined"},
		{name: "auto, not installed", opt: Options{Bwrap: missing},
			wantDisabled: "bubblewrap is not installed at " + missing, wantString: "disabled: bubblewrap is not installed"},
		{name: "bwrap, no namespaces", opt: Options{Mode: Bwrap, Bwrap: noNamespaces},
			wantErr: "bubblewrap cannot create namespaces here: bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces.; allow unprivileged user namespaces"},
		{name: "auto, no namespaces", opt: Options{Mode: Auto, Bwrap: noNamespaces},
			wantDisabled: "bubblewrap cannot create namespaces here: bwrap: No permissions", wantString: "disabled: bubblewrap cannot create namespaces"},
		{name: "bwrap, no seccomp", opt: Options{Mode: Bwrap, Bwrap: noSeccomp},
			wantErr: "bubblewrap cannot install the sandbox's seccomp filter here: bwrap: prctl(PR_SET_SECCOMP): Invalid argument; use a kernel with seccomp filters (CONFIG_SECCOMP_FILTER) or run with -sandbox=off"},
		{name: "bubblewrap without --disable-userns", opt: Options{Mode: Bwrap, Bwrap: old},
			wantString: "bubblewrap 0.4.1 (" + old + "), no network"},
		{name: "bubblewrap without --size", opt: Options{Mode: Bwrap, Bwrap: noSize},
			wantString: "bubblewrap 0.6.2 (" + noSize + "), no network; limits: 1 GiB of memory per process, 1024 processes"},
		{name: "bubblewrap without --size says so", opt: Options{Mode: Bwrap, Bwrap: noSize, Limits: &Limits{TmpSize: 1 << 20}},
			wantString: "; limits: a /tmp of 1 MiB; not limited here: the size of /tmp, which this bubblewrap cannot set (0.7 or later can)"},
		{name: "no limits", opt: Options{Mode: Bwrap, Bwrap: old, Limits: &Limits{}}, wantString: "; limits: no limits"},
		{name: "network", opt: Options{Mode: Bwrap, Bwrap: old, Network: true},
			wantString: "bubblewrap 0.4.1 (" + old + "), network allowed"},
		{name: "off needs no bubblewrap", opt: Options{Mode: Off, Bwrap: missing}, wantString: "off: commands run unconfined"},
		{name: "bad mode", opt: Options{Mode: "sometimes"}, wantErr: `unknown sandbox mode "sometimes"`},
		{name: "bad hidden path", opt: Options{Hidden: []string{"threads"}}, wantErr: `hidden path "threads" is neither absolute`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(context.Background(), tt.opt)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				assert.Nil(t, s)
				return
			}
			require.NoError(t, err)
			assert.Contains(t, s.String(), tt.wantString)
			if tt.wantDisabled == "" {
				assert.NoError(t, s.Disabled())
				return
			}
			assert.ErrorContains(t, s.Disabled(), tt.wantDisabled)
			assert.False(t, s.Confined())
			_, err = s.Start(Command{Workspace: t.TempDir(), Args: []string{"true"}})
			assert.ErrorContains(t, err, "commands are disabled because the sandbox is unavailable: "+tt.wantDisabled)
		})
	}
}

func TestNewStopsWithItsContext(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox needs Linux")
	}
	hangs := fakeBwrap(t, "exec sleep 30")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, mode := range []Mode{Auto, Bwrap} {
		t.Run(string(mode), func(t *testing.T) {
			s, err := New(ctx, Options{Mode: mode, Bwrap: hangs})
			assert.ErrorIs(t, err, context.Canceled, "a cancelled check must not pass for an unavailable sandbox")
			assert.Nil(t, s)
		})
	}
}

func TestStartRefusesBadCommands(t *testing.T) {
	s, err := New(context.Background(), Options{Mode: Off})
	require.NoError(t, err)
	tests := []struct {
		name    string
		cmd     Command
		wantErr string
	}{
		{name: "no args", cmd: Command{Workspace: t.TempDir()}, wantErr: "no command given"},
		{name: "relative workspace", cmd: Command{Workspace: "ws", Args: []string{"true"}}, wantErr: `workspace "ws": give an absolute directory other than /`},
		{name: "root workspace", cmd: Command{Workspace: "/", Args: []string{"true"}}, wantErr: `workspace "/": give an absolute directory`},
		{name: "relative directory", cmd: Command{Workspace: t.TempDir(), Dir: "sub", Args: []string{"true"}}, wantErr: `working directory "sub": give an absolute directory`},
		{name: "nowhere", cmd: Command{Args: []string{"true"}}, wantErr: "no workspace and no working directory given"},
		{name: "missing program", cmd: Command{Workspace: t.TempDir(), Args: []string{"/no/such/program"}}, wantErr: "start /no/such/program"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := s.Start(tt.cmd)
			assert.ErrorContains(t, err, tt.wantErr)
			assert.Nil(t, p)
		})
	}
}

// TestOffRunsUnconfined checks mode off: the command runs in the
// workspace, as the agent's user, with the curated environment.
func TestOffRunsUnconfined(t *testing.T) {
	t.Setenv("FSMGEN_TEST_API_KEY", "not-for-commands")
	s, err := New(context.Background(), Options{Mode: Off})
	require.NoError(t, err)
	assert.False(t, s.Confined())
	assert.True(t, s.Network())
	ws := t.TempDir()
	var out bytes.Buffer
	p, err := s.Start(Command{Workspace: ws, Args: []string{"sh", "-c", "pwd; echo ${FSMGEN_TEST_API_KEY:-unset} $PAGER"}, Stdout: &out, Stderr: &out})
	require.NoError(t, err)
	require.NoError(t, p.Wait())
	assert.Equal(t, ws+"\nunset cat\n", out.String())
	p.Kill() // after the end: harmless
}

// BenchmarkPerCall measures what Start does for each command besides
// starting bubblewrap: the file descriptor check, the seccomp filter's
// pipe, the workspace's cache directory, and bubblewrap's arguments with
// the default hidden paths resolved. (BenchmarkBash in package tools
// measures a whole call.)
func BenchmarkPerCall(b *testing.B) {
	filter, err := seccompFilter("amd64")
	require.NoError(b, err)
	home := b.TempDir()
	b.Setenv("HOME", home)
	hidden, err := expandHidden(DefaultHidden(), home)
	require.NoError(b, err)
	ws := b.TempDir()
	s := &Sandbox{bwrap: "bwrap", cache: b.TempDir()}
	b.Run("close inherited fds", func(b *testing.B) {
		for b.Loop() {
			if err := CloseInheritedFDs(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("seccomp pipe", func(b *testing.B) {
		for b.Loop() {
			r, w, err := os.Pipe()
			if err != nil {
				b.Fatal(err)
			}
			if _, err := w.Write(filter); err != nil {
				b.Fatal(err)
			}
			w.Close()
			r.Close()
		}
	})
	b.Run("workspace cache", func(b *testing.B) {
		for b.Loop() {
			if err := setupWorkspaceCache(s.CacheDir(ws)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bwrap arguments", func(b *testing.B) {
		lay := layout{hidden: hidden, seccomp: true, workspace: ws, writable: []string{ws, s.CacheDir(ws)}}
		for b.Loop() {
			lay.args(ws, []string{"true"})
		}
	})
	b.Run("pids cgroup", func(b *testing.B) {
		pids, err := findPidsCgroups()
		if err != nil {
			b.Skipf("no pids cgroup here: %v", err)
		}
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for b.Loop() {
			cg, err := pids.create(1024)
			if err != nil {
				b.Fatal(err)
			}
			if err := cg.enter(); err != nil {
				b.Fatal(err)
			}
			if err := cg.leave(); err != nil {
				b.Fatal(err)
			}
			cg.refused()
			cg.remove()
		}
	})
}

// BenchmarkNew measures making a sandbox, which runs bubblewrap once to
// prove that it works: what the agent pays at start.
func BenchmarkNew(b *testing.B) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		b.Skip("bubblewrap is not installed")
	}
	cache := b.TempDir()
	for b.Loop() {
		if _, err := New(context.Background(), Options{Mode: Bwrap, CacheDir: cache}); err != nil {
			b.Fatal(err)
		}
	}
}
