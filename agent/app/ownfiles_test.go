package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRecordOwnFiles checks the list of the sessions' own files: each
// path once, what no longer exists left out of what is hidden, the
// latest kept when it grows past its bound, and a session's paths hidden
// even when the list cannot be written.
func TestRecordOwnFiles(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	state := filepath.Join(base, "state")
	logA, logB, threads := filepath.Join(base, "a.events.jsonl"), filepath.Join(base, "b.events.jsonl"), filepath.Join(base, "threads")
	require.NoError(t, os.WriteFile(logA, []byte("x"), 0o600))
	require.NoError(t, os.Mkdir(threads, 0o700))

	got, err := recordOwnFiles(state, logA, threads)
	require.NoError(t, err)
	assert.Equal(t, []string{logA, threads}, got)
	got, err = recordOwnFiles(state, logB, threads) // b does not exist (yet)
	require.NoError(t, err)
	assert.Equal(t, []string{logA, threads}, got)
	data, err := os.ReadFile(filepath.Join(state, ownFilesName))
	require.NoError(t, err)
	assert.Equal(t, logA+"\n"+threads+"\n"+logB+"\n", string(data), "each path once, in the order met")

	var many []string
	for i := range maxOwnFiles + 5 {
		many = append(many, filepath.Join(base, "log", strings.Repeat("x", i%7)+string(rune('a'+i%26)), "l"+string(rune('a'+i/26))))
	}
	_, err = recordOwnFiles(state, many...)
	require.NoError(t, err)
	list, err := readOwnFiles(filepath.Join(state, ownFilesName))
	require.NoError(t, err)
	assert.Len(t, list, maxOwnFiles)
	assert.Equal(t, many[len(many)-1], list[len(list)-1], "the latest are kept")

	blocked := filepath.Join(base, "blocked")
	require.NoError(t, os.WriteFile(blocked, nil, 0o600)) // a file where the directory should be
	got, err = recordOwnFiles(filepath.Join(blocked, "state"), logA)
	assert.Error(t, err)
	assert.Equal(t, []string{logA}, got, "this session's paths all the same")
}
