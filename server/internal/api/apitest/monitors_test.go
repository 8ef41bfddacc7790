package apitest_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/internal/api"
	"github.com/fsmgen/fsmgen/server/internal/monitorengine"
)

func TestMonitorLifecycle(t *testing.T) {
	t.Parallel()
	s := start(t, api.Config{})

	// Create, with the defaults.
	a := s.do(req{method: "POST", path: "/api/crons/monitors", body: `{"slug": "nightly-backup", "schedule": {"type": "interval", "seconds": 3600}}`,
		header: map[string]string{"Content-Type": "application/json; charset=utf-8"}})
	require.Equal(t, http.StatusCreated, a.status, "%s", a.body)
	assert.Equal(t, "/api/crons/monitors/nightly-backup", a.header.Get("Location"))
	assert.Equal(t, "application/json", a.header.Get("Content-Type"))
	var v monitorengine.View
	require.NoError(t, json.Unmarshal(a.body, &v))
	assert.Equal(t, "nightly-backup", v.Name, "the name defaults to the slug")
	assert.Equal(t, "UTC", v.Timezone)
	assert.Equal(t, 60, v.CheckinMarginSeconds)
	assert.Equal(t, 1800, v.MaxRuntimeSeconds)
	assert.Equal(t, 1, v.FailureThreshold)
	assert.Equal(t, 1, v.RecoveryThreshold)
	assert.Equal(t, monitorengine.StatusActive, v.Status)
	assert.Equal(t, monitorengine.HealthUnknown, v.Health)
	assert.Equal(t, "Fresh", v.State)
	assert.Len(t, v.PingKey, 32, "192 bits in base64")
	require.NotNil(t, v.NextExpectedAt)
	assert.Equal(t, v.CreatedAt.Add(time.Hour), *v.NextExpectedAt, "an interval counts from the creation")
	assert.Nil(t, v.LastCheckinAt)
	assert.Equal(t, &v, s.get("nightly-backup"))

	// Every field, and the content types curl sends.
	full := s.do(req{method: "POST", path: "/api/crons/monitors", body: `{"slug": "a-job_2", "name": " Nightly backup ", "schedule": {"type": "cron", "expression": "30 2 * * *"},
		"timezone": "America/New_York", "checkin_margin_seconds": 300, "max_runtime_seconds": 3600, "failure_threshold": 2, "recovery_threshold": 3,
		"alert_webhook_url": "https://example.com/hooks/crons", "status": "active"}`,
		header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
	require.Equal(t, http.StatusCreated, full.status, "%s", full.body)
	var f monitorengine.View
	require.NoError(t, json.Unmarshal(full.body, &f))
	assert.Equal(t, "Nightly backup", f.Name, "trimmed")
	assert.Equal(t, monitorengine.Schedule{Type: "cron", Expression: "30 2 * * *"}, f.Schedule)
	assert.Equal(t, "America/New_York", f.Timezone)
	assert.Equal(t, []int{300, 3600, 2, 3}, []int{f.CheckinMarginSeconds, f.MaxRuntimeSeconds, f.FailureThreshold, f.RecoveryThreshold})
	assert.Equal(t, "https://example.com/hooks/crons", f.AlertWebhookURL)
	require.NotNil(t, f.NextExpectedAt)
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	next := f.NextExpectedAt.In(ny)
	assert.Equal(t, []int{2, 30}, []int{next.Hour(), next.Minute()}, "02:30 in New York: %s", next)
	s.create(`{"slug": "0-first", "schedule": {"type": "interval", "seconds": 60}}`)

	// The list, by slug.
	var list struct {
		Monitors []monitorengine.View `json:"monitors"`
	}
	s.json("GET", "/api/crons/monitors", "", http.StatusOK, &list)
	var slugs []string
	for _, m := range list.Monitors {
		slugs = append(slugs, m.Slug)
	}
	assert.Equal(t, []string{"0-first", "a-job_2", "nightly-backup"}, slugs)

	// Pause, resume, disable.
	p := s.patch("nightly-backup", `{"status": "paused"}`)
	assert.Equal(t, monitorengine.StatusPaused, p.Status)
	assert.Equal(t, "Paused", p.State)
	assert.Nil(t, p.NextExpectedAt, "a paused monitor expects nothing")
	s.ping("GET", v.PingKey+"/fail", "")
	p = s.get("nightly-backup")
	assert.Equal(t, monitorengine.HealthUnknown, p.Health, "a paused monitor records check-ins and changes nothing")
	assert.Equal(t, []string{monitorengine.CheckinError}, statuses(s.checkins("nightly-backup", 0)))
	r := s.patch("nightly-backup", `{"status": "active"}`)
	assert.Equal(t, monitorengine.StatusActive, r.Status)
	assert.Equal(t, "Fresh", r.State)
	assert.Equal(t, r.UpdatedAt.Add(time.Hour), *r.NextExpectedAt, "resumed afresh")
	d := s.patch("nightly-backup", `{"status": "disabled"}`)
	assert.Equal(t, monitorengine.StatusDisabled, d.Status)
	assert.Nil(t, d.NextExpectedAt)
	requireError(t, s.do(req{method: "GET", path: "/ping/" + v.PingKey}), 409, "monitor_disabled")
	r = s.patch("nightly-backup", `{"status": "active"}`)
	assert.Equal(t, "Fresh", r.State)

	// A change of schedule starts afresh on the new one.
	c := s.patch("nightly-backup", `{"schedule": {"type": "cron", "expression": "0 3 * * *"}, "timezone": "Europe/Berlin", "name": "Backup"}`)
	assert.Equal(t, "Backup", c.Name)
	assert.Equal(t, monitorengine.Schedule{Type: "cron", Expression: "0 3 * * *"}, c.Schedule)
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	next = c.NextExpectedAt.In(berlin)
	assert.Equal(t, []int{3, 0}, []int{next.Hour(), next.Minute()}, "03:00 in Berlin: %s", next)
	assert.True(t, c.NextExpectedAt.After(c.UpdatedAt))
	assert.False(t, c.NextExpectedAt.After(c.UpdatedAt.Add(24*time.Hour)), "the first 03:00 after the change")
	assert.Equal(t, v.PingKey, c.PingKey, "the ping key stays")

	// Rename: the old slug is gone, the ping key stays.
	n := s.patch("nightly-backup", `{"slug": "backup"}`)
	assert.Equal(t, "backup", n.Slug)
	requireError(t, s.do(req{method: "GET", path: "/api/crons/monitors/nightly-backup"}), 404, "monitor_not_found")
	assert.Equal(t, v.PingKey, s.get("backup").PingKey)
	assert.Len(t, s.checkins("backup", 0), 1, "the check-ins follow")

	// Delete.
	a = s.do(req{method: "DELETE", path: "/api/crons/monitors/backup"})
	assert.Equal(t, http.StatusNoContent, a.status)
	assert.Empty(t, a.body)
	requireError(t, s.do(req{method: "GET", path: "/api/crons/monitors/backup"}), 404, "monitor_not_found")
	requireError(t, s.do(req{method: "GET", path: "/api/crons/monitors/backup/checkins"}), 404, "monitor_not_found")
	requireError(t, s.do(req{method: "GET", path: "/ping/" + v.PingKey}), 404, "unknown_ping_key")
	requireError(t, s.do(req{method: "DELETE", path: "/api/crons/monitors/backup"}), 404, "monitor_not_found")
	again := s.create(`{"slug": "backup", "schedule": {"type": "interval", "seconds": 60}}`)
	assert.Empty(t, s.checkins("backup", 0), "a new monitor of the slug starts without check-ins")
	assert.NotEqual(t, v.PingKey, again.PingKey)
}

func TestPings(t *testing.T) {
	t.Parallel()
	s := start(t, api.Config{})
	v := s.create(`{"slug": "job", "schedule": {"type": "interval", "seconds": 3600}}`)
	code := func(n int) *int { return &n }
	tests := []struct {
		name     string
		method   string
		path     string // after the key
		status   string
		exitCode *int
		health   string
	}{
		{"ok", "GET", "", monitorengine.CheckinOK, nil, monitorengine.HealthHealthy},
		{"fail", "GET", "/fail", monitorengine.CheckinError, nil, monitorengine.HealthFailing},
		{"ok by POST", "POST", "", monitorengine.CheckinOK, nil, monitorengine.HealthHealthy},
		{"fail by POST", "POST", "/fail", monitorengine.CheckinError, nil, monitorengine.HealthFailing},
		{"exit 0 in the path", "GET", "/0", monitorengine.CheckinOK, code(0), monitorengine.HealthHealthy},
		{"exit 3 in the path", "GET", "/3", monitorengine.CheckinError, code(3), monitorengine.HealthFailing},
		{"exit 255 in the path", "POST", "/255", monitorengine.CheckinError, code(255), monitorengine.HealthFailing},
		{"exit 0 in the query", "GET", "?exit_code=0", monitorengine.CheckinOK, code(0), monitorengine.HealthHealthy},
		{"exit 5 in the query", "GET", "?exit_code=5", monitorengine.CheckinError, code(5), monitorengine.HealthFailing},
		{"the same code in both", "GET", "/7?exit_code=7", monitorengine.CheckinError, code(7), monitorengine.HealthFailing},
		{"a fail with exit 0", "GET", "/fail?exit_code=0", monitorengine.CheckinError, code(0), monitorengine.HealthFailing},
		{"HEAD", "HEAD", "", monitorengine.CheckinOK, nil, monitorengine.HealthHealthy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := s.do(req{method: tt.method, path: "/ping/" + v.PingKey + tt.path, header: map[string]string{"Authorization": ""}})
			require.Equal(t, http.StatusOK, a.status, "%s", a.body)
			last := s.checkins("job", 1)
			require.Len(t, last, 1)
			if tt.method != "HEAD" {
				var out struct {
					CheckinID string `json:"checkin_id"`
				}
				require.NoError(t, json.Unmarshal(a.body, &out))
				assert.Equal(t, last[0].ID, out.CheckinID)
			}
			assert.Equal(t, tt.status, last[0].Status)
			assert.Equal(t, monitorengine.SourcePing, last[0].Source)
			assert.Equal(t, tt.exitCode, last[0].ExitCode)
			assert.Nil(t, last[0].Output, "a ping without a body keeps no output")
			assert.Equal(t, last[0].CreatedAt, *last[0].FinishedAt, "a ping's check-in is finished at once")
			got := s.get("job")
			assert.Equal(t, tt.health, got.Health)
			assert.Equal(t, last[0].CreatedAt, *got.LastCheckinAt)
			assert.Equal(t, last[0].CreatedAt.Add(time.Hour), *got.NextExpectedAt)
		})
	}
	assert.Len(t, s.checkins("job", 0), len(tests), "one check-in a ping")
}

func TestRuns(t *testing.T) {
	t.Parallel()
	s := start(t, api.Config{})
	v := s.create(`{"slug": "etl", "schedule": {"type": "interval", "seconds": 3600}, "failure_threshold": 2}`)

	// A start, and a finishing ping that names it.
	run := s.ping("POST", v.PingKey+"/start", "starting")
	got := s.get("etl")
	assert.Equal(t, "Running", got.State)
	assert.Equal(t, run, got.RunningCheckinID)
	list := s.checkins("etl", 0)
	require.Len(t, list, 1)
	assert.Equal(t, monitorengine.CheckinInProgress, list[0].Status)
	assert.Nil(t, list[0].FinishedAt)
	assert.Nil(t, list[0].DurationMS)
	assert.Equal(t, "starting", *list[0].Output)
	id := s.ping("POST", v.PingKey+"/4?checkin_id="+run, "done badly")
	assert.Equal(t, run, id, "the finishing ping closes the run")
	list = s.checkins("etl", 0)
	require.Len(t, list, 1, "no check-in of its own")
	c := list[0]
	assert.Equal(t, monitorengine.CheckinError, c.Status)
	require.NotNil(t, c.FinishedAt)
	require.NotNil(t, c.DurationMS)
	// SQLite reads times to the millisecond (julianday): the duration may
	// be a millisecond off the one rounded from the times.
	assert.InDelta(t, c.FinishedAt.Sub(c.CreatedAt).Round(time.Millisecond).Milliseconds(), *c.DurationMS, 1)
	assert.Equal(t, 4, *c.ExitCode)
	assert.Equal(t, "done badly", *c.Output, "the finishing ping's output")
	got = s.get("etl")
	assert.Equal(t, "Up", got.State)
	assert.Empty(t, got.RunningCheckinID)
	assert.Equal(t, 1, got.ConsecutiveFailures)
	assert.Equal(t, monitorengine.HealthHealthy, got.Health, "one failure of two")

	// A finishing ping without an id closes the run in progress.
	run = s.ping("GET", v.PingKey+"/start", "")
	assert.Equal(t, run, s.ping("GET", v.PingKey+"?exit_code=0", ""))
	list = s.checkins("etl", 1)
	assert.Equal(t, monitorengine.CheckinOK, list[0].Status)
	assert.Equal(t, run, list[0].ID)
	assert.NotNil(t, list[0].DurationMS)
	assert.Equal(t, 0, s.get("etl").ConsecutiveFailures)

	// A second start supersedes the run in progress.
	first := s.ping("GET", v.PingKey+"/start", "")
	second := s.ping("GET", v.PingKey+"/start", "")
	assert.Equal(t, second, s.get("etl").RunningCheckinID)
	list = s.checkins("etl", 2)
	assert.Equal(t, []string{second, first}, []string{list[0].ID, list[1].ID})
	assert.Equal(t, monitorengine.CheckinError, list[1].Status)
	assert.Equal(t, "superseded by a new start", *list[1].Output)
	requireError(t, s.do(req{method: "GET", path: "/ping/" + v.PingKey + "?checkin_id=" + first}), 409, "checkin_finished", "error")
	s.ping("GET", v.PingKey+"/fail?checkin_id="+second, "")
	got = s.get("etl")
	assert.Equal(t, 1, got.ConsecutiveFailures)
	assert.Equal(t, "Up", got.State)
}

func TestPingOutput(t *testing.T) {
	t.Parallel()
	s := start(t, api.Config{})
	v := s.create(`{"slug": "job", "schedule": {"type": "interval", "seconds": 3600}}`)
	const limit = 10 << 10
	tests := []struct {
		name string
		body string
		want string
	}{
		{"text", "backed up 3 files\n", "backed up 3 files\n"},
		{"exactly the limit", strings.Repeat("a", limit), strings.Repeat("a", limit)},
		{"one byte over", strings.Repeat("a", limit+1), strings.Repeat("a", limit) + "...[truncated]"},
		{"cut inside a character", strings.Repeat("a", limit-1) + "€" + "tail", strings.Repeat("a", limit-1) + "...[truncated]"},
		{"cut after a character", strings.Repeat("a", limit-3) + "€" + "tail", strings.Repeat("a", limit-3) + "€...[truncated]"},
		{"a 4-byte character at the cut", strings.Repeat("a", limit-2) + "😀" + "tail", strings.Repeat("a", limit-2) + "...[truncated]"},
		{"a megabyte", strings.Repeat("é", 1<<19), strings.Repeat("é", limit/2) + "...[truncated]"},
		{"invalid UTF-8", "ok \xff\xfe done", "ok \uFFFD done"},
		{"invalid UTF-8 at the cut", strings.Repeat("\x80", limit+10), "\uFFFD...[truncated]"},
		{"invalid UTF-8 that grows when replaced", strings.Repeat("\xffa", limit/2+1), strings.Repeat("\uFFFDa", limit/4) + "...[truncated]"},
		{"invalid UTF-8 that grows past the limit", strings.Repeat("\xffa", limit/2), strings.Repeat("\uFFFDa", limit/4) + "...[truncated]"},
		{"a NUL byte", "a\x00b", "a\x00b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := s.ping("POST", v.PingKey, tt.body)
			last := s.checkins("job", 1)
			require.Equal(t, id, last[0].ID)
			require.NotNil(t, last[0].Output)
			assert.Equal(t, tt.want, *last[0].Output)
			assert.LessOrEqual(t, len(strings.TrimSuffix(*last[0].Output, "...[truncated]")), limit)
		})
	}
	requireError(t, s.do(req{method: "POST", path: "/ping/" + v.PingKey, body: strings.Repeat("x", 1<<20+1)}), 413, "body_too_large")
	a := s.do(req{method: "POST", path: "/ping/" + v.PingKey, body: strings.Repeat("x", 1<<20)})
	assert.Equal(t, http.StatusOK, a.status, "a body of exactly 1 MiB is taken")
}

