package app

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/approval"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/agent/internal/term"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
)

// tree returns every file under dir, .git included, with its mode and
// content: a workspace byte for byte.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			files[rel+"/"] = fi.Mode().String()
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[rel] = fi.Mode().String() + " " + string(b)
		return nil
	}))
	return files
}

// resultsByID returns the tool results of a request, by call ID.
func resultsByID(r fakellm.Request) map[string]fakellm.Message {
	out := map[string]fakellm.Message{}
	for _, m := range r.Messages {
		if m.Role == "tool" {
			out[m.ToolCallID] = m
		}
	}
	return out
}

// TestPlanMode runs a one-shot plan through both wire formats: edit_file
// is neither offered nor run (its result says plan mode), bash sees the
// workspace read-only, the plan is the answer, and the workspace, its
// repository included, is byte for byte as it was.
func TestPlanMode(t *testing.T) {
	t.Parallel()
	for _, p := range []fakellm.Provider{fakellm.Anthropic, fakellm.OpenAI} {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, p, map[string]string{"a.txt": "one\n"},
				fakellm.Reply{Text: "Looking.", ToolCalls: []fakellm.ToolCall{
					{ID: "c1", Name: "read_file", Args: `{"path": "a.txt"}`},
					{ID: "c2", Name: "edit_file", Args: `{"path": "a.txt", "old_str": "one", "new_str": "two"}`},
					{ID: "c3", Name: "bash", Args: `{"command": "echo x > new.txt; echo y >> a.txt; rm a.txt"}`},
				}},
				fakellm.Reply{Text: "Plan:\n1. In a.txt, replace one with two.\n2. Run the tests."})
			before := tree(t, e.ws)
			res := e.run(t, "", "-mode", "plan", "-p", "Plan the change of a.txt.")
			require.Equal(t, 0, res.code, res.stderr)
			assert.Equal(t, "Plan:\n1. In a.txt, replace one with two.\n2. Run the tests.\n", res.stdout, "the plan is the answer")
			assert.Contains(t, res.stderr, "plan mode: the workspace is read-only")
			assert.Contains(t, res.stderr, "agent: plan mode: nothing was changed; to carry the plan out: agent -resume "+e.onlyThread(t)+" -mode auto")
			assert.Equal(t, before, tree(t, e.ws), "the workspace is untouched")

			reqs := e.srv.Requests()
			require.Len(t, reqs, 2)
			assert.ElementsMatch(t, []string{"bash", "list_files", "read_file", "task"}, reqs[0].Tools, "edit_file is not offered")
			assert.Contains(t, reqs[0].System, "plan mode")
			results := resultsByID(reqs[1])
			assert.Contains(t, results["c1"].Text, "one", "reads work")
			assert.True(t, results["c2"].IsError)
			assert.Contains(t, results["c2"].Text, "edit_file was not run: plan mode")
			assert.True(t, results["c3"].IsError)
			if sandboxErr == nil {
				assert.Contains(t, results["c3"].Text, "Read-only file system")
			} else {
				assert.Contains(t, results["c3"].Text, "-sandbox off")
			}
		})
	}
}

// eventLog returns the event log of the env's only thread.
func eventLog(t *testing.T, e *env) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.threads, e.onlyThread(t)+".events.jsonl"))
	require.NoError(t, err)
	return string(b)
}

// gitHead returns the commit HEAD names in dir.
func gitHead(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}

