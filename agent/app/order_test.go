package app

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/internal/gittest"
)

// TestToolOrder checks that the calls of one reply that change anything
// run in the order the model gave them (issue 23 item 8): a file written
// by bash and then edited in the same reply is edited, and a command
// after the edit sees it.
func TestToolOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		args  []string
		calls func(t *testing.T) []fakellm.ToolCall
		want  map[string]string // files and their content after the round
		last  string            // what the last call's result holds
	}{
		{
			name: "bash writes, edit_file edits",
			calls: func(t *testing.T) []fakellm.ToolCall {
				return []fakellm.ToolCall{
					bashCall(t, "c1", "sleep 0.3; mkdir -p gen; echo original > gen/b.txt"),
					{ID: "c2", Name: "edit_file", Args: `{"path":"gen/b.txt","old_str":"original","new_str":"edited"}`},
				}
			},
			want: map[string]string{"gen/b.txt": "edited\n"},
		},
		{
			name: "bash writes, edit_file edits, bash reads, one call at a time",
			args: []string{"-parallel-tools", "1"},
			calls: func(t *testing.T) []fakellm.ToolCall {
				return []fakellm.ToolCall{
					bashCall(t, "c1", "sleep 0.3; mkdir -p gen; echo original > gen/b.txt"),
					{ID: "c2", Name: "edit_file", Args: `{"path":"gen/b.txt","old_str":"original","new_str":"edited"}`},
					bashCall(t, "c3", "cat gen/b.txt"),
				}
			},
			want: map[string]string{"gen/b.txt": "edited\n"},
			last: "edited",
		},
		{
			name: "two edits of one new file",
			calls: func(t *testing.T) []fakellm.ToolCall {
				return []fakellm.ToolCall{
					{ID: "c1", Name: "edit_file", Args: `{"path":"n.txt","old_str":"","new_str":"one\n"}`},
					{ID: "c2", Name: "edit_file", Args: `{"path":"n.txt","old_str":"one","new_str":"two"}`},
					bashCall(t, "c3", "cat n.txt >> log.txt"),
				}
			},
			want: map[string]string{"n.txt": "two\n", "log.txt": "two\n"},
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
			for _, res := range resultsOf(reqs[1]) {
				assert.NotContains(t, res, "(error)")
			}
			results := resultsOf(reqs[1])
			assert.Contains(t, results[len(results)-1], tt.last, "the last call sees what the calls before it did")
			for name, content := range tt.want {
				assert.Equal(t, content, gittest.ReadFile(t, e.ws, name), name)
			}
		})
	}
}
