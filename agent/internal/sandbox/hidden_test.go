package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox/sandboxtest"
)

// TestHiddenBy checks what hides a host path from confined commands: the
// host's /tmp, the home directory; nothing for a path they see, one an
// exposure shows, or any path when commands are not confined.
func TestHiddenBy(t *testing.T) {
	t.Parallel()
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	inTmp := t.TempDir()
	require.True(t, strings.HasPrefix(inTmp, "/tmp/"), "the test needs its temporary directory in /tmp: %s", inTmp)
	shown := t.TempDir()
	sb := sandboxtest.New(t, sandbox.Options{Mode: sandbox.Bwrap, Expose: []sandbox.Exposure{{Path: shown}}})
	assert.Equal(t, "/tmp", sb.HiddenBy(inTmp))
	assert.Equal(t, "", sb.HiddenBy(shown), "exposed")
	assert.Equal(t, "", sb.HiddenBy("/usr/bin"))
	assert.Equal(t, "", sb.HiddenBy(filepath.Join(inTmp, "missing")), "no such file")
	if _, err := os.Stat(filepath.Join(home, ".")); err == nil {
		assert.NotEmpty(t, sb.HiddenBy(home), "the home directory")
	}
	off := sandboxtest.New(t, sandbox.Options{Mode: sandbox.Off})
	assert.Equal(t, "", off.HiddenBy(inTmp))
}
