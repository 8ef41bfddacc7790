package apitest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/api"
	"github.com/fsmgen/fsmgen/server/internal/store"
)

func TestHealth(t *testing.T) {
	t.Parallel()
	s := start(t, api.Config{})
	s.create(`{"slug": "a", "schedule": {"type": "interval", "seconds": 3600}}`)
	s.create(`{"slug": "b", "schedule": {"type": "interval", "seconds": 3600}}`)
	s.patch("b", `{"status": "paused"}`)
	a := s.do(req{method: "GET", path: "/health", header: map[string]string{"Authorization": ""}})
	require.Equal(t, http.StatusOK, a.status)
	var h struct {
		Status     string `json:"status"`
		Components struct {
			Store    struct{ Status string } `json:"store"`
			Alerts   struct{ Status string } `json:"alerts"`
			Monitors struct {
				Status      string `json:"status"`
				Monitors    int    `json:"monitors"`
				Timers      int    `json:"timers"`
				Subscribers int    `json:"subscribers"`
			} `json:"monitors"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(a.body, &h))
	assert.Equal(t, "ok", h.Status)
	assert.Equal(t, "ok", h.Components.Store.Status)
	assert.Equal(t, "ok", h.Components.Alerts.Status)
	assert.Equal(t, "ok", h.Components.Monitors.Status)
	assert.Equal(t, 2, h.Components.Monitors.Monitors)
	assert.Equal(t, 2, h.Components.Monitors.Timers, "the active monitor's late and missed timers")
	assert.Zero(t, h.Components.Monitors.Subscribers)
}

// TestHealthAlerts checks the alerts' component: the next attempt is that
// of an alert the server may post (not of one waiting behind a failing
// one of its webhook, which the server cannot post yet), and delivery is
// degraded once an alert waits 5 minutes after it was raised.
func TestHealthAlerts(t *testing.T) {
	t.Parallel()
	// Far ahead, so that the engine's sender, on the real clock, leaves
	// them alone.
	t0 := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	s := start(t, api.Config{Now: func() time.Time { return now }})
	ctx := context.Background()
	require.NoError(t, s.store.Apply(ctx, &store.Batch{Ops: []store.Op{
		store.InsertAlert{URL: "https://hooks.example.com/a", Payload: []byte(`{"n": 1}`), At: t0},
		store.InsertAlert{URL: "https://hooks.example.com/a", Payload: []byte(`{"n": 2}`), At: t0.Add(10 * time.Second)},
	}}))
	pending, err := s.store.PendingAlerts(ctx, t0, 10)
	require.NoError(t, err)
	require.Len(t, pending, 1)
	require.NoError(t, s.store.AlertFailed(ctx, pending[0].ID, t0, t0.Add(30*time.Minute), "503"))
	health := func() (status string, next, since time.Time) {
		var h struct {
			Components struct {
				Alerts struct {
					Status       string    `json:"status"`
					NextAttempt  time.Time `json:"next_attempt_at"`
					WaitingSince time.Time `json:"waiting_since"`
				} `json:"alerts"`
			} `json:"components"`
		}
		s.json("GET", "/health", "", http.StatusOK, &h)
		a := h.Components.Alerts
		return a.Status, a.NextAttempt, a.WaitingSince
	}
	now = t0.Add(time.Minute)
	status, next, since := health()
	assert.Equal(t, "ok", status)
	assert.Equal(t, t0.Add(30*time.Minute), next, "the failing alert's retry: the second waits for it")
	assert.Equal(t, t0, since)
	now = t0.Add(5*time.Minute + time.Second)
	status, _, _ = health()
	assert.Equal(t, "degraded", status, "an alert raised more than 5 minutes ago waits")
}
