// Package proctest helps the tests that start processes: a buffer a
// process writes while the test reads it ([Buffer]), a process started
// and its first line read ([Start]), a loopback address for a server it
// starts ([FreeAddr]), and a directory outside /tmp, which a confined
// process does not share with the test ([HostDir]).
package proctest

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Buffer is a bytes.Buffer that a running process may write while the
// test reads it. The zero value is an empty buffer.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write implements io.Writer.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Start starts cmd, whose standard output must not be set, and returns
// the first line it writes there, without its newline: a process that
// says it is ready, or what it holds, on that line. The rest of its
// standard output is not read. When t ends the process is killed and
// waited for (a test may wait for it first). Start fails t when cmd
// cannot start or ends its output before a whole line; the message
// holds what it wrote to its standard error when that is a [Buffer] or
// another fmt.Stringer.
func Start(t testing.TB, cmd *exec.Cmd) string {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("proctest: %s: %v", cmd, err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("proctest: start %s: %v", cmd, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		// Wait for the process, and for the copying of its standard
		// error into a writer that is not a file, which may still be
		// under way when its standard output has ended.
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		stderr := ""
		if s, ok := cmd.Stderr.(fmt.Stringer); ok {
			stderr = "; its standard error:\n" + s.String()
		}
		t.Fatalf("proctest: %s wrote no line on its standard output (%q, then %v)%s", cmd, line, err, stderr)
	}
	return strings.TrimSuffix(line, "\n")
}

// FreeAddr returns a loopback address, host:port, that nothing listened
// on a moment ago: for a server the test starts as a process, which must
// be told its address. The port is drawn below the kernel's range of
// ephemeral ports (Linux's net.ipv4.ip_local_port_range), where the
// source ports of the connections other tests open are taken: a port the
// kernel picks for a listener (":0") comes from that range, and another
// test's connection could take it before the server listens ("address
// already in use"). Where the range cannot be read, or no port below it
// is free after a few draws, the kernel picks.
func FreeAddr(t testing.TB) string {
	t.Helper()
	if low := ephemeralLow(); low > minPort {
		for range 20 {
			addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(minPort+rand.IntN(low-minPort)))
			if ln, err := net.Listen("tcp", addr); err == nil {
				if err := ln.Close(); err != nil {
					t.Fatalf("proctest: find a free port: %v", err)
				}
				return addr
			}
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proctest: find a free port: %v", err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatalf("proctest: find a free port: %v", err)
	}
	return addr
}

// minPort is the lowest port FreeAddr draws: above the well-known and the
// most used registered ones.
const minPort = 20000

// ephemeralLow returns the first of the kernel's ephemeral ports, or 0
// where it cannot be read.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(b))
	if len(fields) != 2 {
		return 0
	}
	low, err := strconv.Atoi(fields[0])
	if err != nil {
		return 0
	}
	return low
}

// HostDir returns a new directory outside /tmp, absolute and with no
// symbolic link in its path, removed when t ends: under /var/tmp, or in
// the package's directory where there is no /var/tmp. A sandboxed
// process gets a /tmp of its own; what a test puts in this directory is
// the host's, as a user's files are.
func HostDir(t testing.TB) string {
	t.Helper()
	parent := "/var/tmp"
	if fi, err := os.Stat(parent); err != nil || !fi.IsDir() {
		parent = "." // the package's directory
	}
	made, err := os.MkdirTemp(parent, "fsmgen-test-")
	if err != nil {
		t.Fatalf("proctest: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(made) })
	dir, err := filepath.EvalSymlinks(made)
	if err != nil {
		t.Fatalf("proctest: %v", err)
	}
	if dir, err = filepath.Abs(dir); err != nil {
		t.Fatalf("proctest: %v", err)
	}
	return dir
}
