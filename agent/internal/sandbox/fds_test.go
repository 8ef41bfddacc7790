package sandbox

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCloseInheritedFDs(t *testing.T) {
	ways := []struct {
		name string
		mark func() error
	}{
		{"close_range", CloseInheritedFDs},
		{"one by one", closeListedFDs},
	}
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			// As a descriptor inherited without close-on-exec would be.
			fd, err := syscall.Open(t.TempDir(), syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
			require.NoError(t, err)
			t.Cleanup(func() { _ = syscall.Close(fd) })
			require.Zero(t, fdFlags(t, fd)&syscall.FD_CLOEXEC, "opened without close-on-exec")

			require.NoError(t, w.mark())
			assert.Equal(t, syscall.FD_CLOEXEC, fdFlags(t, fd)&syscall.FD_CLOEXEC)
			for std := range 3 {
				assert.Zero(t, fdFlags(t, std)&syscall.FD_CLOEXEC, "standard descriptor %d is left alone", std)
			}
		})
	}
}

// fdFlags returns fd's descriptor flags (F_GETFD).
func fdFlags(t *testing.T, fd int) int {
	t.Helper()
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
	require.Zero(t, errno)
	return int(flags)
}
