package app

import (
	"bufio"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/internal/proctest"
)

// jsonLines decodes the JSON events a run printed, one a line, each
// required to be a JSON object with a type.
func jsonLines(t *testing.T, stdout string) []map[string]any {
	t.Helper()
	var evs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &ev), "line %d: %s", len(evs)+1, sc.Text())
		require.NotEmpty(t, ev["type"], "line %d has no type: %s", len(evs)+1, sc.Text())
		evs = append(evs, ev)
	}
	require.NoError(t, sc.Err())
	return evs
}

// types lists the events' types, a run of text events as one.
func types(evs []map[string]any) []string {
	var out []string
	for _, ev := range evs {
		typ := ev["type"].(string)
		if typ == evText && len(out) > 0 && out[len(out)-1] == evText {
			continue
		}
		out = append(out, typ)
	}
	return out
}

// lastLine is the last line of out, without its newline: with -json,
// the result.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	return lines[len(lines)-1]
}

// firstOf is the first event of type typ, nil when there is none.
func firstOf(evs []map[string]any, typ string) map[string]any {
	for _, ev := range evs {
		if ev["type"] == typ {
			return ev
		}
	}
	return nil
}

// TestJSONEvents runs "agent -p -json" through the binary: a line of JSON
// for each event, in the order they happened, the result last, the key
// redacted wherever the model or a tool put it.
func TestJSONEvents(t *testing.T) {
	t.Parallel()
	for _, p := range []fakellm.Provider{fakellm.Anthropic, fakellm.OpenAI} {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, p, map[string]string{"a.txt": "alpha\n"},
				fakellm.Reply{Text: "Let me look at the files now.", ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "read_file", Args: `{"path":"a.txt"}`}}},
				fakellm.Reply{Text: "It says alpha; your key is " + testKey + " by the way."},
			)
			r := e.run(t, "", "-p", "What is in a.txt?", "-json", "-price", "1,2", "-commit", "off")
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			assert.NotContains(t, r.stdout, testKey)
			evs := jsonLines(t, r.stdout)
			assert.Equal(t, []string{evStart, evText, evReply, evToolCall, evToolResult, evText, evReply, evResult}, types(evs), r.stdout)

			id := e.onlyThread(t)
			assert.Equal(t, id, evs[0]["session"])
			assert.Equal(t, "fake-model", evs[0]["model"])
			assert.Equal(t, string(p), evs[0]["provider"])

			var streamed strings.Builder
			deltas := 0
			for _, ev := range evs {
				if ev["type"] == evText {
					streamed.WriteString(ev["text"].(string))
					deltas++
				}
			}
			assert.Greater(t, deltas, 2, "the reply streams in pieces, each a line")
			assert.Equal(t, "Let me look at the files now.It says alpha; your key is [REDACTED] by the way.", streamed.String())

			call := firstOf(evs, evToolCall)
			assert.Equal(t, "c1", call["id"])
			assert.Equal(t, "read_file", call["name"])
			assert.Equal(t, map[string]any{"path": "a.txt"}, call["arguments"])
			res := firstOf(evs, evToolResult)
			assert.Equal(t, "c1", res["id"])
			assert.Contains(t, res["content"], "alpha")

			last := evs[len(evs)-1]
			assert.Equal(t, id, last["session"])
			assert.Equal(t, "It says alpha; your key is [REDACTED] by the way.", last["answer"])
			assert.NotContains(t, last, "error")
			assert.Equal(t, 20.0, last["usage"].(map[string]any)["input_tokens"])
			assert.InDelta(t, (20*1+40*2)/1e6, last["cost"], 1e-12)
		})
	}
}

// TestJSONEventsWhileRunning reads the JSON events of a command as it
// runs: its lines come as tool_progress events before it ends, then its
// result, the reply and the turn's commit of the file it wrote; the key
// in the command is redacted.
func TestJSONEventsWhileRunning(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fakellm.Anthropic, nil,
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{bashCall(t, "c1", "echo "+testKey+" > out.txt; "+gatedCommand)}},
		fakellm.Reply{Text: "Ran it."})
	ctx, cancel := context.WithTimeout(context.Background(), runLimit)
	defer cancel()
	cmd := e.command(ctx, "-p", "Run it.", "-json")
	var stdout, stderr proctest.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	require.Eventually(t, func() bool { return strings.Contains(stdout.String(), "line 7") },
		60*time.Second, 10*time.Millisecond, "the lines while the command runs; stdout:\n%s", stdout.String())
	running := jsonLines(t, stdout.String())
	assert.Equal(t, []string{evStart, evReply, evToolCall, evToolProgress}, slices.Compact(types(running)), stdout.String())
	assert.Nil(t, firstOf(running, evToolResult), "no result while it runs")
	openGate(t, e, "gate1")
	openGate(t, e, "gate2")
	require.NoError(t, cmd.Wait(), "stderr:\n%s", stderr.String())

	out := stdout.String()
	assert.NotContains(t, out, testKey)
	evs := jsonLines(t, out)
	assert.Equal(t, []string{evStart, evReply, evToolCall, evToolProgress, evToolResult, evText, evReply, evCommit, evResult},
		slices.Compact(types(evs)), out)
	assert.Contains(t, firstOf(evs, evToolCall)["arguments"].(map[string]any)["command"], "echo [REDACTED] > out.txt")
	res := firstOf(evs, evToolResult)
	assert.Contains(t, res["content"], "line 8")
	assert.NotContains(t, res, "is_error")
	commit := firstOf(evs, evCommit)
	assert.Equal(t, true, commit["committed"], out)
	assert.NotEmpty(t, commit["commit"])
	assert.Equal(t, "Ran it.", evs[len(evs)-1]["answer"])
}
