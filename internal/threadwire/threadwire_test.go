package threadwire

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// rawMessages encodes msgs as a Thread holds them.
func rawMessages(t *testing.T, msgs ...chat.Message) []json.RawMessage {
	t.Helper()
	var raw []json.RawMessage
	for _, m := range msgs {
		b, err := json.Marshal(m)
		require.NoError(t, err)
		raw = append(raw, b)
	}
	return raw
}

// TestNoteFirstPrompt: the first typed message is kept, once, and not
// changed by what the conversation becomes; an old compacted thread,
// which no longer holds it, gets none; a long one is cut.
func TestNoteFirstPrompt(t *testing.T) {
	t.Parallel()
	summary := chat.Message{Role: chat.RoleUser, Content: "[Summary]", Summary: true}
	long := strings.Repeat("é", MaxFirstPrompt+10)
	tests := []struct {
		name string
		t    Thread
		want string
	}{
		{"typed", Thread{Messages: rawMessages(t, chat.UserMessage("Fix it."), chat.Message{Role: chat.RoleAssistant, Content: "Done."})}, "Fix it."},
		{"queued only", Thread{QueuedInput: []string{"First.", "Second."}}, "First."},
		{"kept over what the conversation holds now", Thread{FirstPrompt: "Fix it.", Messages: rawMessages(t, summary, chat.UserMessage("Later."))}, "Fix it."},
		{"compacted before it was kept", Thread{Messages: rawMessages(t, summary, chat.UserMessage("Later."))}, ""},
		{"nothing yet", Thread{}, ""},
		{"long", Thread{Messages: rawMessages(t, chat.UserMessage(long))}, strings.Repeat("é", MaxFirstPrompt-1) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			th := tt.t
			th.NoteFirstPrompt()
			assert.Equal(t, tt.want, th.FirstPrompt)
		})
	}
}

// TestFirstPromptWire: first_prompt is read with unknown fields refused,
// as the journal and the server read a thread, and a thread saved without
// it is still read.
func TestFirstPromptWire(t *testing.T) {
	t.Parallel()
	decode := func(s string) (Thread, error) {
		var th Thread
		dec := json.NewDecoder(bytes.NewReader([]byte(s)))
		dec.DisallowUnknownFields()
		err := dec.Decode(&th)
		return th, err
	}
	th, err := decode(`{"version":3,"id":"a","provider":"p","model":"m","workspace":"/w","first_prompt":"Fix it.","ledger":{}}`)
	require.NoError(t, err)
	assert.Equal(t, "Fix it.", th.FirstPrompt)
	b, err := json.Marshal(th)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"first_prompt":"Fix it."`)

	old, err := decode(`{"version":3,"id":"a","provider":"p","model":"m","workspace":"/w","ledger":{}}`)
	require.NoError(t, err, "a thread saved before first_prompt")
	assert.Empty(t, old.FirstPrompt)
	b, err = json.Marshal(old)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "first_prompt", "left out when empty: what an older reader takes")

	_, err = decode(`{"version":3,"id":"a","first_prompts":"x"}`)
	assert.ErrorContains(t, err, "unknown field")
}

// TestHookNoteWire: hook_note is read strictly and left out when empty,
// and a thread saved without it is still read.
func TestHookNoteWire(t *testing.T) {
	t.Parallel()
	decode := func(s string) (Thread, error) {
		var th Thread
		dec := json.NewDecoder(bytes.NewReader([]byte(s)))
		dec.DisallowUnknownFields()
		err := dec.Decode(&th)
		return th, err
	}
	th, err := decode(`{"version":3,"id":"a","hook_note":"lint: 1 issue","ledger":{}}`)
	require.NoError(t, err)
	assert.Equal(t, "lint: 1 issue", th.HookNote)
	old, err := decode(`{"version":3,"id":"a","provider":"p","model":"m","workspace":"/w","ledger":{}}`)
	require.NoError(t, err, "a thread saved before hook_note")
	assert.Empty(t, old.HookNote)
	b, err := json.Marshal(old)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "hook_note", "left out when empty: what an older reader takes")
	_, err = decode(`{"version":3,"id":"a","hook_notes":"x"}`)
	assert.ErrorContains(t, err, "unknown field")
}
