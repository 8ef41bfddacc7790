package app

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/internal/proctest"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// subagentReplies script a session whose model gives a task to a
// subagent (call t1): the child reads notes.txt, tries to edit it and to
// start a subagent of its own (both refused) and to write with bash (its
// sandbox is read-only), then answers; the parent ends with "Done.".
var subagentReplies = []fakellm.Reply{
	{Text: "Asking a subagent.", ToolCalls: []fakellm.ToolCall{{ID: "t1", Name: "task",
		Args: `{"description": "read the notes", "prompt": "Read notes.txt and say what it holds."}`}}},
	{Text: "Reading.", ToolCalls: []fakellm.ToolCall{
		{ID: "c1", Name: "read_file", Args: `{"path": "notes.txt"}`},
		{ID: "c2", Name: "edit_file", Args: `{"path": "notes.txt", "old_str": "hello", "new_str": "bye"}`},
		{ID: "c3", Name: "task", Args: `{"description": "deeper", "prompt": "Go deeper."}`},
		{ID: "c4", Name: "bash", Args: `{"command": "cat notes.txt; echo x > new.txt"}`},
	}},
	{Text: "The notes say hello."},
	{Text: "Done."},
}

// subagentThreads returns the parent's thread and the subagent's.
func (e *env) subagentThreads(t *testing.T) (parent, child *threadwire.Thread) {
	t.Helper()
	ids := e.threadIDs(t)
	require.Len(t, ids, 2, "threads: %v", ids)
	for _, id := range ids {
		_, th, err := e.saved(id)
		require.NoError(t, err)
		if th.SubagentOf != "" {
			child = th
		} else {
			parent = th
		}
	}
	require.NotNil(t, parent)
	require.NotNil(t, child)
	return parent, child
}

// TestSubagent runs a one-shot turn through both wire formats whose model
// calls the task tool: the child is a machine of its own (its own
// requests, system prompt and read-only tools), reads a file, is refused
// an edit and a subagent of its own, and its answer is the call's result
// in the parent's next request. The terminal shows the child's calls
// under the parent's, marked; the child's thread names its parent and
// the call, "agent sessions" lists it under the parent, and the parent's
// ledger counts the child's replies (issue 34, item 5).
func TestSubagent(t *testing.T) {
	t.Parallel()
	for _, p := range []fakellm.Provider{fakellm.Anthropic, fakellm.OpenAI} {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, p, map[string]string{"notes.txt": "hello from the notes\n"}, subagentReplies...)
			before := tree(t, e.ws)
			res := e.run(t, "", "-p", "Look at the notes.")
			require.Equal(t, 0, res.code, res.stderr)
			assert.Equal(t, "Done.\n", res.stdout)
			assert.Equal(t, before, tree(t, e.ws), "the workspace is untouched")

			reqs := e.srv.Requests()
			require.Len(t, reqs, 4)
			assert.Contains(t, reqs[0].Tools, "task", "the parent is offered the task tool")
			assert.NotContains(t, reqs[0].System, "subagent of a coding agent")
			child := reqs[1]
			assert.Contains(t, child.System, "You are a subagent of a coding agent")
			assert.Subset(t, []string{"bash", "list_files", "read_file"}, child.Tools, "only read-only tools: %v", child.Tools)
			assert.NotContains(t, child.Tools, "edit_file")
			assert.NotContains(t, child.Tools, "task")
			require.Len(t, child.Messages, 1, "the child's conversation is its own")
			assert.Equal(t, "Read notes.txt and say what it holds.", child.Messages[0].Text)

			results := resultsByID(reqs[2])
			assert.Contains(t, results["c1"].Text, "hello from the notes")
			assert.True(t, results["c2"].IsError)
			assert.Contains(t, results["c2"].Text, "edit_file was not run: a subagent only reads")
			assert.True(t, results["c3"].IsError)
			assert.Contains(t, results["c3"].Text, "task was not run: a subagent cannot start subagents")
			if sandboxErr == nil {
				assert.Contains(t, results["c4"].Text, "hello from the notes", "bash reads")
				assert.Contains(t, results["c4"].Text, "Read-only file system", "and cannot write")
			} else {
				assert.Contains(t, results["c4"].Text, "-sandbox off")
			}

			got := resultsByID(reqs[3])["t1"]
			assert.False(t, got.IsError)
			assert.Equal(t, "The notes say hello.", got.Text, "the child's answer is the parent's tool result")

			for _, line := range []string{"→ task read the notes", "subagent → read_file notes.txt", "subagent ✗ edit_file: edit_file was not run"} {
				assert.Contains(t, res.stderr, line)
			}

			parent, childThread := e.subagentThreads(t)
			assert.Equal(t, parent.ID, childThread.SubagentOf)
			assert.Equal(t, "t1", childThread.SubagentCall)
			assert.Contains(t, res.stderr, "subagent "+childThread.ID+": read the notes")
			assert.Equal(t, 4, parent.Ledger.Replies, "the parent's ledger counts the child's replies")
			assert.Equal(t, 2, childThread.Ledger.Replies)
			st, _, err := e.saved(childThread.ID)
			require.NoError(t, err)
			msgs := messages(st)
			require.NotEmpty(t, msgs)
			assert.Equal(t, "assistant: The notes say hello.", msgs[len(msgs)-1])

			list := e.sessionsOf(t)
			require.Equal(t, 0, list.code, list.stderr)
			lines := strings.Split(strings.TrimSpace(list.stdout), "\n")
			require.Len(t, lines, 3, list.stdout)
			assert.True(t, strings.HasPrefix(lines[1], parent.ID), "the parent first: %s", list.stdout)
			assert.True(t, strings.HasPrefix(lines[2], childThread.ID), "its subagent under it: %s", list.stdout)
			assert.Contains(t, lines[2], "(subagent of "+parent.ID+") Read notes.txt")
			e.checkNoSecret(t)
		})
	}
}

