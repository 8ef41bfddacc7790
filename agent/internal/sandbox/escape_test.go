package sandbox_test

import (
	"archive/tar"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox/sandboxtest"
	"github.com/fsmgen/fsmgen/internal/proctest"
)

// These tests check the ways out of the sandbox that an independent
// review found: setuid files left in the workspace, file descriptors
// inherited from the agent, the controlling terminal, one build cache
// shared by every project.

// setIDFiles returns the files (not directories: a setgid directory only
// passes its group on) under each of dirs that have the setuid or the
// setgid bit, relative to their dir.
func setIDFiles(t *testing.T, dirs ...string) []string {
	t.Helper()
	var found []string
	for _, dir := range dirs {
		require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			fi, err := os.Lstat(p)
			if err != nil {
				return err
			}
			if fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid) != 0 {
				rel, _ := filepath.Rel(dir, p)
				found = append(found, fmt.Sprintf("%s %s", rel, fi.Mode()))
			}
			return nil
		}))
	}
	return found
}

// firstProgram returns the first of paths that exists, or "".
func firstProgram(paths ...string) string {
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// i386Chmod returns a tiny static i386 program (Linux, int 0x80) that
// calls chmod("target32", 04755) and exits with the error number it got
// (0 on success): a way around a filter that only knows the x86_64
// system calls. It returns nil when this machine cannot run it.
func i386Chmod(t *testing.T) []byte {
	t.Helper()
	const (
		base     = 0x08048000
		ehdrSize = 52
		phdrSize = 32
	)
	code := []byte{
		0xb8, 15, 0, 0, 0, // mov eax, 15 (chmod)
		0xbb, 0, 0, 0, 0, // mov ebx, path (patched below)
		0xb9, 0xed, 0x09, 0, 0, // mov ecx, 04755
		0xcd, 0x80, // int 0x80
		0x89, 0xc3, // mov ebx, eax
		0xf7, 0xdb, // neg ebx
		0xb8, 1, 0, 0, 0, // mov eax, 1 (exit)
		0xcd, 0x80, // int 0x80
	}
	path := []byte("target32\x00")
	binary.LittleEndian.PutUint32(code[6:], base+ehdrSize+phdrSize+uint32(len(code)))
	size := uint32(ehdrSize + phdrSize + len(code) + len(path))
	le := binary.LittleEndian
	var b []byte
	b = append(b, 0x7f, 'E', 'L', 'F', 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0) // 32-bit, little-endian, SYSV
	b = le.AppendUint16(b, 2)                                              // ET_EXEC
	b = le.AppendUint16(b, 3)                                              // EM_386
	b = le.AppendUint32(b, 1)                                              // EV_CURRENT
	b = le.AppendUint32(b, base+ehdrSize+phdrSize)                         // entry
	b = le.AppendUint32(b, ehdrSize)                                       // program headers
	b = le.AppendUint32(b, 0)                                              // no section headers
	b = le.AppendUint32(b, 0)                                              // flags
	b = le.AppendUint16(b, ehdrSize)
	b = le.AppendUint16(b, phdrSize)
	b = le.AppendUint16(b, 1) // one program header
	b = le.AppendUint16(b, 0)
	b = le.AppendUint16(b, 0)
	b = le.AppendUint16(b, 0)
	b = le.AppendUint32(b, 1) // PT_LOAD
	b = le.AppendUint32(b, 0) // from the file's start
	b = le.AppendUint32(b, base)
	b = le.AppendUint32(b, base)
	b = le.AppendUint32(b, size)
	b = le.AppendUint32(b, size)
	b = le.AppendUint32(b, 5) // R+X
	b = le.AppendUint32(b, 0x1000)
	b = append(append(b, code...), path...)

	dir := t.TempDir()
	prog := filepath.Join(dir, "chmod32")
	require.NoError(t, os.WriteFile(prog, b, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "target32"), nil, 0o644))
	cmd := exec.Command(prog)
	cmd.Dir = dir
	if err := cmd.Run(); err != nil {
		t.Logf("this machine does not run i386 programs: %v", err)
		return nil
	}
	fi, err := os.Stat(filepath.Join(dir, "target32"))
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&fs.ModeSetuid, "the i386 program works unconfined")
	return b
}

