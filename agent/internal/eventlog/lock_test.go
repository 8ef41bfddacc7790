package eventlog

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLockLogChecksWhatWasOpened hands lockLog what a path may have become
// between Open's look at it and its open: a named pipe is refused, and not
// locked.
func TestLockLogChecksWhatWasOpened(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(p, 0o600))
	f, err := os.OpenFile(p, os.O_RDWR|syscall.O_NONBLOCK, 0)
	require.NoError(t, err)
	_, err = lockLog(f, p) // closes f
	require.ErrorIs(t, err, ErrNotRegular)
	assert.Contains(t, err.Error(), "is a named pipe")
}
