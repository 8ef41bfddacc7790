package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/internal/gittest"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// sessionsOf runs the binary's "agent sessions" with the env's threads
// folder and args before the subcommand.
func (e *env) sessionsOf(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, agentBin, append(append([]string{"-threads", e.threads}, args...), "sessions")...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		require.NoError(t, err)
	}
	return result{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

// startedID returns the thread ID the agent's start line names.
func startedID(t *testing.T, stderr string) string {
	t.Helper()
	m := regexp.MustCompile(`agent: thread (\S+) (started|resumed)`).FindStringSubmatch(stderr)
	require.NotNil(t, m, "no start line in:\n%s", stderr)
	return m[1]
}

// TestSessions runs two sessions in the workspace and then one in
// another: "agent sessions" lists the three, newest first, with their
// workspace, first prompt and tokens; "-resume last" in the first
// workspace continues its newest session, showing its earlier exchanges
// before anything is sent (issue 23 item 6: there was no list, and
// "-resume last" said "thread not found").
func TestSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, nil,
		fakellm.Reply{Text: "One."}, fakellm.Reply{Text: "Two."}, fakellm.Reply{Text: "Elsewhere."}, fakellm.Reply{Text: "Three."})
	other := gittest.NewRepo(t, nil)
	var ids []string
	for _, run := range []struct{ stdin, ws string }{{"First thing.\n", ""}, {"Second thing,\n", ""}, {"Other place.\n", other}} {
		args := []string{}
		if run.ws != "" {
			args = append(args, "-workspace", run.ws)
		}
		r := e.run(t, run.stdin, args...)
		require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
		ids = append(ids, startedID(t, r.stderr))
	}

	r := e.sessionsOf(t)
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 4, "a heading and three threads:\n%s", r.stdout)
	assert.Regexp(t, `^ID +WORKSPACE +STARTED +TOKENS +CACHED +COST +FIRST PROMPT$`, lines[0])
	for i, want := range []struct{ id, prompt string }{{ids[2], "Other place."}, {ids[1], "Second thing,"}, {ids[0], "First thing."}} {
		assert.Regexp(t, "^"+regexp.QuoteMeta(want.id)+` +/\S+ +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +30 +0 +- +`+regexp.QuoteMeta(want.prompt)+"$", lines[i+1], "newest first")
	}
	assert.Contains(t, lines[1], other)

	r = e.sessionsOf(t, "-price", "3,15")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Contains(t, r.stdout, " $0.00 ", "the cost at the price given")

	r = e.run(t, "Third thing.\n", "-resume", "last")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Equal(t, ids[1], startedID(t, r.stderr), "the newest thread of this workspace")
	assert.Contains(t, r.stderr, "resumed (anthropic fake-model in "+e.ws+")\n── earlier in this thread (2 messages; the last 2 shown) ──\n> Second thing,\nTwo.\n──\n")
	assert.Equal(t, "Three.\n", r.stdout, "stdout holds the replies alone")
	assert.Equal(t, []string{"user: Second thing,", "assistant: Two.", "user: Third thing.", "assistant: Three."}, messages(e.state(t, ids[1])))

	r = e.run(t, "", "-workspace", t.TempDir(), "-resume", "last")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "-resume last: no thread of the workspace")
	assert.Contains(t, r.stderr, "list the threads with: agent sessions")
}

// TestEarlierAndFirstPrompt checks the notes the agent writes in the
// user's name (a compaction's summary, a query's result, a continuation)
// in what a resumed session shows and in the first prompt a thread is
// listed by: none of them is taken for what the user typed.
func TestEarlierAndFirstPrompt(t *testing.T) {
	t.Parallel()
	summary := chat.Message{Role: chat.RoleUser, Content: "[Summary of the earlier conversation]\nThe user asked for a.\nIt was done.", Summary: true}
	result := chat.UserMessage(behavior.FormatQueryResult(chat.Query{Kind: chat.QueryRead, Path: "go.mod"}, chat.ToolOutcome{Content: "module m\ngo 1.26"}))
	asst := func(text string) chat.Message { return chat.Message{Role: chat.RoleAssistant, Content: text} }
	msgs := []chat.Message{summary, chat.UserMessage("Now b."), asst("I need to read go.mod."), result, asst("b is done.")}

	var w strings.Builder
	showEarlier(&w, msgs, 3)
	assert.Equal(t, "── earlier in this thread (5 messages; the last 5 shown) ──\n"+
		"  · (the conversation before, summarised by the model: 3 lines)\n"+
		"> Now b.\n"+
		"I need to read go.mod.\n"+
		"  · [query read go.mod: result]\n"+
		"b is done.\n"+
		"──\n", w.String())

	raw := make([]json.RawMessage, len(msgs))
	for i, m := range msgs {
		b, err := json.Marshal(m)
		require.NoError(t, err)
		raw[i] = b
	}
	assert.Equal(t, "(compacted) Now b.", firstPrompt(&threadwire.Thread{Messages: raw}), "the prompts before the summary are gone: said so")
	assert.Equal(t, "Now b.", firstPrompt(&threadwire.Thread{Messages: raw[1:]}))
}
