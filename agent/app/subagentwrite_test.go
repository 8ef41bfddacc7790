package app

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/approval"
	"github.com/fsmgen/fsmgen/agent/internal/autocommit"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/agent/internal/redact"
	"github.com/fsmgen/fsmgen/agent/internal/term"
	"github.com/fsmgen/fsmgen/internal/gittest"
)

// writeTask is the parent's call of a writing subagent (call t1).
var writeTask = fakellm.Reply{Text: "Handing the fix to a subagent.", ToolCalls: []fakellm.ToolCall{{ID: "t1", Name: "task",
	Args: `{"description": "fix the notes", "prompt": "In notes.txt, replace hello with bye.", "write": true}`}}}

// writeReplies script a turn whose model hands a change to a writing
// subagent: the child edits notes.txt (the project's, committed), creates
// new.txt with bash and edits main.go, which the user is changing too,
// then answers; the parent ends with "Done.".
var writeReplies = []fakellm.Reply{
	writeTask,
	{Text: "Editing.", ToolCalls: []fakellm.ToolCall{
		{ID: "c1", Name: "edit_file", Args: `{"path": "notes.txt", "old_str": "hello", "new_str": "bye"}`},
		{ID: "c2", Name: "bash", Args: `{"command": "echo made > new.txt"}`},
		{ID: "c3", Name: "edit_file", Args: `{"path": "main.go", "old_str": "// mine", "new_str": "// mine, and the subagent's"}`},
		{ID: "c4", Name: "task", Args: `{"description": "deeper", "prompt": "Go deeper.", "write": true}`},
	}},
	{Text: "Replaced hello with bye in notes.txt."},
	{Text: "Done."},
}

// TestSubagentWrite runs a writing subagent (-subagent-write, set in the
// config file) in a repository the user is working in, then /undo: the
// child is offered the parent's tools and writes with them; what it
// changed is committed with the parent's turn, in the parent's one
// commit, and the user's own changes are not (their modified file, which
// the child edited too, is reported as both's and left out; their staged
// and untracked files stay as they were); /undo of the turn reverts the
// child's changes; it cannot start a subagent of its own.
func TestSubagentWrite(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, map[string]string{"notes.txt": "hello from the notes\n", "main.go": "package main\n"}, writeReplies...)
	dir := filepath.Join(e.configHome(), configDirName)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("subagent_write: true\n"), 0o644))
	// The user's work in progress.
	gittest.WriteFile(t, e.ws, "main.go", "package main\n\n// mine\n")
	gittest.WriteFile(t, e.ws, "staged.txt", "staged\n")
	gittest.Git(t, e.ws, "add", "staged.txt")
	gittest.WriteFile(t, e.ws, "NOTES.md", "my notes\n")
	userStatus := gittest.Git(t, e.ws, "status", "--porcelain")

	r := e.run(t, "Fix the notes.\n/undo\n")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)

	reqs := e.srv.Requests()
	require.Len(t, reqs, 4)
	child := reqs[1]
	assert.Contains(t, child.System, "You may change the workspace")
	assert.Subset(t, child.Tools, []string{"bash", "edit_file", "list_files", "read_file"}, "the parent's tools: %v", child.Tools)
	assert.NotContains(t, child.Tools, "task")
	results := resultsByID(reqs[2])
	for _, id := range []string{"c1", "c2", "c3"} {
		assert.False(t, results[id].IsError, "%s: %s", id, results[id].Text)
	}
	assert.Contains(t, results["c4"].Text, "task was not run: a subagent cannot start subagents")
	assert.Equal(t, "Replaced hello with bye in notes.txt.", resultsByID(reqs[3])["t1"].Text)
	assert.Contains(t, r.stderr, "subagent → edit_file notes.txt")

	// The turn's commit: the child's changes, none of the user's.
	assert.Contains(t, r.stderr, "main.go — "+autocommit.MixedReason, "the file both changed is reported")
	assert.Equal(t, "agent: undo Done.\nagent: Done.\ninitial",
		gittest.Git(t, e.ws, "log", "-3", "--format=%s"))
	assert.Equal(t, "new.txt\nnotes.txt", gittest.Git(t, e.ws, "show", "--name-only", "--format=", "HEAD~1"),
		"the child's changes are the turn's commit, the user's are not")
	msg := gittest.Git(t, e.ws, "log", "-1", "--format=%B", "HEAD~1")
	assert.Contains(t, msg, "Tools: task ×1")

	// /undo reverted them; the user's work is as it was.
	assert.Contains(t, r.stderr, `undone: "Fix the notes."`)
	assert.Equal(t, "hello from the notes\n", gittest.ReadFile(t, e.ws, "notes.txt"))
	assert.NoFileExists(t, filepath.Join(e.ws, "new.txt"))
	assert.Equal(t, "package main\n\n// mine, and the subagent's\n", gittest.ReadFile(t, e.ws, "main.go"), "the file both changed is left as it is")
	assert.Equal(t, userStatus, gittest.Git(t, e.ws, "status", "--porcelain"), "the user's changes stay as they were")
}

