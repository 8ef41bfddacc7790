package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLimitsWrap(t *testing.T) {
	t.Parallel()
	argv := []string{"bash", "-c", "echo hi"}
	tests := []struct {
		name   string
		limits Limits
		want   []string
	}{
		{name: "none", limits: Limits{}, want: argv},
		{name: "only /tmp: nothing to set per process", limits: Limits{TmpSize: 1 << 20}, want: argv},
		{
			name:   "the defaults",
			limits: DefaultLimits(),
			want: append([]string{"/bin/bash", "-c",
				`ulimit -S -H -c 0 -d 1048576 -u 1024 -f 1048576 && ulimit -S -t 600 && ulimit -H -t 601 && exec "$@"`, "fsmgen-limits"}, argv...),
		},
		{
			name:   "rounded: memory and files to KiB (at least 1), CPU up to whole seconds",
			limits: Limits{Memory: 1000, FileSize: 4097, CPU: 1500 * time.Millisecond},
			want: append([]string{"/bin/bash", "-c",
				`ulimit -S -H -c 0 -d 1 -f 4 && ulimit -S -t 2 && ulimit -H -t 3 && exec "$@"`, "fsmgen-limits"}, argv...),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, tt.limits.wrap("/bin/bash", argv))
		})
	}
}

// TestLimitsWrapRuns runs the wrapper's shell outside any sandbox, with
// limits no lower than this process's, and reads them back.
func TestLimitsWrapRuns(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	l := Limits{Memory: 8 << 30, Processes: 100000, CPU: 3 * time.Hour, FileSize: 64 << 30}
	argv := l.wrap(bash, []string{"bash", "-c", "ulimit -S -d -u -f -t -c; ulimit -H -t; ulimit -H -d"})
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil && len(out) > 0 && string(out[:min(len(out), 14)]) == "fsmgen-limits:" {
		t.Skipf("this process's own limits are lower: %s", out)
	}
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "data seg size               (kbytes, -d) 8388608\n"+
		"max user processes                  (-u) 100000\n"+
		"file size                   (blocks, -f) 67108864\n"+
		"cpu time                   (seconds, -t) 10800\n"+
		"core file size              (blocks, -c) 0\n"+
		"10801\n8388608\n", string(out))
}

func TestLimitNote(t *testing.T) {
	t.Parallel()
	l := Limits{Memory: 1 << 30, Processes: 64, CPU: 90 * time.Second, FileSize: 1 << 30, TmpSize: 512 << 20}
	const advice = ". Use less or split the work; the user can raise a limit with its flag"
	tests := []struct {
		name    string
		code    int // the command's exit status
		output  string
		refused int   // tasks the pids cgroup refused
		cgroup  bool  // the command had a pids cgroup
		wrote   int64 // what it wrote when the disk watcher stopped it
		limits  *Limits
		want    string
	}{
		{name: "nothing", code: 1, output: "FAIL\n"},
		{name: "pids cgroup", code: 0, refused: 3, cgroup: true, output: "ok\n",
			want: "sandbox limit -sandbox-processes: the command reached its limit of 64 processes and threads at once (3 refused)" + advice},
		{name: "a fork refused, no cgroup", code: 254, output: "bash: fork: retry: Resource temporarily unavailable\n",
			want: "sandbox limit -sandbox-processes: the command may have reached its limit of 64 processes and threads at once" + advice},
		{name: "dash", code: 2, output: "sh: 0: Cannot fork\n",
			want: "sandbox limit -sandbox-processes: the command may have reached its limit of 64 processes and threads at once" + advice},
		{name: "a fork refused, with a cgroup that refused none: not the limit", code: 1, cgroup: true, output: "Resource temporarily unavailable\n"},
		{name: "CPU, by status", code: 128 + 24,
			want: "sandbox limit -sandbox-cpu: a process used its 90s of CPU time and was killed" + advice},
		{name: "CPU, said by a shell", code: 0, output: "bash: line 1:  1234 CPU time limit exceeded (core dumped) ./spin\n",
			want: "sandbox limit -sandbox-cpu: a process used its 90s of CPU time and was killed" + advice},
		{name: "file size", code: 128 + 25,
			want: "sandbox limit -sandbox-file-size: a process tried to write a file over 1 GiB and was stopped" + advice},
		{name: "memory, Go", code: 2, output: "fatal error: runtime: out of memory\n",
			want: "sandbox limit -sandbox-memory: a process may have run out of its 1 GiB of memory" + advice},
		{name: "memory, bash", code: 2, output: "bash: xrealloc: cannot allocate 268029952 bytes\n",
			want: "sandbox limit -sandbox-memory: a process may have run out of its 1 GiB of memory" + advice},
		{name: "/tmp", code: 1, output: "cp: error writing '/tmp/x': No space left on device\n",
			want: "sandbox limit -sandbox-tmp-size: the command may have filled its /tmp of 512 MiB (or the disk is full)" + advice},
		{name: "two at once", code: 128 + 24, output: "MemoryError\n",
			want: "sandbox limit -sandbox-cpu: a process used its 90s of CPU time and was killed; -sandbox-memory: a process may have run out of its 1 GiB of memory" + advice},
		{name: "disk", code: 128 + 9, wrote: 1<<30 + 1<<29,
			want: "sandbox limit -sandbox-disk: the command wrote 1.5 GiB to the disk (the workspace, its cache), over its limit of 1 GiB, and was stopped with everything it started" + advice},
		{name: "no limits, no notes", code: 128 + 24, output: "out of memory, No space left on device, Cannot fork", limits: &Limits{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lim := l
			if tt.limits != nil {
				lim = *tt.limits
			}
			cmd := exec.Command("sh", "-c", "exit $0", strconv.Itoa(tt.code))
			_ = cmd.Run()
			p := &Process{cmd: cmd, confined: true, limits: lim, pidsRefused: tt.refused, pidsCgroup: tt.cgroup, done: make(chan struct{})}
			if tt.wrote > 0 {
				p.disk = &diskWatch{limit: 1 << 30, wrote: tt.wrote}
			}
			assert.Empty(t, p.LimitNote([]byte(tt.output)), "not before the end")
			close(p.done)
			assert.Equal(t, tt.want, p.LimitNote([]byte(tt.output)))
			p.confined = false
			assert.Empty(t, p.LimitNote([]byte(tt.output)), "unconfined commands are not limited")
		})
	}
}

