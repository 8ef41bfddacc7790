package jobengine

import (
	"time"

	"github.com/fsmgen/fsmgen/gen/job"
	"github.com/fsmgen/fsmgen/runtime/fsmrt"
	"github.com/fsmgen/fsmgen/server/internal/timerset"
)

// The jobs' timers are one set for all jobs, as the monitors' are
// (server/internal/timerset); a job's armed ones are its timers (one at
// most, in the job machine), and a round takes every due one at once.

// timerEntry is an armed timer of a job.
type timerEntry = timerset.Entry[*jobState]

// armedOf is where a job keeps its armed timers.
func armedOf(j *jobState) *timerset.Armed[*jobState] { return &j.timers }

// arm sets j's timer id to fire at deadline, replacing one of that id.
func (e *Engine) arm(j *jobState, id fsmrt.TimerID, deadline time.Time) {
	e.timers.Arm(j, id, deadline)
}

// disarm cancels j's timer id, if it is armed.
func (e *Engine) disarm(j *jobState, id fsmrt.TimerID) { e.timers.Disarm(j, id) }

// disarmAll cancels every timer of j.
func (e *Engine) disarmAll(j *jobState) { e.timers.DisarmAll(j) }

// armAll arms j's timers as its machine has them, at their deadlines, in
// place of those armed before.
func (e *Engine) armAll(j *jobState) {
	e.disarmAll(j)
	now := e.now()
	for _, t := range j.machine.Timers() {
		e.arm(j, t.Timer, deadline(j.machine, t, now))
	}
}

// deadline is when timer t of m fires: at the deadline it was saved with,
// or its delay after now when it has none (a state put with Restore).
func deadline(m *job.Machine, t *job.StartTimer, now time.Time) time.Time {
	if d := m.Deadline(t.Timer); !d.IsZero() {
		return d
	}
	return now.Add(t.Delay)
}

// armLoaded arms the timers decode made for the jobs it loaded (none
// armed before: a start, or a takeover after forget), in the jobs' order.
func (e *Engine) armLoaded() { e.timers.Install(e.list) }

// due disarms and returns the first timer whose deadline is at or before
// now; nil when none is due.
func (e *Engine) due(now time.Time) *timerEntry { return e.timers.Due(now) }
