package app

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
)

// TestToolOutput checks what a round of tools shows: an edit as a diff
// numbered from its line, a command's last lines with the count of those
// hidden (/expand shows them), an error whole, -v everything whole.
func TestToolOutput(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 60) + "END"
	round := fakellm.Reply{ToolCalls: []fakellm.ToolCall{
		{ID: "c1", Name: "edit_file", Args: `{"path":"a.txt","old_str":"three\n","new_str":"three\nfour\n"}`},
		{ID: "c2", Name: "bash", Args: `{"command":"seq 1 25"}`},
		{ID: "c3", Name: "read_file", Args: `{"path":"missing-` + long + `"}`},
	}}
	tests := []struct {
		name    string
		args    []string
		input   string
		want    []string
		notWant []string
	}{
		{
			name:  "the default view",
			input: "Go.\n",
			want: []string{
				"→ edit_file a.txt\n", "→ bash $ seq 1 25\n",
				"    --- a/a.txt\n    +++ b/a.txt\n    @@ -3 +3,2 @@\n     three\n    +four\n",
				"  ✓ bash: 25 lines of output\n",
				"    25\n",
				long + `"`, // the error whole
			},
			notWant: []string{"\n    15\n", "\x1b["},
		},
		{
			name:  "/expand",
			input: "Go.\n/expand\n",
			want:  []string{"── bash $ seq 1 25\n1\n2\n"},
		},
		{
			name:  "-v",
			args:  []string{"-v"},
			input: "Go.\n",
			want:  []string{`→ bash {"command":"seq 1 25"}`, "✓ bash: 1\n    2\n    3\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, fakellm.Anthropic, map[string]string{"a.txt": "one\ntwo\nthree\n"}, round, fakellm.Reply{Text: "Done."})
			r := e.run(t, tt.input, tt.args...)
			require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
			for _, s := range tt.want {
				assert.Contains(t, r.stderr, s)
			}
			for _, s := range tt.notWant {
				assert.NotContains(t, r.stderr, s)
			}
			if tt.name == "the default view" {
				// The command's last lines, each once: after its result, the
				// earlier ones counted, or (when the command outlived the
				// first report, as on a busy machine) while it ran.
				assert.Regexp(t, `(?s)(  ✓ bash: 25 lines of output\n    … 15 earlier lines hidden; /expand shows the whole output\n    16\n|    … \d+ lines\n.*    21\n)`, r.stderr)
				for _, l := range []string{"21", "22", "23", "24", "25"} {
					assert.Equal(t, 1, strings.Count(r.stderr, "\n    "+l+"\n"), "line %s once", l)
				}
			}
		})
	}
}

// TestColor shows an edit in a pseudo-terminal: coloured, unless NO_COLOR
// is set.
func TestColor(t *testing.T) {
	t.Parallel()
	for _, noColor := range []bool{false, true} {
		t.Run(fmt.Sprintf("NO_COLOR=%v", noColor), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, fakellm.Anthropic, map[string]string{"a.txt": "one\n"},
				fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "edit_file", Args: `{"path":"a.txt","old_str":"one\n","new_str":"one\ntwo\n"}`}}},
				fakellm.Reply{Text: "Done."})
			var env []string
			if noColor {
				env = []string{"NO_COLOR=1"}
			}
			s := startPTY(t, e, env)
			s.waitScreen(t, "> ")
			s.typeKeys(t, "Go.\r")
			s.waitScreen(t, "Done.")
			s.typeKeys(t, "\x04")
			require.Equal(t, 0, s.wait(t), "screen:\n%s", s.screen.String())
			green := sgrGreen + "+two" + sgrReset
			if noColor {
				assert.NotContains(t, s.screen.String(), green)
				assert.Contains(t, s.screen.String(), "+two")
			} else {
				assert.Contains(t, s.screen.String(), green)
			}
		})
	}
}
