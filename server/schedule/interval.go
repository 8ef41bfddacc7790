package schedule

import (
	"fmt"
	"time"
)

// MaxInterval is the longest interval [NewInterval] accepts.
const MaxInterval = 366 * 24 * time.Hour

// Interval is a schedule that runs every Every after the previous run: its
// Next(t) is t + Every, in t's location. Every must be positive (see
// [NewInterval]); the zero Interval has no run times.
type Interval struct{ Every time.Duration }

var _ Schedule = Interval{}

// NewInterval returns the interval of the given number of seconds, refusing
// zero, negative and longer than [MaxInterval] (366 days).
func NewInterval(seconds int) (Interval, error) {
	if seconds <= 0 {
		return Interval{}, fmt.Errorf("interval of %d seconds: must be at least 1 second", seconds)
	}
	if int64(seconds) > int64(MaxInterval/time.Second) {
		return Interval{}, fmt.Errorf("interval of %d seconds: must be at most %d seconds (366 days)", seconds, int64(MaxInterval/time.Second))
	}
	return Interval{Every: time.Duration(seconds) * time.Second}, nil
}

// Next returns t + Every, or the zero Time if Every is not positive.
func (i Interval) Next(t time.Time) time.Time {
	if i.Every <= 0 {
		return time.Time{}
	}
	return t.Add(i.Every)
}

// Preview returns the next n run times of s after after: Next(after),
// Next of that, and so on. It stops early if s has no further run time.
func Preview(s Schedule, after time.Time, n int) []time.Time {
	var times []time.Time
	for t := after; len(times) < n; {
		next := s.Next(t)
		if next.IsZero() || !next.After(t) {
			break
		}
		times = append(times, next)
		t = next
	}
	return times
}