// TestSubagentJSON runs the same turn with -json: the child's steps are
// tool_progress events of the task call, each message one line marked
// "subagent", and the call's tool_result is the child's answer.
func TestSubagentJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, map[string]string{"notes.txt": "hello from the notes\n"}, subagentReplies...)
	res := e.run(t, "", "-json", "-p", "Look at the notes.")
	require.Equal(t, 0, res.code, res.stderr)
	var progress []string
	var result map[string]any
	for _, ev := range jsonLines(t, res.stdout) {
		if ev["id"] != "t1" {
			continue
		}
		switch ev["type"] {
		case evToolProgress:
			assert.Equal(t, "task", ev["name"])
			progress = append(progress, ev["message"].(string))
		case evToolResult:
			result = ev
		}
	}
	require.GreaterOrEqual(t, len(progress), 7, "one event a step: %q", progress)
	assert.Regexp(t, `^subagent \S+: read the notes$`, progress[0])
	assert.Equal(t, []string{"subagent → read_file notes.txt", "subagent → edit_file notes.txt", "subagent → task deeper",
		"subagent → bash $ cat notes.txt; echo x > new.txt"}, progress[1:5], "the child's calls, in the model's order")
	// The refused calls complete in parallel, in any order (bash's
	// failed write too, or its refusal without a sandbox).
	assert.Subset(t, progress[5:], []string{"subagent ✗ edit_file: edit_file was not run: " + subagentReadOnly,
		"subagent ✗ task: task was not run: " + subagentNoDepth})
	require.NotNil(t, result)
	assert.Equal(t, "The notes say hello.", result["content"])
}

