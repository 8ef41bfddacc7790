package monitorengine

import (
	"sync/atomic"
	"time"

	"github.com/fsmgen/fsmgen/gen/monitor"
	"github.com/fsmgen/fsmgen/server/internal/store"
	"github.com/fsmgen/fsmgen/server/internal/timerset"
	"github.com/fsmgen/fsmgen/server/monitors"
)

// mon is a monitor as the engine keeps it.
type mon struct {
	// row is the monitor as last committed (Run's).
	row     store.Monitor
	machine *monitor.Machine
	handler *handler
	// view is what readers see: the committed monitor.
	view atomic.Pointer[View]
	// timers are the machine's armed timers (Run's): a few at most.
	timers timerset.Armed[*mon]
}

// The monitor's health, as the API reports it.
const (
	HealthUnknown = "unknown"
	HealthHealthy = "healthy"
	HealthLate    = "late"
	HealthMissed  = "missed"
	HealthTimeout = "timeout"
	HealthFailing = "failing"
)

// The monitor's status.
const (
	StatusActive   = "active"
	StatusPaused   = "paused"
	StatusDisabled = "disabled"
)

// healthOf returns the health the machine's state reports, or prev for a
// state that reports none of its own (a run in progress, a paused or
// disabled monitor keep the health they had).
func healthOf(s monitor.State, prev string) string {
	switch s.(type) {
	case monitor.Fresh:
		return HealthUnknown
	case monitor.Up:
		return HealthHealthy
	case monitor.Late:
		return HealthLate
	case monitor.Missed:
		return HealthMissed
	case monitor.TimedOut:
		return HealthTimeout
	case monitor.Failing:
		return HealthFailing
	}
	return prev
}

// statusOf returns the status of the machine's state.
func statusOf(k monitor.StateKind) string {
	switch k {
	case monitor.StatePaused:
		return StatusPaused
	case monitor.StateDisabled:
		return StatusDisabled
	}
	return StatusActive
}

// alerting reports whether a health is one alerts are sent for.
func alerting(h string) bool {
	return h == HealthMissed || h == HealthTimeout || h == HealthFailing
}

// active returns the fields the active states share, and whether s is one
// (a state inside Active); settings, which every state has, even when not.
func active(s monitor.State) (settings monitors.Settings, next time.Time, failures int, ok bool) {
	settings, _ = monitor.SettingsOf(s)
	next, ok = monitor.NextExpectedOf(s)
	failures, _ = monitor.FailuresOf(s)
	return settings, next, failures, ok
}

// publish makes the committed row and machine what readers see.
func (m *mon) publish(e *Engine) {
	m.view.Store(newView(&m.row, m.machine))
}
