package app

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/internal/gittest"
)

// addLine is a reply that adds a line to a.txt.
var addLine = fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "edit_file", Args: `{"path":"a.txt","old_str":"one\n","new_str":"one\ntwo\n"}`}}}

// TestUndo takes turns back with /undo through the real CLI (issue 23):
// the turn's commit is reverted by a commit of the agent, the user's own
// files stay as they were, the conversation is cut back (the next request
// does not hold the turn), the thread is saved so (a record appended) and
// its event log replays.
func TestUndo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		input   string
		replies []fakellm.Reply
		// before runs before the session (a first session, say).
		before   func(t *testing.T, e *env)
		wantErr  []string
		file     string   // a.txt at the end
		log      string   // the last commits' subjects, newest first
		messages []string // the thread's conversation at the end
		sent     []string // the user messages of the last request
	}{
		{
			name:     "the turn reverted and cut back",
			input:    "Add a line.\n/undo\nWhat now?\n",
			replies:  []fakellm.Reply{addLine, {Text: "Added a line."}, {Text: "Nothing to do."}},
			wantErr:  []string{`undone: "Add a line."; the conversation is back to before it`, "reverted the turn's commit", "  M a.txt\n"},
			file:     "one\n",
			log:      "agent: undo Added a line.\nagent: Added a line.\ninitial",
			messages: []string{"user: What now?", "assistant: Nothing to do."},
			sent:     []string{"What now?"},
		},
		{
			name:     "a turn of a session before, resumed",
			before:   func(t *testing.T, e *env) { require.Equal(t, 0, e.run(t, "", "-p", "Add a line.").code) },
			args:     []string{"-resume", "last"},
			input:    "/undo\n",
			replies:  []fakellm.Reply{addLine, {Text: "Added a line."}},
			wantErr:  []string{`undone: "Add a line."`, "reverted the turn's commit"},
			file:     "one\n",
			log:      "agent: undo Added a line.\nagent: Added a line.\ninitial",
			messages: nil,
		},
		{
			name:    "nothing to undo",
			input:   "/undo\nHi.\n",
			replies: []fakellm.Reply{{Text: "Hello."}},
			wantErr: []string{"error: /undo: nothing to undo: the conversation has no turn yet"},
			file:    "one\n", log: "initial",
			messages: []string{"user: Hi.", "assistant: Hello."},
			sent:     []string{"Hi."},
		},
		{
			name:     "commits off: the conversation cut back, the files as they are",
			args:     []string{"-commit", "off"},
			input:    "Add a line.\n/undo\n",
			replies:  []fakellm.Reply{addLine, {Text: "Added a line."}},
			wantErr:  []string{`undone: "Add a line."`, "the files the turn changed are left as they are"},
			file:     "one\ntwo\n",
			log:      "initial",
			messages: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, fakellm.Anthropic, map[string]string{"a.txt": "one\n"}, tt.replies...)
			gittest.WriteFile(t, e.ws, "NOTES.md", "mine\n")
			if tt.before != nil {
				tt.before(t, e)
			}
			r := e.run(t, tt.input, tt.args...)
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			for _, s := range tt.wantErr {
				assert.Contains(t, r.stderr, s)
			}
			assert.Equal(t, tt.file, gittest.ReadFile(t, e.ws, "a.txt"))
			assert.Equal(t, tt.log, gittest.Git(t, e.ws, "log", "-3", "--format=%s"))
			assert.Equal(t, "mine\n", gittest.ReadFile(t, e.ws, "NOTES.md"), "the user's file")
			id := e.onlyThread(t)
			assert.Equal(t, tt.messages, messages(e.state(t, id)))
			if tt.sent != nil {
				reqs := e.srv.Requests()
				var sent []string
				for _, m := range reqs[len(reqs)-1].Messages {
					if m.Role == "user" {
						sent = append(sent, m.Text)
					}
				}
				assert.Equal(t, tt.sent, sent, "the last request holds no message of the turn undone")
			}
			rep := replayExit(t, filepath.Join(e.threads, id+".events.jsonl"))
			assert.Equal(t, 0, rep.code, "replay: %s%s", rep.stdout, rep.stderr)
		})
	}
}