// TestSubagentCtrlC sends SIGINT while a subagent waits for its model's
// reply: the child and the parent's turn stop, the model is told, the
// child's thread is saved, and the session goes on.
func TestSubagentCtrlC(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, nil,
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "t1", Name: "task", Args: `{"description": "look around", "prompt": "Look around."}`}}},
		fakellm.Reply{Text: "Looking very hard", Stall: true},
		fakellm.Reply{Text: "Going on."})
	ctx, cancel := context.WithTimeout(context.Background(), runLimit)
	defer cancel()
	cmd := e.command(ctx)
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	var stdout, stderr proctest.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	_, err = io.WriteString(in, "Start.\n")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(e.srv.Requests()) == 2 && strings.Contains(stderr.String(), "subagent ") },
		runLimit, 10*time.Millisecond, "the child asked its model")
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "turn stopped") },
		runLimit, 10*time.Millisecond, "stderr:\n%s", stderr.String())
	_, err = io.WriteString(in, "Go on.\n")
	require.NoError(t, err)
	require.NoError(t, in.Close())
	require.NoError(t, cmd.Wait(), "stderr:\n%s", stderr.String())
	assert.Contains(t, stdout.String(), "Going on.")

	reqs := e.srv.Requests()
	require.Len(t, reqs, 3, "the child sends nothing after the stop")
	var sent []string
	for _, m := range reqs[2].Messages {
		sent = append(sent, m.Text)
	}
	assert.Contains(t, strings.Join(sent, "\n"), behavior.UserStoppedPrefix, "the model is told the turn was stopped")
	parent, child := e.subagentThreads(t)
	assert.IsType(t, agent.WaitingForUserInput{}, e.state(t, parent.ID))
	assert.Equal(t, parent.ID, child.SubagentOf)
	assert.NotEqual(t, agent.StateWaitingForUserInput, e.state(t, child.ID).Kind(), "the child was stopped in its turn")
}

// TestSubagentOnTerminal runs the subagent's turn in a pseudo-terminal:
// the child's steps are drawn under the task call in the line editor,
// marked, and the call's result follows.
func TestSubagentOnTerminal(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, map[string]string{"notes.txt": "hello from the notes\n"}, subagentReplies...)
	s := startPTY(t, e, nil)
	s.waitScreen(t, "> ")
	s.typeKeys(t, "Look at the notes.\r")
	for _, want := range []string{"→ task read the notes", "subagent → read_file notes.txt", "task: The notes say hello.", "Done."} {
		s.waitScreen(t, want)
	}
	require.Eventually(t, func() bool { return len(e.threadIDs(t)) == 2 }, runLimit, 10*time.Millisecond)
	parent, _ := e.subagentThreads(t)
	require.Eventually(t, func() bool {
		st := e.state(t, parent.ID)
		return st != nil && st.Kind() == agent.StateWaitingForUserInput
	}, runLimit, 10*time.Millisecond, "the turn ended")
	s.typeKeys(t, "\x04")
	assert.Equal(t, 0, s.wait(t), s.screen.String())
}

// TestUnderParents checks the order "agent sessions" lists threads in: a
// subagent's right under its parent, the others as they were.
func TestUnderParents(t *testing.T) {
	t.Parallel()
	th := func(id, parent string) session {
		return session{thread: &threadwire.Thread{ID: id, SubagentOf: parent}}
	}
	ids := func(list []session) []string {
		var out []string
		for _, s := range list {
			out = append(out, s.thread.ID)
		}
		return out
	}
	tests := []struct {
		name string
		list []session
		want []string
	}{
		{"none", nil, nil},
		{"no subagents", []session{th("b", ""), th("a", "")}, []string{"b", "a"}},
		{"under the parent, newest first", []session{th("s2", "p"), th("q", ""), th("s1", "p"), th("p", "")}, []string{"q", "p", "s2", "s1"}},
		{"a parent not listed", []session{th("s", "gone"), th("p", "")}, []string{"s", "p"}},
		{"its own parent", []session{th("s", "s")}, []string{"s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, ids(underParents(tt.list)))
		})
	}
}

// TestSubagentOff: -subagent-calls 0 offers no task tool.
func TestSubagentOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, nil, fakellm.Reply{Text: "Hi."})
	res := e.run(t, "", "-subagent-calls", "0", "-p", "Hello.")
	require.Equal(t, 0, res.code, res.stderr)
	reqs := e.srv.Requests()
	require.Len(t, reqs, 1)
	assert.Contains(t, reqs[0].Tools, "read_file")
	assert.NotContains(t, reqs[0].Tools, "task")
}
