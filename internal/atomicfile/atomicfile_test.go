package atomicfile_test

import (
	"os"
	"path/filepath"
	"strings"
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

// TestTempPattern checks that the temporary files Write creates match
// TempPattern and IsTemp, and that a user's files named like generic
// temporary files do not.
func TestTempPattern(t *testing.T) {
	assert.Equal(t, ".t1.json.fsmgen-tmp-*", atomicfile.TempPattern("t1.json"))

	// A real temporary file: what os.CreateTemp makes of the pattern.
	dir := t.TempDir()
	f, err := os.CreateTemp(dir, atomicfile.TempPattern("t1.json"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	real := filepath.Base(f.Name())
	matched, err := filepath.Match(atomicfile.TempPattern("t1.json"), real)
	require.NoError(t, err)
	assert.True(t, matched, real)
	assert.True(t, strings.HasPrefix(real, ".t1.json"+atomicfile.TempMark), real)

	tests := []struct {
		name string
		want bool
	}{
		{real, true},
		{".main.go.fsmgen-tmp-123", true},
		{".a.fsmgen-tmp-", true}, // the pattern's * may be empty
		{".a.tmp-1", false},      // a user's file, named like a generic temporary file
		{".t1.json.tmp-123", false},
		{"a.fsmgen-tmp-1", false}, // no leading dot
		{"sub/.a.fsmgen-tmp-1", false},
		{".fsmgen-edit-1.tmp", false},
		{"", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, atomicfile.IsTemp(tt.name), "IsTemp(%q)", tt.name)
	}
}
