package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
)

// TestInstructions runs the agent in workspaces with instructions files
// and checks what reaches the model: the root's and the user's in the
// system prompt, a subdirectory's with the first tool result under it
// (the system prompt unchanged), CLAUDE.md where there is no AGENTS.md,
// the size limits, and a link leading outside refused.
func TestInstructions(t *testing.T) {
	t.Parallel()
	readSub := fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "read_file", Args: `{"path":"sub/deep/x.go"}`}}}
	readSubAgain := fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c2", Name: "list_files", Args: `{"path":"sub"}`}}}
	tests := []struct {
		name        string
		files       map[string]string
		user        string // the user's AGENTS.md
		config      string
		link        string // AGENTS.md links to a file outside holding this
		replies     []fakellm.Reply
		wantSystem  []string
		notSystem   []string
		wantResults []string // in the first request's... tool results, by order over all requests
		notResults  []string
		wantErr     []string
	}{
		{
			name:       "the root's AGENTS.md is in the system prompt",
			files:      map[string]string{"AGENTS.md": "Always answer in French.\n"},
			replies:    []fakellm.Reply{{Text: "D'accord."}},
			wantSystem: []string{"## AGENTS.md (the project's instructions, at the workspace root)\n\nAlways answer in French.", "You are a coding agent"},
			wantErr:    []string{"agent: instructions: AGENTS.md (/instructions shows them)"},
		},
		{
			name:       "CLAUDE.md where there is no AGENTS.md",
			files:      map[string]string{"CLAUDE.md": "Use tabs.\n"},
			replies:    []fakellm.Reply{{Text: "ok"}},
			wantSystem: []string{"## CLAUDE.md", "Use tabs."},
		},
		{
			name:       "AGENTS.md wins over CLAUDE.md",
			files:      map[string]string{"CLAUDE.md": "Use tabs.\n", "AGENTS.md": "Use spaces.\n"},
			replies:    []fakellm.Reply{{Text: "ok"}},
			wantSystem: []string{"Use spaces."},
			notSystem:  []string{"Use tabs."},
		},
		{
			name:       "the user's file, then the project's",
			files:      map[string]string{"AGENTS.md": "Project rule.\n"},
			user:       "User rule.\n",
			replies:    []fakellm.Reply{{Text: "ok"}},
			wantSystem: []string{"the user's instructions, for every project)\n\nUser rule.", "Project rule."},
		},
		{
			name:       "a subdirectory's instructions come with the first tool result under it, once",
			files:      map[string]string{"AGENTS.md": "Root rule.\n", "sub/AGENTS.md": "Sub rule.\n", "sub/deep/CLAUDE.md": "Deep rule.\n", "sub/deep/x.go": "package x\n"},
			replies:    []fakellm.Reply{readSub, readSubAgain, {Text: "done"}},
			wantSystem: []string{"Root rule."},
			notSystem:  []string{"Sub rule.", "Deep rule."},
			wantResults: []string{"package x\n\n\n[instructions: sub/AGENTS.md applies to the files under sub/; follow it there]\nSub rule.\n[end of sub/AGENTS.md]" +
				"\n\n[instructions: sub/deep/CLAUDE.md applies to the files under sub/deep/; follow it there]\nDeep rule.\n[end of sub/deep/CLAUDE.md]"},
		},
		{
			name:       "a file over the limit is cut, and says so",
			files:      map[string]string{"AGENTS.md": strings.Repeat("a", 50) + strings.Repeat("b", 50)},
			config:     "instructions:\n  max_file_size: 60\n",
			replies:    []fakellm.Reply{{Text: "ok"}},
			wantSystem: []string{strings.Repeat("a", 50) + strings.Repeat("b", 10) + "\n[AGENTS.md was cut after 60 of 100 bytes: the limit of one file]"},
			notSystem:  []string{strings.Repeat("b", 11)},
			wantErr:    []string{"agent: instructions AGENTS.md cut after 60 of 100 bytes"},
		},
		{
			name:       "the total limit leaves later files out",
			files:      map[string]string{"AGENTS.md": strings.Repeat("r", 80), "sub/AGENTS.md": "Sub rule.\n", "sub/deep/x.go": "package x\n"},
			config:     "instructions:\n  max_total_size: 80\n",
			replies:    []fakellm.Reply{readSub, {Text: "ok"}},
			wantSystem: []string{strings.Repeat("r", 80)},
			notResults: []string{"Sub rule."},
		},
		{
			name:      "a linked AGENTS.md leading outside the workspace is refused",
			link:      "Outside rule.",
			replies:   []fakellm.Reply{{Text: "ok"}},
			notSystem: []string{"Outside rule.", "# Instructions"},
			wantErr:   []string{"agent: instructions AGENTS.md refused: path \"AGENTS.md\" leads outside the workspace through a symbolic link"},
		},
		{
			name:      "instructions can be turned off",
			files:     map[string]string{"AGENTS.md": "Always answer in French.\n"},
			config:    "instructions:\n  enabled: false\n",
			replies:   []fakellm.Reply{{Text: "ok"}},
			notSystem: []string{"French"},
		},
		{
			name:       "the key is redacted from the instructions",
			files:      map[string]string{"AGENTS.md": "Rule one.\n"},
			user:       "The key is " + testKey + ".\n",
			replies:    []fakellm.Reply{{Text: "ok"}},
			wantSystem: []string{"The key is [REDACTED]."},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, fakellm.Anthropic, tt.files, tt.replies...)
			dir := filepath.Join(e.configHome(), "fsmgen-agent")
			require.NoError(t, os.MkdirAll(dir, 0o755))
			if tt.user != "" {
				require.NoError(t, os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte(tt.user), 0o644))
			}
			if tt.config != "" {
				require.NoError(t, os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(tt.config), 0o644))
			}
			if tt.link != "" {
				outside := filepath.Join(t.TempDir(), "rules.md")
				require.NoError(t, os.WriteFile(outside, []byte(tt.link), 0o644))
				require.NoError(t, os.Symlink(outside, filepath.Join(e.ws, "AGENTS.md")))
			}
			r := e.run(t, "", "-p", "Go.")
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			reqs := e.srv.Requests()
			require.Len(t, reqs, len(tt.replies))
			for _, req := range reqs {
				assert.Equal(t, reqs[0].System, req.System, "the system prompt stays the same for the whole session")
			}
			for _, s := range tt.wantSystem {
				assert.Contains(t, reqs[0].System, s)
			}
			for _, s := range tt.notSystem {
				assert.NotContains(t, reqs[0].System, s)
			}
			var results []string
			for _, m := range reqs[len(reqs)-1].Messages {
				if m.ToolCallID != "" {
					results = append(results, m.Text)
				}
			}
			for i, s := range tt.wantResults {
				require.Greater(t, len(results), i, "tool results: %q", results)
				assert.Equal(t, s, results[i])
			}
			if len(tt.wantResults) > 0 {
				for _, later := range results[len(tt.wantResults):] {
					assert.NotContains(t, later, "[instructions:", "a directory's instructions come once")
				}
			}
			for _, s := range tt.notResults {
				for _, res := range results {
					assert.NotContains(t, res, s)
				}
			}
			for _, s := range tt.wantErr {
				assert.Contains(t, r.stderr, s)
			}
			e.checkNoSecret(t)
			rep := replayExit(t, filepath.Join(e.threads, e.onlyThread(t)+".events.jsonl"))
			assert.Equal(t, 0, rep.code, "the session replays: %s%s", rep.stdout, rep.stderr)
		})
	}
}

