package sandbox

import (
	"syscall"
	"testing"
)

func TestSeccompNativeNumbers(t *testing.T) {
	checkNativeRules(t, "amd64", map[string]uintptr{
		"open": syscall.SYS_OPEN, "creat": syscall.SYS_CREAT, "chmod": syscall.SYS_CHMOD,
		"fchmod": syscall.SYS_FCHMOD, "mknod": syscall.SYS_MKNOD, "openat": syscall.SYS_OPENAT,
		"mknodat": syscall.SYS_MKNODAT, "fchmodat": syscall.SYS_FCHMODAT,
	})
}
