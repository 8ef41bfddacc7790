package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/threadwire"
	"github.com/fsmgen/fsmgen/server/internal/api"
	"github.com/fsmgen/fsmgen/server/internal/pgtest"
)

// push is the body of a push of a thread at its nth version.
func push(t *testing.T, id string, n int) string {
	t.Helper()
	at := time.Date(2026, 11, 3, 10, 0, n, 0, time.UTC)
	var msgs []json.RawMessage
	for i := range n {
		msgs = append(msgs, json.RawMessage(fmt.Sprintf(`{"role":"user","content":"message %d"}`, i)))
	}
	th, err := json.Marshal(threadwire.Thread{Version: threadwire.Version, ID: id, Created: at, Updated: at, Provider: "anthropic", Model: "m", Workspace: "/src", Messages: msgs})
	require.NoError(t, err)
	body, err := json.Marshal(threadwire.PushBody{Revision: at.UnixNano(), Thread: th})
	require.NoError(t, err)
	return string(body)
}

// TestThreadsOnEveryInstance pushes threads through each of two
// instances on one Postgres and reads them through the other: threads are
// plain rows, which no shard owns and no instance forwards.
func TestThreadsOnEveryInstance(t *testing.T) {
	t.Parallel()
	if pgtest.OnPostgres() {
		t.Skip("runs on Postgres in the first run already")
	}
	db := pgtest.DB(t)
	a := launch(t, db)
	tok := a.token()
	b := launchShared(t, db, false)
	steps := []struct {
		via, other *proc
		id         string
		n          int
		status     int
		want       int // the version both then return
	}{
		{a, b, "t-1", 2, http.StatusOK, 2},
		{b, a, "t-1", 4, http.StatusOK, 4},
		{a, b, "t-1", 3, http.StatusConflict, 4},
		{b, a, "t-2", 1, http.StatusOK, 1},
	}
	for i, st := range steps {
		st.via.call(tok, "PUT", "/api/threads/"+st.id, push(t, st.id, st.n), st.status, nil)
		for _, p := range []*proc{st.via, st.other} {
			var v api.ThreadView
			p.call(tok, "GET", "/api/threads/"+st.id, "", http.StatusOK, &v)
			assert.Equal(t, st.want, v.Messages, "step %d, read through %s", i, p.addr)
		}
	}
	for _, p := range []*proc{a, b} {
		var list struct{ Threads []api.ThreadView }
		p.call(tok, "GET", "/api/threads", "", http.StatusOK, &list)
		require.Len(t, list.Threads, 2)
		assert.Equal(t, "t-1", list.Threads[0].ID, "t-1 was updated last")
	}
	a.noErrors()
	b.noErrors()
}
