package monitorengine

import (
	"time"

	"github.com/fsmgen/fsmgen/gen/monitor"
	"github.com/fsmgen/fsmgen/server/internal/store"
	"github.com/fsmgen/fsmgen/server/monitors"
)

// View is a monitor as the API shows it.
type View struct {
	Slug                 string     `json:"slug"`
	Name                 string     `json:"name"`
	Schedule             Schedule   `json:"schedule"`
	Timezone             string     `json:"timezone"`
	CheckinMarginSeconds int        `json:"checkin_margin_seconds"`
	MaxRuntimeSeconds    int        `json:"max_runtime_seconds"`
	FailureThreshold     int        `json:"failure_threshold"`
	RecoveryThreshold    int        `json:"recovery_threshold"`
	AlertWebhookURL      string     `json:"alert_webhook_url,omitempty"`
	PingKey              string     `json:"ping_key"`
	Status               string     `json:"status"`
	Health               string     `json:"health"`
	State                string     `json:"state"`
	RunningCheckinID     string     `json:"running_checkin_id,omitempty"`
	NextExpectedAt       *time.Time `json:"next_expected_at"`
	LastCheckinAt        *time.Time `json:"last_checkin_at"`
	ConsecutiveFailures  int        `json:"consecutive_failures"`
	CreatedAt            time.Time  `json:"created_at"`
	UpdatedAt            time.Time  `json:"updated_at"`
}

// Schedule is a monitor's schedule as the API writes it: a cron
// expression or an interval.
type Schedule struct {
	Type       string `json:"type"`
	Expression string `json:"expression,omitempty"`
	Seconds    int    `json:"seconds,omitempty"`
}

func newView(row *store.Monitor, m *monitor.Machine) *View {
	st := m.State()
	settings, next, failures, ok := active(st)
	v := &View{
		Slug: row.Slug, Name: row.Name,
		Schedule:             Schedule(settings.Schedule),
		Timezone:             zoneName(settings.Timezone),
		CheckinMarginSeconds: int(settings.Margin / time.Second),
		MaxRuntimeSeconds:    int(settings.MaxRuntime / time.Second),
		FailureThreshold:     max(settings.FailureThreshold, 1),
		RecoveryThreshold:    max(settings.RecoveryThreshold, 1),
		AlertWebhookURL:      row.AlertWebhookURL,
		PingKey:              row.PingKey,
		Status:               statusOf(m.Kind()),
		Health:               row.Health,
		State:                m.Kind().String(),
		ConsecutiveFailures:  failures,
		CreatedAt:            row.CreatedAt,
		UpdatedAt:            row.UpdatedAt,
	}
	if r, isRunning := st.(monitor.Running); isRunning {
		v.RunningCheckinID = r.Run
	}
	if ok {
		next = next.UTC()
		v.NextExpectedAt = &next
	}
	if !row.LastCheckinAt.IsZero() {
		last := row.LastCheckinAt
		v.LastCheckinAt = &last
	}
	return v
}

// zoneName is the time zone a monitor reports: UTC for none.
func zoneName(tz string) string {
	if tz == "" {
		return "UTC"
	}
	return tz
}

// CheckinView is a check-in as the API shows it.
type CheckinView struct {
	ID         string     `json:"id"`
	Status     string     `json:"status"`
	Source     string     `json:"source"`
	CreatedAt  time.Time  `json:"created_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	DurationMS *int64     `json:"duration_ms,omitempty"`
	ExitCode   *int       `json:"exit_code,omitempty"`
	Output     *string    `json:"output,omitempty"`
	ExpectedAt *time.Time `json:"expected_at,omitempty"`
}

func newCheckinView(c *store.Checkin) CheckinView {
	v := CheckinView{ID: c.ID, Status: c.Status, Source: c.Source, CreatedAt: c.CreatedAt, ExitCode: c.ExitCode, Output: c.Output}
	if !c.FinishedAt.IsZero() {
		f := c.FinishedAt
		v.FinishedAt = &f
	}
	if c.Duration != nil {
		ms := c.Duration.Milliseconds()
		v.DurationMS = &ms
	}
	if !c.ExpectedAt.IsZero() {
		x := c.ExpectedAt
		v.ExpectedAt = &x
	}
	return v
}

// settings returns the monitors.Settings a view's fields describe.
func (v *View) settings() monitors.Settings {
	return monitors.Settings{
		Schedule:          monitors.Schedule(v.Schedule),
		Timezone:          v.Timezone,
		Margin:            time.Duration(v.CheckinMarginSeconds) * time.Second,
		MaxRuntime:        time.Duration(v.MaxRuntimeSeconds) * time.Second,
		FailureThreshold:  v.FailureThreshold,
		RecoveryThreshold: v.RecoveryThreshold,
	}
}
