package app

// The test of several servers on one Postgres: monitors created through
// one instance and pinged through the other, and one instance killed
// with SIGKILL while it holds deadlines.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
	"github.com/fsmgen/fsmgen/server/internal/pgtest"
)

// shards returns how many shards a server runs.
func (p *proc) shards() int {
	p.t.Helper()
	var h struct {
		Components struct {
			Monitors struct {
				Shards int `json:"shards"`
			} `json:"monitors"`
		} `json:"components"`
	}
	p.call("", "GET", "/health", "", http.StatusOK, &h)
	return h.Components.Monitors.Shards
}

// seen is a missed check-in an event stream delivered, and when.
type seen struct {
	slug string
	c    monitorengine.CheckinView
	at   time.Time
}

// watchMisses reads a server's event stream until it ends, recording the
// missed check-ins it delivers.
func (p *proc) watchMisses(token string) (func() []seen, func()) {
	p.t.Helper()
	req, err := http.NewRequest("GET", p.url+"/api/crons/stream", nil)
	require.NoError(p.t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(p.t, err)
	require.Equal(p.t, http.StatusOK, resp.StatusCode)
	var mu sync.Mutex
	var got []seen
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(resp.Body)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			if name, ok := strings.CutPrefix(line, "event: "); ok {
				event = name
				continue
			}
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok || event != monitorengine.EventCheckin {
				continue
			}
			var ev monitorengine.CheckinEvent
			if json.Unmarshal([]byte(data), &ev) == nil && ev.Checkin.Status == monitorengine.CheckinMissed {
				mu.Lock()
				got = append(got, seen{ev.Slug, ev.Checkin, time.Now()})
				mu.Unlock()
			}
		}
	}()
	return func() []seen {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(got)
		}, func() {
			resp.Body.Close()
			<-done
		}
}

// TestSeveralInstances runs two servers on one Postgres with leases of a
// second: they share the shards; monitors created through one and pinged
// through the other are pinged; then one is killed with SIGKILL while it
// holds deadlines, and the other takes its monitors over: each run the
// monitors missed is recorded once, at its time, and those due after the
// kill within the lease time (and a margin) of their deadline.
func TestSeveralInstances(t *testing.T) {
	if pgtest.OnPostgres() {
		t.Skip("runs on Postgres in the first run already")
	}
	const (
		lease    = time.Second
		interval = 2 * time.Second
		margin   = time.Second
		slack    = 1500 * time.Millisecond // scheduling, the claim, the round
	)
	db := pgtest.DB(t)
	a := launch(t, db, "-lease", lease.String())
	tok := a.token()
	b := launchShared(t, db, false, "-lease", lease.String())
	require.Eventually(t, func() bool {
		na, nb := a.shards(), b.shards()
		return na > 0 && nb > 0 && na+nb == 64
	}, 20*time.Second, 50*time.Millisecond, "the instances share the shards")

	// Monitors created through each, pinged through the other.
	type mon struct {
		slug string
		via  *proc
		v    monitorengine.View
	}
	var mons []*mon
	for i := range 8 {
		via, other := a, b
		if i%2 == 1 {
			via, other = b, a
		}
		m := &mon{slug: fmt.Sprintf("m%d", i), via: via}
		via.call(tok, "POST", "/api/crons/monitors", fmt.Sprintf(`{"slug": %q, "schedule": {"type": "interval", "seconds": %d}, "checkin_margin_seconds": %d}`,
			m.slug, int(interval/time.Second), int(margin/time.Second)), http.StatusCreated, &m.v)
		status, id, err := ping(http.DefaultClient, other.url+"/ping/"+m.v.PingKey)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, status, "%s pinged through the other instance", m.slug)
		got := other.monitor(tok, m.slug)
		assert.Equal(t, monitorengine.HealthHealthy, got.Health, "%s: the ping reached it", m.slug)
		assert.Equal(t, id, other.checkins(tok, m.slug)[0].ID)
		mons = append(mons, m)
	}
	var dup monitorengine.View
	b.call(tok, "POST", "/api/crons/monitors", `{"slug": "m0", "schedule": {"type": "interval", "seconds": 60}}`, http.StatusConflict, nil)
	a.call(tok, "PATCH", "/api/crons/monitors/m1", `{"name": "Renamed through a"}`, http.StatusOK, &dup)
	assert.Equal(t, "Renamed through a", dup.Name)

	// a dies with deadlines to come; b takes its monitors over.
	misses, stop := b.watchMisses(tok)
	time.Sleep(interval + margin/2)
	a.kill9()
	killed := time.Now()
	// b takes every shard over, and records the runs a's monitors miss:
	// for each monitor, one due a lease after the kill at least, which b
	// recorded as their new owner.
	require.Eventually(t, func() bool {
		if b.shards() != 64 {
			return false
		}
		took := map[string]bool{}
		for _, s := range misses() {
			if s.c.ExpectedAt != nil && s.c.ExpectedAt.Add(margin).After(killed.Add(lease)) {
				took[s.slug] = true
			}
		}
		return len(took) == len(mons)
	}, 3*interval+lease+30*time.Second, 20*time.Millisecond, "b runs every shard and records the misses of every monitor")
	stop()
	t.Logf("killed at %s", killed.Format(time.StampMilli))

	onB := map[string]seen{}
	for _, s := range misses() {
		onB[s.c.ID] = s
	}
	for _, m := range mons {
		t.Run(m.slug, func(t *testing.T) {
			list := b.checkins(tok, m.slug)
			require.GreaterOrEqual(t, len(list), 3, "the ping and the misses")
			require.Equal(t, monitorengine.CheckinOK, list[0].Status)
			next := list[0].CreatedAt.Add(interval)
			ids := map[string]bool{}
			for i, c := range list[1:] {
				assert.False(t, ids[c.ID], "check-in %s twice", c.ID)
				ids[c.ID] = true
				require.Equal(t, monitorengine.CheckinMissed, c.Status, "check-in %d", i+1)
				require.NotNil(t, c.ExpectedAt)
				assert.Equal(t, next, *c.ExpectedAt, "check-in %d: each run missed once, none skipped", i+1)
				due := c.ExpectedAt.Add(margin)
				assert.Equal(t, due, c.CreatedAt, "check-in %d: recorded at its time", i+1)
				next = next.Add(interval)
				if due.After(killed) && m.via == a {
					s, ok := onB[c.ID]
					if assert.True(t, ok, "check-in %d, due after the kill, was recorded by b", i+1) {
						assert.Less(t, s.at.Sub(due), lease+slack, "check-in %d: taken over within the lease", i+1)
					}
				}
			}
			// The next run is not due yet, or just: none is left unrecorded.
			assert.True(t, next.Add(margin).After(time.Now().Add(-lease-slack)), "the run of %s is due and unrecorded", next)
		})
	}
	b.noErrors()
}
