package jobs

import (
	"sync"
	"time"

	"github.com/fsmgen/fsmgen/internal/backoff"
	"github.com/fsmgen/fsmgen/server/monitors"
	"github.com/fsmgen/fsmgen/server/schedule"
)

// The triggers of a run.
const (
	TriggerSchedule = "schedule"
	TriggerManual   = "manual"
	TriggerRetry    = "retry"
)

// Behavior implements the job machine's guards and effects. Its only state
// is a cache of compiled schedules, so one Behavior serves every job, from
// any goroutine.
type Behavior struct {
	plans sync.Map // monitors.Settings (schedule and time zone) → schedule.Schedule
}

// never is the next run of a schedule that does not compile: Check
// refuses such settings, so it is never reached.
var never = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// Next is the first run of s's schedule after t.
func (b *Behavior) Next(s Settings, t time.Time) time.Time {
	key := s.cron()
	if p, ok := b.plans.Load(key); ok {
		return p.(schedule.Schedule).Next(t)
	}
	sched, err := monitors.Compile(key)
	if err != nil {
		return never
	}
	b.plans.Store(key, sched)
	return sched.Next(t)
}

// RetriesLeft reports whether a run that was the attempt-th retry may be
// retried.
func (b *Behavior) RetriesLeft(s Settings, attempt int) bool { return attempt < s.Retries }

// UntilNextRun is the time from at to next.
func (b *Behavior) UntilNextRun(at, next time.Time) time.Duration { return max(next.Sub(at), 0) }

// Timeout is how long a run may take.
func (b *Behavior) Timeout(s Settings) time.Duration { return s.Timeout }

// Backoff is the wait before the attempt-th retry (1 for the first): the
// base, doubled for each retry after the first, up to the cap.
func (b *Behavior) Backoff(s Settings, attempt int) time.Duration {
	return backoff.Exponential(s.BackoffBase, s.BackoffCap, attempt)
}

// Due makes the scheduled run due, at next.
func (b *Behavior) Due(next time.Time) (time.Time, int, string) { return next, 0, TriggerSchedule }

// Trigger makes a manual run due at now.
func (b *Behavior) Trigger(now time.Time) (time.Time, int, string) { return now, 0, TriggerManual }

// Retry makes the attempt-th retry due, at the end of its backoff.
func (b *Behavior) Retry(s Settings, at time.Time, attempt int) (time.Time, string) {
	return at.Add(b.Backoff(s, attempt)), TriggerRetry
}

// CanQueue reports whether a manual run may wait behind the run in
// progress: with overlap queue, when none waits yet.
func (b *Behavior) CanQueue(s Settings, queued bool) bool {
	return s.Overlap == OverlapQueue && !queued
}

// IsQueued reports whether a manual run waits behind the run in progress.
func (b *Behavior) IsQueued(queued bool) bool { return queued }

// RunNext reports whether a run starts as soon as the run in progress,
// started at at, ends at now: one waits behind it, or, with overlap queue,
// a cron schedule's time came while it ran. (An interval counts from the
// end of a run: none of its times comes during one.)
func (b *Behavior) RunNext(s Settings, queued bool, at, now time.Time) bool {
	if queued {
		return true
	}
	return s.Overlap == OverlapQueue && s.Schedule.Type == monitors.ScheduleCron && !b.Next(s, at).After(now)
}

// RunNextAtTimeout is RunNext for a run that times out.
func (b *Behavior) RunNextAtTimeout(s Settings, queued bool, at time.Time) bool {
	return b.RunNext(s, queued, at, at.Add(s.Timeout))
}

// next is the trigger of the run that starts when a run ends: manual when
// one waited behind it, else a scheduled time that passed during it.
func next(queued bool) string {
	if queued {
		return TriggerManual
	}
	return TriggerSchedule
}

// SucceedAndNext ends a run well at now and makes the next run due at
// once.
func (b *Behavior) SucceedAndNext(now time.Time, queued bool) (time.Time, int, int, string) {
	return now, 0, 0, next(queued)
}

// FailAndNext counts a failed run at now and makes the next run due at
// once, in place of a retry.
func (b *Behavior) FailAndNext(now time.Time, failures int, queued bool) (time.Time, int, int, string) {
	return now, failures + 1, 0, next(queued)
}

// TimeOutAndNext counts the run started at at failed at its timeout, and
// makes the next run due then, in place of a retry.
func (b *Behavior) TimeOutAndNext(s Settings, at time.Time, failures int, queued bool) (time.Time, int, int, string) {
	return at.Add(s.Timeout), failures + 1, 0, next(queued)
}

// CancelAndNext stops at now and makes the manual run that waited behind
// the cancelled one due.
func (b *Behavior) CancelAndNext(now time.Time) (time.Time, int, string) {
	return now, 0, TriggerManual
}

// Succeed ends a run well at now: no failure in a row, and the next run
// after now.
func (b *Behavior) Succeed(s Settings, now time.Time) (time.Time, int, time.Time) {
	return now, 0, b.Next(s, now)
}

// FailAndRetry counts a failed run at now, to be retried.
func (b *Behavior) FailAndRetry(now time.Time, failures, attempt int) (time.Time, int, int) {
	return now, failures + 1, attempt + 1
}

// FailAndGiveUp counts a failed run at now, its last retry: the next run
// is the schedule's next after now.
func (b *Behavior) FailAndGiveUp(s Settings, now time.Time, failures int) (time.Time, int, time.Time) {
	return now, failures + 1, b.Next(s, now)
}

// TimeOutAndRetry counts the run started at at failed at its timeout, to
// be retried.
func (b *Behavior) TimeOutAndRetry(s Settings, at time.Time, failures, attempt int) (time.Time, int, int) {
	return at.Add(s.Timeout), failures + 1, attempt + 1
}

// TimeOutAndGiveUp counts the run started at at failed at its timeout, its
// last retry.
func (b *Behavior) TimeOutAndGiveUp(s Settings, at time.Time, failures int) (time.Time, int, time.Time) {
	end := at.Add(s.Timeout)
	return end, failures + 1, b.Next(s, end)
}

// Skip stops at now: the next run is the schedule's next after now.
func (b *Behavior) Skip(s Settings, now time.Time) (time.Time, time.Time) {
	return now, b.Next(s, now)
}

// Reconfigure takes new settings at now.
func (b *Behavior) Reconfigure(s Settings, now time.Time) (Settings, time.Time, time.Time) {
	return s, now, b.Next(s, now)
}
