package monitorengine

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/webhook"
)

// TestAlerts checks that a change of health into and out of missed posts
// an alert to the webhook, and that a failing webhook is retried.
func TestAlerts(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []Alert
	fail := true
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if fail {
			fail = false
			http.Error(w, "down", http.StatusBadGateway)
			return
		}
		var a Alert
		assert.NoError(t, json.NewDecoder(r.Body).Decode(&a))
		got = append(got, a)
	}))
	defer hook.Close()
	b := newBench(t)
	// The webhook is on loopback: the server must be told to allow it.
	allow, err := webhook.ParseAllow(strings.TrimPrefix(hook.URL, "http://"))
	require.NoError(t, err)
	b.config = func(c *Config) { c.Webhooks = allow }
	b.load()
	v := b.create(`{"slug": "job", "schedule": {"type": "interval", "seconds": 60}, "checkin_margin_seconds": 0, "alert_webhook_url": "` + hook.URL + `"}`)
	b.at(60 * time.Second)
	_, err = b.ping(v.PingKey, PingOK, "")
	require.NoError(t, err)
	ctx := context.Background()
	b.e.deliverDue(ctx) // the first attempt fails
	mu.Lock()
	assert.Empty(t, got)
	mu.Unlock()
	b.now = b.now.Add(time.Minute)
	b.e.deliverDue(ctx)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 2)
	assert.Equal(t, "health_changed", got[0].Event)
	assert.Equal(t, []string{HealthUnknown, HealthMissed}, []string{got[0].From, got[0].To})
	assert.Equal(t, []string{HealthMissed, HealthHealthy}, []string{got[1].From, got[1].To})
	assert.Equal(t, t0.Add(60*time.Second), got[0].At)
}

// A webhook at an internal address is refused when it is given (400
// webhook_refused), unless the server's allow list names it.
func TestWebhookRefusedWhenGiven(t *testing.T) {
	t.Parallel()
	b := newBench(t)
	ctx := context.Background()
	for _, url := range []string{"http://127.0.0.1:9000/", "http://169.254.169.254/latest/meta-data/", "http://[::1]/", "http://localhost:8080/hook", "http://10.0.0.1/", "http://[::ffff:127.0.0.1]/"} {
		_, err := b.e.Create(ctx, &Input{Slug: ptr("x"), Schedule: &Schedule{Type: "interval", Seconds: 60}, AlertWebhookURL: ptr(url)})
		e := AsError(err)
		if assert.NotNil(t, e, url) {
			assert.Equal(t, 400, e.Status, url)
			assert.Equal(t, "webhook_refused", e.Code, url)
			assert.Contains(t, e.Message, "-webhook-allow", url)
		}
	}
	b.create(`{"slug": "x", "schedule": {"type": "interval", "seconds": 60}}`)
	_, err := b.e.Patch(ctx, "x", &Input{AlertWebhookURL: ptr("http://169.254.169.254/")})
	assert.Equal(t, "webhook_refused", AsError(err).Code)
	assert.Empty(t, b.get("x").AlertWebhookURL, "nothing changed")

	allow, err := webhook.ParseAllow("10.1.2.0/24,127.0.0.1:9000")
	require.NoError(t, err)
	b.config = func(c *Config) { c.Webhooks = allow }
	b.load()
	for _, url := range []string{"http://10.1.2.3/hook", "http://127.0.0.1:9000/"} {
		v, err := b.e.Patch(ctx, "x", &Input{AlertWebhookURL: ptr(url)})
		require.NoError(t, err, url)
		assert.Equal(t, url, v.AlertWebhookURL)
	}
	_, err = b.e.Patch(ctx, "x", &Input{AlertWebhookURL: ptr("http://127.0.0.1:9001/")})
	assert.Equal(t, "webhook_refused", AsError(err).Code, "another port")
}

// An alert is posted through the guard: the server's default webhook (not
// checked when given) on loopback is refused at the dial, before any
// connection, and the refusal logged.
func TestAlertToInternalAddressRefused(t *testing.T) {
	t.Parallel()
	var conns atomic.Int32
	hook := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	hook.Config.ConnState = func(net.Conn, http.ConnState) { conns.Add(1) }
	hook.Start()
	defer hook.Close()
	var logs bytes.Buffer
	var mu sync.Mutex
	b := newBench(t)
	b.config = func(c *Config) {
		c.AlertWebhook = hook.URL
		c.Log = slog.New(slog.NewTextHandler(&lockedWriter{mu: &mu, w: &logs}, nil))
	}
	b.load()
	b.create(`{"slug": "job", "schedule": {"type": "interval", "seconds": 60}, "checkin_margin_seconds": 0}`)
	b.at(60 * time.Second) // missed: an alert
	b.e.deliverDue(context.Background())
	assert.Zero(t, conns.Load(), "no connection was made")
	mu.Lock()
	assert.Contains(t, logs.String(), "127.0.0.1 is a loopback address")
	mu.Unlock()
	alerts, err := b.store.PendingAlerts(context.Background(), b.now.Add(time.Hour), 10)
	require.NoError(t, err)
	require.Len(t, alerts, 1, "kept, to be retried")
	assert.Equal(t, 1, alerts[0].Attempts)
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// pendingAlerts returns the health changes alerted since the last call, as
// "from>to", and marks them delivered.
func pendingAlerts(t *testing.T, b *bench) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	for {
		alerts, err := b.store.PendingAlerts(ctx, b.now.Add(24*time.Hour), 100)
		require.NoError(t, err)
		if len(alerts) == 0 {
			return out
		}
		for _, a := range alerts {
			var got Alert
			require.NoError(t, json.Unmarshal(a.Payload, &got))
			out = append(out, got.From+">"+got.To)
			require.NoError(t, b.store.AlertDelivered(ctx, a.ID, b.now))
		}
	}
}

// Making a paused (or disabled) monitor active again, or changing its
// schedule, starts it afresh (health unknown): that is no alert.
func TestNoAlertStartingAfresh(t *testing.T) {
	t.Parallel()
	b := newBench(t)
	ctx := context.Background()
	v := b.create(`{"slug": "job", "schedule": {"type": "interval", "seconds": 60}, "checkin_margin_seconds": 0, "alert_webhook_url": "https://hooks.example.com/x"}`)
	b.at(60 * time.Second)
	assert.Equal(t, []string{"unknown>missed"}, pendingAlerts(t, b))
	for _, status := range []string{StatusPaused, StatusDisabled} {
		_, err := b.e.Patch(ctx, "job", &Input{Status: ptr(status)})
		require.NoError(t, err)
		assert.Equal(t, HealthMissed, b.get("job").Health, "kept while "+status)
		v, err = b.e.Patch(ctx, "job", &Input{Status: ptr(StatusActive)})
		require.NoError(t, err)
		assert.Equal(t, HealthUnknown, v.Health)
		assert.Empty(t, pendingAlerts(t, b), "resumed from "+status)
		b.at(b.now.Sub(t0) + 60*time.Second) // missed again
		assert.Equal(t, []string{"unknown>missed"}, pendingAlerts(t, b))
	}
	_, err := b.e.Patch(ctx, "job", &Input{Schedule: &Schedule{Type: "interval", Seconds: 120}})
	require.NoError(t, err)
	assert.Equal(t, HealthUnknown, b.get("job").Health)
	assert.Empty(t, pendingAlerts(t, b), "reconfigured")
	// The job's own changes are alerted as before.
	_, err = b.ping(v.PingKey, PingFail, "")
	require.NoError(t, err)
	_, err = b.ping(v.PingKey, PingOK, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"unknown>failing", "failing>healthy"}, pendingAlerts(t, b))
}
