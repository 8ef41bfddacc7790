package app

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/agent/internal/autocommit"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/internal/gittest"
)

// bashCall returns a bash call of the fake model.
func bashCall(t *testing.T, id, command string) fakellm.ToolCall {
	t.Helper()
	args, err := json.Marshal(map[string]string{"command": command})
	require.NoError(t, err)
	return fakellm.ToolCall{ID: id, Name: "bash", Args: string(args)}
}

// resultsOf returns the tool results a request carried, in order, as
// "ID: text" (with " (error)" for a failed call).
func resultsOf(req fakellm.Request) []string {
	var out []string
	for _, m := range req.Messages {
		if m.ToolCallID == "" {
			continue
		}
		text := m.Text
		if m.IsError {
			text = strings.TrimPrefix(text, "Error: ") // how the OpenAI provider sends one
		}
		r := m.ToolCallID + ": " + strings.TrimSpace(text)
		if m.IsError {
			r += " (error)"
		}
		out = append(out, r)
	}
	return out
}

// TestMalformedToolCallAnswered checks that one malformed call of a reply
// is answered, to the model, with an error that names it, while the
// reply's other calls run, with no retry of the reply (issue 20 item 10).
func TestMalformedToolCallAnswered(t *testing.T) {
	t.Parallel()
	for _, p := range []fakellm.Provider{fakellm.Anthropic, fakellm.OpenAI} {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, p, nil,
				fakellm.Reply{Text: "Three steps.", ToolCalls: []fakellm.ToolCall{
					bashCall(t, "c1", "echo one > one.txt; echo one"),
					{ID: "c2", Name: "bash", Args: `{"command":"echo two`},
					bashCall(t, "c3", "echo three"),
				}},
				fakellm.Reply{Text: "Done."})
			r := e.run(t, "", "-p", "Go.")
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			assert.Equal(t, "Done.\n", r.stdout, "the answer only")
			assert.NotContains(t, r.stderr, "retry", "the reply is not retried")

			reqs := e.srv.Requests()
			require.Len(t, reqs, 2, "one reply, then the answer to its results")
			results := resultsOf(reqs[1])
			require.Len(t, results, 3, "%q", results)
			assert.Equal(t, "c1: one", results[0])
			assert.True(t, strings.HasPrefix(results[1], "c2: "+agentexec.MalformedPrefix+" to bash (id c2) are not a JSON object"), results[1])
			assert.Contains(t, results[1], `What arrived: {"command":"echo two`)
			assert.True(t, strings.HasSuffix(results[1], "(error)"), results[1])
			assert.Equal(t, "c3: three", results[2])
			assert.Equal(t, "one\n", gittest.ReadFile(t, e.ws, "one.txt"))
			assert.Equal(t, 0, replayExit(t, e.threads+"/"+e.onlyThread(t)+".events.jsonl").code)
		})
	}
}

