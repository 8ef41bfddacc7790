package monitors_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/server/monitors"
)

var day = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

func at(h, m int) time.Time {
	return day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
}

func TestCompile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    monitors.Settings
		want string // the error; "" when it compiles
	}{
		{"cron", monitors.Settings{Schedule: monitors.Schedule{Type: "cron", Expression: "0 3 * * *"}, Timezone: "Europe/Berlin"}, ""},
		{"cron in UTC", monitors.Settings{Schedule: monitors.Schedule{Type: "cron", Expression: "@hourly"}}, ""},
		{"interval", monitors.Settings{Schedule: monitors.Schedule{Type: "interval", Seconds: 30}}, ""},
		{"bad cron", monitors.Settings{Schedule: monitors.Schedule{Type: "cron", Expression: "60 0 * * *"}}, `minute field "60"`},
		{"no expression", monitors.Settings{Schedule: monitors.Schedule{Type: "cron"}}, "fields"},
		{"zero interval", monitors.Settings{Schedule: monitors.Schedule{Type: "interval"}}, "interval"},
		{"no type", monitors.Settings{}, `schedule: no type`},
		{"other type", monitors.Settings{Schedule: monitors.Schedule{Type: "weekly"}}, `schedule: type "weekly"`},
		{"unknown zone", monitors.Settings{Schedule: monitors.Schedule{Type: "cron", Expression: "@daily"}, Timezone: "Mars/Olympus"}, `timezone: "Mars/Olympus"`},
		{"Local", monitors.Settings{Schedule: monitors.Schedule{Type: "cron", Expression: "@daily"}, Timezone: "Local"}, `timezone: "Local"`},
	}
	b := &monitors.Behavior{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := monitors.Compile(tt.s)
			// Check says the same, the first time and from its cache.
			check, again := b.Check(tt.s), b.Check(tt.s)
			if tt.want == "" {
				require.NoError(t, err)
				require.NoError(t, check)
				require.NoError(t, again)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Equal(t, err, check)
			assert.Equal(t, err, again)
		})
	}
}

// TestCheckinCountsForItsRun checks which run a check-in counts for: one
// within the margin before the expected time, or after it, counts for
// that run; an earlier one for the run before.
func TestCheckinCountsForItsRun(t *testing.T) {
	t.Parallel()
	b := &monitors.Behavior{}
	daily := monitors.Settings{Schedule: monitors.Schedule{Type: "cron", Expression: "0 9 * * *"}, Margin: 5 * time.Minute, FailureThreshold: 1, RecoveryThreshold: 1}
	every := monitors.Settings{Schedule: monitors.Schedule{Type: "interval", Seconds: 3600}, Margin: 5 * time.Minute}
	tomorrow := at(33, 0)
	tests := []struct {
		name     string
		s        monitors.Settings
		next, at time.Time
		want     time.Time
	}{
		{"on time", daily, at(9, 0), at(9, 0), tomorrow},
		{"late within the margin", daily, at(9, 0), at(9, 3), tomorrow},
		{"early within the margin", daily, at(9, 0), at(8, 56), tomorrow},
		{"early, before the margin", daily, at(9, 0), at(6, 0), at(9, 0)},
		{"an interval counts from the check-in", every, at(9, 0), at(8, 0), at(9, 0)},
		{"an interval, late", every, at(9, 0), at(9, 30), at(10, 30)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, next, _, _, _ := b.Succeed(tt.s, tt.at, tt.next, 0, 0, false)
			assert.Equal(t, tt.want, next.UTC())
			_, next, _, _, _ = b.Fail(tt.s, tt.at, tt.next, 0, 0, false)
			assert.Equal(t, tt.want, next.UTC(), "a failed check-in counts the same")
		})
	}
}

// TestThresholds checks the guards against the effects: a guard that says
// the job fails now, or stays failing, agrees with what the effect then
// computes.
func TestThresholds(t *testing.T) {
	t.Parallel()
	b := &monitors.Behavior{}
	for _, ft := range []int{0, 1, 2, 3} {
		for _, rt := range []int{0, 1, 2, 3} {
			s := monitors.Settings{Schedule: monitors.Schedule{Type: "interval", Seconds: 60}, FailureThreshold: ft, RecoveryThreshold: rt}
			for failures := range 4 {
				for successes := range 4 {
					for _, failing := range []bool{false, true} {
						_, _, _, _, nowFailing := b.Fail(s, day, day, failures, successes, failing)
						assert.Equal(t, b.FailsNow(s, failures, failing), nowFailing, "fail: thresholds %d/%d, %d failures, %d successes, failing %v", ft, rt, failures, successes, failing)
						_, _, f, _, stillFailing := b.Succeed(s, day, day, failures, successes, failing)
						assert.Equal(t, b.StaysFailing(s, successes, failing), stillFailing, "succeed: thresholds %d/%d, %d successes, failing %v", ft, rt, successes, failing)
						assert.Zero(t, f, "a good check-in ends the failures")
					}
				}
			}
		}
	}
}

func TestTimers(t *testing.T) {
	t.Parallel()
	b := &monitors.Behavior{}
	s := monitors.Settings{Schedule: monitors.Schedule{Type: "interval", Seconds: 60}, Margin: 10 * time.Second, MaxRuntime: time.Minute}
	assert.Equal(t, 70*time.Second, b.UntilMissed(s, day, day.Add(time.Minute)))
	assert.Equal(t, time.Duration(0), b.UntilMissed(s, day.Add(time.Hour), day), "an overdue miss fires at once")
	assert.Equal(t, time.Minute, b.UntilDue(day, day.Add(time.Minute)))
	assert.Equal(t, time.Duration(0), b.UntilDue(day.Add(time.Hour), day))
	at, next, expected := b.Miss(s, day.Add(time.Minute))
	assert.Equal(t, day.Add(70*time.Second), at, "a miss happens at the end of the margin")
	assert.Equal(t, day.Add(2*time.Minute), next)
	assert.Equal(t, day.Add(time.Minute), expected)
	end, next := b.Timeout(s, day, day.Add(30*time.Second))
	assert.Equal(t, day.Add(time.Minute), end)
	assert.Equal(t, day.Add(2*time.Minute), next, "the next run counts from the timeout")
	assert.True(t, b.ForeignRun("a", "b"))
	assert.False(t, b.ForeignRun("", "b"), "a ping that names no run finishes the running one")
	assert.False(t, b.ForeignRun("b", "b"))
}
