package agentexec_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/agent/internal/autocommit"
	"github.com/fsmgen/fsmgen/agent/internal/eventlog"
	"github.com/fsmgen/fsmgen/agent/internal/llm"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// A realistic round of the agent, as the log-size benchmark and test run
// it: the user asks; the model answers with a line of text and three tool
// calls (two read_file, one edit_file); the tools return resultSize bytes
// each; the post-tools hook runs (edit_file mutates); the model answers
// with a short text. Everything runs in process: the machine, the
// executor, the event log, with a scripted LLM and scripted tools.

// roundLLM is a Provider that plays the model of a realistic round: it
// answers a user's message with tool calls and tool results with text.
type roundLLM struct{}

// Name implements llm.Provider.
func (roundLLM) Name() string { return "scripted" }

// Stream implements llm.Provider.
func (roundLLM) Stream(ctx context.Context, req chat.Request, emit func(llm.Event)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	n := len(req.Messages)
	if n == 0 || req.Messages[n-1].Role != chat.RoleUser {
		text := fmt.Sprintf("Done: a.go now handles case %d, and b.go calls it. The tests pass.", n)
		emit(llm.TextDelta{Text: text})
		emit(llm.Completed{Response: chat.Response{Message: chat.Message{Role: chat.RoleAssistant, Content: text}, Usage: chat.Usage{InputTokens: 100 * n, OutputTokens: 40}, StopReason: "end_turn"}})
		return nil
	}
	text := "Let me read both files, then make the change."
	calls := []chat.ToolCall{
		{ID: fmt.Sprintf("toolu_%d_a", n), Name: "read_file", Arguments: json.RawMessage(`{"path":"a.go"}`)},
		{ID: fmt.Sprintf("toolu_%d_b", n), Name: "read_file", Arguments: json.RawMessage(`{"path":"b.go"}`)},
		{ID: fmt.Sprintf("toolu_%d_c", n), Name: "edit_file", Arguments: json.RawMessage(fmt.Sprintf(`{"path":"a.go","old_str":"\t// case %d\n","new_str":"\tcase %d:\n\t\treturn handle%d(x)\n"}`, n, n, n))},
	}
	emit(llm.TextDelta{Text: text})
	for _, c := range calls {
		emit(llm.ToolCallDelta{CallID: c.ID, ToolName: c.Name})
		emit(llm.ToolCallDelta{CallID: c.ID, Fragment: string(c.Arguments)})
	}
	emit(llm.Completed{Response: chat.Response{Message: chat.Message{Role: chat.RoleAssistant, Content: text, ToolCalls: calls}, Usage: chat.Usage{InputTokens: 100 * n, OutputTokens: 120}, StopReason: "tool_use"}})
	return nil
}

// sizedTools is a ToolRunner whose every call returns size bytes of
// source-like text.
type sizedTools struct{ size int }

// Run implements agentexec.ToolRunner.
func (s sizedTools) Run(_ context.Context, call chat.ToolCall, _ func(chat.ToolProgress)) chat.ToolOutcome {
	var b strings.Builder
	for i := 1; b.Len() < s.size; i++ {
		fmt.Fprintf(&b, "%4d\tfunc %s_%d(x int) int { return x + %d } // %s\n", i, strings.ReplaceAll(call.ID, "-", "_"), i, i, call.Name)
	}
	return chat.ToolOutcome{Content: b.String()[:s.size]}
}

// fixedCommits is a Committer that notes each round and commits each
// turn at once, without git.
type fixedCommits struct{}

// Snapshot implements agentexec.Committer.
func (fixedCommits) Snapshot(context.Context) error { return nil }

// Hook implements agentexec.Committer.
func (fixedCommits) Hook(context.Context, string, []chat.CompletedTool) (autocommit.Result, error) {
	return autocommit.Result{Skipped: autocommit.SkippedRecorded}, nil
}

// CommitTurn implements agentexec.Committer.
func (fixedCommits) CommitTurn(context.Context, autocommit.Turn) (autocommit.Result, error) {
	return autocommit.Result{Committed: true, Commit: strings.Repeat("c", 40), Message: "agent: edit a.go"}, nil
}

// turnSignal is a Display that tells when a turn ends.
type turnSignal struct {
	agentexec.NopDisplay
	ended chan<- struct{}
}

// TurnEnd implements agentexec.Display.
func (d turnSignal) TurnEnd() {
	select {
	case d.ended <- struct{}{}:
	default:
	}
}