func TestAPICheckins(t *testing.T) {
	t.Parallel()
	s := start(t, api.Config{})
	s.create(`{"slug": "job", "schedule": {"type": "interval", "seconds": 3600}}`)
	post := func(body string) string {
		var out struct {
			CheckinID string `json:"checkin_id"`
		}
		s.json("POST", "/api/crons/monitors/job/checkins", body, http.StatusAccepted, &out)
		require.Len(t, out.CheckinID, 32)
		return out.CheckinID
	}
	run := post(`{"status": "in_progress"}`)
	assert.Equal(t, run, s.get("job").RunningCheckinID)
	assert.Equal(t, run, post(`{"status": "ok", "checkin_id": "`+run+`", "exit_code": 0, "output": "done"}`))
	one := post(`{"status": "error", "exit_code": 2}`)
	list := s.checkins("job", 0)
	require.Len(t, list, 2)
	assert.Equal(t, one, list[0].ID)
	assert.Equal(t, monitorengine.CheckinError, list[0].Status)
	assert.Equal(t, 2, *list[0].ExitCode)
	assert.Equal(t, run, list[1].ID)
	assert.Equal(t, monitorengine.CheckinOK, list[1].Status)
	assert.Equal(t, "done", *list[1].Output)
	assert.NotNil(t, list[1].DurationMS)
	for _, c := range list {
		assert.Equal(t, monitorengine.SourceAPI, c.Source)
	}
	assert.Equal(t, monitorengine.HealthFailing, s.get("job").Health)
}

