package sandboxtest

import (
	"fmt"
	"io"
	"runtime"

	"golang.org/x/sys/unix"
)

// execWithSessionKey joins a new session keyring, adds the key to it and
// runs prog in place of this process; it returns only on failure.
func execWithSessionKey(desc, payload, prog string, argv, env []string) error {
	// Keyrings belong to a thread's credentials: join, add and exec on one
	// thread, whose credentials the program then starts with.
	runtime.LockOSThread()
	if _, err := unix.KeyctlJoinSessionKeyring("fsmgen-sandboxtest"); err != nil {
		return fmt.Errorf("join a new session keyring: %w", err)
	}
	if _, err := unix.AddKey("user", desc, []byte(payload), unix.KEY_SPEC_SESSION_KEYRING); err != nil {
		return fmt.Errorf("add the key: %w", err)
	}
	return unix.Exec(prog, argv, env)
}

// readKey prints the payload of the key named desc in the session
// keyring, or why it cannot, as `keyctl search` and `keyctl read` would
// find it.
func readKey(w io.Writer, desc string) int {
	id, err := unix.KeyctlSearch(unix.KEY_SPEC_SESSION_KEYRING, "user", desc, 0)
	if err != nil {
		fmt.Fprintf(w, "keyring: search: %v\n", err)
		return 0
	}
	buf := make([]byte, 4096)
	n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, id, buf, 0)
	if err != nil {
		fmt.Fprintf(w, "keyring: read: %v\n", err)
		return 0
	}
	fmt.Fprintf(w, "%s\n", buf[:min(n, len(buf))])
	return 0
}
