package app

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/fsmgen/fsmgen/agent/internal/llm"
	"github.com/fsmgen/fsmgen/agent/internal/threadsync"
)

// keyVars are the environment variables that hold the API keys, and the
// token of the server threads sync to (-sync), hidden as they are.
var keyVars = []string{llm.KeyVar(llm.NameAnthropic), llm.KeyVar(llm.NameOpenAI), threadsync.TokenVar}

// keysFDVar names the descriptor the agent hands its API keys on to
// itself through (see hideKeys).
const keysFDVar = "FSMGEN_AGENT_KEYS_FD"

// maxKeysBytes bounds the keys handed on: they must fit in a pipe's
// buffer, which the agent fills before it reads it.
const maxKeysBytes = 16 << 10

// hideKeys takes the API keys out of the process's environment for good.
//
// Unsetting a variable changes only Go's copy of the environment: the one
// the process started with stays readable in /proc/PID/environ by any
// process of the same user, a command the agent runs included. So when a
// key variable is set, hideKeys starts the agent again in the same process
// (execve) with an environment without the keys, handing them on through
// a pipe; in the new image it reads them back into Go's copy of the
// environment only, where the LLM configuration finds them and from which
// the first session removes them once read (takeKeys). It also marks the
// process as not dumpable, so that processes of the same user cannot read
// its memory through /proc or ptrace it (root still can).
//
// It returns nil in the new image, or when there was no key to hide.
func hideKeys() error {
	// PR_SET_DUMPABLE (4) to 0; see prctl(2).
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, 4, 0, 0); errno != 0 {
		return fmt.Errorf("mark the process not dumpable: %w", errno)
	}
	if fd, ok := os.LookupEnv(keysFDVar); ok {
		return readKeys(fd)
	}
	var keys []string
	for _, name := range keyVars {
		if v := os.Getenv(name); v != "" {
			keys = append(keys, name+"="+v)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	data := strings.Join(keys, "\x00")
	if len(data) > maxKeysBytes {
		return fmt.Errorf("the API key variables hold %d bytes, more than the %d an API key can take; check %s", len(data), maxKeysBytes, strings.Join(keyVars, " and "))
	}
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("hand the API keys on: %w", err)
	}
	defer r.Close()
	if _, err := io.WriteString(w, data); err != nil {
		_ = w.Close()
		return fmt.Errorf("hand the API keys on: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("hand the API keys on: %w", err)
	}
	// The read end must survive execve: clear its close-on-exec flag.
	if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, r.Fd(), syscall.F_SETFD, 0); errno != 0 {
		return fmt.Errorf("hand the API keys on: %w", errno)
	}
	env := make([]string, 0, len(os.Environ())+1)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !isKeyVar(name) {
			env = append(env, kv)
		}
	}
	env = append(env, keysFDVar+"="+strconv.Itoa(int(r.Fd())))
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("restart without the API keys in the environment: find the agent's executable: %w", err)
	}
	err = syscall.Exec(exe, os.Args, env)
	return fmt.Errorf("restart without the API keys in the environment: %w", err)
}

// readKeys reads the keys hideKeys handed on through descriptor fd into
// Go's copy of the environment.
func readKeys(fd string) error {
	_ = os.Unsetenv(keysFDVar)
	n, err := strconv.Atoi(fd)
	if err != nil || n < 3 {
		return fmt.Errorf("%s=%q is not a descriptor the agent opened; unset it", keysFDVar, fd)
	}
	f := os.NewFile(uintptr(n), "api-keys")
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxKeysBytes+1))
	if err != nil {
		return fmt.Errorf("read the API keys handed on through %s: %w; unset it", keysFDVar, err)
	}
	if len(data) > maxKeysBytes {
		return errors.New("the API keys handed on are too long")
	}
	for kv := range strings.SplitSeq(string(data), "\x00") {
		name, v, ok := strings.Cut(kv, "=")
		if !ok || !isKeyVar(name) {
			return fmt.Errorf("descriptor %d of %s does not hold API keys; unset it", n, keysFDVar)
		}
		if err := os.Setenv(name, v); err != nil {
			return fmt.Errorf("set %s: %w", name, err)
		}
	}
	return nil
}

// isKeyVar reports whether name is one of keyVars.
func isKeyVar(name string) bool { return slices.Contains(keyVars, name) }
