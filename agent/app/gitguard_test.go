package app

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/internal/gittest"
)

// TestPlantedSubmoduleGitdirUndone reproduces issue 20 item 2: a command
// copies the submodule's git directory into the workspace, adds
// core.fsmonitor to the copy and points the submodule's .git at it. The
// agent puts the pointer back and unmakes the copy, tells the model and,
// at the end, the user; the user's own git status, diff and commit at the
// top of the repository then run nothing planted.
func TestPlantedSubmoduleGitdirUndone(t *testing.T) {
	t.Parallel()
	marker := filepath.Join(t.TempDir(), "PWNED")
	plant := fmt.Sprintf(`cp -r .git/modules/sub evil && git config --file evil/config core.worktree ../sub && `+
		`git config --file evil/config core.fsmonitor 'touch %s; false' && printf 'gitdir: ../evil\n' > sub/.git && echo planted`, marker)
	e := newEnv(t, fakellm.Anthropic, map[string]string{"README": "top\n"},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			bashCall(t, "c1", plant),
			{ID: "c2", Name: "edit_file", Args: `{"path":"notes.txt","old_str":"","new_str":"notes\n"}`},
		}},
		fakellm.Reply{Text: "Done."})
	upstream := gittest.NewRepo(t, map[string]string{"lib.go": "package lib\n"})
	gittest.Git(t, e.ws, "-c", "protocol.file.allow=always", "submodule", "--quiet", "add", upstream, "sub")
	gittest.Git(t, e.ws, "commit", "--quiet", "-m", "sub")

	r := e.run(t, "", "-p", "Go.")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Equal(t, "gitdir: ../.git/modules/sub\n", gittest.ReadFile(t, e.ws, "sub/.git"))
	assert.NoDirExists(t, filepath.Join(e.ws, "evil"))

	reqs := e.srv.Requests()
	require.Len(t, reqs, 2)
	results := resultsOf(reqs[1])
	require.Len(t, results, 2)
	assert.Contains(t, results[0], "planted\n\n[the agent undid changes to git repositories in the workspace")
	assert.Contains(t, results[0], "- sub/.git: the gitdir pointer changed; put back as it was")

	assert.Contains(t, r.stderr, "agent: the tools changed git repositories in the workspace during this session")
	assert.Contains(t, r.stderr, "agent:   evil: a git repository was created; removed")
	assert.Contains(t, r.stderr, "agent:   sub/.git: the gitdir pointer changed; put back as it was")
	assert.Equal(t, "notes.txt", gittest.Git(t, e.ws, "show", "--name-only", "--format=", "HEAD"))
	assert.NotContains(t, r.stderr, "agent: note:", "nothing looked planted at the start")

	// The user's own git, at the top of the repository.
	gittest.WriteFile(t, e.ws, "user.txt", "mine\n")
	for _, args := range [][]string{{"status"}, {"diff"}, {"add", "user.txt"}, {"commit", "-q", "-m", "user"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = e.ws
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %s: %s", strings.Join(args, " "), out)
		assert.NoFileExists(t, marker, "git %s ran the planted command", strings.Join(args, " "))
	}
}

// TestEditFileLeavesNoSetuidFile has the model edit a setuid and setgid
// file (issue 20 item 5): the edit is made, and the file loses both bits.
func TestEditFileLeavesNoSetuidFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, map[string]string{"tool.sh": "#!/bin/sh\necho old\n"},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "edit_file", Args: `{"path":"tool.sh","old_str":"old","new_str":"new"}`}}},
		fakellm.Reply{Text: "Done."})
	p := filepath.Join(e.ws, "tool.sh")
	require.NoError(t, os.Chmod(p, 0o755|os.ModeSetuid|os.ModeSetgid))
	r := e.run(t, "", "-p", "Edit it.")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Equal(t, "#!/bin/sh\necho new\n", gittest.ReadFile(t, e.ws, "tool.sh"))
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), fi.Mode(), "the setuid and setgid bits are gone, the rest is kept")
	results := resultsOf(e.srv.Requests()[1])
	require.Len(t, results, 1)
	assert.Contains(t, results[0], "its setuid and setgid bits were removed")
}

// TestUnusualRepositoryNoted starts the agent in a workspace where a
// killed session left a plant (a submodule's pointer to a copy of its git
// directory): the agent says so at once.
func TestUnusualRepositoryNoted(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, map[string]string{"README": "top\n"}, fakellm.Reply{Text: "Hi."})
	upstream := gittest.NewRepo(t, map[string]string{"lib.go": "package lib\n"})
	gittest.Git(t, e.ws, "-c", "protocol.file.allow=always", "submodule", "--quiet", "add", upstream, "sub")
	gittest.Git(t, e.ws, "commit", "--quiet", "-m", "sub")
	require.NoError(t, exec.Command("cp", "-r", filepath.Join(e.ws, ".git/modules/sub"), filepath.Join(e.ws, "evil")).Run())
	gittest.WriteFile(t, e.ws, "sub/.git", "gitdir: ../evil\n")
	r := e.run(t, "", "-p", "Hi.")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Contains(t, r.stderr, "agent: note: evil is a git repository outside a .git (a bare repository); git obeys its configuration")
	assert.Contains(t, r.stderr, "agent: note: sub/.git points to evil, outside every .git directory")
}
