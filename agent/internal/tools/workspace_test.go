package tools

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fixture is a workspace next to a directory outside it, with symbolic
// links of every kind between them.
type fixture struct {
	ws      *Workspace
	root    string // the workspace root
	outside string // a directory outside the workspace
	secret  string // outside/secret.txt
}

// secretContent is the content of the file outside the workspace.
const secretContent = "SECRET\n"

// newFixture builds:
//
//	outside/secret.txt
//	ws/a.txt                 "hello\n"
//	ws/sub/b.txt             "b\n"
//	ws/linkfile   -> outside/secret.txt (absolute)
//	ws/linkdir    -> outside            (absolute)
//	ws/rellink    -> ../outside/secret.txt
//	ws/dangling   -> outside/missing.txt
//	ws/inlink     -> a.txt              (stays inside)
//	ws/subinlink  -> sub                (stays inside)
//	ws/loop       -> loop
func newFixture(t *testing.T) fixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	root := filepath.Join(base, "ws")
	outside := filepath.Join(base, "outside")
	secret := filepath.Join(outside, "secret.txt")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sub"), 0o755))
	require.NoError(t, os.MkdirAll(outside, 0o755))
	require.NoError(t, os.WriteFile(secret, []byte(secretContent), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "sub", "b.txt"), []byte("b\n"), 0o644))
	links := map[string]string{
		"linkfile":  secret,
		"linkdir":   outside,
		"rellink":   filepath.Join("..", "outside", "secret.txt"),
		"dangling":  filepath.Join(outside, "missing.txt"),
		"inlink":    "a.txt",
		"subinlink": "sub",
		"loop":      "loop",
	}
	for name, target := range links {
		require.NoError(t, os.Symlink(target, filepath.Join(root, name)))
	}
	ws, err := NewWorkspace(root)
	require.NoError(t, err)
	return fixture{ws: ws, root: root, outside: outside, secret: secret}
}

// assertOutsideUntouched checks that nothing outside the workspace changed.
func (f fixture) assertOutsideUntouched(t *testing.T) {
	t.Helper()
	data, err := os.ReadFile(f.secret)
	require.NoError(t, err)
	assert.Equal(t, secretContent, string(data), "the file outside the workspace was changed")
	entries, err := os.ReadDir(f.outside)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "a file was created outside the workspace")
}

func TestNewWorkspace(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	file := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(dir, link))

	ws, err := NewWorkspace(link)
	require.NoError(t, err)
	assert.Equal(t, dir, ws.Root(), "the root has its symbolic links resolved")

	_, err = NewWorkspace(file)
	assert.ErrorContains(t, err, "not a directory")
	_, err = NewWorkspace(filepath.Join(dir, "missing"))
	assert.ErrorContains(t, err, "give an existing directory")
}

func TestResolve(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tests := []struct {
		name    string
		path    string
		want    string // relative to the root; "" when an error is expected
		wantErr string
	}{
		{name: "file", path: "a.txt", want: "a.txt"},
		{name: "root", path: ".", want: "."},
		{name: "nested", path: "sub/b.txt", want: "sub/b.txt"},
		{name: "dot-dot inside", path: "sub/../a.txt", want: "a.txt"},
		{name: "new file", path: "new/dir/x.go", want: "new/dir/x.go"},
		{name: "link inside", path: "inlink", want: "a.txt"},
		{name: "linked dir inside, new file", path: "subinlink/new.txt", want: "sub/new.txt"},
		{name: "empty", path: "", wantErr: "empty path"},
		{name: "absolute", path: "/etc/passwd", wantErr: "is absolute"},
		{name: "absolute inside", path: filepath.Join(f.root, "a.txt"), wantErr: "is absolute"},
		{name: "parent", path: "../x", wantErr: "outside the workspace"},
		{name: "parent only", path: "..", wantErr: "outside the workspace"},
		{name: "climbing", path: "a/../../x", wantErr: "outside the workspace"},
		{name: "link to outside file", path: "linkfile", wantErr: "outside the workspace"},
		{name: "relative link to outside", path: "rellink", wantErr: "outside the workspace"},
		{name: "link to outside dir", path: "linkdir", wantErr: "outside the workspace"},
		{name: "linked parent, existing file", path: "linkdir/secret.txt", wantErr: "outside the workspace"},
		{name: "linked parent, new file", path: "linkdir/new.txt", wantErr: "outside the workspace"},
		{name: "linked parent, new dirs", path: "linkdir/x/y/new.txt", wantErr: "outside the workspace"},
		{name: "dangling link to outside", path: "dangling", wantErr: "outside the workspace"},
		{name: "link loop", path: "loop", wantErr: "link loop"},
		{name: "nul byte", path: "a\x00b", wantErr: "NUL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.ws.resolve(t.Context(), tt.path)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				assert.Empty(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestOpenDir checks that the directories edit_file writes in are reached
// without following any symbolic link, even one that stays inside (resolve
// follows those first), and that missing ones are created.
func TestOpenDir(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tests := []struct {
		name    string
		rel     string
		create  bool
		wantErr error // nil: opens
		wantDir string
	}{
		{name: "the root", rel: ".", wantDir: "."},
		{name: "a directory", rel: "sub", wantDir: "sub"},
		{name: "a link to a directory inside", rel: "subinlink", wantErr: errLinkRace},
		{name: "a link to a directory outside", rel: "linkdir", wantErr: errLinkRace},
		{name: "a link below a directory", rel: "sub/../subinlink", wantErr: fs.ErrInvalid},
		{name: "a file", rel: "a.txt", wantErr: syscall.ENOTDIR},
		{name: "missing", rel: "new/deeper", wantErr: fs.ErrNotExist},
		{name: "missing, created", rel: "new/deeper", create: true, wantDir: "new/deeper"},
		{name: "created below a link", rel: "subinlink/x", create: true, wantErr: errLinkRace},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := f.ws.openDir(tt.rel, tt.create)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.NoDirExists(t, filepath.Join(f.root, "sub", "x"), "created through a link")
				return
			}
			require.NoError(t, err)
			defer d.Close()
			// A file made through d is in the directory at the path.
			w, err := d.OpenFile("made.txt", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			require.NoError(t, err)
			require.NoError(t, w.Close())
			assert.FileExists(t, filepath.Join(f.root, tt.wantDir, "made.txt"))
			require.NoError(t, d.Remove("made.txt"))
		})
	}
	t.Run("a final link is not followed", func(t *testing.T) {
		d, err := f.ws.openDir(".", false)
		require.NoError(t, err)
		defer d.Close()
		_, err = d.OpenFile("inlink", os.O_RDONLY, 0)
		assert.ErrorIs(t, err, errLinkRace)
		m, err := d.typeOf("inlink")
		require.NoError(t, err)
		assert.Equal(t, fs.ModeSymlink, m)
	})
}
