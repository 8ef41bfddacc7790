package app

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/fakellm"
	"github.com/fsmgen/fsmgen/agent/internal/threadsync"
)

// TestSubagentRecords: a subagent's thread has an event log of its own
// beside it, which agent replay checks against the thread, and with
// -sync it is pushed to the server as the parent's is, naming its parent.
func TestSubagentRecords(t *testing.T) {
	t.Parallel()
	srv := newSyncServer(t)
	e := newEnv(t, fakellm.Anthropic, map[string]string{"notes.txt": "hello from the notes\n"}, subagentReplies...)
	res := e.runWith(t, "", []string{threadsync.TokenVar + "=" + srv.token}, "-sync", srv.url(), "-p", "Look at the notes.")
	require.Equal(t, 0, res.code, res.stderr)
	parent, child := e.subagentThreads(t)
	assert.Contains(t, res.stderr, "agent: thread "+parent.ID+" synced to "+srv.url())
	assert.Contains(t, res.stderr, "agent: 1 subagent thread(s) synced to "+srv.url())

	for _, id := range []string{parent.ID, child.ID} {
		rep := replayExit(t, filepath.Join(e.threads, id+".events.jsonl"))
		assert.Equal(t, 0, rep.code, "%s: %s", id, rep.stderr)
		assert.Contains(t, rep.stdout, "replay ok")
	}
	code, body := srv.get("/api/threads/" + child.ID)
	require.Equal(t, http.StatusOK, code, "%s", body)
	var view struct {
		Thread struct {
			SubagentOf   string            `json:"subagent_of"`
			SubagentCall string            `json:"subagent_call"`
			Messages     []json.RawMessage `json:"messages"`
		} `json:"thread"`
	}
	require.NoError(t, json.Unmarshal(body, &view))
	assert.Equal(t, parent.ID, view.Thread.SubagentOf)
	assert.Equal(t, "t1", view.Thread.SubagentCall)
	assert.Len(t, view.Thread.Messages, len(child.Messages), "the subagent's whole thread")
	assert.NotContains(t, string(body), testKey)
	code, _ = srv.get("/api/threads/" + parent.ID)
	assert.Equal(t, http.StatusOK, code)
}