// TestApprovalRefused asks before an edit under -approve untrusted in a
// pseudo-terminal: the exact diff is shown, the user refuses with a
// reason, the file is untouched, and the model's next request holds the
// refusal, as do the thread and the event log.
func TestApprovalRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, map[string]string{"a.txt": "1\n2\n3\n4\n5\none\n"},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "edit_file", Args: `{"path": "a.txt", "old_str": "one\n", "new_str": "two\n"}`}}},
		fakellm.Reply{Text: "Understood, I will use sed."})
	head := gitHead(t, e.ws)
	s := startPTY(t, e, []string{"NO_COLOR=1"}, "-approve", "untrusted")
	s.waitScreen(t, "> ")
	s.typeKeys(t, "Change one to two.\r")
	s.waitScreen(t, "? approve edit_file a.txt")
	s.waitScreen(t, "@@ -6 +6 @@") // numbered from the line the edit changes
	s.waitScreen(t, "-one")
	s.waitScreen(t, "+two")
	s.waitScreen(t, "a: always")
	s.waitScreen(t, term.AskPrompt)
	require.Len(t, e.srv.Requests(), 1)
	s.typeKeys(t, "n use sed instead\r")
	s.waitScreen(t, "Understood, I will use sed.")
	s.typeKeys(t, "\x04")
	require.Equal(t, 0, s.wait(t), "screen:\n%s", s.screen.String())

	reqs := e.srv.Requests()
	require.Len(t, reqs, 2)
	res := resultsByID(reqs[1])["c1"]
	assert.True(t, res.IsError)
	assert.Contains(t, res.Text, approval.RefusedPrefix+": use sed instead")
	content, err := os.ReadFile(filepath.Join(e.ws, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "1\n2\n3\n4\n5\none\n", string(content), "the refused edit did not run")
	assert.Equal(t, head, gitHead(t, e.ws), "nothing was committed")
	assert.Contains(t, strings.Join(messages(e.state(t, e.onlyThread(t))), "\n"), "tool: "+approval.RefusedPrefix+": use sed instead", "the thread holds the refusal")
	assert.Contains(t, eventLog(t, e), `"approval":"refused"`)
	assert.Equal(t, 0, replayExit(t, filepath.Join(e.threads, e.onlyThread(t)+".events.jsonl")).code, "the event log replays")
	e.checkNoSecret(t)
}

// TestApprovalGranted approves a command and then grants edit_file for
// the session: the first edit is asked about, the second is not; what
// ran is committed, and the event log holds each verdict.
func TestApprovalGranted(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.OpenAI, map[string]string{"a.txt": "one\n"},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "bash", Args: `{"command": "echo made > b.txt"}`}}},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c2", Name: "edit_file", Args: `{"path": "a.txt", "old_str": "one", "new_str": "two"}`}}},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c3", Name: "edit_file", Args: `{"path": "a.txt", "old_str": "two", "new_str": "three"}`}}},
		fakellm.Reply{Text: "Done."})
	head := gitHead(t, e.ws)
	s := startPTY(t, e, []string{"NO_COLOR=1"}, "-approve", "untrusted")
	s.waitScreen(t, "> ")
	s.typeKeys(t, "Do it.\r")
	s.waitScreen(t, "? approve bash")
	s.waitScreen(t, "$ echo made > b.txt")
	s.typeKeys(t, "y\r")
	s.waitScreen(t, "approved: bash")
	s.waitScreen(t, "? approve edit_file a.txt")
	s.typeKeys(t, "a\r")
	s.waitScreen(t, "Done.")
	s.typeKeys(t, "\x04")
	require.Equal(t, 0, s.wait(t), "screen:\n%s", s.screen.String())

	assert.Equal(t, 2, strings.Count(s.screen.String(), "? approve"), "the edit granted always is not asked about again:\n%s", s.screen.String())
	content, err := os.ReadFile(filepath.Join(e.ws, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "three\n", string(content))
	assert.FileExists(t, filepath.Join(e.ws, "b.txt"))
	assert.NotEqual(t, head, gitHead(t, e.ws), "the turn was committed")
	log := eventLog(t, e)
	assert.Equal(t, 1, strings.Count(log, `"approval":"granted"`), log)
	assert.Equal(t, 2, strings.Count(log, `"approval":"always"`), log)
	journal, err := os.ReadFile(filepath.Join(e.threads, e.onlyThread(t)+".journal"))
	require.NoError(t, err)
	assert.Contains(t, string(journal), `"approval":"granted"`, "the thread's journal records the verdicts too")
	assert.Contains(t, string(journal), `"approval":"always"`)
}