// TestRepeatedCallIDs checks that every call of a reply that repeats call
// IDs runs and gets its own result, whatever order they finish in, also
// when the calls beyond -max-tool-calls or a malformed one share the ID
// (issue 20 item 10; docs/design.md: each completion completes the first
// still-pending call with its ID, in the LLM's order).
func TestRepeatedCallIDs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		args  []string
		calls func(t *testing.T) []fakellm.ToolCall
		want  []string
	}{
		{
			name: "three calls, one ID, finishing last to first",
			calls: func(t *testing.T) []fakellm.ToolCall {
				return []fakellm.ToolCall{
					bashCall(t, "same", "sleep 0.4; echo one | tee -a runs"),
					bashCall(t, "same", "sleep 0.2; echo two | tee -a runs"),
					bashCall(t, "same", "echo three | tee -a runs"),
				}
			},
			want: []string{"same: one", "same: two", "same: three"},
		},
		{
			name: "a refused and a malformed call sharing the ID of one that runs",
			args: []string{"-max-tool-calls", "3"},
			calls: func(t *testing.T) []fakellm.ToolCall {
				return []fakellm.ToolCall{
					bashCall(t, "a", "sleep 0.3; echo one | tee -a runs"),
					{ID: "a", Name: "bash", Args: `{"command":`},
					bashCall(t, "b", "echo two | tee -a runs"),
					bashCall(t, "a", "echo never | tee -a runs"),
				}
			},
			want: []string{"a: one", "a: " + agentexec.MalformedPrefix, "b: two", "a: " + agentexec.TooManyCallsPrefix},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, fakellm.Anthropic, nil, fakellm.Reply{ToolCalls: tt.calls(t)}, fakellm.Reply{Text: "Done."})
			r := e.run(t, "", append(tt.args, "-p", "Go.")...)
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			reqs := e.srv.Requests()
			require.Len(t, reqs, 2)
			results := resultsOf(reqs[1])
			require.Len(t, results, len(tt.want), "a result for every call: %q", results)
			for i, w := range tt.want {
				assert.True(t, strings.HasPrefix(results[i], w), "result %d is %q, want %q…", i, results[i], w)
			}
			ran := strings.Fields(gittest.ReadFile(t, e.ws, "runs"))
			assert.ElementsMatch(t, wantRuns(tt.want), ran, "every call that may run ran once")
			assert.Equal(t, 0, replayExit(t, e.threads+"/"+e.onlyThread(t)+".events.jsonl").code)
		})
	}
}

// wantRuns returns the words the runs of the results' calls appended to
// the file runs: each successful result's text.
func wantRuns(results []string) []string {
	var out []string
	for _, r := range results {
		_, text, _ := strings.Cut(r, ": ")
		if !strings.HasPrefix(text, "not run") {
			out = append(out, text)
		}
	}
	return out
}

// TestManyCallsCommittedRoundByRound runs a round of 2,000 tool calls
// whose names make the commit message larger than one command-line
// argument may be, then a round of one edit: the turn's commit holds both
// rounds' changes and says what ran (issues 20 item 7, 23 item 7). The calls beyond
// -max-tool-calls are not run, but they are in the round the commit
// message describes.
func TestManyCallsCommitted(t *testing.T) {
	t.Parallel()
	calls := []fakellm.ToolCall{{ID: "edit", Name: "edit_file", Args: `{"path":"first.txt","old_str":"","new_str":"first\n"}`}}
	for i := range 1999 {
		// Names the model made up: unknown tools, which fail at once.
		calls = append(calls, fakellm.ToolCall{ID: fmt.Sprintf("c%d", i), Name: fmt.Sprintf("tool_%04d_%s", i, strings.Repeat("x", 50)), Args: `{}`})
	}
	e := newEnv(t, fakellm.Anthropic, nil,
		fakellm.Reply{ToolCalls: calls},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "edit2", Name: "edit_file", Args: `{"path":"second.txt","old_str":"","new_str":"second\n"}`}}},
		fakellm.Reply{Text: "Done."})
	r := e.run(t, "", "-p", "Go.")
	require.Equal(t, 0, r.code, "stderr: %.2000s", r.stderr)
	assert.NotContains(t, r.stderr, "argument list too long")

	subjects := strings.Split(gittest.Git(t, e.ws, "log", "--format=%s"), "\n")
	require.Len(t, subjects, 2, "the first commit and one for the turn: %q", subjects)
	assert.Equal(t, "agent: Done.", subjects[0])
	assert.Equal(t, "first.txt\nsecond.txt", gittest.Git(t, e.ws, "show", "--name-only", "--format=", "HEAD"), "the turn's commit holds both rounds' changes")
	body := gittest.Git(t, e.ws, "log", "-1", "--format=%b")
	assert.True(t, strings.HasPrefix(body, "Asked: Go.\n\nFiles:\n  A first.txt\n  A second.txt\n\nTools: edit_file ×2, tool_0000_"), body)
	assert.Contains(t, body, "and 1992 more tools\n\n"+autocommit.TrailerThread+": ", body)
	assert.Regexp(t, "\n"+autocommit.TrailerTurn+": [0-9a-f]{16}$", body, "the turn is known by its message's ID")
}
