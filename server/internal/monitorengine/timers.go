package monitorengine

import (
	"time"

	"github.com/fsmgen/fsmgen/runtime/fsmrt"
	"github.com/fsmgen/fsmgen/server/internal/timerset"
)

// The monitors' timers are one set for all monitors
// (server/internal/timerset); a monitor's armed ones are its timers.

// timerEntry is an armed timer of a monitor.
type timerEntry = timerset.Entry[*mon]

// armedOf is where a monitor keeps its armed timers.
func armedOf(m *mon) *timerset.Armed[*mon] { return &m.timers }

// counted publishes how many timers are armed (Timers) after a change.
func (e *Engine) counted() { e.armedCount.Store(int64(e.timers.Len())) }

// arm sets m's timer id to fire at deadline, replacing one of that id.
func (e *Engine) arm(m *mon, id fsmrt.TimerID, deadline time.Time) {
	e.timers.Arm(m, id, deadline)
	e.counted()
}

// disarm cancels m's timer id, if it is armed.
func (e *Engine) disarm(m *mon, id fsmrt.TimerID) {
	e.timers.Disarm(m, id)
	e.counted()
}

// disarmAll cancels every timer of m.
func (e *Engine) disarmAll(m *mon) {
	e.timers.DisarmAll(m)
	e.counted()
}

// due pops up to limit timers whose deadline is at or before now, in
// deadline order, each with its monitor.
func (e *Engine) due(now time.Time, limit int) []dueTimer {
	var out []dueTimer
	for len(out) < limit {
		t := e.timers.Due(now)
		if t == nil {
			break
		}
		out = append(out, dueTimer{t.Owner, t})
	}
	e.counted()
	return out
}

// dueTimer is a timer that fires, with its monitor.
type dueTimer struct {
	mon   *mon
	entry *timerEntry
}
