package sandbox_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox/sandboxtest"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
)

// forkCount is a command that tries to start 200 processes at once
// without retrying (bash retries a refused fork for half a minute) and
// prints how many it started and why it stopped.
const forkCount = `perl -e 'my $n = 0; for (1..200) { my $p = fork; last unless defined $p; if (!$p) { sleep 10; exit } $n++ } print "started $n: $!\n"'`

// TestLimits reaches each limit of a confined command through the bash
// tool, and checks that the command is stopped or refused and that the
// result says which limit, naming its flag. The agent runs as root here
// (the process limit is then a pids cgroup), and bubblewrap as root or as
// nobody.
func TestLimits(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("perl is not installed") // Debian's perl-base is essential
	}
	limits := sandbox.Limits{Memory: 64 << 20, Processes: 40, CPU: time.Second, FileSize: 1 << 20, TmpSize: 8 << 20}
	tests := []struct {
		name, command string
		isError       bool
		want          []string // in the result, in order
	}{
		{name: "processes", command: forkCount,
			want: []string{"[sandbox limit -sandbox-processes: the command reached its limit of 40 processes and threads at once", "started 3", ": Resource temporarily unavailable"}},
		{name: "memory", command: `perl -e '$x = "a" x (200 << 20); print length($x), "\n"'`, isError: true,
			want: []string{"sandbox limit -sandbox-memory: a process may have run out of its 64 MiB of memory", "Out of memory"}},
		{name: "memory below the limit", command: `perl -e '$x = "a" x (16 << 20); print length($x), "\n"'`,
			want: []string{"16777216\n"}},
		{name: "CPU", command: "while :; do :; done", isError: true,
			want: []string{"sandbox limit -sandbox-cpu: a process used its 1s of CPU time and was killed", "killed by signal CPU time limit exceeded"}},
		{name: "file size", command: "head -c 2M /dev/zero > big; stat -c %s big", isError: false,
			want: []string{"[sandbox limit -sandbox-file-size: a process tried to write a file over 1 MiB and was stopped", "File size limit exceeded", "1048576\n"}},
		{name: "/tmp", command: "for i in $(seq 12); do head -c 1000K /dev/zero > /tmp/f$i || break; done; du -sk /tmp | cut -f1", isError: false,
			want: []string{"[sandbox limit -sandbox-tmp-size: the command may have filled its /tmp of 8 MiB", "No space left on device", "8192\n"}},
	}
	for _, v := range confined {
		t.Run(v.name, func(t *testing.T) {
			f := newFixture(t, v, sandbox.Options{Limits: &limits})
			assert.Contains(t, f.sb.String(), "limits: 64 MiB of memory per process, 40 processes (a pids cgroup), 1s of CPU per process, files up to 1 MiB, a /tmp of 8 MiB")
			t.Run("its cgroup cannot be left", func(t *testing.T) {
				out := f.bash(t, "for f in /sys/fs/cgroup/pids/tasks /sys/fs/cgroup/pids/cgroup.procs; do (echo $$ > $f) 2>&1; done; true")
				assert.Equal(t, 2, strings.Count(out.Content, "Read-only file system"), out.Content)
			})
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					out := f.bash(t, tt.command)
					assert.Equal(t, tt.isError, out.IsError, out.Content)
					rest := out.Content
					for _, w := range tt.want {
						i := strings.Index(rest, w)
						if !assert.GreaterOrEqual(t, i, 0, "%q not in (what follows of) %q", w, out.Content) {
							break
						}
						rest = rest[i+len(w):]
					}
				})
			}
		})
	}
}

// TestLimitsWithoutRoot runs the bash tool from a helper agent that runs
// as nobody, as an ordinary user runs the agent: there is no pids cgroup,
// and RLIMIT_NPROC, counted in the sandbox's own user namespace, limits
// the processes of the command alone.
func TestLimitsWithoutRoot(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("runs the agent as nobody, which needs root")
	}
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("perl is not installed")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) is not installed")
	}
	f := newFixture(t, unprivileged, sandbox.Options{})
	bin := filepath.Join(f.base, "agent-as-nobody")
	data, err := os.ReadFile(os.Args[0])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, data, 0o755))
	require.NoError(t, os.Chmod(f.wsCache, 0o777))
	limits := sandbox.Limits{Processes: 40}
	spec, err := json.Marshal(helperSpec{Mode: sandbox.Bwrap, Workspace: f.ws, Cache: f.cache, Command: forkCount, Limits: &limits})
	require.NoError(t, err)
	cmd := exec.Command(setpriv, "--reuid="+nobody, "--regid="+nobody, "--clear-groups", bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+string(spec), "HOME="+f.home)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Regexp(t, `^\[sandbox limit -sandbox-processes: the command may have reached its limit of 40 processes and threads at once\. .*\]\nstarted 3\d: Resource temporarily unavailable\n$`, string(out))
}

