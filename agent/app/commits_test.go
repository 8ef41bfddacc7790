package app

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/autocommit"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/internal/gittest"
)

// TestCommitsHoldOnlyTheAgentsWork runs a turn of two rounds in a
// repository the user is working in — a file modified, one staged, one
// untracked — and checks the agent's commits (issue 23 items 1 and 7):
// one commit for the turn, holding only what its tools changed, named
// for what it did, under the agent's identity, on the branch the banner
// names (or a branch of its own, or none); the user's changes stay as
// they were, and a file both changed is reported, not committed.
func TestCommitsHoldOnlyTheAgentsWork(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		banner  string
		commits func(t *testing.T, ws, id string) string // the ref the agent's commit is on, "" for none
	}{
		{name: "the current branch", banner: "agent: commits: one per turn, to main, holding only the agent's changes",
			commits: func(*testing.T, string, string) string { return "HEAD" }},
		{name: "a branch of its own", args: []string{"-commit", "branch"}, banner: "agent: commits: one per turn, to branch agent/",
			commits: func(_ *testing.T, _, id string) string { return "agent/" + id }},
		{name: "off", args: []string{"-commit", "off"}, banner: "agent: commits: off (-commit off)",
			commits: func(*testing.T, string, string) string { return "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, fakellm.Anthropic, map[string]string{"main.go": "package main\n", "util.go": "package main\n"},
				fakellm.Reply{Text: "First a file.", ToolCalls: []fakellm.ToolCall{
					{ID: "c1", Name: "edit_file", Args: `{"path":"a.txt","old_str":"","new_str":"a\n"}`},
					bashCall(t, "c2", "git status --short >/dev/null; echo b > b.txt"),
				}},
				fakellm.Reply{ToolCalls: []fakellm.ToolCall{
					{ID: "c3", Name: "edit_file", Args: `{"path":"util.go","old_str":"package main","new_str":"package main // util"}`},
					{ID: "c4", Name: "edit_file", Args: `{"path":"main.go","old_str":"// mine","new_str":"// mine, and the agent's"}`},
				}},
				fakellm.Reply{Text: "Added a.txt and b.txt, and noted util.go.\n\nAll done."})
			// The user's work in progress.
			gittest.WriteFile(t, e.ws, "main.go", "package main\n\n// mine\n")
			gittest.WriteFile(t, e.ws, "staged.txt", "staged\n")
			gittest.Git(t, e.ws, "add", "staged.txt")
			gittest.WriteFile(t, e.ws, "NOTES.md", "my notes\n")
			userStatus := gittest.Git(t, e.ws, "status", "--porcelain")

			r := e.run(t, "", append(tt.args, "-p", "Add the files.")...)
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			assert.Contains(t, r.stderr, tt.banner)
			id := e.onlyThread(t)

			// The user's changes are where they were: main.go modified
			// (now by both), staged.txt staged, NOTES.md untracked.
			assert.Equal(t, "package main\n\n// mine, and the agent's\n", gittest.ReadFile(t, e.ws, "main.go"))
			ref := tt.commits(t, e.ws, id)
			if ref == "" {
				assert.Equal(t, "initial", gittest.Git(t, e.ws, "log", "-1", "--format=%s"))
				return
			}
			assert.Contains(t, r.stderr, "main.go — "+autocommit.MixedReason, "the file both changed is reported")
			assert.Equal(t, 1, strings.Count(r.stderr, "main.go — "+autocommit.MixedReason), "once: by its round, not again by the turn's commit")
			if ref == "HEAD" {
				assert.Equal(t, userStatus, gittest.Git(t, e.ws, "status", "--porcelain"), "the user's changes stay as they were, the agent's are committed")
			} else {
				assert.Equal(t, "initial", gittest.Git(t, e.ws, "log", "-1", "--format=%s"), "the user's branch is untouched")
				assert.Contains(t, gittest.Git(t, e.ws, "status", "--porcelain"), "A  staged.txt")
			}
			assert.Equal(t, "2", gittest.Git(t, e.ws, "rev-list", "--count", ref), "one commit for the turn")
			assert.Equal(t, "a.txt\nb.txt\nutil.go", gittest.Git(t, e.ws, "show", "--name-only", "--format=", ref))
			assert.Equal(t, "fsmgen-agent <agent@fsmgen.invalid>", gittest.Git(t, e.ws, "log", "-1", "--format=%an <%ae>", ref))
			msg := gittest.Git(t, e.ws, "log", "-1", "--format=%B", ref)
			assert.True(t, strings.HasPrefix(msg, "agent: Added a.txt and b.txt, and noted util.go.\n\nAsked: Add the files.\n\nFiles:\n  A a.txt\n  A b.txt\n  M util.go\n"), msg)
			assert.Contains(t, msg, "Tools: edit_file ×3, bash ×1")
		})
	}
}