// TestForkAndResume goes on with another thread in the same session
// through the real CLI (issue 23): /fork copies the thread, which is left
// as it was, and the session goes on in the copy (whose /undo reverts a
// turn made before the fork); /resume ID and /resume last switch to a saved
// thread. Every thread's event log replays.
func TestForkAndResume(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		first   string // a one-shot session's prompt before, "" for none
		input   string
		replies []fakellm.Reply
		wantErr []string
		// check gets the threads by their first prompt ("" for none).
		check func(t *testing.T, e *env, byPrompt map[string][]string)
	}{
		{
			name:    "/fork, then the fork goes on",
			input:   "Hi.\n/fork\nWhat now?\n",
			replies: []fakellm.Reply{{Text: "Hello."}, {Text: "Nothing to do."}},
			wantErr: []string{"forked thread ", "; continue it with: agent -resume "},
			check: func(t *testing.T, e *env, threads map[string][]string) {
				require.Len(t, threads, 1, "both threads start with Hi.")
				reqs := e.srv.Requests()
				assert.Len(t, reqs[len(reqs)-1].Messages, 3, "the fork's request holds the earlier exchange")
			},
		},
		{
			name:    "/undo in a fork reverts a turn made before it",
			input:   "Add a line.\n/fork\n/undo\n",
			replies: []fakellm.Reply{addLine, {Text: "Added a line."}},
			wantErr: []string{"forked thread ", "reverted the turn's commit"},
			check: func(t *testing.T, e *env, threads map[string][]string) {
				assert.Equal(t, "one\n", gittest.ReadFile(t, e.ws, "a.txt"))
				assert.Len(t, threads["Add a line."], 1, "the original, as it was")
				assert.Len(t, threads[""], 1, "the fork, its turn undone")
			},
		},
		{
			name:    "/resume ID",
			first:   "Hi.",
			input:   "Hello again.\n/resume FIRST\nAnd you?\n",
			replies: []fakellm.Reply{{Text: "Hello."}, {Text: "Hello again to you."}, {Text: "Fine."}},
			wantErr: []string{"resumed (anthropic fake-model"},
			check: func(t *testing.T, e *env, threads map[string][]string) {
				require.Len(t, threads["Hi."], 1)
				assert.Equal(t, []string{"user: Hi.", "assistant: Hello.", "user: And you?", "assistant: Fine."}, messages(e.state(t, threads["Hi."][0])))
				require.Len(t, threads["Hello again."], 1)
				assert.Len(t, messages(e.state(t, threads["Hello again."][0])), 2)
			},
		},
		{
			name:    "/resume last is the newest other thread",
			first:   "Hi.",
			input:   "Hello again.\n/resume last\nAnd you?\n",
			replies: []fakellm.Reply{{Text: "Hello."}, {Text: "Hello again to you."}, {Text: "Fine."}},
			check: func(t *testing.T, e *env, threads map[string][]string) {
				require.Len(t, threads["Hi."], 1)
				assert.Len(t, messages(e.state(t, threads["Hi."][0])), 4)
			},
		},
		{
			name:    "errors",
			input:   "/fork\n/resume\n/resume T-nosuch\nHi.\n",
			replies: []fakellm.Reply{{Text: "Hello."}},
			wantErr: []string{"error: /fork: nothing to fork yet", "error: /resume: give the thread to continue", "error: /resume: load thread T-nosuch"},
			check: func(t *testing.T, e *env, threads map[string][]string) {
				assert.Len(t, threads["Hi."], 1)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, fakellm.Anthropic, map[string]string{"a.txt": "one\n"}, tt.replies...)
			input := tt.input
			if tt.first != "" {
				require.Equal(t, 0, e.run(t, "", "-p", tt.first).code)
				input = strings.ReplaceAll(input, "FIRST", e.onlyThread(t))
			}
			r := e.run(t, input)
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			for _, s := range tt.wantErr {
				assert.Contains(t, r.stderr, s)
			}
			threads := map[string][]string{}
			for _, id := range e.threadIDs(t) {
				msgs := messages(e.state(t, id))
				first := ""
				if len(msgs) > 0 {
					first = strings.TrimPrefix(msgs[0], "user: ")
				}
				threads[first] = append(threads[first], id)
				rep := replayExit(t, filepath.Join(e.threads, id+".events.jsonl"))
				assert.Equal(t, 0, rep.code, "replay of %s: %s%s", id, rep.stdout, rep.stderr)
			}
			tt.check(t, e, threads)
			if t.Failed() {
				t.Logf("stderr:\n%s", r.stderr)
			}
		})
	}
}

// TestUndoKnowsItsTurn undoes a turn that made no commit, at the index
// where the thread it was forked from made a commit since: the turn is
// known by its message's ID, not its index, so the other thread's commit
// stays.
func TestUndoKnowsItsTurn(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, map[string]string{"a.txt": "one\n"},
		fakellm.Reply{Text: "Hello."}, fakellm.Reply{Text: "An answer."}, addLine, fakellm.Reply{Text: "Added a line."})
	// The fork asks a question; back in the thread forked, a line is
	// added (a commit at the same index); back in the fork, /undo.
	r := e.run(t, "Hi.\n/fork\nQuestion?\n/resume last\nAdd a line.\n/resume last\n/undo\n")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Contains(t, r.stderr, `undone: "Question?"`)
	assert.Contains(t, r.stderr, "the turn made no commit: no file to put back")
	assert.Equal(t, "one\ntwo\n", gittest.ReadFile(t, e.ws, "a.txt"), "the other thread's commit is not reverted")
	assert.Equal(t, "agent: Added a line.\ninitial", gittest.Git(t, e.ws, "log", "-3", "--format=%s"))
}

