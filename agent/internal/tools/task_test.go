package tools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// TestTask runs the task tool through a Set: its runner gets the
// arguments decoded, the call's ID in its context and the call's
// progress; bad arguments never reach it; it only reads. "write" reaches
// the runner (which refuses it, saying why, unless the session allows a
// writing subagent) though the read-only tool's schema does not offer it.
func TestTask(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    string
		want    TaskArgs // the runner's arguments; zero: not run
		errPart string   // in the error result
	}{
		{"both", `{"description": "find it", "prompt": "Find the retry logic."}`, TaskArgs{Description: "find it", Prompt: "Find the retry logic."}, ""},
		{"no description", `{"prompt": "Find it."}`, TaskArgs{Prompt: "Find it."}, ""},
		{"no prompt", `{"description": "find it"}`, TaskArgs{}, `missing required field "prompt"`},
		{"an empty prompt", `{"prompt": "  "}`, TaskArgs{}, `missing required field "prompt"`},
		{"write", `{"prompt": "Fix it.", "write": true}`, TaskArgs{Prompt: "Fix it.", Write: true}, ""},
		{"write false", `{"prompt": "Find it.", "write": false}`, TaskArgs{Prompt: "Find it."}, ""},
		{"an unknown argument", `{"prompt": "x", "mode": "plan"}`, TaskArgs{}, `unknown field "mode"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got TaskArgs
			var gotID string
			run := func(ctx context.Context, a TaskArgs, progress func(chat.ToolProgress)) (string, error) {
				got, gotID = a, CallID(ctx)
				progress(chat.ToolProgress{Message: "subagent started"})
				return "the answer", nil
			}
			set, err := NewSet(Options{}, Task(run))
			require.NoError(t, err)
			assert.False(t, set.Mutating(TaskName), "the task tool only reads")
			var reports []chat.ToolProgress
			out := set.Run(t.Context(), chat.ToolCall{ID: "call_7", Name: TaskName, Arguments: json.RawMessage(tt.args)},
				func(p chat.ToolProgress) { reports = append(reports, p) })
			assert.Equal(t, tt.want, got)
			if tt.errPart != "" {
				assert.True(t, out.IsError)
				assert.Contains(t, out.Content, tt.errPart)
				assert.Empty(t, reports)
				return
			}
			assert.Equal(t, chat.ToolOutcome{Content: "the answer"}, out)
			assert.Equal(t, "call_7", gotID, "the runner knows its call")
			assert.Equal(t, []chat.ToolProgress{{Message: "subagent started"}}, reports)
		})
	}
}

// TestWritingTask: the task tool of a session whose subagents may write
// offers "write" in its schema and says so in its description; it is a
// mutating tool (its calls run in order, their round noted for the
// turn's commit) that is never asked about itself. The read-only one
// offers no "write".
func TestWritingTask(t *testing.T) {
	t.Parallel()
	run := func(context.Context, TaskArgs, func(chat.ToolProgress)) (string, error) { return "", nil }
	set, err := NewSet(Options{}, WritingTask(run))
	require.NoError(t, err)
	assert.True(t, set.Mutating(TaskName))
	assert.Equal(t, ApprovalNever, set.Approval(TaskName))
	spec := set.Specs()[0]
	assert.Contains(t, string(spec.InputSchema), `"write"`)
	assert.Contains(t, spec.Description, `With "write": true it may also change the workspace`)

	ro, err := NewSet(Options{}, Task(run))
	require.NoError(t, err)
	assert.NotContains(t, string(ro.Specs()[0].InputSchema), `"write"`)
	assert.Contains(t, ro.Specs()[0].Description, "It cannot change files")
	assert.Equal(t, ApprovalNever, ro.Approval(TaskName))
}

// TestCallIDOutsideARun: a context no Set.Run made holds no call.
func TestCallIDOutsideARun(t *testing.T) {
	t.Parallel()
	assert.Empty(t, CallID(t.Context()))
}
