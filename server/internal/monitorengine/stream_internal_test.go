package monitorengine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// streamed returns the events the subscription holds, each as its kind and
// its data.
func streamed(t *testing.T, ch <-chan []byte) (kinds []string, data []json.RawMessage) {
	t.Helper()
	for {
		select {
		case msg := <-ch:
			kind, rest, ok := strings.Cut(strings.TrimPrefix(string(msg), "event: "), "\ndata: ")
			require.True(t, ok, "an event: %q", msg)
			kinds = append(kinds, kind)
			data = append(data, json.RawMessage(strings.TrimSpace(rest)))
		default:
			return kinds, data
		}
	}
}

// A check-in's events carry the check-in as it is stored: the last event
// of each is what GET …/checkins returns, for a run a ping finishes (its
// start's time and source, its finish and duration), a timeout and a
// superseded run.
func TestCheckinEventsAsStored(t *testing.T) {
	t.Parallel()
	b := newBench(t)
	ch, unsubscribe := b.e.Hub().Subscribe()
	defer unsubscribe()
	v := b.create(`{"slug": "etl", "schedule": {"type": "interval", "seconds": 3600}, "max_runtime_seconds": 300}`)
	ctx := context.Background()

	b.at(10 * time.Second)
	run, err := b.ping(v.PingKey, PingStart, "")
	require.NoError(t, err)
	b.at(42*time.Second + 500*time.Millisecond)
	code, out := 3, "disk full"
	_, err = b.e.Check(ctx, Ping{Slug: "etl", Kind: PingOK, ExitCode: &code, Output: &out, Checkin: run, Source: SourceAPI})
	require.NoError(t, err)

	b.at(time.Minute)
	timedOut, err := b.ping(v.PingKey, PingStart, "")
	require.NoError(t, err)
	b.at(time.Minute + 300*time.Second)

	b.at(10 * time.Minute)
	superseded, err := b.ping(v.PingKey, PingStart, "")
	require.NoError(t, err)
	b.at(11 * time.Minute)
	_, err = b.e.Check(ctx, Ping{Key: v.PingKey, Kind: PingStart, Source: SourceAPI})
	require.NoError(t, err)

	stored := map[string]CheckinView{}
	for _, c := range b.checkins("etl") {
		stored[c.ID] = c
	}
	kinds, data := streamed(t, ch)
	last := map[string]json.RawMessage{}
	for i, kind := range kinds {
		if kind != EventCheckin {
			continue
		}
		var ev struct {
			Slug    string          `json:"slug"`
			Checkin json.RawMessage `json:"checkin"`
		}
		require.NoError(t, json.Unmarshal(data[i], &ev))
		assert.Equal(t, "etl", ev.Slug)
		var c CheckinView
		require.NoError(t, json.Unmarshal(ev.Checkin, &c))
		last[c.ID] = ev.Checkin
	}
	require.Len(t, last, len(stored), "an event for each check-in")
	for id, c := range stored {
		want, err := json.Marshal(c)
		require.NoError(t, err)
		assert.JSONEq(t, string(want), string(last[id]), "check-in %s (%s)", id, c.Status)
	}
	// What those are.
	assert.Equal(t, SourcePing, stored[run].Source, "the start's source")
	assert.Equal(t, t0.Add(10*time.Second), stored[run].CreatedAt)
	assert.EqualValues(t, 32_500, *stored[run].DurationMS)
	assert.Equal(t, CheckinTimeout, stored[timedOut].Status)
	assert.Equal(t, SourcePing, stored[timedOut].Source)
	assert.Equal(t, "superseded by a new start", *stored[superseded].Output)
}

// A renamed monitor's event names its previous slug.
func TestRenameEvent(t *testing.T) {
	t.Parallel()
	b := newBench(t)
	b.create(`{"slug": "old", "schedule": {"type": "interval", "seconds": 60}}`)
	ch, unsubscribe := b.e.Hub().Subscribe()
	defer unsubscribe()
	_, err := b.e.Patch(context.Background(), "old", &Input{Slug: ptr("new")})
	require.NoError(t, err)
	_, err = b.e.Patch(context.Background(), "new", &Input{Name: ptr("New")})
	require.NoError(t, err)
	kinds, data := streamed(t, ch)
	require.Equal(t, []string{EventMonitor, EventMonitor}, kinds)
	assert.JSONEq(t, `{"slug": "new", "change": "updated", "previous_slug": "old"}`, string(data[0]))
	assert.JSONEq(t, `{"slug": "new", "change": "updated"}`, string(data[1]))
}
