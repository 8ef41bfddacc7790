package sandbox

import (
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

func TestSeccompNativeNumbers(t *testing.T) {
	checkNativeRules(t, "arm64", map[string]uintptr{
		"fchmod": syscall.SYS_FCHMOD, "openat": syscall.SYS_OPENAT,
		"mknodat": syscall.SYS_MKNODAT, "fchmodat": syscall.SYS_FCHMODAT,
		"add_key": unix.SYS_ADD_KEY, "request_key": unix.SYS_REQUEST_KEY, "keyctl": unix.SYS_KEYCTL,
	})
}