// TestSubagentWriteRefused: without -subagent-write, and in plan mode
// even with it, a task call with "write": true is refused, saying why
// and which flag allows it; no subagent starts and nothing changes.
func TestSubagentWriteRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want []string // in the call's result
	}{
		{name: "without the flag", args: []string{"-p", "Fix the notes."},
			want: []string{`"write": true asks for a subagent that changes the workspace`, "without -subagent-write", "subagent_write: true in the config file"}},
		{name: "in plan mode", args: []string{"-subagent-write", "-mode", "plan", "-p", "Fix the notes."},
			want: []string{`"write": true asks for a subagent that changes the workspace`, "plan mode (-mode plan)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, fakellm.OpenAI, map[string]string{"notes.txt": "hello\n"}, writeTask, fakellm.Reply{Text: "Refused."})
			before := tree(t, e.ws)
			head := gitHead(t, e.ws)
			r := e.run(t, "", tt.args...)
			require.Equal(t, 0, r.code, r.stderr)
			reqs := e.srv.Requests()
			require.Len(t, reqs, 2, "no subagent ran")
			assert.NotContains(t, string(reqs[0].Body), `"write"`, "the read-only task tool does not offer write")
			got := resultsByID(reqs[1])["t1"]
			assert.True(t, got.IsError)
			for _, w := range tt.want {
				assert.Contains(t, got.Text, w)
			}
			assert.Equal(t, before, tree(t, e.ws))
			assert.Equal(t, head, gitHead(t, e.ws))
		})
	}
}

// TestSubagentWriteApproval runs a writing subagent under -approve
// untrusted in a pseudo-terminal: its edit is asked about on the
// parent's terminal, labelled as the subagent's, and runs once the user
// grants it; its command, refused, does not run; the turn's commit holds
// the edit.
func TestSubagentWriteApproval(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, map[string]string{"notes.txt": "hello\n"},
		writeTask,
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "edit_file", Args: `{"path": "notes.txt", "old_str": "hello", "new_str": "bye"}`}}},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c2", Name: "bash", Args: `{"command": "echo made > new.txt"}`}}},
		fakellm.Reply{Text: "Replaced hello with bye."},
		fakellm.Reply{Text: "Done."})
	head := gitHead(t, e.ws)
	s := startPTY(t, e, []string{"NO_COLOR=1"}, "-approve", "untrusted", "-subagent-write")
	s.waitScreen(t, "> ")
	s.typeKeys(t, "Fix the notes.\r")
	s.waitScreen(t, ": fix the notes — approve edit_file notes.txt")
	s.waitScreen(t, "+bye")
	s.waitScreen(t, term.AskPrompt)
	s.typeKeys(t, "y\r")
	s.waitScreen(t, "— approve bash")
	s.waitScreen(t, "$ echo made > new.txt")
	s.waitScreen(t, term.AskPrompt)
	s.typeKeys(t, "n not now\r")
	s.waitScreen(t, "Done.")
	s.typeKeys(t, "\x04")
	require.Equal(t, 0, s.wait(t), "screen:\n%s", s.screen.String())

	screen := s.screen.String()
	assert.Equal(t, 2, strings.Count(screen, "? subagent "), "each of the child's calls asked, labelled:\n%s", screen)
	assert.NotContains(t, screen, "approve task", "the task call itself is not asked about")
	reqs := e.srv.Requests()
	require.Len(t, reqs, 5)
	assert.Contains(t, resultsByID(reqs[3])["c2"].Text, "not run: the user refused this call: not now")
	assert.Equal(t, "bye\n", gittest.ReadFile(t, e.ws, "notes.txt"))
	assert.NoFileExists(t, filepath.Join(e.ws, "new.txt"))
	assert.NotEqual(t, head, gitHead(t, e.ws), "the turn was committed")
	assert.Equal(t, "notes.txt", gittest.Git(t, e.ws, "show", "--name-only", "--format=", "HEAD"))
}

// TestJSONApprovalBy: with -json, a writing subagent's question is the
// approval event of its call, naming the subagent (by); the agent's own
// have no by.
func TestJSONApprovalBy(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	j := &jsonEvents{out: &out, red: redact.New(testKey)}
	call := chat.ToolCall{ID: "e1", Name: "edit_file", Arguments: json.RawMessage(`{"path": "notes.txt"}`)}
	j.ask(approval.Question{Call: call, By: "subagent T: fix the notes"})
	j.ask(approval.Question{Call: call})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2)
	assert.Contains(t, lines[0], `"type":"approval"`)
	assert.Contains(t, lines[0], `"by":"subagent T: fix the notes"`)
	assert.NotContains(t, lines[1], `"by"`)
}