// TestApprovalOnRequest offers the model to ask: a call that asks is
// shown with the model's reason and runs once granted; a call that does
// not ask runs at once; the arguments reach the tool without the
// approval fields.
func TestApprovalOnRequest(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, map[string]string{"a.txt": "one\n"},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "edit_file",
			Args: `{"path": "a.txt", "old_str": "one", "new_str": "two", "ask_approval": true, "approval_reason": "this rewrites the header"}`}}},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c2", Name: "bash", Args: `{"command": "echo made > b.txt", "ask_approval": false}`}}},
		fakellm.Reply{Text: "Done."})
	s := startPTY(t, e, []string{"NO_COLOR=1"}, "-approve", "on-request")
	s.waitScreen(t, "> ")
	s.typeKeys(t, "Do it.\r")
	s.waitScreen(t, "the model asks: this rewrites the header")
	s.typeKeys(t, "yes\r")
	s.waitScreen(t, "Done.")
	s.typeKeys(t, "\x04")
	require.Equal(t, 0, s.wait(t), "screen:\n%s", s.screen.String())

	assert.Equal(t, 1, strings.Count(s.screen.String(), "? approve"), "only the call that asked is asked about:\n%s", s.screen.String())
	reqs := e.srv.Requests()
	require.Len(t, reqs, 3)
	var body struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(reqs[0].Body, &body))
	offered := map[string]bool{}
	for _, tool := range body.Tools {
		offered[tool.Name] = strings.Contains(string(tool.InputSchema), approval.AskField)
	}
	assert.Equal(t, map[string]bool{"bash": true, "edit_file": true, "list_files": false, "read_file": false, "task": false}, offered, "task only reads: never asked about")
	for i, id := range []string{"c1", "c2"} {
		res := resultsByID(reqs[i+1])[id]
		assert.False(t, res.IsError, "%s: %s", id, res.Text)
	}
	content, err := os.ReadFile(filepath.Join(e.ws, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "two\n", string(content))
	assert.FileExists(t, filepath.Join(e.ws, "b.txt"))
}

// TestApprovalCtrlC presses Ctrl-C while a call waits for its approval:
// the turn stops as it does elsewhere, the call never runs, and the next
// line typed is a message again.
func TestApprovalCtrlC(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, map[string]string{"a.txt": "one\n"},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "bash", Args: `{"command": "echo ran > ran.txt"}`}}},
		fakellm.Reply{Text: "Stopped, then."})
	s := startPTY(t, e, []string{"NO_COLOR=1"}, "-approve", "untrusted")
	s.waitScreen(t, "> ")
	s.typeKeys(t, "Run it.\r")
	s.waitScreen(t, "? approve bash")
	s.typeKeys(t, "\x03")
	s.waitScreen(t, "turn stopped")
	s.typeKeys(t, "y\r")
	s.waitScreen(t, "Stopped, then.")
	s.typeKeys(t, "\x04")
	require.Equal(t, 0, s.wait(t), "screen:\n%s", s.screen.String())
	assert.NoFileExists(t, filepath.Join(e.ws, "ran.txt"))
	assert.Equal(t, []string{"Run it.", "y"}, userMessages(e), "the y after the stop is a message")
}

// TestApprovalNeedsATerminal refuses to start, with exit 2 naming the
// flag, any policy that would ask without a terminal to ask on: input
// from a pipe, or one-shot.
func TestApprovalNeedsATerminal(t *testing.T) {
	t.Parallel()
	for _, policy := range []string{"untrusted", "on-request"} {
		for _, args := range [][]string{{"-approve", policy}, {"-approve", policy, "-p", "Do it."}} {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, fakellm.Anthropic, nil)
				res := e.run(t, "Do it.\n", args...)
				assert.Equal(t, exitUsage, res.code)
				assert.Equal(t, "agent: -approve "+policy+" needs a terminal to ask; use -approve never, or run interactively\n", res.stderr)
				assert.Empty(t, e.srv.Requests())
				assert.Empty(t, e.threadIDs(t))
			})
		}
	}
	e := newEnv(t, fakellm.Anthropic, nil, fakellm.Reply{Text: "Hi."})
	res := e.run(t, "", "-approve", "never", "-p", "Hello.")
	assert.Equal(t, 0, res.code, res.stderr)
	res = e.run(t, "", "-approve", "sometimes", "-p", "Hello.")
	assert.Equal(t, exitUsage, res.code)
	assert.Contains(t, res.stderr, `unknown approval policy "sometimes"`)
	res = e.run(t, "", "-mode", "build", "-p", "Hello.")
	assert.Equal(t, exitUsage, res.code)
	assert.Contains(t, res.stderr, `agent: -mode "build": use auto or plan`)
}

