package agentexec

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// TestCompletionOrder checks which calls wait for which: each call whose
// ID an earlier call has waits for the last such call, the others for
// none.
func TestCompletionOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		ids   []string
		after []int // the call each waits for; -1 for none
	}{
		{"distinct IDs", []string{"a", "b", "c"}, []int{-1, -1, -1}},
		{"one ID three times", []string{"a", "a", "a"}, []int{-1, 0, 1}},
		{"interleaved", []string{"a", "b", "a", "c", "b", "a"}, []int{-1, -1, 0, -1, 1, 2}},
		{"empty IDs are one ID", []string{"", ""}, []int{-1, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			calls := make([]chat.ToolCall, len(tt.ids))
			for i, id := range tt.ids {
				calls[i] = chat.ToolCall{ID: id}
			}
			turns := completionOrder(calls)
			for i, want := range tt.after {
				if want < 0 {
					assert.Nil(t, turns[i].after, "call %d", i)
					continue
				}
				assert.True(t, turns[i].after == turns[want].next, "call %d waits for call %d", i, want)
			}
			// Done in order, each lets the next go.
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			for i := range turns {
				assert.True(t, turns[i].wait(ctx), "call %d", i)
				turns[i].done()
			}
		})
	}
	t.Run("a call waiting for its turn stops with its context", func(t *testing.T) {
		t.Parallel()
		turns := completionOrder([]chat.ToolCall{{ID: "a"}, {ID: "a"}})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		assert.False(t, turns[1].wait(ctx))
	})
}

// TestMalformedOutcome checks the result of a malformed call: it names
// the call, says what is wrong and shows the start of what arrived.
func TestMalformedOutcome(t *testing.T) {
	t.Parallel()
	long, _ := json.Marshal(`{"command":"` + strings.Repeat("é", 300))
	tests := []struct {
		name string
		call chat.ToolCall
		want string
	}{
		{
			name: "short",
			call: chat.ToolCall{ID: "c2", Name: "bash", Arguments: json.RawMessage(`"{\"command\":\"echo"`), Malformed: "are not a JSON object"},
			want: MalformedPrefix + ` to bash (id c2) are not a JSON object (the reply's other calls were run); call it again with its arguments as one complete JSON object. What arrived: {"command":"echo`,
		},
		{
			name: "long, cut on a whole character",
			call: chat.ToolCall{ID: "c3", Name: "edit_file", Arguments: long, Malformed: "were cut off"},
			want: MalformedPrefix + ` to edit_file (id c3) were cut off (the reply's other calls were run); call it again with its arguments as one complete JSON object. What arrived: {"command":"` +
				strings.Repeat("é", 94) + "… (612 bytes in all)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, malformedOutcome(tt.call))
		})
	}
}

// TestCallOrder checks which calls of a round each call waits for: a
// mutating call for the mutating call before it, a read-only one for
// none.
func TestCallOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		tools []string
		after [][]int // the calls each waits for, directly
	}{
		{"reads only", []string{"read_file", "list_files", "read_file"}, [][]int{nil, nil, nil}},
		{"writes only", []string{"bash", "edit_file", "bash"}, [][]int{nil, {0}, {1}}},
		{"reads around a write", []string{"read_file", "read_file", "bash", "read_file", "list_files"}, [][]int{nil, nil, nil, nil, nil}},
		{"writes between reads", []string{"edit_file", "read_file", "read_file", "bash", "read_file", "edit_file"}, [][]int{nil, nil, nil, {0}, nil, {3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			calls := make([]chat.ToolCall, len(tt.tools))
			for i, name := range tt.tools {
				calls[i] = chat.ToolCall{ID: string(rune('a' + i)), Name: name}
			}
			steps := callOrder(calls, func(name string) bool { return name == "bash" || name == "edit_file" })
			for i, s := range steps {
				var got []int
				for _, ch := range s.after {
					for j := range steps {
						if (<-chan struct{})(steps[j].ended) == ch {
							got = append(got, j)
						}
					}
				}
				assert.Equal(t, tt.after[i], got, "call %d (%s)", i, tt.tools[i])
			}
		})
	}
}
