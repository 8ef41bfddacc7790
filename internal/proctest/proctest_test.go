package proctest_test

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/proctest"
)

// helperEnv makes the test binary a helper process that plays the role
// it names.
const helperEnv = "PROCTEST_HELPER"

// TestMain runs the helper's role when the binary was started as one.
func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "ready": // says so, then runs until killed or its input ends
		fmt.Println("ready 42")
		_, _ = io.Copy(io.Discard, os.Stdin)
	case "half": // a line cut short, and why on stderr
		fmt.Print("half a")
		fmt.Fprintln(os.Stderr, "the helper gave up")
		os.Exit(1)
	case "silent":
	}
	os.Exit(0)
}

// fakeT records what a helper does with its testing.TB. A failure ends
// the goroutine, as t.Fatalf does.
type fakeT struct {
	testing.TB
	mu       sync.Mutex
	failure  string
	cleanups []func()
}

func (f *fakeT) Helper() {}

func (f *fakeT) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.failure = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}

func (f *fakeT) Cleanup(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleanups = append(f.cleanups, fn)
}

// run calls fn with f on a goroutine of its own, as a test runs, and
// reports whether fn returned (rather than failed).
func (f *fakeT) run(fn func(testing.TB)) bool {
	done, returned := make(chan struct{}), false
	go func() {
		defer close(done)
		fn(f)
		returned = true
	}()
	<-done
	return returned
}

// end runs the cleanups, last first, as a test's end does.
func (f *fakeT) end() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

// helper returns a command that starts the test binary in role.
func helper(role string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+role)
	return cmd
}

func TestStart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cmd     func() *exec.Cmd
		want    string // the line Start returns
		failure []string
	}{
		{name: "a first line", cmd: func() *exec.Cmd {
			cmd := helper("ready")
			_, err := cmd.StdinPipe() // open until the helper is killed
			require.NoError(t, err)
			return cmd
		}, want: "ready 42"},
		{name: "a line cut short, with the standard error", cmd: func() *exec.Cmd {
			cmd := helper("half")
			cmd.Stderr = &proctest.Buffer{}
			return cmd
		}, failure: []string{"wrote no line on its standard output", `"half a"`, "EOF", "its standard error:\nthe helper gave up"}},
		{name: "no output", cmd: func() *exec.Cmd { return helper("silent") }, failure: []string{"wrote no line", `("", then EOF)`}},
		{name: "no program", cmd: func() *exec.Cmd { return exec.Command(filepath.Join(t.TempDir(), "missing")) }, failure: []string{"proctest: start", "no such file"}},
		{name: "standard output already set", cmd: func() *exec.Cmd {
			cmd := helper("ready")
			cmd.Stdout = io.Discard
			return cmd
		}, failure: []string{"Stdout already set"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeT{}
			cmd := tt.cmd()
			var line string
			returned := f.run(func(t testing.TB) { line = proctest.Start(t, cmd) })
			f.end()
			if tt.failure == nil {
				require.True(t, returned, "failed: %s", f.failure)
				assert.Equal(t, tt.want, line)
				require.NotNil(t, cmd.ProcessState, "waited for when the test ended")
				assert.False(t, cmd.ProcessState.Success(), "killed when the test ended: %v", cmd.ProcessState)
				return
			}
			require.False(t, returned, "Start returned %q", line)
			for _, want := range tt.failure {
				assert.Contains(t, f.failure, want)
			}
		})
	}
}

func TestStartLetsTheTestWait(t *testing.T) {
	t.Parallel()
	cmd := helper("ready")
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	assert.Equal(t, "ready 42", proctest.Start(t, cmd))
	require.NoError(t, in.Close())
	require.NoError(t, cmd.Wait(), "the helper ends when its input does")
}

func TestBuffer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{"empty", nil, ""},
		{"one write", []string{"hello\n"}, "hello\n"},
		{"writes in order", []string{"a", "b", "", "c\n"}, "abc\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b proctest.Buffer
			for _, w := range tt.writes {
				n, err := b.Write([]byte(w))
				require.NoError(t, err)
				assert.Equal(t, len(w), n)
			}
			assert.Equal(t, tt.want, b.String())
		})
	}
}

// TestBufferConcurrent writes from a process and from goroutines while
// the test reads (run with -race).
func TestBufferConcurrent(t *testing.T) {
	t.Parallel()
	var b proctest.Buffer
	cmd := exec.Command("sh", "-c", "for i in 1 2 3 4 5; do echo line; done")
	cmd.Stdout, cmd.Stderr = &b, &b
	require.NoError(t, cmd.Start())
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				_, _ = b.Write([]byte("x"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	require.NoError(t, cmd.Wait())
	got := b.String()
	assert.Equal(t, 400, strings.Count(got, "x"))
	assert.Equal(t, 5, strings.Count(got, "line\n"))
}

func TestFreeAddr(t *testing.T) {
	t.Parallel()
	addr := proctest.FreeAddr(t)
	host, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1", host)
	assert.NotEqual(t, "0", port)
	// Below the kernel's ephemeral ports, which other tests' connections
	// take as their source ports.
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		low, err := strconv.Atoi(strings.Fields(string(b))[0])
		require.NoError(t, err)
		n, err := strconv.Atoi(port)
		require.NoError(t, err)
		assert.Less(t, n, low, "the port is not an ephemeral one")
		assert.GreaterOrEqual(t, n, 20000)
	}
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err, "a server can listen on it")
	require.NoError(t, ln.Close())
}

func TestHostDir(t *testing.T) {
	t.Parallel()
	f := &fakeT{}
	var dir string
	require.True(t, f.run(func(t testing.TB) { dir = proctest.HostDir(t) }), f.failure)
	assert.True(t, filepath.IsAbs(dir), dir)
	assert.False(t, dir == "/tmp" || strings.HasPrefix(dir, "/tmp/"), "outside /tmp: %s", dir)
	real, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	assert.Equal(t, dir, real, "no link in its path")
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assert.True(t, fi.IsDir())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "new")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a"), []byte("a"), 0o600))

	f.end()
	_, err = os.Stat(dir)
	assert.True(t, os.IsNotExist(err), "removed when the test ends: %v", err)
	assert.NotEqual(t, dir, proctest.HostDir(t), "a new one each time")
}