// realisticTools are tool specs of the size the agent's are.
func realisticTools() []chat.ToolSpec {
	desc := strings.Repeat("Describes what the tool does, its arguments and its limits to the model. ", 8)
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"a path relative to the workspace root"}},"required":["path"]}`)
	var specs []chat.ToolSpec
	for _, name := range []string{"read_file", "list_files", "edit_file", "bash"} {
		specs = append(specs, chat.ToolSpec{Name: name, Description: desc, InputSchema: schema})
	}
	return specs
}

// runRounds runs the agent through rounds realistic rounds with tool
// results of resultSize bytes, and returns the path of its event log and
// the bytes the log grew by in each round (from the line of the round's
// user input to the line before the next one's).
func runRounds(tb testing.TB, rounds, resultSize int) (string, []int) {
	tb.Helper()
	dir := tb.TempDir()
	logPath := filepath.Join(dir, "bench.events.jsonl")
	elog, err := eventlog.Open(logPath)
	require.NoError(tb, err)
	cfg := behavior.DefaultConfig()
	cfg.System = strings.Repeat("You are a coding agent working in a software project. ", 12)
	cfg.Tools = realisticTools()
	b, err := behavior.New(cfg)
	require.NoError(tb, err)

	in, typing := io.Pipe()
	ended := make(chan struct{}, 1)
	a, err := agentexec.New(agentexec.Config{
		Behavior:  b,
		Provider:  roundLLM{},
		Tools:     sizedTools{size: resultSize},
		Workspace: dir,
		Committer: fixedCommits{},
		Display:   turnSignal{ended: ended},
		Thread:    &threadwire.Thread{Version: threadwire.Version, ID: "T-rounds", Created: time.Unix(0, 0).UTC(), Provider: "scripted", Model: cfg.Model, Workspace: dir},
		EventLog:  elog,
		Secrets:   []string{testKey},
		Input:     in,
	})
	require.NoError(tb, err)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The typist sends each message once the turn before it has ended,
	// then closes the input, which stops the agent. It stops early when
	// the run does (the pipe is closed below).
	typed := make(chan struct{})
	go func() {
		defer close(typed)
		defer typing.Close()
		for i := range rounds {
			if i > 0 {
				select {
				case <-ended:
				case <-ctx.Done():
					return
				}
			}
			if _, err := fmt.Fprintf(typing, "Round %d: handle the next case in a.go and call it from b.go.\n", i+1); err != nil {
				return
			}
		}
		select {
		case <-ended:
		case <-ctx.Done():
		}
	}()
	res, err := a.Run(ctx)
	cancel()
	_ = in.Close()
	<-typed
	require.NoError(tb, elog.Close())
	require.NoError(tb, err)
	require.Equal(tb, rounds, res.Turns)

	f, err := os.Open(logPath)
	require.NoError(tb, err)
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var perRound []int
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var l struct {
				Type  string `json:"type"`
				Event struct {
					Kind string `json:"kind"`
				} `json:"event"`
			}
			require.NoError(tb, json.Unmarshal(line, &l))
			switch {
			case l.Type == eventlog.TypeEvent && l.Event.Kind == "user_input":
				perRound = append(perRound, len(line))
			case l.Type == eventlog.TypeEvent && len(perRound) > 0:
				perRound[len(perRound)-1] += len(line)
			}
		}
		if err == io.EOF {
			break
		}
		require.NoError(tb, err)
	}
	require.Len(tb, perRound, rounds)
	return logPath, perRound
}

// logRounds is how many rounds the log-size benchmark and test run: one
// past the round measured, whose bytes would otherwise include the
// shutdown.
const logRounds = 201

// BenchmarkEventLogPerRound runs logRounds realistic rounds with tool
// results of 3 KB and reports the bytes the event log grows by in round
// 10 and in round 200, and their ratio: a log that grows linearly with the
// session has a ratio near 1.
func BenchmarkEventLogPerRound(b *testing.B) {
	var perRound []int
	for b.Loop() {
		_, perRound = runRounds(b, logRounds, 3000)
	}
	b.ReportMetric(float64(perRound[9]), "B/round@10")
	b.ReportMetric(float64(perRound[199]), "B/round@200")
	b.ReportMetric(float64(perRound[199])/float64(perRound[9]), "ratio200/10")
}

// testRounds is how many rounds TestEventLogGrowsLinearly runs. The
// agent's time per round grows with the conversation (it encodes its
// state after every event), so the test stops well before round 200; a
// log that repeated the conversation would add about four times as much
// in round 40 as in round 10.
const testRounds = 41

// TestEventLogGrowsLinearly checks that a round adds about as much to the
// event log in a long session as at round 10 (at most 1.5 times): the log
// records what the model was sent by reference, not the conversation
// again and again. The log replays exactly. BenchmarkEventLogPerRound
// measures round 200.
func TestEventLogGrowsLinearly(t *testing.T) {
	t.Parallel()
	logPath, perRound := runRounds(t, testRounds, 3000)
	last := perRound[testRounds-2]
	ratio := float64(last) / float64(perRound[9])
	t.Logf("bytes per round: %d at round 10, %d at round %d (ratio %.3f)", perRound[9], last, testRounds-1, ratio)
	assert.LessOrEqual(t, ratio, 1.5)
	assert.Less(t, perRound[9], 3*3000+8000, "a round records its events (three tool results among them) and small actions")

	f, err := os.Open(logPath)
	require.NoError(t, err)
	defer f.Close()
	rep, err := agentexec.ReplayAgent(f)
	require.NoError(t, err)
	require.Nil(t, rep.Diff, "replay differs: %s", rep.Diff)
	assert.Equal(t, 1, rep.Sessions)
}