// TestNoSetuidFiles makes setuid and setgid files in every way a command
// can: a confined one must leave none in the workspace or in its cache,
// where the agent's user (root, perhaps) would find them on the host.
func TestNoSetuidFiles(t *testing.T) {
	python := firstProgram("/usr/bin/python3", "/usr/local/bin/python3")
	perl := firstProgram("/usr/bin/perl")
	chmod32 := i386Chmod(t)
	for _, v := range allVariants {
		t.Run(v.name, func(t *testing.T) {
			f := newFixture(t, v, sandbox.Options{})
			// Setuid and setgid programs outside the workspace to copy, and
			// an archive holding some.
			suid, sgid := filepath.Join(f.outside, "suid-true"), filepath.Join(f.outside, "sgid-true")
			data, err := os.ReadFile("/bin/true")
			require.NoError(t, err)
			for p, mode := range map[string]fs.FileMode{suid: 0o755 | fs.ModeSetuid, sgid: 0o755 | fs.ModeSetgid} {
				require.NoError(t, os.WriteFile(p, data, 0o755))
				require.NoError(t, os.Chmod(p, mode))
			}
			archive := filepath.Join(f.outside, "setid.tar")
			writeTar(t, archive, map[string]int64{"tarred-suid": 0o4755, "tarred-sgid": 0o2755})
			if chmod32 != nil {
				require.NoError(t, os.WriteFile(filepath.Join(f.ws, "chmod32"), chmod32, 0o777))
				require.NoError(t, os.WriteFile(filepath.Join(f.ws, "target32"), nil, 0o666))
			}

			commands := []string{
				"cp /bin/bash rootsh && chmod 4755 rootsh", // the review's
				"cp /bin/true g && chmod g+s g",
				"chmod u+s here.txt",
				"install -m 4755 /bin/true installed",
				fmt.Sprintf("cp -p %s copied-suid; cp -p %s copied-sgid", suid, sgid),
				"tar -xpf " + archive,
			}
			if python != "" {
				commands = append(commands,
					python+` -c 'import os; open("py", "w").close(); os.chmod("py", 0o4755)'`,
					python+` -c 'import os; os.close(os.open("py-open", os.O_CREAT | os.O_WRONLY, 0o6755))'`,
					python+` -c 'import os, stat; os.mknod("py-mknod", stat.S_IFREG | 0o4755)'`,
					python+` -c 'import os; fd = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o4755); os.link(f"/proc/self/fd/{fd}", "py-tmpfile", dst_dir_fd=os.open(".", os.O_RDONLY))'`,
				)
			}
			if perl != "" {
				commands = append(commands, perl+` -e 'open(my $f, ">", "pl") or die; close $f; chmod(04755, "pl") or die "chmod: $!\n"'`)
			}
			if chmod32 != nil {
				commands = append(commands, "./chmod32")
			}
			if v.confined() { // unconfined, there is no cache of its own: leave the host's alone
				commands = append(commands, `cp /bin/true "$XDG_CACHE_HOME/planted" && chmod 4755 "$XDG_CACHE_HOME/planted"`)
			}
			outs := map[string]string{}
			for _, c := range commands {
				outs[c] = f.bash(t, c).Content
			}

			dirs := []string{f.ws}
			if v.confined() {
				dirs = append(dirs, f.wsCache)
			}
			found := setIDFiles(t, dirs...)
			if !v.confined() {
				assert.Contains(t, strings.Join(found, "\n"), "rootsh", "unconfined, setuid files can be made")
				return
			}
			assert.Empty(t, found, "setuid or setgid files were left behind")
			assert.Contains(t, outs[commands[0]], "chmod: changing permissions of 'rootsh': Operation not permitted")
			if chmod32 != nil {
				assert.Equal(t, "command exited with status 1", outs["./chmod32"], "EPERM")
			}
			out := f.bash(t, "chmod 755 rootsh && chmod g+w rootsh && install -m 640 /bin/true plain && echo ok")
			assert.Equal(t, "ok\n", out.Content, "other modes can still be set")
		})
	}
}

