package apitest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/api"
	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
)

// sse is a client of the event stream.
type sse struct {
	t      *testing.T
	events chan event
}

type event struct {
	kind string
	data string
}

// stream connects to the event stream and reads it until the test ends.
func (s *stack) stream() *sse {
	s.t.Helper()
	return s.streamWith(token)
}

// streamWith is stream with another API key's token.
func (s *stack) streamWith(token string) *sse {
	s.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	hr, err := http.NewRequestWithContext(ctx, "GET", s.url+"/api/crons/stream", nil)
	require.NoError(s.t, err)
	hr.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(hr)
	require.NoError(s.t, err)
	require.Equal(s.t, http.StatusOK, resp.StatusCode)
	require.Equal(s.t, "text/event-stream", resp.Header.Get("Content-Type"))
	c := &sse{t: s.t, events: make(chan event, 1024)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(c.events)
		sc := bufio.NewScanner(resp.Body)
		var ev event
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.kind = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			case line == "" && ev.kind != "":
				c.events <- ev
				ev = event{}
			}
		}
	}()
	s.t.Cleanup(func() {
		cancel()
		resp.Body.Close()
		<-done
	})
	// The stream is subscribed once /health counts it.
	require.Eventually(s.t, func() bool {
		var h struct {
			Components struct {
				Monitors struct {
					Subscribers int `json:"subscribers"`
				} `json:"monitors"`
			} `json:"components"`
		}
		s.json("GET", "/health", "", http.StatusOK, &h)
		return h.Components.Monitors.Subscribers > 0
	}, 10*time.Second, 5*time.Millisecond)
	return c
}

// waitEnd waits for the server to end the stream, failing after a
// generous wait.
func (c *sse) waitEnd() {
	c.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case _, ok := <-c.events:
			if !ok {
				return
			}
		case <-deadline:
			require.FailNow(c.t, "the stream goes on")
		}
	}
}

// next returns the next event of kind whose data satisfies match, failing
// after a generous wait.
func (c *sse) next(kind string, match func(data string) bool) string {
	c.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-c.events:
			require.True(c.t, ok, "the stream ended while waiting for a %s event", kind)
			if ev.kind == kind && (match == nil || match(ev.data)) {
				return ev.data
			}
		case <-deadline:
			require.FailNow(c.t, "no "+kind+" event")
		}
	}
}

func TestStream(t *testing.T) {
	t.Parallel()
	s := start(t, api.Config{})
	c := s.stream()

	v := s.create(`{"slug": "fast", "name": "Fast job", "schedule": {"type": "interval", "seconds": 1}, "checkin_margin_seconds": 0}`)
	var m monitorengine.MonitorEvent
	require.NoError(t, json.Unmarshal([]byte(c.next("monitor", nil)), &m))
	assert.Equal(t, monitorengine.MonitorEvent{Slug: "fast", Change: "created"}, m)

	// With a margin of 0, the run is missed as soon as it is due: the
	// missed check-in, then the change of health.
	var ce monitorengine.CheckinEvent
	require.NoError(t, json.Unmarshal([]byte(c.next("checkin", nil)), &ce))
	assert.Equal(t, "fast", ce.Slug)
	assert.Equal(t, monitorengine.CheckinMissed, ce.Checkin.Status)
	assert.Equal(t, monitorengine.SourceSystem, ce.Checkin.Source)
	require.NotNil(t, ce.Checkin.ExpectedAt)
	assert.True(t, v.NextExpectedAt.Equal(*ce.Checkin.ExpectedAt), "expected at %s, want %s", ce.Checkin.ExpectedAt, v.NextExpectedAt)
	assert.True(t, v.NextExpectedAt.Equal(ce.Checkin.CreatedAt), "recorded at its deadline: %s, want %s", ce.Checkin.CreatedAt, v.NextExpectedAt)
	var h monitorengine.HealthChange
	require.NoError(t, json.Unmarshal([]byte(c.next("health", nil)), &h))
	assert.Equal(t, "fast", h.Slug)
	assert.Equal(t, "Fast job", h.Name)
	assert.Equal(t, []string{monitorengine.HealthUnknown, monitorengine.HealthMissed}, []string{h.From, h.To})
	assert.True(t, v.NextExpectedAt.Equal(h.At), "missed at its deadline: %s, want %s", h.At, v.NextExpectedAt)
	missed := s.checkins("fast", 0)
	require.NotEmpty(t, missed)
	assert.Equal(t, monitorengine.CheckinMissed, missed[len(missed)-1].Status, "stored before it was sent")

	// A ping brings it back: a check-in, then the change of health.
	id := s.ping("GET", v.PingKey, "")
	require.NoError(t, json.Unmarshal([]byte(c.next("checkin", func(d string) bool { return strings.Contains(d, id) })), &ce))
	assert.Equal(t, monitorengine.CheckinOK, ce.Checkin.Status)
	assert.Equal(t, monitorengine.SourcePing, ce.Checkin.Source)
	require.NoError(t, json.Unmarshal([]byte(c.next("health", func(d string) bool { return strings.Contains(d, `"to":"healthy"`) })), &h))
	assert.Equal(t, monitorengine.HealthMissed, h.From)

	s.patch("fast", `{"status": "paused"}`)
	require.NoError(t, json.Unmarshal([]byte(c.next("monitor", nil)), &m))
	assert.Equal(t, monitorengine.MonitorEvent{Slug: "fast", Change: "updated"}, m)
	require.Equal(t, http.StatusNoContent, s.do(req{method: "DELETE", path: "/api/crons/monitors/fast"}).status)
	require.NoError(t, json.Unmarshal([]byte(c.next("monitor", nil)), &m))
	assert.Equal(t, monitorengine.MonitorEvent{Slug: "fast", Change: "deleted"}, m)
}