// TestInstructionsCommand types /instructions: it lists the files loaded,
// their sizes and what was cut, and nothing is sent to the model.
func TestInstructionsCommand(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, map[string]string{"AGENTS.md": strings.Repeat("x", 100)})
	dir := filepath.Join(e.configHome(), "fsmgen-agent")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("instructions:\n  max_file_size: 40\n"), 0o644))
	r := e.run(t, "/instructions\n")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Contains(t, r.stderr, "instructions loaded:\n  AGENTS.md (100 bytes, system prompt): cut after 40 of 100 bytes: the limit of one file")
	assert.Empty(t, e.srv.Requests())
}

// TestInstructionsResume resumes a thread that was sent a subdirectory's
// instructions: they do not come again; the system prompt is read again.
func TestInstructionsResume(t *testing.T) {
	t.Parallel()
	read := func(id string) fakellm.Reply {
		return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: id, Name: "read_file", Args: `{"path":"sub/x.go"}`}}}
	}
	e := newEnv(t, fakellm.OpenAI, map[string]string{"AGENTS.md": "Root rule.\n", "sub/AGENTS.md": "Sub rule.\n", "sub/x.go": "package x\n"},
		read("c1"), fakellm.Reply{Text: "one"}, read("c2"), fakellm.Reply{Text: "two"})
	r := e.run(t, "", "-p", "First.")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	r = e.run(t, "", "-resume", e.onlyThread(t), "-p", "Second.")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	reqs := e.srv.Requests()
	require.Len(t, reqs, 4)
	results := map[string]string{}
	for _, m := range reqs[3].Messages {
		if m.ToolCallID != "" {
			results[m.ToolCallID] = m.Text
		}
	}
	assert.Contains(t, results["c1"], "Sub rule.")
	assert.Equal(t, "package x\n", results["c2"], "sent once in the thread")
	assert.Contains(t, reqs[2].System, "Root rule.")
}