func TestLimitsString(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "1 GiB of memory per process, 1024 processes, 10m0s of CPU per process, files up to 1 GiB, a /tmp of 512 MiB, 1 GiB written to the disk per command", DefaultLimits().String())
	assert.Equal(t, "no limits", Limits{}.String())
	assert.Equal(t, "1.5 KiB of memory per process, 1s of CPU per process", Limits{Memory: 1536, CPU: time.Millisecond}.String())
}

func TestCgroupFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	v1 := write("cgroup-v1", "9:name=systemd:/\n8:pids:/user.slice/user-1000.slice\n4:memory:/x\n1:cpu,cpuacct:/\n0::/\n")
	v2 := write("cgroup-v2", "0::/user.slice/user-1000.slice/session-1.scope\n")
	mounts := write("mountinfo", "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"+
		"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"+
		"39 31 0:36 /user.slice /sys/fs/cgroup/pids\\040dir rw,relatime shared:5 - cgroup cgroup rw,pids\n"+
		"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n")
	noPids := write("mountinfo-v2", "41 31 0:38 / /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw\n")

	got, err := ownCgroup(v1, "pids")
	require.NoError(t, err)
	assert.Equal(t, "/user.slice/user-1000.slice", got)
	got, err = ownCgroup(v1, "cpuacct")
	require.NoError(t, err)
	assert.Equal(t, "/", got)
	_, err = ownCgroup(v2, "pids")
	assert.EqualError(t, err, "no cgroup v1 pids controller (the cgroup v2 hierarchy is not used)")

	mount, root, err := cgroupMount(mounts, "pids")
	require.NoError(t, err)
	assert.Equal(t, "/sys/fs/cgroup/pids dir", mount, "octal escapes undone")
	assert.Equal(t, "/user.slice", root)
	_, _, err = cgroupMount(noPids, "pids")
	assert.EqualError(t, err, "the cgroup v1 pids hierarchy is not mounted")

	events := write("pids.events", "max 17\n")
	cg := &commandCgroup{dir: filepath.Dir(events)}
	assert.Equal(t, 17, cg.refused())
	cg.dir = filepath.Join(dir, "missing")
	assert.Zero(t, cg.refused())
}

func TestEnforcedLimits(t *testing.T) {
	t.Parallel()
	l := DefaultLimits()
	withCgroup := &Sandbox{limits: l, pids: &pidsCgroups{parent: "/x"}, lay: layout{userns: true}}
	assert.Equal(t, l, withCgroup.enforced(), "a pids cgroup: everything holds")
	noUserns := &Sandbox{limits: l, lay: layout{userns: false}}
	want := l
	want.Processes = 0
	assert.Equal(t, want, noUserns.enforced(), "no user namespace: RLIMIT_NPROC would count all of the user's processes")
	assert.Contains(t, noUserns.LimitsString(), "not limited here: processes, as ")
	userns := &Sandbox{limits: l, lay: layout{userns: true}}
	if os.Geteuid() == 0 {
		assert.Equal(t, want, userns.enforced(), "root without a pids cgroup: RLIMIT_NPROC does not bind root")
		assert.Contains(t, userns.LimitsString(), "not limited here: processes, as root is exempt from RLIMIT_NPROC")
	} else {
		assert.Equal(t, l, userns.enforced(), "an ordinary user in a user namespace: RLIMIT_NPROC holds")
		assert.NotContains(t, userns.LimitsString(), "not limited")
	}
}
