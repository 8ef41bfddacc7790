package tools

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// fakeTool is a tool whose behaviour a test chooses.
type fakeTool struct {
	name string
	run  func(ctx context.Context, progress func(chat.ToolProgress)) (string, error)
}

func (f fakeTool) Spec() chat.ToolSpec {
	return chat.ToolSpec{Name: f.name, Description: "test tool", InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (f fakeTool) Run(ctx context.Context, _ json.RawMessage, progress func(chat.ToolProgress)) (string, error) {
	return f.run(ctx, progress)
}

func TestSetRun(t *testing.T) {
	t.Parallel()
	// tools returns the tools of the test; stubborn ignores its context
	// until release is closed.
	tools := func(release <-chan struct{}) []Tool {
		return []Tool{
			fakeTool{name: "ok", run: func(context.Context, func(chat.ToolProgress)) (string, error) { return "fine", nil }},
			fakeTool{name: "fails", run: func(context.Context, func(chat.ToolProgress)) (string, error) {
				return "partial output", errors.New("it broke; try again")
			}},
			fakeTool{name: "panics", run: func(context.Context, func(chat.ToolProgress)) (string, error) { panic("boom") }},
			fakeTool{name: "nil_deref", run: func(context.Context, func(chat.ToolProgress)) (string, error) {
				var m map[string]int
				m["x"]++ // panics: assignment to entry in nil map
				return "", nil
			}},
			fakeTool{name: "slow", run: func(ctx context.Context, _ func(chat.ToolProgress)) (string, error) {
				<-ctx.Done()
				return "", ctx.Err()
			}},
			fakeTool{name: "stubborn", run: func(context.Context, func(chat.ToolProgress)) (string, error) {
				<-release // ignores its context
				return "too late", nil
			}},
		}
	}

	tests := []struct {
		name     string
		call     chat.ToolCall
		ctx      func() context.Context
		want     chat.ToolOutcome
		contains []string
	}{
		{name: "success", call: chat.ToolCall{Name: "ok"}, want: chat.ToolOutcome{Content: "fine"}},
		{
			name: "tool error keeps its output", call: chat.ToolCall{Name: "fails"},
			want: chat.ToolOutcome{Content: "it broke; try again\n\npartial output", IsError: true},
		},
		{name: "unknown tool", call: chat.ToolCall{Name: "rm_rf"}, contains: []string{`unknown tool "rm_rf"`, "use one of: fails, nil_deref, ok, panics, slow, stubborn"}},
		{name: "panic", call: chat.ToolCall{Name: "panics"}, contains: []string{"tool panics crashed", "boom"}},
		{name: "runtime panic", call: chat.ToolCall{Name: "nil_deref"}, contains: []string{"crashed", "nil map"}},
		{name: "timeout", call: chat.ToolCall{Name: "slow"}, contains: []string{"tool slow timed out after 100ms"}},
		{name: "tool ignoring its context", call: chat.ToolCall{Name: "stubborn"}, contains: []string{"tool stubborn did not stop", "context deadline exceeded", "was abandoned"}},
		{
			name: "cancelled before the start", call: chat.ToolCall{Name: "ok"},
			ctx: func() context.Context {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx
			},
			contains: []string{"tool ok was not run", "context canceled"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// The time limits are those of a synctest bubble: the slow and
			// the stubborn tool wait for them without real time passing,
			// and no quick tool can pass them, however busy the machine.
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				t.Cleanup(func() { close(release) })
				s, err := NewSet(Options{Timeout: 100 * time.Millisecond}, tools(release)...)
				require.NoError(t, err)
				s.grace = 100 * time.Millisecond
				ctx := context.Background()
				if tt.ctx != nil {
					ctx = tt.ctx()
				}
				var out chat.ToolOutcome
				require.NotPanics(t, func() { out = s.Run(ctx, tt.call, nil) })
				if tt.contains == nil {
					assert.Equal(t, tt.want, out)
					return
				}
				assert.True(t, out.IsError, out.Content)
				for _, c := range tt.contains {
					assert.Contains(t, out.Content, c)
				}
			})
		})
	}
}

func TestSetRunStopsProgressWhenDone(t *testing.T) {
	t.Parallel()
	stop := make(chan struct{})
	finished := make(chan struct{})
	tool := fakeTool{name: "late", run: func(_ context.Context, progress func(chat.ToolProgress)) (string, error) {
		go func() { // reports after Run has returned, as a misbehaving tool might
			defer close(finished)
			<-stop
			progress(chat.ToolProgress{Message: "late"})
		}()
		progress(chat.ToolProgress{Message: "early"})
		return "done", nil
	}}
	s, err := NewSet(Options{}, tool)
	require.NoError(t, err)
	var got []string
	out := s.Run(context.Background(), chat.ToolCall{Name: "late"}, func(p chat.ToolProgress) { got = append(got, p.Message) })
	close(stop)
	<-finished
	assert.Equal(t, chat.ToolOutcome{Content: "done"}, out)
	assert.Equal(t, []string{"early"}, got)
}

func TestNewSetRefusesBadNames(t *testing.T) {
	t.Parallel()
	ok := func(context.Context, func(chat.ToolProgress)) (string, error) { return "", nil }
	_, err := NewSet(Options{}, fakeTool{name: "a", run: ok}, fakeTool{name: "a", run: ok})
	assert.ErrorContains(t, err, `two tools are named "a"`)
	_, err = NewSet(Options{}, fakeTool{name: "", run: ok})
	assert.ErrorContains(t, err, "empty name")
}

func TestSpecs(t *testing.T) {
	t.Parallel()
	specs := Default(newWorkspace(t), Options{}).Specs()
	var names []string
	for _, sp := range specs {
		names = append(names, sp.Name)
		assert.NotEmpty(t, sp.Description, sp.Name)
		var schema struct {
			Type                 string                     `json:"type"`
			Properties           map[string]json.RawMessage `json:"properties"`
			Required             []string                   `json:"required"`
			AdditionalProperties *bool                      `json:"additionalProperties"`
		}
		require.NoError(t, json.Unmarshal(sp.InputSchema, &schema), sp.Name)
		assert.Equal(t, "object", schema.Type, sp.Name)
		require.NotNil(t, schema.AdditionalProperties, sp.Name)
		assert.False(t, *schema.AdditionalProperties, sp.Name)
		for _, r := range schema.Required {
			assert.Contains(t, schema.Properties, r, "%s requires an undeclared property", sp.Name)
		}
	}
	assert.Equal(t, []string{"bash", "edit_file", "list_files", "read_file"}, names)
	assert.Equal(t, specs, Default(newWorkspace(t), Options{}).Specs(), "specs are deterministic")
}
