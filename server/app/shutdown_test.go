package app

// These tests build the server and run it as a process: killed with
// SIGKILL at random moments and started again on the same database, under
// load, stopped with SIGTERM while requests are in flight.

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
)

// TestGracefulShutdown stops the server with SIGTERM while requests are in
// flight (their handlers are reading their bodies) and an event stream is
// open: the requests are answered and stored, the stream ends, the
// process exits 0.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	p := launch(t, db)
	tok := p.token()
	var v monitorengine.View
	p.call(tok, "POST", "/api/crons/monitors", `{"slug": "job", "schedule": {"type": "interval", "seconds": 3600}}`, http.StatusCreated, &v)

	// An event stream, open across the shutdown.
	stream, err := http.NewRequest("GET", p.url+"/api/crons/stream", nil)
	require.NoError(t, err)
	stream.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(stream)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	streamEnded := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, resp.Body)
		streamEnded <- err
	}()

	// Requests in flight: each sends its headers with Expect:
	// 100-continue and waits for the 100, which the server sends once the
	// handler reads the body.
	type inflight struct {
		conn net.Conn
		r    *bufio.Reader
		body string
	}
	requests := []struct{ path, auth, body string }{
		{"/ping/" + v.PingKey, "", "first output"},
		{"/ping/" + v.PingKey + "/fail", "", "second output"},
		{"/ping/" + v.PingKey + "/3", "", "exit 3"},
		{"/ping/" + v.PingKey + "/start", "", "a run starts"},
		{"/api/crons/monitors", tok, `{"slug": "created-during-shutdown", "schedule": {"type": "interval", "seconds": 60}}`},
	}
	var flying []inflight
	for _, rq := range requests {
		conn, err := net.Dial("tcp", p.addr)
		require.NoError(t, err)
		defer conn.Close()
		head := "POST " + rq.path + " HTTP/1.1\r\nHost: " + p.addr + "\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: " + strconv.Itoa(len(rq.body)) + "\r\n"
		if rq.auth != "" {
			head += "Authorization: Bearer " + rq.auth + "\r\n"
		}
		_, err = io.WriteString(conn, head+"\r\n")
		require.NoError(t, err)
		r := bufio.NewReader(conn)
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(30*time.Second)))
		cont, err := http.ReadResponse(r, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusContinue, cont.StatusCode, "%s: the handler reads the body", rq.path)
		flying = append(flying, inflight{conn, r, rq.body})
	}

	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	// The listener closes first: then the shutdown has begun.
	require.Eventually(t, func() bool {
		c, err := net.DialTimeout("tcp", p.addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err != nil
	}, 30*time.Second, 10*time.Millisecond, "the server still accepts connections")

	var ids []string
	for i, f := range flying {
		_, err := io.WriteString(f.conn, f.body)
		require.NoError(t, err)
		resp, err := http.ReadResponse(f.r, nil)
		require.NoError(t, err, "request %d is answered", i)
		data, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		if requests[i].auth != "" {
			assert.Equal(t, http.StatusCreated, resp.StatusCode, "%s", data)
			continue
		}
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", data)
		var out struct {
			CheckinID string `json:"checkin_id"`
		}
		require.NoError(t, json.Unmarshal(data, &out))
		ids = append(ids, out.CheckinID)
	}
	select {
	case err := <-streamEnded:
		assert.NoError(t, err, "the event stream ends cleanly")
	case <-time.After(60 * time.Second):
		require.FailNow(t, "the event stream is still open")
	}
	require.Equal(t, 0, p.wait(), "exit status; stderr:\n%s", p.stderr.String())
	p.noErrors()

	// All of it was stored.
	p = launch(t, db)
	list := p.checkins(tok, "job")
	require.Len(t, list, len(ids))
	for i, c := range list {
		assert.Equal(t, ids[i], c.ID)
		require.NotNil(t, c.Output)
		assert.Equal(t, requests[i].body, *c.Output)
	}
	assert.Equal(t, []string{monitorengine.CheckinOK, monitorengine.CheckinError, monitorengine.CheckinError, monitorengine.CheckinInProgress},
		[]string{list[0].Status, list[1].Status, list[2].Status, list[3].Status})
	p.monitor(tok, "created-during-shutdown")
}
