package sandboxtest

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The kernel keyring is not namespaced: a command that can call keyctl
// reads the keys of the session it was started in. These helpers put a
// key in a fresh session keyring of a program a test starts, and give the
// test a command that prints the key if it can read it.
//
// Both work by running the test binary itself in a helper role: call
// [Main] first thing in the package's TestMain.

// Roles of the test binary: sessionKeyEnv ("DESCRIPTION=PAYLOAD") and
// execEnv make it add the key to a new session keyring and run the
// program execEnv names; readKeyArg as its first argument makes it print
// the key named by the second.
const (
	sessionKeyEnv = "FSMGEN_SANDBOXTEST_SESSION_KEY"
	execEnv       = "FSMGEN_SANDBOXTEST_EXEC"
	readKeyArg    = "fsmgen-sandboxtest-read-key"
)

// Main runs the test binary in the helper role it was started in, and
// returns when it was started as a test. Call it first in TestMain,
// before flag.Parse.
func Main() {
	if len(os.Args) == 3 && os.Args[1] == readKeyArg {
		os.Exit(readKey(os.Stdout, os.Args[2]))
	}
	if key, ok := os.LookupEnv(sessionKeyEnv); ok {
		desc, payload, _ := strings.Cut(key, "=")
		prog := os.Getenv(execEnv)
		env := make([]string, 0, len(os.Environ()))
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, sessionKeyEnv+"=") && !strings.HasPrefix(kv, execEnv+"=") {
				env = append(env, kv)
			}
		}
		err := execWithSessionKey(desc, payload, prog, append([]string{prog}, os.Args[1:]...), env)
		os.Stderr.WriteString("sandboxtest: run " + prog + " with a session key: " + err.Error() + "\n")
		os.Exit(2)
	}
}

// WithSessionKey makes cmd, not yet started, run with a session keyring
// of its own holding a key of type "user" named desc, with payload: the
// test binary starts first, makes the keyring and adds the key, then
// runs cmd's program in its place (it needs [Main]). cmd must not be
// started through a shell: the keyring goes to the program cmd names.
func WithSessionKey(t testing.TB, cmd *exec.Cmd, desc, payload string) {
	t.Helper()
	if strings.Contains(desc, "=") {
		t.Fatalf("sandboxtest: a key description without '=', please: %q", desc)
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(env, sessionKeyEnv+"="+desc+"="+payload, execEnv+"="+cmd.Path)
	cmd.Path = os.Args[0]
}

// KeyReader copies the test binary into dir (which a confined command can
// read: not under /tmp, nor the home directory) and returns a shell
// command that prints the payload of the key named desc in its session
// keyring (searched with keyctl), or "keyring: " and why it cannot.
func KeyReader(t testing.TB, dir, desc string) string {
	t.Helper()
	src, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatalf("sandboxtest: %v", err)
	}
	defer src.Close()
	p := filepath.Join(dir, "key-reader")
	dst, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatalf("sandboxtest: %v", err)
	}
	_, err = io.Copy(dst, src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatalf("sandboxtest: copy the test binary: %v", err)
	}
	return "'" + p + "' " + readKeyArg + " '" + desc + "'"
}
