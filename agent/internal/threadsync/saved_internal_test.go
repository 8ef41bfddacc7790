package threadsync

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// TestSavedKeepsEachVersion saves a thread whose messages change as the
// agent changes them — appended in place, cut back and grown again over
// the same array, replaced — and checks that every version handed over
// keeps the messages it was saved with.
func TestSavedKeepsEachVersion(t *testing.T) {
	t.Parallel()
	p, err := New(Config{URL: "http://127.0.0.1:1"})
	require.NoError(t, err)
	msg := func(s string) json.RawMessage { return json.RawMessage(`{"role":"user","content":"` + s + `"}`) }
	th := &threadwire.Thread{ID: "t-1", Messages: make([]json.RawMessage, 0, 16)}
	var versions []*snapshot
	steps := []struct {
		name string
		edit func()
		want []string
	}{
		{"two", func() { th.Messages = append(th.Messages, msg("a"), msg("b")) }, []string{"a", "b"}},
		{"one appended", func() { th.Messages = append(th.Messages, msg("c")) }, []string{"a", "b", "c"}},
		{"unchanged", func() {}, []string{"a", "b", "c"}},
		{"cut back and grown over the same array", func() { th.Messages = append(th.Messages[:1], msg("d")) }, []string{"a", "d"}},
		{"grown again", func() { th.Messages = append(th.Messages, msg("e")) }, []string{"a", "d", "e"}},
		{"replaced", func() { th.Messages = []json.RawMessage{msg("summary")} }, []string{"summary"}},
		{"a message re-encoded in place", func() { th.Messages = append(th.Messages, msg("f")); th.Messages[0] = msg("summary2") }, []string{"summary2", "f"}},
	}
	wants := [][]string{}
	for _, st := range steps {
		st.edit()
		p.Saved(th)
		versions = append(versions, p.take())
		wants = append(wants, st.want)
		for i, v := range versions {
			var got []string
			for _, raw := range v.t.Messages {
				var m struct{ Content string }
				require.NoError(t, json.Unmarshal(raw, &m))
				got = append(got, m.Content)
			}
			assert.Equal(t, wants[i], got, "after %q: the version of %q", st.name, steps[i].name)
		}
	}
	for i := 1; i < len(versions); i++ {
		assert.Greater(t, versions[i].rev, versions[i-1].rev, "revisions grow, the thread's Updated time unchanged")
	}
}