// TestWorkspaceInTheHome runs a command in a workspace inside the home
// directory, where projects usually are, with its cache there too: the
// home is empty but for them, and they are writable.
func TestWorkspaceInTheHome(t *testing.T) {
	for _, v := range confined {
		t.Run(v.name, func(t *testing.T) {
			f := newFixture(t, v, sandbox.Options{})
			proj := filepath.Join(f.home, "src", "proj")
			require.NoError(t, os.MkdirAll(proj, 0o777))
			require.NoError(t, os.WriteFile(filepath.Join(proj, "main.go"), []byte("package main\n"), 0o666))
			sb := sandboxtest.New(t, sandbox.Options{Mode: v.mode, CacheDir: filepath.Join(f.home, ".cache", "agent"), Bwrap: bwrapOf(f)})
			if v.unprivileged {
				require.NoError(t, os.MkdirAll(sb.CacheDir(proj), 0o777))
				chmodAll(t, f.home)
			}
			ws, err := tools.NewWorkspace(proj)
			require.NoError(t, err)
			set := tools.Default(ws, tools.Options{Sandbox: sb, Timeout: time.Minute})
			raw, err := json.Marshal(map[string]string{"command": "cat main.go && echo x > new && echo y > $XDG_CACHE_HOME/c && find ~ -mindepth 1 | sort && cat ~/.ssh/id_ed25519"})
			require.NoError(t, err)
			out := set.Run(context.Background(), chat.ToolCall{Name: "bash", Arguments: raw}, nil)
			cache := sb.CacheDir(proj)
			want := "command exited with status 1\n\npackage main\n" + strings.Join([]string{
				f.home + "/.cache", f.home + "/.cache/agent", cache, cache + "/c",
				f.home + "/src", proj, proj + "/main.go", proj + "/new",
			}, "\n") + "\ncat: " + f.home + "/.ssh/id_ed25519: No such file or directory\n"
			assert.Equal(t, want, out.Content, "only the workspace and its cache, writable, in an empty home")
			assert.FileExists(t, filepath.Join(proj, "new"))
			assert.FileExists(t, filepath.Join(cache, "c"))
		})
	}
}

// bwrapOf returns the bubblewrap program of f's variant ("" for bwrap on
// PATH).
func bwrapOf(f *fixture) string {
	if f.v.unprivileged {
		return filepath.Join(f.base, "bwrap-as-nobody")
	}
	return ""
}

func TestReadOnlyWorkspace(t *testing.T) {
	for _, v := range allVariants {
		t.Run(v.name, func(t *testing.T) {
			f := newFixture(t, v, sandbox.Options{ReadOnlyWorkspace: true})
			if !v.confined() {
				before := listing(t, f.ws)
				out := f.bash(t, "echo x > new.txt")
				require.True(t, out.IsError, "unconfined, a read-only workspace cannot be kept: every command is refused")
				assert.Contains(t, out.Content, "-sandbox off")
				assert.Equal(t, before, listing(t, f.ws))
				return
			}
			before := listing(t, f.ws)
			out := f.bash(t, "cat here.txt && echo private > /tmp/p && cat /tmp/p && echo cached > $XDG_CACHE_HOME/c && cat $XDG_CACHE_HOME/c")
			require.False(t, out.IsError, out.Content)
			assert.Equal(t, "here\nprivate\ncached\n", out.Content, "it reads the workspace and writes its /tmp and cache")
			for _, attempt := range []string{
				"echo x > new.txt",
				"echo x >> here.txt",
				"rm here.txt",
				"mkdir sub",
				"touch here.txt",
				"mount -o remount,bind,rw . 2>/dev/null; echo x > remounted.txt",
			} {
				out := f.bash(t, attempt)
				assert.True(t, out.IsError, "%s: %s", attempt, out.Content)
				assert.Contains(t, out.Content, "Read-only file system", attempt)
			}
			assert.Equal(t, before, listing(t, f.ws), "the workspace is untouched")
			assert.Contains(t, f.sb.String(), "workspace read-only")
			assert.True(t, f.sb.ReadOnlyWorkspace())
		})
	}
}