// TestInstructionsSentAgain: a subdirectory's instructions are what the
// conversation holds, so they come again once the result that brought
// them is gone (cut by /undo, summarised by /compact), in a live session
// as in a resumed one; a query's result that brought them counts as a
// tool's does; and the round's output budget never cuts them.
func TestInstructionsSentAgain(t *testing.T) {
	t.Parallel()
	const rule = "[instructions: sub/AGENTS.md applies to the files under sub/; follow it there]\nSub rule.\n[end of sub/AGENTS.md]"
	read := func(id, path string) fakellm.Reply {
		return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: id, Name: "read_file", Args: `{"path":"` + path + `"}`}}}
	}
	query := fakellm.Reply{Text: "QUERY: read sub/x.go\n"}
	type session struct {
		stdin string
		args  []string
	}
	tests := []struct {
		name     string
		sessions []session
		replies  []fakellm.Reply
		carry    []bool // whether each result of the last request brings them
		check    func(t *testing.T, results []string)
	}{
		{
			name:     "sent again after /undo cut the result",
			sessions: []session{{"Read.\n/undo\nRead again.\n", []string{"-commit", "off"}}},
			replies:  []fakellm.Reply{read("c1", "sub/x.go"), {Text: "one"}, read("c2", "sub/x.go"), {Text: "two"}},
			carry:    []bool{true},
		},
		{
			name:     "sent again after a compaction summarised the result",
			sessions: []session{{"Read.\nSecond.\n/compact\nRead again.\n", nil}},
			replies:  []fakellm.Reply{read("c1", "sub/x.go"), {Text: "one"}, {Text: "two"}, {Text: summaryText}, read("c2", "sub/x.go"), {Text: "three"}},
			carry:    []bool{true},
		},
		{
			name:     "not sent again while the conversation holds them",
			sessions: []session{{"Read.\nRead again.\n", nil}},
			replies:  []fakellm.Reply{read("c1", "sub/x.go"), {Text: "one"}, read("c2", "sub/x.go"), {Text: "two"}},
			carry:    []bool{true, false},
		},
		{
			name:     "a query's result of a session before holds them",
			sessions: []session{{"", []string{"-tool-calls=false", "-p", "First."}}, {"", []string{"-tool-calls=false", "-resume", "last", "-p", "Second."}}},
			replies:  []fakellm.Reply{query, {Text: "one"}, query, {Text: "two"}},
			carry:    []bool{true, false},
		},
		{
			name:     "a result over the round's budget keeps them whole",
			sessions: []session{{"", []string{"-max-round-output", "1KiB", "-p", "Read."}}},
			replies:  []fakellm.Reply{read("c1", "sub/big.txt"), {Text: "one"}},
			carry:    []bool{true},
			check: func(t *testing.T, results []string) {
				assert.Contains(t, results[0], "[... cut: this result is ")
				assert.True(t, strings.HasSuffix(results[0], "...]\n\n"+rule), "the instructions follow the cut: %q", results[0][max(len(results[0])-400, 0):])
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, fakellm.OpenAI, map[string]string{"sub/AGENTS.md": "Sub rule.\n", "sub/x.go": "package x\n",
				"sub/big.txt": strings.Repeat("0123456789abcde\n", 1024)}, tt.replies...)
			for _, s := range tt.sessions {
				r := e.run(t, s.stdin, s.args...)
				require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			}
			reqs := e.srv.Requests()
			require.Len(t, reqs, len(tt.replies))
			var results []string
			for _, m := range reqs[len(reqs)-1].Messages {
				if m.ToolCallID != "" || (m.Role == "user" && strings.HasPrefix(m.Text, "[query ")) {
					results = append(results, m.Text)
				}
			}
			require.Len(t, results, len(tt.carry), "results: %q", results)
			for i, want := range tt.carry {
				assert.Equal(t, want, strings.Contains(results[i], rule), "result %d: %q", i+1, results[i])
			}
			if tt.check != nil {
				tt.check(t, results)
			}
			rep := replayExit(t, filepath.Join(e.threads, e.onlyThread(t)+".events.jsonl"))
			assert.Equal(t, 0, rep.code, "the session replays: %s%s", rep.stdout, rep.stderr)
		})
	}
}

