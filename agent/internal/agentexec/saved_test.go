package agentexec_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// TestSavedHook runs a turn of two rounds, then resumes the thread: the
// Saved hook sees every save, each later than the one before, the last
// of each run the thread as its journal holds it; a resumed thread is
// handed over at its start, before anything else happens.
func TestSavedHook(t *testing.T) {
	t.Parallel()
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			s := newSession(t, p, map[string]string{"a.txt": "a\n"},
				fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "read_file", Args: `{"path":"a.txt"}`}}},
				fakellm.Reply{Text: "Read it."},
			)
			var seen []*threadwire.Thread
			keep := func(th *threadwire.Thread) {
				c := *th
				c.Messages = slices.Clone(th.Messages)
				seen = append(seen, &c)
			}
			_, err := s.run(t, run{prompt: "Read a.txt.", saved: keep})
			require.NoError(t, err)
			require.GreaterOrEqual(t, len(seen), 3, "the prompt, the rounds and the turn's end are saved")
			for i := 1; i < len(seen); i++ {
				assert.True(t, seen[i].Updated.After(seen[i-1].Updated), "save %d is later than save %d", i, i-1)
			}
			stored, err := json.Marshal(s.thread(t))
			require.NoError(t, err)
			last, err := json.Marshal(seen[len(seen)-1])
			require.NoError(t, err)
			assert.JSONEq(t, string(stored), string(last), "the last save handed over is the thread as saved")
			assert.Len(t, seen[len(seen)-1].Messages, 4)

			seen = nil
			_, err = s.run(t, run{input: strings.NewReader(""), saved: keep})
			require.NoError(t, err)
			require.NotEmpty(t, seen, "a resumed thread is handed over at its start")
			assert.Len(t, seen[0].Messages, 4)
		})
	}
}