func TestReadOnlyWorkspaceInTheHome(t *testing.T) {
	for _, v := range confined {
		t.Run(v.name, func(t *testing.T) {
			f := newFixture(t, v, sandbox.Options{})
			proj := filepath.Join(f.home, "src", "proj")
			require.NoError(t, os.MkdirAll(proj, 0o777))
			require.NoError(t, os.WriteFile(filepath.Join(proj, "main.go"), []byte("package main\n"), 0o666))
			sb := sandboxtest.New(t, sandbox.Options{Mode: v.mode, CacheDir: filepath.Join(f.home, ".cache", "agent"), Bwrap: bwrapOf(f), ReadOnlyWorkspace: true})
			if v.unprivileged {
				require.NoError(t, os.MkdirAll(sb.CacheDir(proj), 0o777))
				chmodAll(t, f.home)
			}
			ws, err := tools.NewWorkspace(proj)
			require.NoError(t, err)
			set := tools.Default(ws, tools.Options{Sandbox: sb, Timeout: time.Minute})
			raw, err := json.Marshal(map[string]string{"command": "cat main.go; echo x > new; ls -A ~/src/proj"})
			require.NoError(t, err)
			out := set.Run(context.Background(), chat.ToolCall{Name: "bash", Arguments: raw}, nil)
			assert.Contains(t, out.Content, "package main\n", "the workspace is shown though the home is hidden")
			assert.Contains(t, out.Content, "Read-only file system")
			assert.NoFileExists(t, filepath.Join(proj, "new"))
		})
	}
}

// TestDiskLimit writes past the disk limit from bash, in one file and in
// many: the command is stopped soon after (with everything it started)
// and the result says so first, naming the flag; below the limit
// nothing happens. RLIMIT_FSIZE stays at 256 MiB, so that a watcher that
// failed would not fill the disk.
func TestDiskLimit(t *testing.T) {
	const limit, fileLimit = 16 << 20, 256 << 20
	limits := sandbox.Limits{Disk: limit, FileSize: fileLimit}
	note := "sandbox limit -sandbox-disk: the command wrote "
	tests := []struct {
		name, command string
		stopped       bool
		written       string // a file or directory of the workspace the command wrote
	}{
		{name: "yes into one file", command: "yes 0123456789abcdef > yes.out", stopped: true, written: "yes.out"},
		{name: "dd", command: "dd if=/dev/zero of=dd.out bs=1M count=200 status=none", stopped: true, written: "dd.out"},
		{name: "many small files", command: "mkdir many; for i in $(seq 200); do head -c 1M /dev/zero > many/f$i; done", stopped: true, written: "many"},
		{name: "a background writer", command: "(yes 0123456789abcdef > bg.out &); sleep 60", stopped: true, written: "bg.out"},
		{name: "below the limit", command: "head -c 4M /dev/zero > small.out; echo ok", written: "small.out"},
	}
	for _, v := range confined {
		t.Run(v.name, func(t *testing.T) {
			f := newFixture(t, v, sandbox.Options{Limits: &limits})
			assert.Contains(t, f.sb.String(), "16 MiB written to the disk per command")
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					out := f.bash(t, tt.command)
					size := diskUse(t, filepath.Join(f.ws, tt.written))
					if !tt.stopped {
						assert.False(t, out.IsError, out.Content)
						assert.NotContains(t, out.Content, note)
						assert.Equal(t, "ok\n", out.Content)
						return
					}
					// A writer as fast as dd into the page cache may end
					// between two looks of the watcher: it is then not
					// stopped, but the note says what it wrote all the same.
					ended := strings.Contains(out.Content, "over its limit of 16 MiB, and ended before it could be stopped")
					assert.True(t, out.IsError || ended, out.Content)
					assert.True(t, strings.HasPrefix(strings.TrimPrefix(out.Content, "["), note), "the note comes first: %s", out.Content)
					assert.True(t, ended || strings.Contains(out.Content, "over its limit of 16 MiB, and was stopped with everything it started"), out.Content)
					assert.Greater(t, size, int64(limit)/2, "it wrote")
					assert.Less(t, size, int64(fileLimit), "it was stopped by the disk limit, not RLIMIT_FSIZE")
					require.NoError(t, os.RemoveAll(filepath.Join(f.ws, tt.written)))
				})
			}
		})
	}
}

// diskUse returns the bytes the file or directory tree p holds on disk.
func diskUse(t *testing.T, p string) int64 {
	t.Helper()
	var n int64
	require.NoError(t, filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Sys().(*syscall.Stat_t).Blocks * 512
		}
		return err
	}))
	return n
}
