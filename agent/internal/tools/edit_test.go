package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
)

func TestScan(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, content, old string
	}{
		{"none", "abcdef", "x"},
		{"one", "ab\ncd\nef", "cd"},
		{"at the start", "needle\nhay\n", "needle"},
		{"at the end", "hay\nhay\nneedle", "needle"},
		{"two", "x\nab\nab\n", "ab"},
		{"overlapping counted as strings.Count does", "aaaa", "aa"},
		{"overlapping, odd", "aaaaa", "aa"},
		{"longer than the content", "ab", "abc"},
		{"the whole content", "abc\n", "abc\n"},
		{"newlines in old", "1\n2\n3\n4\n", "\n3\n"},
		{"periodic", strings.Repeat("abab\n", 50) + "abac", "abac"},
		{"long old", strings.Repeat("0123456789", 30) + "X" + strings.Repeat("0123456789", 30), "789" + strings.Repeat("0123456789", 5) + "X"},
	}
	for _, tt := range tests {
		for _, chunk := range []int{1, 2, 3, 5, 8, 64, editChunk} {
			t.Run(fmt.Sprintf("%s/chunk %d", tt.name, chunk), func(t *testing.T) {
				t.Parallel()
				m, err := scan(context.Background(), strings.NewReader(tt.content), []byte(tt.old), chunk)
				require.NoError(t, err)
				assert.Equal(t, strings.Count(tt.content, tt.old), m.count)
				i := strings.Index(tt.content, tt.old)
				assert.Equal(t, int64(i), m.first)
				if i >= 0 {
					assert.Equal(t, strings.Count(tt.content[:i], "\n")+1, m.line)
				}
			})
		}
	}
	t.Run("cancelled", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := scan(ctx, strings.NewReader("abc"), []byte("b"), 1)
		assert.ErrorIs(t, err, context.Canceled)
	})
}

// writeLarge writes a file of size bytes at p, sparse but for line at
// offset at, and returns it.
func writeLarge(t testing.TB, p string, size, at int64, line string) {
	t.Helper()
	f, err := os.Create(p)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(size))
	_, err = f.WriteAt([]byte(line), at)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func TestEditFileLargeFileInBoundedMemory(t *testing.T) {
	const (
		size = 200 << 20
		at   = 150 << 20
	)
	root := t.TempDir()
	p := filepath.Join(root, "big.bin")
	writeLarge(t, p, size, at, "\nNEEDLE\n")
	require.NoError(t, os.Chmod(p, 0o640))
	ws, err := NewWorkspace(root)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ws.Close() })
	s := Default(ws, Options{MaxEditBytes: 1 << 30})

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out := call(t, s, "edit_file", obj{"path": "big.bin", "old_str": "\nNEEDLE\n", "new_str": "\nTHREAD!!\n"})
	runtime.ReadMemStats(&after)
	require.False(t, out.IsError, out.Content)
	assert.Equal(t, "edited big.bin: replaced 1 occurrence at line 1 (2 lines removed, 2 lines added)", out.Content)
	// Reading the file whole would allocate 200 MB; the edit allocates its
	// chunk and the call's bookkeeping.
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4<<20), "edit_file allocated in proportion to the file")

	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, int64(size+2), fi.Size())
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	got := make([]byte, 16)
	_, err = f.ReadAt(got, at-3)
	require.NoError(t, err)
	assert.Equal(t, "\x00\x00\x00\nTHREAD!!\n\x00\x00\x00", string(got))
	leftovers, err := filepath.Glob(filepath.Join(root, EditTempPattern))
	require.NoError(t, err)
	assert.Empty(t, leftovers)
}

// BenchmarkEditFile edits a 64 MiB file; -benchmem shows that the bytes
// allocated per edit do not grow with the file.
func BenchmarkEditFile(b *testing.B) {
	root := b.TempDir()
	writeLarge(b, filepath.Join(root, "big.bin"), 64<<20, 32<<20, "A")
	ws, err := NewWorkspace(root)
	require.NoError(b, err)
	defer ws.Close()
	s := Default(ws, Options{MaxEditBytes: 1 << 30})
	args := [2]json.RawMessage{
		json.RawMessage(`{"path": "big.bin", "old_str": "A", "new_str": "B"}`),
		json.RawMessage(`{"path": "big.bin", "old_str": "B", "new_str": "A"}`),
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		out := s.Run(context.Background(), chat.ToolCall{Name: "edit_file", Arguments: args[i%2]}, nil)
		if out.IsError {
			b.Fatal(out.Content)
		}
	}
}

func TestEditFileSizeLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		size    int64
		limit   int64 // Options.MaxEditBytes
		wantErr []string
	}{
		{name: "at the limit", size: 4096, limit: 4096},
		{name: "over the limit", size: 4097, limit: 4096, wantErr: []string{
			`"f.txt" is 4 KiB (4097 bytes), over edit_file's limit of 4 KiB (4096 bytes), so it was not changed`, "sed -i"}},
		{name: "over the default limit", size: DefaultMaxEditBytes + 1, wantErr: []string{
			"16 MiB (16777217 bytes), over edit_file's limit of 16 MiB (16777216 bytes)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			p := filepath.Join(root, "f.txt")
			writeLarge(t, p, tt.size, 0, "X")
			ws, err := NewWorkspace(root)
			require.NoError(t, err)
			t.Cleanup(func() { _ = ws.Close() })
			out := call(t, Default(ws, Options{MaxEditBytes: tt.limit}), "edit_file", obj{"path": "f.txt", "old_str": "X", "new_str": "Y"})
			f, err := os.Open(p)
			require.NoError(t, err)
			defer f.Close()
			first := make([]byte, 1)
			_, err = f.Read(first)
			require.NoError(t, err)
			if tt.wantErr == nil {
				assert.False(t, out.IsError, out.Content)
				assert.Equal(t, "Y", string(first))
				return
			}
			assert.True(t, out.IsError, out.Content)
			for _, w := range tt.wantErr {
				assert.Contains(t, out.Content, w)
			}
			assert.Equal(t, "X", string(first), "the file was changed")
		})
	}
	t.Run("the limit is in the tool's description", func(t *testing.T) {
		t.Parallel()
		spec := EditFile(newWorkspace(t), EditOptions{MaxBytes: 2 << 20}).Spec()
		assert.Contains(t, spec.Description, "Files over 2 MiB (2097152 bytes) are refused")
	})
}

func TestCleanTemp(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	files := map[string]bool{ // path → removed
		".fsmgen-edit-123.tmp":          true,
		"sub/deep/.fsmgen-edit-9.tmp":   true,
		"main.go":                       false,
		".fsmgen-edit-.tmp":             false, // no random part: not edit_file's
		"fsmgen-edit-1.tmp":             false,
		".git/.fsmgen-edit-5.tmp":       false, // git's business
		"sub/.f.txt.fsmgen-tmp-123":     false, // another writer's (the thread store's)
		"sub/.f.txt.tmp-123":            false, // a user's
		"sub/.fsmgen-edit-7.tmp/inside": false, // a directory of that name is not a file
	}
	for name := range files {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
	}
	require.NoError(t, os.Symlink(filepath.Join(root, "main.go"), filepath.Join(root, ".fsmgen-edit-8.tmp")))
	ws, err := NewWorkspace(root)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ws.Close() })

	removed, err := CleanTemp(context.Background(), ws)
	require.NoError(t, err)
	assert.Equal(t, []string{".fsmgen-edit-123.tmp", "sub/deep/.fsmgen-edit-9.tmp"}, removed)
	for name, gone := range files {
		if gone {
			assert.NoFileExists(t, filepath.Join(root, name))
		} else {
			assert.FileExists(t, filepath.Join(root, name))
		}
	}
	_, err = os.Lstat(filepath.Join(root, ".fsmgen-edit-8.tmp"))
	assert.NoError(t, err, "a symbolic link of that name was removed")

	again, err := CleanTemp(context.Background(), ws)
	require.NoError(t, err)
	assert.Empty(t, again)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = CleanTemp(ctx, ws)
	assert.ErrorIs(t, err, context.Canceled)
}

// recordingTool is a tool that records whether it ran.
type recordingTool struct{ ran *bool }

func (recordingTool) Spec() chat.ToolSpec { return chat.ToolSpec{Name: "rec"} }

func (r recordingTool) Run(context.Context, json.RawMessage, func(chat.ToolProgress)) (string, error) {
	*r.ran = true
	return "ran", nil
}

func TestSetRunArgumentLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		limit   int // Options.MaxArgBytes
		size    int // of the arguments
		wantErr string
	}{
		{name: "at the limit", limit: 100, size: 100},
		{name: "over the limit", limit: 100, size: 101, wantErr: "the arguments of this rec call are 101 bytes, over the limit of 100 bytes, so the call was not run"},
		{name: "at the default limit", size: DefaultMaxArgBytes},
		{name: "over the default limit", size: DefaultMaxArgBytes + 1, wantErr: "are 1 MiB (1048577 bytes), over the limit of 1 MiB (1048576 bytes)"},
		{name: "invalid JSON over the limit is not decoded", limit: 10, size: 11, wantErr: "over the limit of 10 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ran := false
			s, err := NewSet(Options{MaxArgBytes: tt.limit}, recordingTool{ran: &ran})
			require.NoError(t, err)
			args := `{"x":"` + strings.Repeat("a", tt.size-8) + `"}`
			if strings.HasPrefix(tt.name, "invalid") {
				args = strings.Repeat("{", tt.size)
			}
			require.Len(t, args, tt.size)
			out := s.Run(context.Background(), chat.ToolCall{Name: "rec", Arguments: json.RawMessage(args)}, nil)
			if tt.wantErr == "" {
				assert.False(t, out.IsError, out.Content)
				assert.True(t, ran)
				return
			}
			assert.True(t, out.IsError)
			assert.Contains(t, out.Content, tt.wantErr)
			assert.False(t, ran, "the tool ran")
		})
	}
}

// TestEditFileDropsSetuid checks that an edited file keeps its
// permissions but never its setuid and setgid bits (issue 20 item 5): the
// agent rewrites it, as root when it runs as root, with content the model
// chose.
func TestEditFileDropsSetuid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode os.FileMode
		want os.FileMode
		note string
	}{
		{0o755 | os.ModeSetuid, 0o755, "; its setuid bit was removed"},
		{0o750 | os.ModeSetgid, 0o750, "; its setgid bit was removed"},
		{0o755 | os.ModeSetuid | os.ModeSetgid, 0o755, "; its setuid and setgid bits were removed"},
		{0o755 | os.ModeSticky, 0o755 | os.ModeSticky, ""},
		{0o640, 0o640, ""},
	}
	for _, tt := range tests {
		t.Run(tt.mode.String(), func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			p := filepath.Join(root, "tool.sh")
			require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\necho old\n"), 0o600))
			require.NoError(t, os.Chmod(p, tt.mode))
			fi, err := os.Stat(p)
			require.NoError(t, err)
			require.Equal(t, tt.mode, fi.Mode(), "the file system keeps the bits")
			ws, err := NewWorkspace(root)
			require.NoError(t, err)
			t.Cleanup(func() { _ = ws.Close() })

			out := call(t, Default(ws, Options{}), "edit_file", obj{"path": "tool.sh", "old_str": "old", "new_str": "new"})
			require.False(t, out.IsError, out.Content)
			want := "edited tool.sh: replaced 1 occurrence at line 2 (1 line removed, 1 line added)"
			if tt.note != "" {
				want += tt.note + ": edit_file never leaves a file that runs as its owner or group"
			}
			assert.Equal(t, want, out.Content)
			fi, err = os.Stat(p)
			require.NoError(t, err)
			assert.Equal(t, tt.want, fi.Mode())
		})
	}
}

// TestEditFileKeepsOwner edits, as root (the agent runs as root on this
// machine), files owned by other users and groups: each keeps its owner,
// group and permissions (issue 29 item 4), never a setuid bit.
func TestEditFileKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a file away needs root")
	}
	t.Parallel()
	tests := []struct {
		uid, gid int
		mode     os.FileMode
		want     os.FileMode
	}{
		{12345, 23456, 0o640, 0o640},
		{12345, 0, 0o755 | os.ModeSetuid, 0o755},
		{0, 23456, 0o2750, 0o750},
		{65534, 65534, 0o600 | os.ModeSticky, 0o600 | os.ModeSticky},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d:%d %s", tt.uid, tt.gid, tt.mode), func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			p := filepath.Join(root, "f.txt")
			require.NoError(t, os.WriteFile(p, []byte("old\n"), 0o600))
			require.NoError(t, os.Chown(p, tt.uid, tt.gid))
			require.NoError(t, os.Chmod(p, tt.mode))
			ws, err := NewWorkspace(root)
			require.NoError(t, err)
			t.Cleanup(func() { _ = ws.Close() })

			out := call(t, Default(ws, Options{}), "edit_file", obj{"path": "f.txt", "old_str": "old", "new_str": "new"})
			require.False(t, out.IsError, out.Content)
			assert.NotContains(t, out.Content, "could not be kept")
			fi, err := os.Stat(p)
			require.NoError(t, err)
			st := fi.Sys().(*syscall.Stat_t)
			assert.Equal(t, []int{tt.uid, tt.gid}, []int{int(st.Uid), int(st.Gid)}, "owner and group")
			assert.Equal(t, tt.want, fi.Mode())
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.Equal(t, "new\n", string(data))
		})
	}
}