// TestUndoAfterCompaction undoes a turn that made no commit after
// compactions: the earlier turn's commit stays, and /undo says the
// summary may still tell of the turn.
func TestUndoAfterCompaction(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, map[string]string{"a.txt": "one\n"},
		fakellm.Reply{Text: "Hello."}, addLine, fakellm.Reply{Text: "Added a line."},
		fakellm.Reply{Text: "Summary one."}, fakellm.Reply{Text: "Fine."}, fakellm.Reply{Text: "Summary two."})
	r := e.run(t, "Hi.\nAdd a line.\n/compact\nAll good?\n/compact\n/undo\n")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Contains(t, r.stderr, `undone: "All good?"`)
	assert.Contains(t, r.stderr, "the turn made no commit: no file to put back")
	assert.Contains(t, r.stderr, "note: the conversation was compacted during or after this turn")
	assert.Equal(t, "one\ntwo\n", gittest.ReadFile(t, e.ws, "a.txt"), "the earlier turn's commit is not reverted")
	assert.Equal(t, "agent: Added a line.\ninitial", gittest.Git(t, e.ws, "log", "-3", "--format=%s"))
	msgs := messages(e.state(t, e.onlyThread(t)))
	require.Len(t, msgs, 1, "the summary alone: %q", msgs)
	assert.Contains(t, msgs[0], "Summary two.")
}

// TestForkOnItsBranch forks a thread whose commits go to a branch of its
// own (-commit branch): the fork's branch starts where the thread's is,
// so the fork's commits follow the thread's; the checkout is untouched.
func TestForkOnItsBranch(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, map[string]string{"a.txt": "one\n"},
		addLine, fakellm.Reply{Text: "Added a line."},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c2", Name: "edit_file", Args: `{"path":"a.txt","old_str":"two\n","new_str":"two\nthree\n"}`}}},
		fakellm.Reply{Text: "Added another."})
	r := e.run(t, "Add a line.\n/fork\nAnd another.\n", "-commit", "branch")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	ids := e.threadIDs(t)
	require.Len(t, ids, 2)
	var fork string
	for _, id := range ids {
		if strings.Contains(r.stderr, "into "+id) {
			fork = id
		}
	}
	require.NotEmpty(t, fork, "stderr:\n%s", r.stderr)
	assert.Equal(t, "agent: Added another.\nagent: Added a line.\ninitial", gittest.Git(t, e.ws, "log", "-3", "--format=%s", "agent/"+fork))
	assert.Equal(t, "initial", gittest.Git(t, e.ws, "log", "-1", "--format=%s"), "the checkout is untouched")
	if t.Failed() {
		t.Logf("stderr:\n%s\nbranches:\n%s", r.stderr, gittest.Git(t, e.ws, "branch", "-a", "-v"))
	}
}

// TestResumeOnItsBranch resumes a thread whose commits go to a branch of
// its own: the earlier session's work, in the work tree but never in the
// user's checkout, is the agent's, not the user's, so the next turn's
// change to the same file is committed.
func TestResumeOnItsBranch(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, map[string]string{"a.txt": "one\n"},
		addLine, fakellm.Reply{Text: "Added a line."},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c2", Name: "edit_file", Args: `{"path":"a.txt","old_str":"two\n","new_str":"two\nthree\n"}`}}},
		fakellm.Reply{Text: "Added another."})
	require.Equal(t, 0, e.run(t, "", "-commit", "branch", "-p", "Add a line.").code)
	gittest.WriteFile(t, e.ws, "b.txt", "the user's\n") // the user's own change stays theirs
	r := e.run(t, "", "-commit", "branch", "-resume", "last", "-p", "And another.")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.NotContains(t, r.stderr, "not committed")
	id := e.onlyThread(t)
	assert.Equal(t, "agent: Added another.\nagent: Added a line.\ninitial", gittest.Git(t, e.ws, "log", "-3", "--format=%s", "agent/"+id))
	assert.Equal(t, "a.txt", gittest.Git(t, e.ws, "show", "--name-only", "--format=", "agent/"+id))
	assert.Equal(t, "initial", gittest.Git(t, e.ws, "log", "-1", "--format=%s"), "the checkout is untouched")
}