// TestDeepPath has the model call the file tools on deep paths that do
// not exist: each is answered (the missing file said so, with the
// instructions of the directories that exist on its way; a path over the
// depth limit refused), within the tool timeout, and the session ends.
func TestDeepPath(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("a/", 1000) + "x"
	tooDeep := strings.Repeat("a/", 4096) + "x"
	call := func(id, name, path string) fakellm.ToolCall {
		return fakellm.ToolCall{ID: id, Name: name, Args: `{"path":"` + path + `"}`}
	}
	e := newEnv(t, fakellm.Anthropic, map[string]string{"a/AGENTS.md": "A rule.\n"},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("c1", "read_file", deep), call("c2", "list_files", tooDeep)}},
		fakellm.Reply{Text: "done"})
	r := e.run(t, "", "-tool-timeout", "10s", "-p", "Go.")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	reqs := e.srv.Requests()
	require.Len(t, reqs, 2)
	results := map[string]string{}
	for _, m := range reqs[1].Messages {
		if m.ToolCallID != "" {
			results[m.ToolCallID] = m.Text
		}
	}
	assert.Contains(t, results["c1"], "does not exist")
	assert.Contains(t, results["c1"], "[instructions: a/AGENTS.md applies to the files under a/; follow it there]\nA rule.")
	assert.Contains(t, results["c2"], "more than 1024 components")
}

// TestDeepPathQuery has a model without tool calls ask to read a deep path
// that does not exist: the query is answered (with the instructions of the
// directories that exist on its way) and the turn goes on.
func TestDeepPathQuery(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("a/", 1000) + "x"
	e := newEnv(t, fakellm.OpenAI, map[string]string{"a/AGENTS.md": "A rule.\n"},
		fakellm.Reply{Text: "QUERY: read " + deep},
		fakellm.Reply{Text: "It is not there."})
	r := e.run(t, "", "-tool-calls=false", "-tool-timeout", "10s", "-p", "Read it.")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Equal(t, "It is not there.\n", r.stdout)
	reqs := e.srv.Requests()
	require.Len(t, reqs, 2)
	last := reqs[1].Messages[len(reqs[1].Messages)-1].Text
	assert.Contains(t, last, "does not exist")
	assert.Contains(t, last, "[instructions: a/AGENTS.md applies to the files under a/; follow it there]")
}