// writeTar writes a tar archive at path holding a small file of each
// name with its mode.
func writeTar(t *testing.T, path string, files map[string]int64) {
	t.Helper()
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	for name, mode := range files {
		require.NoError(t, w.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: 2, Typeflag: tar.TypeReg}))
		_, err := w.Write([]byte("x\n"))
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
}

// TestNoInheritedFiles gives the agent a descriptor of a directory
// outside the workspace without close-on-exec, as `exec 7</home/user` in
// the shell that starts it would: no command may reach it.
func TestNoInheritedFiles(t *testing.T) {
	for _, v := range allVariants {
		t.Run(v.name, func(t *testing.T) {
			f := newFixture(t, v, sandbox.Options{})
			fd, err := syscall.Open(f.outside, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
			require.NoError(t, err)
			t.Cleanup(func() { _ = syscall.Close(fd) })

			out := f.bash(t, fmt.Sprintf("ls /proc/self/fd; cat /proc/self/fd/%[1]d/a.txt; echo x > /proc/self/fd/%[1]d/new.txt", fd))
			assert.True(t, out.IsError, out.Content)
			assert.Regexp(t, `^command exited with status 1\n\n0\n1\n2\n3\ncat: `, out.Content, "only standard input, output and error (and ls's own listing)")
			assert.NotContains(t, out.Content, "outside\n")
			assert.NoFileExists(t, filepath.Join(f.outside, "new.txt"))
		})
	}
}

// ttyNr returns the controlling terminal (tty_nr) of process pid ("self"
// for this one) from /proc, 0 for none.
func ttyNr(pid string) (int, error) {
	data, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: count from after it.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%s/stat: unexpected %q", pid, data)
	}
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) < 5 {
		return 0, fmt.Errorf("/proc/%s/stat: unexpected %q", pid, data)
	}
	return strconv.Atoi(fields[4]) // state, ppid, pgrp, session, tty_nr
}

// openPty returns a new pseudo-terminal's master and slave.
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { _ = master.Close() })
	var unlock int32
	var n uint32
	for _, req := range []struct {
		op  uintptr
		arg unsafe.Pointer
	}{{syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)}, {syscall.TIOCGPTN, unsafe.Pointer(&n)}} {
		if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), req.op, uintptr(req.arg)); errno != 0 {
			t.Skipf("no pseudo-terminals here: %v", errno)
		}
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = slave.Close() })
	return master, slave
}

// TestNoControllingTerminal runs a helper agent on a terminal of its own
// (a pseudo-terminal the test holds): its commands must not have it, so
// they can neither write to it through /dev/tty nor read keystrokes.
func TestNoControllingTerminal(t *testing.T) {
	command := `echo "own-tty=$(cut -d' ' -f7 /proc/self/stat)"; tty; (echo TTY-WRITE-$((40+2)) > /dev/tty) 2>/dev/null && echo opened-tty; true`
	for _, v := range allVariants {
		t.Run(v.name, func(t *testing.T) {
			f := newFixture(t, v, sandbox.Options{})
			master, slave := openPty(t)
			var bwrapPath string
			if v.unprivileged {
				bwrapPath = filepath.Join(f.base, "bwrap-as-nobody")
			}
			spec, err := json.Marshal(helperSpec{Mode: v.mode, Bwrap: bwrapPath, Workspace: f.ws, Cache: f.cache, Command: command, PrintTTY: true})
			require.NoError(t, err)
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), helperEnv+"="+string(spec))
			cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
			require.NoError(t, cmd.Start())
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			read := make(chan string, 1)
			go func() { // ends with EIO once the helper and its children are gone
				var b strings.Builder
				_, _ = io.Copy(&b, master)
				read <- b.String()
			}()
			err = cmd.Wait()
			slave.Close()
			out := strings.ReplaceAll(<-read, "\r\n", "\n")
			require.NoError(t, err, out)

			agentTTY := regexpGroup(t, `agent-tty=(\d+)\n`, out)
			require.NotEqual(t, "0", agentTTY, "the helper agent has the terminal: %s", out)
			assert.Contains(t, out, "own-tty=0\n", "the command has no controlling terminal")
			assert.Contains(t, out, "not a tty\n")
			assert.NotContains(t, out, "TTY-WRITE-42")
			assert.NotContains(t, out, "opened-tty")
		})
	}
}

