package monitors

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fsmgen/fsmgen/server/schedule"
)

// Behavior implements the monitor machine's guards and effects. Its only
// state is a cache of compiled schedules, so one Behavior serves every
// monitor, from any goroutine.
type Behavior struct {
	plans sync.Map // Schedule + time zone → plan
}

// plan is a compiled schedule.
type plan struct {
	sched    schedule.Schedule
	interval bool
}

// never is the time a schedule that cannot be compiled expects its next
// run: Validate refuses such settings, so it is never reached.
var never = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

type planKey struct {
	Schedule
	Timezone string
}

// plan returns the compiled schedule of s, or nil when it does not
// compile.
func (b *Behavior) plan(s Settings) *plan {
	key := planKey{s.Schedule, s.Timezone}
	if p, ok := b.plans.Load(key); ok {
		return p.(*plan)
	}
	sched, err := Compile(s)
	if err != nil {
		return nil
	}
	p := &plan{sched: sched, interval: s.Schedule.Type == ScheduleInterval}
	b.plans.Store(key, p)
	return p
}

// Check reports why s's schedule does not compile (as Compile does), or
// nil; a schedule compiled before is not compiled again (a start-up checks
// the saved schedule of every monitor, most of them alike).
func (b *Behavior) Check(s Settings) error {
	if _, ok := b.plans.Load(planKey{s.Schedule, s.Timezone}); ok {
		return nil
	}
	if _, err := Compile(s); err != nil {
		return err
	}
	b.plan(s)
	return nil
}

// The schedule types.
const (
	ScheduleCron     = "cron"
	ScheduleInterval = "interval"
)

// InvalidError is the error of settings that do not compile: Field says
// which setting is wrong ("schedule" or "timezone").
type InvalidError struct {
	Field string
	Err   error
}

func (e *InvalidError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *InvalidError) Unwrap() error { return e.Err }

// Compile returns the schedule of s: a cron expression read in s's time
// zone, or an interval. Its error is an *InvalidError.
func Compile(s Settings) (schedule.Schedule, error) {
	loc, err := Location(s.Timezone)
	if err != nil {
		return nil, &InvalidError{"timezone", err}
	}
	var sched schedule.Schedule
	switch s.Schedule.Type {
	case ScheduleCron:
		sched, err = schedule.ParseCron(s.Schedule.Expression, loc)
	case ScheduleInterval:
		sched, err = schedule.NewInterval(s.Schedule.Seconds)
	case "":
		err = errors.New(`no type: give "cron" with an expression, or "interval" with seconds`)
	default:
		err = fmt.Errorf("type %q is not \"cron\" or \"interval\"", s.Schedule.Type)
	}
	if err != nil {
		return nil, &InvalidError{"schedule", err}
	}
	return sched, nil
}

// Location returns the IANA time zone name names; "" is UTC. A zone is
// read from the system's time zone database once (time.LoadLocation reads
// it at each call, and a start-up checks the zone of each of thousands of
// jobs and monitors).
func Location(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	if loc, ok := locations.Load(name); ok {
		return loc.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil || name == "Local" {
		return nil, fmt.Errorf("%q is not an IANA time zone name such as Europe/Berlin or UTC", name)
	}
	locations.Store(name, loc)
	return loc, nil
}

// locations are the zones Location read: name → *time.Location.
var locations sync.Map

// First is when a monitor with settings s, started at now, expects its
// first check-in.
func (b *Behavior) First(s Settings, now time.Time) time.Time {
	p := b.plan(s)
	if p == nil {
		return never
	}
	return p.sched.Next(now)
}

// expect is when the monitor expects the next check-in after one at t,
// when it expected one at next: a check-in no earlier than the margin
// before next counts for that run.
func (b *Behavior) expect(s Settings, next, t time.Time) time.Time {
	p := b.plan(s)
	switch {
	case p == nil:
		return never
	case p.interval:
		return p.sched.Next(t)
	case next.Sub(t) <= s.Margin && t.Before(next):
		return p.sched.Next(next)
	}
	return p.sched.Next(t)
}

// StaysFailing reports whether a failing job is still failing after one
// more good check-in.
func (b *Behavior) StaysFailing(s Settings, successes int, failing bool) bool {
	return failing && successes+1 < threshold(s.RecoveryThreshold)
}

// FailsNow reports whether the job is failing after one more failed
// check-in.
func (b *Behavior) FailsNow(s Settings, failures int, failing bool) bool {
	return failing || failures+1 >= threshold(s.FailureThreshold)
}

// threshold is a threshold as the monitor counts it: at least 1.
func threshold(n int) int { return max(n, 1) }

// ForeignRun reports whether a finishing check-in names a run, and not
// the running one.
func (b *Behavior) ForeignRun(checkin, run string) bool {
	return checkin != "" && checkin != run
}

// UntilMissed is the time from at to the end of the margin after next.
func (b *Behavior) UntilMissed(s Settings, at, next time.Time) time.Duration {
	return max(next.Add(s.Margin).Sub(at), 0)
}

// UntilDue is the time from at to next.
func (b *Behavior) UntilDue(at, next time.Time) time.Duration {
	return max(next.Sub(at), 0)
}

// MaxRuntime is how long a run may take.
func (b *Behavior) MaxRuntime(s Settings) time.Duration { return s.MaxRuntime }

// Miss records the run expected at next as missed at the end of its
// margin, and expects the run after it.
func (b *Behavior) Miss(s Settings, next time.Time) (at, nextExpected, expectedAt time.Time) {
	p := b.plan(s)
	if p == nil {
		return next.Add(s.Margin), never, next
	}
	return next.Add(s.Margin), p.sched.Next(next), next
}

// Timeout ends a run started at at when its maximum runtime is up, and
// expects the next run after that.
func (b *Behavior) Timeout(s Settings, at, next time.Time) (time.Time, time.Time) {
	end := at.Add(s.MaxRuntime)
	return end, b.expect(s, next, end)
}

// Begin starts run checkin at now.
func (b *Behavior) Begin(now time.Time, checkin string) (time.Time, string) {
	return now, checkin
}

// Restart starts run checkin at now in place of run, which it supersedes.
func (b *Behavior) Restart(now time.Time, checkin, run string) (time.Time, string, string) {
	return now, checkin, run
}

// Succeed counts a good check-in at now.
func (b *Behavior) Succeed(s Settings, now, next time.Time, failures, successes int, failing bool) (time.Time, time.Time, int, int, bool) {
	if failing {
		successes++
		if successes >= threshold(s.RecoveryThreshold) {
			failing, successes = false, 0
		}
	} else {
		successes = 0
	}
	return now, b.expect(s, next, now), 0, successes, failing
}

// Fail counts a failed check-in at now.
func (b *Behavior) Fail(s Settings, now, next time.Time, failures, successes int, failing bool) (time.Time, time.Time, int, int, bool) {
	failures++
	if failures >= threshold(s.FailureThreshold) {
		failing = true
	}
	return now, b.expect(s, next, now), failures, 0, failing
}

// Resume starts afresh at now.
func (b *Behavior) Resume(s Settings, now time.Time) (time.Time, time.Time, int, int, bool) {
	return now, b.First(s, now), 0, 0, false
}

// Reconfigure takes new settings at now and starts afresh.
func (b *Behavior) Reconfigure(s Settings, now time.Time) (Settings, time.Time, time.Time, int, int, bool) {
	return s, now, b.First(s, now), 0, 0, false
}