// TestKillWhileAsking kills the agent (SIGKILL) while a call waits for
// its approval: on resume the call is answered "interrupted", never run.
func TestKillWhileAsking(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, nil,
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "bash", Args: `{"command": "echo ran > ran.txt"}`}}},
		fakellm.Reply{Text: "I will not run it."})
	s := startPTY(t, e, []string{"NO_COLOR=1"}, "-approve", "untrusted")
	s.waitScreen(t, "> ")
	s.typeKeys(t, "Run it.\r")
	s.waitScreen(t, "? approve bash")
	require.NoError(t, s.cmd.Process.Kill())
	s.wait(t)

	id := e.onlyThread(t)
	res := e.run(t, "Go on.\n", "-resume", id)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stderr, "resuming: tool bash (c1) was interrupted")
	assert.NoFileExists(t, filepath.Join(e.ws, "ran.txt"), "the call awaiting approval never ran")
	reqs := e.srv.Requests()
	require.Len(t, reqs, 2)
	got := resultsByID(reqs[1])["c1"]
	assert.True(t, got.IsError)
	assert.Contains(t, got.Text, "interrupted")
	assert.True(t, strings.HasSuffix(reqs[1].Messages[len(reqs[1].Messages)-1].Text, "Go on."))
}

// schemaTool is a tool with the given input schema that says whether it
// mutates.
type schemaTool struct {
	name, schema string
	mutating     bool
}

func (s schemaTool) Spec() chat.ToolSpec {
	return chat.ToolSpec{Name: s.name, Description: "A tool.", InputSchema: json.RawMessage(s.schema)}
}
func (s schemaTool) Mutating() bool { return s.mutating }
func (schemaTool) Run(context.Context, json.RawMessage, func(chat.ToolProgress)) (string, error) {
	return "", nil
}

// TestOfferApproval offers the approval arguments, under on-request only,
// to the mutating tools whose schema takes them, and names the others.
func TestOfferApproval(t *testing.T) {
	t.Parallel()
	set, err := tools.NewSet(tools.Options{},
		schemaTool{"deploy", `{"type": "object", "properties": {"env": {"type": "string"}}}`, true},
		schemaTool{"odd", `{"type": "object"}`, true},
		schemaTool{"look", `{"type": "object", "properties": {}}`, false},
	)
	require.NoError(t, err)
	tests := []struct {
		policy  approval.Policy
		offered map[string]bool
		note    string
	}{
		{approval.OnRequest, map[string]bool{"deploy": true, "look": false, "odd": false},
			"agent: -approve on-request: the model cannot ask before calls of odd, which run without asking: tool odd: its input schema has no \"properties\" object\n"},
		{approval.Untrusted, map[string]bool{"deploy": false, "look": false, "odd": false}, ""},
		{approval.Never, map[string]bool{"deploy": false, "look": false, "odd": false}, ""},
	}
	for _, tt := range tests {
		t.Run(string(tt.policy), func(t *testing.T) {
			t.Parallel()
			var w strings.Builder
			offered := map[string]bool{}
			for _, s := range offerApproval(tt.policy, set, &w) {
				offered[s.Name] = strings.Contains(string(s.InputSchema), approval.AskField)
			}
			assert.Equal(t, tt.offered, offered)
			assert.Equal(t, tt.note, w.String())
		})
	}
}