// regexpGroup returns the first group of pattern's first match in s.
func regexpGroup(t *testing.T, pattern, s string) string {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(s)
	require.Len(t, m, 2, "%q in %q", pattern, s)
	return m[1]
}

// TestCachePerWorkspace checks that each workspace has its own build
// cache, the same in every sandbox, that commands of one workspace cannot
// write to another's.
func TestCachePerWorkspace(t *testing.T) {
	// Outside /tmp, which confined commands see a private one of.
	dir := proctest.HostDir(t)
	base := filepath.Join(dir, "cache")
	sb1 := sandboxtest.New(t, sandbox.Options{CacheDir: base})
	sb2 := sandboxtest.New(t, sandbox.Options{CacheDir: base})
	realBase, err := filepath.EvalSymlinks(base)
	require.NoError(t, err)
	ws1, ws2 := filepath.Join(dir, "a", "proj ects"), filepath.Join(dir, "b", "projects")
	require.NoError(t, os.MkdirAll(ws1, 0o755))
	require.NoError(t, os.MkdirAll(ws2, 0o755))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(ws1, link))

	c1, c2 := sb1.CacheDir(ws1), sb1.CacheDir(ws2)
	assert.NotEqual(t, c1, c2, "two workspaces, two caches")
	assert.Equal(t, c1, sb2.CacheDir(ws1), "the same workspace, the same cache in another sandbox")
	assert.Equal(t, c1, sb1.CacheDir(link), "a link to the workspace is the workspace")
	assert.Equal(t, realBase, filepath.Dir(c1))
	assert.Regexp(t, `^proj_ects-[0-9a-f]{16}$`, filepath.Base(c1))
	assert.Regexp(t, `^projects-[0-9a-f]{16}$`, filepath.Base(c2))

	run := func(sb *sandbox.Sandbox, ws, command string) (string, error) {
		var out bytes.Buffer
		p, err := sb.Start(sandbox.Command{Workspace: ws, Args: []string{"bash", "-c", command}, Stdout: &out, Stderr: &out})
		require.NoError(t, err)
		err = p.Wait()
		return out.String(), err
	}
	for _, tt := range []struct {
		sb    *sandbox.Sandbox
		ws    string
		cache string
	}{{sb1, ws1, c1}, {sb1, ws2, c2}, {sb2, ws1, c1}} {
		out, err := run(tt.sb, tt.ws, `echo "$GOCACHE $XDG_CACHE_HOME" && echo built >> "$GOCACHE"-output`)
		require.NoError(t, err, out)
		assert.Equal(t, filepath.Join(tt.cache, "go-build")+" "+tt.cache+"\n", out)
	}
	data, err := os.ReadFile(filepath.Join(c1, "go-build-output"))
	require.NoError(t, err)
	assert.Equal(t, "built\nbuilt\n", string(data), "the cache persists from sandbox to sandbox")
	fi, err := os.Stat(c2)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o700), fi.Mode().Perm())

	out, err := run(sb1, ws1, fmt.Sprintf("echo poison > %s/go-build-output; echo x > %s/planted", c2, realBase))
	assert.Error(t, err)
	assert.Equal(t, 2, strings.Count(out, "Read-only file system"), out)
	data, err = os.ReadFile(filepath.Join(c2, "go-build-output"))
	require.NoError(t, err)
	assert.Equal(t, "built\n", string(data), "another workspace's cache is out of reach")
	assert.NoFileExists(t, filepath.Join(realBase, "planted"))

	off := sandboxtest.New(t, sandbox.Options{Mode: sandbox.Off, CacheDir: base})
	assert.Empty(t, off.CacheDir(ws1), "unconfined: no cache of its own")
	assert.Empty(t, sb1.CacheDir(""), "no workspace")
	// (sandboxtest gives every confined sandbox a cache directory.)
	bare, err := sandbox.New(t.Context(), sandbox.Options{Mode: sandbox.Bwrap})
	if err != nil {
		sandboxtest.Unavailable(t, err)
	}
	assert.Empty(t, bare.CacheDir(ws1), "without a cache directory")
	out, err = run(bare, ws1, `echo "$GOCACHE"`)
	require.NoError(t, err, out)
	assert.Equal(t, "/tmp/.cache/go-build\n", out, "in the command's private /tmp")
}
