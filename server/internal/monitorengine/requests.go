package monitorengine

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fsmgen/fsmgen/gen/monitor"
	"github.com/fsmgen/fsmgen/server/internal/store"
	"github.com/fsmgen/fsmgen/server/internal/webhook"
	"github.com/fsmgen/fsmgen/server/monitors"
	"github.com/fsmgen/fsmgen/server/schedule"
)

// newID returns a check-in id: 128 random bits, in hex.
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// newPingKey returns a ping key: 192 random bits, URL-safe.
func newPingKey() string {
	var b [24]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// The defaults of a new monitor.
const (
	DefaultMarginSeconds     = 60
	DefaultMaxRuntimeSeconds = 1800
)

// Input is a monitor as POST /api/crons/monitors gives it; a PATCH gives
// any of its fields, and status.
type Input struct {
	Slug                 *string   `json:"slug"`
	Name                 *string   `json:"name"`
	Schedule             *Schedule `json:"schedule"`
	Timezone             *string   `json:"timezone"`
	CheckinMarginSeconds *int      `json:"checkin_margin_seconds"`
	MaxRuntimeSeconds    *int      `json:"max_runtime_seconds"`
	FailureThreshold     *int      `json:"failure_threshold"`
	RecoveryThreshold    *int      `json:"recovery_threshold"`
	AlertWebhookURL      *string   `json:"alert_webhook_url"`
	Status               *string   `json:"status"`
}

var slugRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

func invalid(field, format string, args ...any) error {
	return &Error{Status: 400, Code: "invalid_" + field, Message: field + ": " + fmt.Sprintf(format, args...)}
}

// merge applies the fields in of a create or patch to v, checking each; g
// checks a webhook's URL, b the schedule (compiling each schedule once:
// the jobs' monitors are made by the thousand, most of them alike).
func (in *Input) merge(v *View, g *webhook.Guard, b *monitors.Behavior) error {
	if in.Slug != nil {
		if !slugRE.MatchString(*in.Slug) {
			return invalid("slug", "%q is not a slug: 1 to 64 lower-case letters, digits, - and _, starting with a letter or digit", *in.Slug)
		}
		v.Slug = *in.Slug
	}
	if in.Name != nil {
		name := strings.TrimSpace(*in.Name)
		if name == "" || utf8.RuneCountInString(name) > 200 || !utf8.ValidString(name) || strings.ContainsRune(name, 0) {
			return invalid("name", "give 1 to 200 characters of text (no NUL)")
		}
		v.Name = name
	}
	if in.Schedule != nil {
		v.Schedule = *in.Schedule
	}
	if in.Timezone != nil {
		// Checked for every schedule, not only a cron one: an interval
		// monitor keeps it for a later change to a cron schedule.
		if _, err := monitors.Location(*in.Timezone); err != nil {
			return invalid("timezone", "%v", err)
		}
		v.Timezone = *in.Timezone
	}
	if in.CheckinMarginSeconds != nil {
		if n := *in.CheckinMarginSeconds; n < 0 || n > 7*86400 {
			return invalid("checkin_margin_seconds", "%d is not between 0 and 604800 (a week)", n)
		}
		v.CheckinMarginSeconds = *in.CheckinMarginSeconds
	}
	if in.MaxRuntimeSeconds != nil {
		if n := *in.MaxRuntimeSeconds; n < 1 || n > 7*86400 {
			return invalid("max_runtime_seconds", "%d is not between 1 and 604800 (a week)", n)
		}
		v.MaxRuntimeSeconds = *in.MaxRuntimeSeconds
	}
	if in.FailureThreshold != nil {
		if n := *in.FailureThreshold; n < 1 || n > 1000 {
			return invalid("failure_threshold", "%d is not between 1 and 1000", n)
		}
		v.FailureThreshold = *in.FailureThreshold
	}
	if in.RecoveryThreshold != nil {
		if n := *in.RecoveryThreshold; n < 1 || n > 1000 {
			return invalid("recovery_threshold", "%d is not between 1 and 1000", n)
		}
		v.RecoveryThreshold = *in.RecoveryThreshold
	}
	if in.AlertWebhookURL != nil {
		if u := *in.AlertWebhookURL; u != "" {
			if err := g.CheckURL(u); err != nil {
				if webhook.IsRefused(err) {
					return &Error{Status: 400, Code: "webhook_refused", Message: "alert_webhook_url: " + err.Error()}
				}
				return invalid("alert_webhook_url", "%v", err)
			}
		}
		v.AlertWebhookURL = *in.AlertWebhookURL
	}
	if in.Status != nil {
		switch *in.Status {
		case StatusActive, StatusPaused, StatusDisabled:
			v.Status = *in.Status
		default:
			return invalid("status", "%q is not active, paused or disabled", *in.Status)
		}
	}
	if err := b.Check(v.settings()); err != nil {
		var bad *monitors.InvalidError
		if errors.As(err, &bad) {
			return invalid(bad.Field, "%v", bad.Err)
		}
		return invalid("schedule", "%v", err)
	}
	return nil
}

// Create adds a monitor.
func (e *Engine) Create(ctx context.Context, in *Input) (*View, error) {
	return e.create(ctx, in, -1)
}

// CreatePinned adds a monitor, on a shared store to shard, which this
// instance must hold (503 otherwise); on one instance it is Create. The
// jobs' monitors are pinned to store.JobsShard.
func (e *Engine) CreatePinned(ctx context.Context, in *Input, shard int) (*View, error) {
	return e.create(ctx, in, shard)
}

// create adds a monitor, to shard when it is not negative (on a shared
// store).
func (e *Engine) create(ctx context.Context, in *Input, pinned int) (*View, error) {
	if in.Slug == nil {
		return nil, invalid("slug", "missing: give the monitor a slug, as in \"nightly-backup\"")
	}
	if in.Schedule == nil {
		return nil, invalid("schedule", `missing: give {"type": "cron", "expression": "0 3 * * *"} or {"type": "interval", "seconds": 3600}`)
	}
	if in.Status != nil && *in.Status != StatusActive {
		return nil, invalid("status", "a new monitor is active: pause or disable it afterwards")
	}
	v, err := in.fresh(e.webhooks, e.behavior)
	if err != nil {
		return nil, err
	}
	// On a shared store, the database numbers the monitor, and it goes to
	// a shard this instance runs.
	var id int64
	var shard int
	if e.shared != nil {
		if err := e.slugFree(ctx, v.Slug); err != nil {
			return nil, err
		}
		var err error
		switch {
		case pinned < 0:
			if shard, err = e.pickShard(); err != nil {
				return nil, err
			}
		case !e.holds(pinned):
			return nil, &Error{Status: 503, Code: "no_shard", Message: fmt.Sprintf("this instance does not hold shard %d, where the monitor belongs: retry on the instance that does", pinned)}
		default:
			shard = pinned
		}
		if id, err = e.shared.NewMonitorID(ctx); err != nil {
			return nil, storageError(err)
		}
	}
	return e.dispatch(ctx, e.creation(v, id, shard)).viewOf()
}

// fresh returns the view of a new monitor as in gives it, with the
// defaults of what it leaves out.
func (in *Input) fresh(g *webhook.Guard, b *monitors.Behavior) (*View, error) {
	v := &View{Timezone: "UTC", CheckinMarginSeconds: DefaultMarginSeconds, MaxRuntimeSeconds: DefaultMaxRuntimeSeconds, FailureThreshold: 1, RecoveryThreshold: 1, Status: StatusActive}
	if err := in.merge(v, g, b); err != nil {
		return nil, err
	}
	if v.Name == "" {
		v.Name = v.Slug
	}
	return v, nil
}

// creation is the request that adds the monitor v (numbered id, in shard,
// on a shared store).
func (e *Engine) creation(v *View, id int64, shard int) *request {
	return &request{apply: func(e *Engine, rs *roundState) (result, error) {
		made, errs := e.newMons(rs, []*View{v}, []int64{id}, shard)
		if errs[0] != nil {
			return result{}, errs[0]
		}
		return result{mon: made[0]}, nil
	}}
}

// Patch changes a monitor.
func (e *Engine) Patch(ctx context.Context, slug string, in *Input) (*View, error) {
	if e.shared != nil && in.Slug != nil && *in.Slug != slug {
		if err := e.slugFree(ctx, *in.Slug); err != nil {
			return nil, err
		}
	}
	res := e.dispatch(ctx, e.patching(slug, in))
	res.err = e.missing(ctx, res.err, slug, "")
	return res.viewOf()
}

// patching is the request that changes monitor slug as in says.
func (e *Engine) patching(slug string, in *Input) *request {
	return &request{apply: func(e *Engine, rs *roundState) (result, error) {
		m := e.bySlug[slug]
		if m == nil || rs.deleted[m] {
			return result{}, notFound(slug)
		}
		cur := newView(&m.row, m.machine)
		next := *cur
		if err := in.merge(&next, e.webhooks, e.behavior); err != nil {
			return result{}, err
		}
		if next.Slug != cur.Slug {
			if job, ok := e.jobOf(m); ok {
				return result{}, errJobMonitor(slug, job, "renamed")
			}
			if e.bySlug[next.Slug] != nil {
				return result{}, slugTaken(next.Slug)
			}
		}
		st := e.begin(rs, m, rs.now)
		var events []monitor.Event
		if next.settings() != cur.settings() {
			events = append(events, &monitor.Reconfigure{Now: rs.now, NewSettings: next.settings()})
		}
		if next.Status != cur.Status {
			switch next.Status {
			case StatusActive:
				events = append(events, &monitor.Resume{Now: rs.now})
			case StatusPaused:
				events = append(events, &monitor.Pause{})
			case StatusDisabled:
				events = append(events, &monitor.Disable{})
			}
		}
		for _, ev := range events {
			if err := m.machine.HandleEvent(ev); err != nil {
				// The machine handles every change in every state; an
				// error here is the machine's own.
				e.abandon(st)
				return result{}, err
			}
		}
		m.row.Name, m.row.AlertWebhookURL = next.Name, next.AlertWebhookURL
		if next.Slug != cur.Slug {
			m.row.Slug = next.Slug
			e.reindex(m, cur.Slug)
		}
		e.end(st)
		ev := MonitorEvent{Slug: m.row.Slug, Change: "updated"}
		if m.row.Slug != cur.Slug {
			ev.PreviousSlug = cur.Slug
		}
		rs.events = append(rs.events, Event{Kind: EventMonitor, Data: ev})
		return result{mon: m}, nil
	}}
}

// Delete removes a monitor and its check-ins.
func (e *Engine) Delete(ctx context.Context, slug string) error {
	res := e.dispatch(ctx, &request{apply: func(e *Engine, rs *roundState) (result, error) {
		m := e.bySlug[slug]
		if m == nil || rs.deleted[m] {
			return result{}, notFound(slug)
		}
		if job, ok := e.jobOf(m); ok {
			return result{}, errJobMonitor(slug, job, "deleted")
		}
		rs.touch(m)
		rs.deleted[m] = true
		e.disarmAll(m)
		e.remove(m)
		rs.batch.Add(store.DeleteMonitor{ID: m.row.ID})
		rs.events = append(rs.events, Event{Kind: EventMonitor, Data: MonitorEvent{Slug: slug, Change: "deleted"}})
		return result{}, nil
	}})
	return e.missing(ctx, res.err, slug, "")
}

// The codes of the answers about a monitor that does not exist.
const (
	codeNotFound   = "monitor_not_found"
	codeUnknownKey = "unknown_ping_key"
)

func notFound(slug string) error {
	return &Error{Status: 404, Code: codeNotFound, Message: fmt.Sprintf("no monitor %q: GET /api/crons/monitors lists them", slug)}
}

func slugTaken(slug string) error {
	return &Error{Status: 409, Code: "slug_taken", Message: fmt.Sprintf("a monitor %q exists: choose another slug", slug)}
}

// slugFree checks, on a shared store, that no instance has a monitor
// called slug. (Two instances that create one at the same moment both
// pass; the database refuses the second, whose round fails.)
func (e *Engine) slugFree(ctx context.Context, slug string) error {
	m, _, _, err := e.shared.Locate(ctx, slug, "")
	switch {
	case err != nil:
		return storageError(err)
	case m != nil:
		return slugTaken(slug)
	}
	return nil
}

// viewOf returns the committed view of the request's monitor.
func (r result) viewOf() (*View, error) {
	if r.err != nil {
		return nil, r.err
	}
	return r.mon.view.Load(), nil
}

// Get returns a monitor; on a shared store, as the database has it.
func (e *Engine) Get(ctx context.Context, slug string) (*View, error) {
	if e.shared != nil {
		m, _, _, err := e.shared.Locate(ctx, slug, "")
		if err != nil {
			return nil, storageError(err)
		}
		if m == nil {
			return nil, notFound(slug)
		}
		return e.viewOfRow(m)
	}
	e.mu.RLock()
	m := e.bySlug[slug]
	e.mu.RUnlock()
	if m == nil {
		return nil, notFound(slug)
	}
	return m.view.Load(), nil
}

// viewOfRow returns the view of a monitor's row, its machine decoded.
func (e *Engine) viewOfRow(row *store.Monitor) (*View, error) {
	m := &mon{row: *row}
	m.handler = &handler{e: e, mon: m}
	if err := e.decode(m); err != nil {
		return nil, fmt.Errorf("monitor %s: %w", row.Slug, err)
	}
	return newView(&m.row, m.machine), nil
}

// List returns every monitor, by slug; on a shared store, as the
// database has them.
func (e *Engine) List(ctx context.Context) ([]*View, error) {
	if e.shared == nil {
		return e.sortedViews(), nil
	}
	rows, err := e.shared.Monitors(ctx)
	if err != nil {
		return nil, storageError(err)
	}
	views := make([]*View, 0, len(rows))
	for _, row := range rows {
		v, err := e.viewOfRow(row)
		if err != nil {
			return nil, err
		}
		views = append(views, v)
	}
	slices.SortFunc(views, func(a, b *View) int { return strings.Compare(a.Slug, b.Slug) })
	return views, nil
}

// Monitors reports how many monitors this instance runs.
func (e *Engine) Monitors() int {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return len(e.byID)
}

// Checkins returns a monitor's last limit check-ins, newest first.
func (e *Engine) Checkins(ctx context.Context, slug string, limit int) ([]CheckinView, error) {
	var id int64
	if e.shared != nil {
		m, _, _, err := e.shared.Locate(ctx, slug, "")
		if err != nil {
			return nil, storageError(err)
		}
		if m == nil {
			return nil, notFound(slug)
		}
		id = m.ID
	} else {
		e.mu.RLock()
		m := e.bySlug[slug]
		e.mu.RUnlock()
		if m == nil {
			return nil, notFound(slug)
		}
		id = m.row.ID
	}
	rows, err := e.store.Checkins(ctx, id, limit)
	if err != nil {
		return nil, err
	}
	out := make([]CheckinView, 0, len(rows))
	for _, c := range rows {
		out = append(out, newCheckinView(c))
	}
	return out, nil
}

// Ping is a check-in: a ping of /ping/{key}, or one the API posts.
type Ping struct {
	// Key is the monitor's ping key (a ping), or empty when Slug names
	// the monitor (the API).
	Key, Slug string
	// Kind is "start", "ok" or "fail".
	Kind string
	// ExitCode is the job's exit code, when given: non-zero fails.
	ExitCode *int
	// Checkin names the run a finishing check-in closes, when given.
	Checkin string
	// Output is the job's output, already cut to size; nil when none.
	Output *string
	// Source is "ping" or "api".
	Source string
}

// The kinds of ping.
const (
	PingStart = "start"
	PingOK    = "ok"
	PingFail  = "fail"
)

// Check records a check-in and returns its id.
func (e *Engine) Check(ctx context.Context, p Ping) (string, error) {
	res := e.dispatch(ctx, &request{apply: func(e *Engine, rs *roundState) (result, error) { return e.check(rs, p) }})
	return res.checkin, e.missing(ctx, res.err, p.Slug, p.Key)
}

func (e *Engine) check(rs *roundState, p Ping) (result, error) {
	m := e.byKey[p.Key]
	if p.Key == "" {
		m = e.bySlug[p.Slug]
	}
	if m == nil || rs.deleted[m] {
		if p.Key == "" {
			return result{}, notFound(p.Slug)
		}
		return result{}, &Error{Status: 404, Code: codeUnknownKey, Message: "no monitor has this ping key: check the URL the job pings"}
	}
	if m.machine.Kind() == monitor.StateDisabled {
		return result{}, &Error{Status: 409, Code: "monitor_disabled", Message: fmt.Sprintf("monitor %q is disabled and records no check-in: make it active first", m.row.Slug)}
	}
	now := rs.now
	status := CheckinOK
	if p.Kind == PingFail || (p.ExitCode != nil && *p.ExitCode != 0) {
		status = CheckinError
	}
	if p.Kind == PingStart {
		st := e.begin(rs, m, now)
		id := newID()
		c := &store.Checkin{ID: id, MonitorID: m.row.ID, Status: CheckinInProgress, Source: p.Source, CreatedAt: now, ExitCode: p.ExitCode, Output: p.Output}
		st.batch.Add(store.InsertCheckin{Checkin: *c})
		if err := m.machine.HandleEvent(&monitor.Start{Now: now, Checkin: id}); err != nil {
			e.abandon(st)
			return result{}, err
		}
		rs.checkins[id] = m
		m.row.LastCheckinAt = now
		rs.events = append(rs.events, Event{Kind: EventCheckin, Data: CheckinEvent{Slug: m.row.Slug, Checkin: newCheckinView(c)}})
		e.end(st)
		return result{checkin: id}, nil
	}
	if p.Checkin != "" {
		if err := e.runOf(rs, m, p.Checkin); err != nil {
			return result{}, err
		}
	}
	st := e.begin(rs, m, now)
	var ev monitor.Event = &monitor.Succeeded{Now: now, Checkin: p.Checkin}
	if status == CheckinError {
		ev = &monitor.Failed{Now: now, Checkin: p.Checkin}
	}
	if err := m.machine.HandleEvent(ev); err != nil {
		e.abandon(st)
		return result{}, err
	}
	id := st.closed
	if id == "" {
		id = p.Checkin
	}
	if id != "" {
		st.batch.Add(store.FinishCheckin{MonitorID: m.row.ID, ID: id, Status: status, At: now, ExitCode: p.ExitCode, Output: p.Output})
		st.finish(id, status)
		rs.events = append(rs.events, finishedEvent(m, id, status, now))
	} else {
		id = newID()
		c := &store.Checkin{ID: id, MonitorID: m.row.ID, Status: status, Source: p.Source, CreatedAt: now, FinishedAt: now, ExitCode: p.ExitCode, Output: p.Output}
		st.batch.Add(store.InsertCheckin{Checkin: *c})
		rs.events = append(rs.events, Event{Kind: EventCheckin, Data: CheckinEvent{Slug: m.row.Slug, Checkin: newCheckinView(c)}})
	}
	m.row.LastCheckinAt = now
	e.end(st)
	return result{checkin: id}, nil
}

// runOf checks that id names an in-progress check-in of m.
func (e *Engine) runOf(rs *roundState, m *mon, id string) error {
	if f, ok := rs.finished[id]; ok && f.mon == m {
		// Closed by this round, not yet written.
		return &Error{Status: 409, Code: "checkin_finished", Message: fmt.Sprintf("check-in %q is already finished (%s)", id, f.status)}
	}
	if r, ok := m.machine.State().(monitor.Running); ok && r.Run == id {
		return nil
	}
	if rs.checkins[id] == m {
		return nil
	}
	c, err := e.store.Checkin(context.Background(), m.row.ID, id)
	switch {
	case err != nil:
		return err
	case c == nil:
		return &Error{Status: 404, Code: "checkin_not_found", Message: fmt.Sprintf("monitor %q has no check-in %q: give the checkin_id its start ping returned", m.row.Slug, id)}
	case c.Status != CheckinInProgress:
		return &Error{Status: 409, Code: "checkin_finished", Message: fmt.Sprintf("check-in %q is already finished (%s)", id, c.Status)}
	}
	return nil
}

// Preview returns the next count run times of a schedule after after; its
// error is a *monitors.InvalidError.
func Preview(s Schedule, timezone string, after time.Time, count int) ([]time.Time, error) {
	sched, err := monitors.Compile(monitors.Settings{Schedule: monitors.Schedule(s), Timezone: timezone})
	if err != nil {
		return nil, err
	}
	return schedule.Preview(sched, after, count), nil
}