func TestCheckinsNewestFirst(t *testing.T) {
	t.Parallel()
	s := start(t, api.Config{})
	v := s.create(`{"slug": "job", "schedule": {"type": "interval", "seconds": 3600}}`)
	var ids []string
	for range 7 {
		ids = append(ids, s.ping("GET", v.PingKey, ""))
	}
	tests := []struct {
		limit int
		want  []string
	}{
		{0, []string{ids[6], ids[5], ids[4], ids[3], ids[2], ids[1], ids[0]}},
		{1, []string{ids[6]}},
		{3, []string{ids[6], ids[5], ids[4]}},
		{10000, []string{ids[6], ids[5], ids[4], ids[3], ids[2], ids[1], ids[0]}},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.limit), func(t *testing.T) {
			list := s.checkins("job", tt.limit)
			var got []string
			for i, c := range list {
				got = append(got, c.ID)
				if i > 0 {
					assert.False(t, c.CreatedAt.After(list[i-1].CreatedAt), "newest first")
				}
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestPreview(t *testing.T) {
	t.Parallel()
	s := start(t, api.Config{})
	tests := []struct {
		name  string
		query string
		zone  string
		runs  []string
	}{
		{"spring forward: 02:30 runs at 03:00 EDT", "schedule=30+2+*+*+*&timezone=America/New_York&after=2025-03-08T12:00:00Z&count=3", "America/New_York",
			[]string{"2025-03-09T07:00:00Z", "2025-03-10T06:30:00Z", "2025-03-11T06:30:00Z"}},
		{"fall back: 01:30 runs once, in EDT", "schedule=30+1+*+*+*&timezone=America/New_York&after=2025-11-01T12:00:00Z&count=2", "America/New_York",
			[]string{"2025-11-02T05:30:00Z", "2025-11-03T06:30:00Z"}},
		{"real time: every 30 minutes skips the missing hour", "schedule=*/30+*+*+*+*&timezone=America/New_York&after=2025-03-09T06:15:00Z&count=3", "America/New_York",
			[]string{"2025-03-09T06:30:00Z", "2025-03-09T07:00:00Z", "2025-03-09T07:30:00Z"}},
		{"UTC by default", "schedule=@daily&after=2025-03-08T12:00:00Z&count=2", "UTC",
			[]string{"2025-03-09T00:00:00Z", "2025-03-10T00:00:00Z"}},
		{"an interval", "interval_seconds=90&after=2025-03-08T12:00:00Z&count=2", "UTC",
			[]string{"2025-03-08T12:01:30Z", "2025-03-08T12:03:00Z"}},
		{"an offset in after", "schedule=0+12+*+*+*&after=2025-03-08T12:00:00%2B01:00&count=1", "UTC",
			[]string{"2025-03-08T12:00:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out struct {
				Schedule monitorengine.Schedule `json:"schedule"`
				Timezone string                 `json:"timezone"`
				After    time.Time              `json:"after"`
				Runs     []time.Time            `json:"runs"`
			}
			s.json("GET", "/api/crons/preview?"+tt.query, "", http.StatusOK, &out)
			assert.Equal(t, tt.zone, out.Timezone)
			require.Len(t, out.Runs, len(tt.runs))
			for i, want := range tt.runs {
				w, err := time.Parse(time.RFC3339, want)
				require.NoError(t, err)
				assert.True(t, w.Equal(out.Runs[i]), "run %d: %s, want %s", i, out.Runs[i], want)
			}
		})
	}
	var out struct {
		After time.Time   `json:"after"`
		Runs  []time.Time `json:"runs"`
	}
	s.json("GET", "/api/crons/preview?schedule=*+*+*+*+*", "", http.StatusOK, &out)
	assert.Len(t, out.Runs, 10, "ten runs by default")
	assert.False(t, out.After.IsZero(), "after now by default")
	assert.True(t, out.Runs[0].After(out.After))
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	// A hundredth of a ping a second: one ping, then a wait of 100 s.
	s := start(t, api.Config{PingRate: 0.01})
	a := s.create(`{"slug": "a", "schedule": {"type": "interval", "seconds": 3600}}`)
	b := s.create(`{"slug": "b", "schedule": {"type": "interval", "seconds": 3600}}`)
	s.ping("GET", a.PingKey, "")
	for _, path := range []string{a.PingKey, a.PingKey + "/start", a.PingKey + "/fail"} {
		r := s.do(req{method: "POST", path: "/ping/" + path})
		requireError(t, r, http.StatusTooManyRequests, "rate_limited", "wait")
		retry, err := strconv.Atoi(r.header.Get("Retry-After"))
		require.NoError(t, err, "Retry-After %q", r.header.Get("Retry-After"))
		assert.Positive(t, retry)
		assert.LessOrEqual(t, retry, 100)
	}
	s.ping("GET", b.PingKey, "") // another key has its own bucket
	assert.Len(t, s.checkins("a", 0), 1, "the pings refused are not recorded")
	var h map[string]any
	s.json("GET", "/api/crons/monitors/a", "", http.StatusOK, &h) // the API is not limited
}
