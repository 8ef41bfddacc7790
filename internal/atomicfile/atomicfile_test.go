package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/atomicfile"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	require.NoError(t, atomicfile.Write(p, []byte("one"), 0o600))
	require.NoError(t, atomicfile.Write(p, []byte("two"), 0o644))
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "two", string(got))
	info, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), info.Mode().Perm())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file left behind")
	assert.Error(t, atomicfile.Write(filepath.Join(dir, "no", "such", "f"), []byte("x"), 0o600))
}
