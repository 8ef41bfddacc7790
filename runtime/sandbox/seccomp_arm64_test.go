package sandbox

import (
	"syscall"
	"testing"
)

func TestSeccompNativeNumbers(t *testing.T) {
	checkNativeRules(t, "arm64", map[string]uintptr{
		"fchmod": syscall.SYS_FCHMOD, "openat": syscall.SYS_OPENAT,
		"mknodat": syscall.SYS_MKNODAT, "fchmodat": syscall.SYS_FCHMODAT,
	})
}
