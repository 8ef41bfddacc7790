package eventlog_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/eventlog"
	"github.com/fsmgen/fsmgen/internal/proctest"
)

// holdEnv names the environment variable that makes the test binary a
// helper process holding the log it names open (see TestHelperHoldLog).
const holdEnv = "FSMGEN_EVENTLOG_TEST_HOLD"

// TestHelperHoldLog is not a test: run by TestOpenLocksAcrossProcesses as
// a process of its own, it opens the log named by holdEnv, says "open" on
// standard output and holds the log until its standard input closes.
func TestHelperHoldLog(t *testing.T) {
	p := os.Getenv(holdEnv)
	if p == "" {
		t.Skip("a helper process of TestOpenLocksAcrossProcesses")
	}
	w, err := eventlog.Open(p)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("open")
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = w.Close()
	os.Exit(0)
}

// holder is a helper process holding a log open.
type holder struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// hold starts a helper process that opens the log at p, and waits until
// it has.
func hold(t *testing.T, p string) *holder {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldLog$")
	cmd.Env = append(os.Environ(), holdEnv+"="+p)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.Equal(t, "open", proctest.Start(t, cmd))
	return &holder{cmd: cmd, stdin: stdin}
}

// TestOpenLocksAcrossProcesses opens a log another process holds: refused,
// and the log left as it is, until that process closes it or is killed.
func TestOpenLocksAcrossProcesses(t *testing.T) {
	tests := []struct {
		name string
		end  func(h *holder) error
	}{
		{"released by Close", func(h *holder) error {
			if err := h.stdin.Close(); err != nil {
				return err
			}
			return h.cmd.Wait()
		}},
		{"released when the process is killed", func(h *holder) error {
			if err := h.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				return err
			}
			err := h.cmd.Wait()
			var exit *exec.ExitError
			if err != nil && !assert.ErrorAs(t, err, &exit) {
				return err
			}
			return nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newLog(t, session{events: []int{1, 2}})
			before, err := os.ReadFile(p)
			require.NoError(t, err)
			h := hold(t, p)

			_, err = eventlog.Open(p)
			require.ErrorIs(t, err, eventlog.ErrInUse)
			assert.Equal(t, "event log "+p+" is in use by another agent (it holds the file's lock); stop that agent, or give -log another file", err.Error())
			after, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.Equal(t, before, after, "a refused Open leaves the log as it is")

			require.NoError(t, tt.end(h))
			writeLog(t, p, session{start: 3, events: []int{4}})
			rep, err := replayFile(t, p)
			require.NoError(t, err)
			assert.Equal(t, eventlog.Report{Sessions: 2, Events: 3}, rep)
		})
	}
}

// TestOpenLocksInOneProcess opens a log twice in one process: the second
// Writer is refused until the first is closed.
func TestOpenLocksInOneProcess(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	w, err := eventlog.Open(p)
	require.NoError(t, err)
	require.NoError(t, w.WriteHeader(eventlog.Header{Machine: "adder", Config: json.RawMessage(`{}`), State: json.RawMessage(`0`)}))
	_, err = eventlog.Open(p)
	require.ErrorIs(t, err, eventlog.ErrInUse)
	require.NoError(t, w.Close())
	w, err = eventlog.Open(p)
	require.NoError(t, err)
	require.NoError(t, w.Close())
}

// TestOpenRefusesWhatIsNoRegularFile opens paths that are neither a
// regular file nor missing: each is refused at once, without blocking,
// with a message that says what it is, and nothing is written anywhere.
func TestOpenRefusesWhatIsNoRegularFile(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T, dir string) string
		want string // the message, after "event log PATH is "
	}{
		{"a directory", func(t *testing.T, dir string) string { return dir },
			"a directory, not a regular file; give -log a regular file, or a path where one can be created"},
		{"a named pipe", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "fifo")
			require.NoError(t, syscall.Mkfifo(p, 0o600))
			return p
		}, "a named pipe, not a regular file; give -log a regular file"},
		{"a device", func(t *testing.T, _ string) string { return os.DevNull },
			"a device, not a regular file; give -log a regular file"},
		{"a socket", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "sock")
			l, err := net.Listen("unix", p)
			require.NoError(t, err)
			t.Cleanup(func() { _ = l.Close() })
			return p
		}, "a socket, not a regular file"},
		{"a symbolic link to a log", func(t *testing.T, dir string) string {
			target := newLog(t, session{events: []int{1}})
			p := filepath.Join(dir, "link")
			require.NoError(t, os.Symlink(target, p))
			return p
		}, "a symbolic link to /"},
		{"a dangling symbolic link", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "link")
			require.NoError(t, os.Symlink(filepath.Join(dir, "nowhere"), p))
			return p
		}, "a symbolic link to " + "DIR/nowhere, not a regular file; give -log the file it points to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := tt.make(t, dir)
			_, err := eventlog.Open(p)
			require.ErrorIs(t, err, eventlog.ErrNotRegular)
			want := strings.ReplaceAll("event log "+p+" is "+tt.want, "DIR", dir)
			assert.Equal(t, want, err.Error()[:min(len(err.Error()), len(want))])
			assert.NoFileExists(t, filepath.Join(dir, "nowhere"), "a dangling link's target is not created")
		})
	}
}

// TestReplayADirectory hands Replay and Verify a directory opened as a
// file, as "agent replay DIR" does.
func TestReplayADirectory(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Open(dir)
	require.NoError(t, err)
	defer f.Close()
	want := dir + " is a directory, not an fsmgen event log; give the event log file"

	_, err = eventlog.Replay(f, startAdder)
	require.ErrorIs(t, err, eventlog.ErrNotEventLog)
	require.ErrorIs(t, err, syscall.EISDIR)
	assert.Equal(t, want, err.Error())

	_, err = eventlog.Verify(f)
	require.ErrorIs(t, err, eventlog.ErrNotEventLog)
	assert.Equal(t, want, err.Error())
}

// TestReadError reads a log whose reader fails part way: the error says
// at which line.
func TestReadError(t *testing.T) {
	p := newLog(t, session{events: []int{1, 2}})
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	r := io.MultiReader(strings.NewReader(string(b)), failingReader{})
	_, err = eventlog.Replay(r, startAdder)
	require.ErrorIs(t, err, errDisk)
	assert.Equal(t, "read the log at line 4: the disk failed", err.Error())
}

// errDisk is the error failingReader returns.
var errDisk = fmt.Errorf("the disk failed")

// failingReader fails every read.
type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errDisk }
