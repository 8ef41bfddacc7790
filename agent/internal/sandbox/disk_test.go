package sandbox

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDiskWatchWritten checks the count that confirms a command wrote
// what the disk's growth says: the space of the files changed since it
// started, each file once, and none of those it did not touch.
func TestDiskWatchWritten(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	old := filepath.Join(dir, "old")
	require.NoError(t, os.WriteFile(old, make([]byte, 1<<20), 0o644))
	w := newDiskWatch(1, []string{dir})
	require.NotNil(t, w)
	w.start = w.start.Add(2e9) // the files above are from before the command
	n, whole := w.written(nil)
	assert.Zero(t, n)
	assert.True(t, whole)

	w = newDiskWatch(1, []string{dir})
	require.NoError(t, os.WriteFile(filepath.Join(dir, "new"), make([]byte, 3<<20), 0o644))
	require.NoError(t, os.Link(filepath.Join(dir, "new"), filepath.Join(dir, "again")))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub", ".git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", ".git", "big"), make([]byte, 2<<20), 0o644))
	got, _ := w.written(nil)
	assert.GreaterOrEqual(t, got, int64(4<<20), "new, and old (changed within the margin), once each")
	assert.Less(t, got, int64(6<<20), "a hard link counted once, .git below a directory skipped")
	assert.Nil(t, newDiskWatch(0, []string{dir}), "no limit, no watcher")
}

// TestDiskWatchLastLook: a command that writes past its limit and ends
// between two looks of the watcher is found by the last look, when it
// ends: not stopped, but said (ended). The disk's growth is taken as
// past the limit (its last look zeroed), since other tests write and remove
// files on the same disk meanwhile.
func TestDiskWatchLastLook(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := newDiskWatch(1<<20, []string{dir})
	require.NotNil(t, w)
	w.every = time.Hour // no look while it runs
	for id := range w.last {
		w.last[id] = 0
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		w.run(stop, func() { t.Error("a command that has ended is not killed") })
	}()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "fast"), make([]byte, 4<<20), 0o644))
	close(stop)
	<-done
	assert.True(t, w.ended)
	assert.GreaterOrEqual(t, w.wrote, int64(4<<20))
}

// TestDiskWatchCutShort: a look whose count of the command's files is cut
// short by the command's end (a watcher starved of the CPU looked late)
// keeps the disk's growth, so that the last look still finds what the
// command wrote; a whole count that does not account for the growth
// (others wrote it) counts again from there.
func TestDiskWatchCutShort(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := newDiskWatch(1<<20, []string{dir})
	require.NotNil(t, w)
	for id := range w.last {
		w.last[id] = 0 // the disk grew past the limit
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big"), make([]byte, 4<<20), 0o644))
	ended := make(chan struct{})
	close(ended)
	assert.Zero(t, w.over(ended), "cut short, the count has nothing yet")
	assert.Greater(t, w.grown, int64(1<<20), "and the growth is kept")
	assert.GreaterOrEqual(t, w.over(nil), int64(4<<20), "the last look finds the file")

	require.NoError(t, os.Remove(filepath.Join(dir, "big")))
	assert.Zero(t, w.over(nil), "growth the command's files do not account for")
	assert.Zero(t, w.grown, "counts again from the disk's use now")
}

// TestDiskWatchShrink: a file system that shrank since the last look
// (another process removed files) takes nothing from the growth the
// watcher has added up, which a command's writes between the same looks
// would otherwise hide; one that grew adds to it, and a file system the
// command may not write is not counted.
func TestDiskWatchShrink(t *testing.T) {
	t.Parallel()
	disk, other := [2]int32{1, 2}, [2]int32{3, 4}
	w := &diskWatch{limit: 1 << 30, last: map[[2]int32]int64{disk: 100 << 20}}
	for _, tt := range []struct {
		name  string
		used  int64 // the disk's used bytes at the look
		grown int64
	}{
		{name: "grew", used: 110 << 20, grown: 10 << 20},
		{name: "others removed files", used: 80 << 20, grown: 10 << 20},
		{name: "grew again", used: 100 << 20, grown: 30 << 20},
		{name: "unchanged", used: 100 << 20, grown: 30 << 20},
	} {
		assert.Equal(t, tt.grown, w.add(map[[2]int32]int64{disk: tt.used, other: 1 << 40}), tt.name)
	}
}

// BenchmarkDiskUsed measures one look of the watcher at the disks a
// command may write (the workspace and its cache: two statfs calls), made
// every 50 ms while a command runs.
func BenchmarkDiskUsed(b *testing.B) {
	w := newDiskWatch(1<<30, []string{b.TempDir(), b.TempDir()})
	b.ReportAllocs()
	for b.Loop() {
		_ = w.growth()
	}
}
