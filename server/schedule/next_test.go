package schedule

import (
	"testing"
	"time"
	_ "time/tzdata" // the zones below never depend on the host's

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func load(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
}

func utc(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	require.NoError(t, err)
	return v
}

func mustCron(t testing.TB, expr string, loc *time.Location) *Cron {
	t.Helper()
	c, err := ParseCron(expr, loc)
	require.NoError(t, err, expr)
	return c
}

// format renders instants in UTC, so that failures show the instant.
func format(ts []time.Time) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.UTC().Format(time.RFC3339)
	}
	return out
}

type previewCase struct {
	expr, from string
	want       []string // UTC
}

func runPreviews(t *testing.T, loc *time.Location, tests []previewCase) {
	for _, tt := range tests {
		t.Run(tt.expr+" after "+tt.from, func(t *testing.T) {
			c := mustCron(t, tt.expr, loc)
			got := Preview(c, utc(t, tt.from), len(tt.want))
			assert.Equal(t, tt.want, format(got))
			for _, g := range got {
				assert.Equal(t, loc, g.Location())
			}
		})
	}
}

func TestNextUTC(t *testing.T) {
	runPreviews(t, time.UTC, []previewCase{
		{"* * * * *", "2025-06-01T10:00:00Z", []string{"2025-06-01T10:01:00Z", "2025-06-01T10:02:00Z"}},
		{"* * * * *", "2025-06-01T10:00:30.5Z", []string{"2025-06-01T10:01:00Z", "2025-06-01T10:02:00Z"}},
		{"* * * * *", "2025-06-01T10:00:59.999999999Z", []string{"2025-06-01T10:01:00Z"}},
		{"*/15 * * * *", "2025-06-01T10:07:00Z", []string{"2025-06-01T10:15:00Z", "2025-06-01T10:30:00Z", "2025-06-01T10:45:00Z", "2025-06-01T11:00:00Z"}},
		{"30 9 * * *", "2025-06-01T09:30:00Z", []string{"2025-06-02T09:30:00Z", "2025-06-03T09:30:00Z"}},
		{"0 9-17/4 * * MON-FRI", "2025-06-06T14:00:00Z", []string{"2025-06-06T17:00:00Z", "2025-06-09T09:00:00Z", "2025-06-09T13:00:00Z"}},
		{"59 23 31 12 *", "2025-12-31T23:59:00Z", []string{"2026-12-31T23:59:00Z", "2027-12-31T23:59:00Z"}},
		{"0 0 1 1 *", "2025-12-31T23:59:59Z", []string{"2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z"}},
		// Month ends.
		{"0 12 31 * *", "2025-01-31T13:00:00Z", []string{"2025-03-31T12:00:00Z", "2025-05-31T12:00:00Z", "2025-07-31T12:00:00Z", "2025-08-31T12:00:00Z", "2025-10-31T12:00:00Z"}},
		{"0 0 30 * *", "2025-01-31T00:00:00Z", []string{"2025-03-30T00:00:00Z", "2025-04-30T00:00:00Z"}},
		{"0 0 29 * *", "2025-01-31T00:00:00Z", []string{"2025-03-29T00:00:00Z"}},
		{"0 0 29 * *", "2024-01-31T00:00:00Z", []string{"2024-02-29T00:00:00Z", "2024-03-29T00:00:00Z"}},
		// Leap years.
		{"0 0 29 2 *", "2025-01-01T00:00:00Z", []string{"2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z"}},
		{"0 0 29 2 *", "2096-03-01T00:00:00Z", []string{"2104-02-29T00:00:00Z"}},                           // 2100 is not a leap year
		{"0 0 29 2 */7", "2089-01-01T00:00:00Z", []string{"2128-02-29T00:00:00Z", "2156-02-29T00:00:00Z"}}, // February 29th on a Sunday: 40 years apart
		{"0 0 28-29 2 *", "2100-01-01T00:00:00Z", []string{"2100-02-28T00:00:00Z", "2101-02-28T00:00:00Z"}},
		{"@yearly", "2025-01-01T00:00:00Z", []string{"2026-01-01T00:00:00Z"}},
		{"@monthly", "2025-01-15T00:00:00Z", []string{"2025-02-01T00:00:00Z", "2025-03-01T00:00:00Z"}},
		{"@weekly", "2025-06-01T00:00:00Z", []string{"2025-06-08T00:00:00Z", "2025-06-15T00:00:00Z"}},
		// The day rule. 2025-06-01 is a Sunday.
		{"0 0 1,15 * MON", "2025-05-31T00:00:00Z", []string{"2025-06-01T00:00:00Z", "2025-06-02T00:00:00Z", "2025-06-09T00:00:00Z", "2025-06-15T00:00:00Z", "2025-06-16T00:00:00Z", "2025-06-23T00:00:00Z", "2025-06-30T00:00:00Z", "2025-07-01T00:00:00Z"}},
		{"0 0 */2 * MON", "2025-05-31T00:00:00Z", []string{"2025-06-09T00:00:00Z", "2025-06-23T00:00:00Z", "2025-07-07T00:00:00Z"}},
		{"0 0 13 * */1", "2025-05-31T00:00:00Z", []string{"2025-06-13T00:00:00Z", "2025-07-13T00:00:00Z"}},
		{"0 0 13 * FRI", "2025-06-01T00:00:00Z", []string{"2025-06-06T00:00:00Z", "2025-06-13T00:00:00Z", "2025-06-20T00:00:00Z", "2025-06-27T00:00:00Z", "2025-07-04T00:00:00Z", "2025-07-11T00:00:00Z", "2025-07-13T00:00:00Z"}},
		{"0 0 * * 0", "2025-06-01T00:00:00Z", []string{"2025-06-08T00:00:00Z"}},
		{"0 0 * * 7", "2025-06-01T00:00:00Z", []string{"2025-06-08T00:00:00Z"}},
		{"0 0 30 2 MON", "2025-01-01T00:00:00Z", []string{"2025-02-03T00:00:00Z", "2025-02-10T00:00:00Z"}},
		// Far from 1970, both ways.
		{"0 0 29 2 *", "1899-12-31T00:00:00Z", []string{"1904-02-29T00:00:00Z"}},
		{"30 6 1 1 *", "0001-01-01T00:00:00Z", []string{"0001-01-01T06:30:00Z", "0002-01-01T06:30:00Z"}},
	})
}

func TestNextResultInScheduleLocation(t *testing.T) {
	tokyo := load(t, "Asia/Tokyo")
	c := mustCron(t, "0 9 * * *", tokyo)
	ny := load(t, "America/New_York")
	from := time.Date(2025, 6, 1, 12, 0, 0, 0, ny) // 2025-06-02 01:00 in Tokyo
	got := c.Next(from)
	assert.Equal(t, tokyo, got.Location())
	assert.Equal(t, "2025-06-02T09:00:00+09:00", got.Format(time.RFC3339))
}

// America/New_York, 2025: the clocks go from 02:00 EST to 03:00 EDT on
// March 9th (07:00Z) and from 02:00 EDT back to 01:00 EST on November 2nd
// (06:00Z: 01:00-02:00 is 05:00Z-06:00Z the first time, 06:00Z-07:00Z the
// second).
func TestNextNewYorkDST(t *testing.T) {
	runPreviews(t, load(t, "America/New_York"), []previewCase{
		// Spring forward: fixed-time jobs in the gap run at the jump.
		{"30 2 * * *", "2025-03-07T12:00:00Z", []string{"2025-03-08T07:30:00Z", "2025-03-09T07:00:00Z", "2025-03-10T06:30:00Z"}},
		{"0 2 * * *", "2025-03-07T12:00:00Z", []string{"2025-03-08T07:00:00Z", "2025-03-09T07:00:00Z", "2025-03-10T06:00:00Z"}},
		{"0,30 2 * * *", "2025-03-07T12:00:00Z", []string{"2025-03-08T07:00:00Z", "2025-03-08T07:30:00Z", "2025-03-09T07:00:00Z", "2025-03-10T06:00:00Z", "2025-03-10T06:30:00Z"}},
		{"0 3 * * *", "2025-03-07T12:00:00Z", []string{"2025-03-08T08:00:00Z", "2025-03-09T07:00:00Z", "2025-03-10T07:00:00Z"}},
		{"30 2,3 * * *", "2025-03-08T12:00:00Z", []string{"2025-03-09T07:00:00Z", "2025-03-09T07:30:00Z", "2025-03-10T06:30:00Z"}},
		{"59 1 * * *", "2025-03-08T12:00:00Z", []string{"2025-03-09T06:59:00Z", "2025-03-10T05:59:00Z"}},
		// Wildcard jobs follow real time.
		{"30 * * * *", "2025-03-09T05:00:00Z", []string{"2025-03-09T05:30:00Z", "2025-03-09T06:30:00Z", "2025-03-09T07:30:00Z", "2025-03-09T08:30:00Z"}},
		{"*/30 * * * *", "2025-03-09T05:45:00Z", []string{"2025-03-09T06:00:00Z", "2025-03-09T06:30:00Z", "2025-03-09T07:00:00Z", "2025-03-09T07:30:00Z"}},
		{"0 */2 * * *", "2025-03-09T04:00:00Z", []string{"2025-03-09T05:00:00Z", "2025-03-09T08:00:00Z", "2025-03-09T10:00:00Z"}},
		{"*/20 2 * * *", "2025-03-08T12:00:00Z", []string{"2025-03-10T06:00:00Z", "2025-03-10T06:20:00Z"}},
		{"@hourly", "2025-03-09T05:30:00Z", []string{"2025-03-09T06:00:00Z", "2025-03-09T07:00:00Z", "2025-03-09T08:00:00Z"}},
		// Fall back: fixed-time jobs run in the first copy only.
		{"30 1 * * *", "2025-10-31T12:00:00Z", []string{"2025-11-01T05:30:00Z", "2025-11-02T05:30:00Z", "2025-11-03T06:30:00Z"}},
		{"0 1 * * *", "2025-10-31T12:00:00Z", []string{"2025-11-01T05:00:00Z", "2025-11-02T05:00:00Z", "2025-11-03T06:00:00Z"}},
		{"0 1-2 * * *", "2025-11-02T04:30:00Z", []string{"2025-11-02T05:00:00Z", "2025-11-02T07:00:00Z", "2025-11-03T06:00:00Z"}},
		{"30 2 * * *", "2025-10-31T12:00:00Z", []string{"2025-11-01T06:30:00Z", "2025-11-02T07:30:00Z", "2025-11-03T07:30:00Z"}},
		// Wildcard jobs run in both copies.
		{"30 * * * *", "2025-11-02T04:00:00Z", []string{"2025-11-02T04:30:00Z", "2025-11-02T05:30:00Z", "2025-11-02T06:30:00Z", "2025-11-02T07:30:00Z"}},
		{"*/30 * * * *", "2025-11-02T04:50:00Z", []string{"2025-11-02T05:00:00Z", "2025-11-02T05:30:00Z", "2025-11-02T06:00:00Z", "2025-11-02T06:30:00Z", "2025-11-02T07:00:00Z"}},
		{"*/30 1 * * *", "2025-11-01T12:00:00Z", []string{"2025-11-02T05:00:00Z", "2025-11-02T05:30:00Z", "2025-11-02T06:00:00Z", "2025-11-02T06:30:00Z", "2025-11-03T06:00:00Z"}},
		{"0 */2 * * *", "2025-11-02T03:00:00Z", []string{"2025-11-02T04:00:00Z", "2025-11-02T07:00:00Z", "2025-11-02T09:00:00Z"}},
		{"@hourly", "2025-11-02T04:30:00Z", []string{"2025-11-02T05:00:00Z", "2025-11-02T06:00:00Z", "2025-11-02T07:00:00Z"}},
		// Past the zone's listed transitions (Go reports the last day of a
		// leap year as outside the period that holds it).
		{"0 0 29 2 */7", "2032-02-29T05:00:00Z", []string{"2060-02-29T05:00:00Z"}},
		{"0 0 31 12 *", "2040-12-31T00:30:00Z", []string{"2040-12-31T05:00:00Z", "2041-12-31T05:00:00Z"}},
		{"*/20 19-23 * * *", "2040-12-31T04:30:00Z", []string{"2040-12-31T04:40:00Z", "2041-01-01T00:00:00Z"}},
		{"30 2 * * *", "2052-03-09T12:00:00Z", []string{"2052-03-10T07:00:00Z", "2052-03-11T06:30:00Z"}},
		// From inside the gap's neighbourhood and each copy of the repeated hour.
		{"30 2 * * *", "2025-03-09T06:59:59.999Z", []string{"2025-03-09T07:00:00Z", "2025-03-10T06:30:00Z"}},
		{"30 2 * * *", "2025-03-09T07:00:00Z", []string{"2025-03-10T06:30:00Z"}},
		{"30 2 * * *", "2025-03-09T06:30:00Z", []string{"2025-03-09T07:00:00Z"}},
		{"30 1 * * *", "2025-11-02T05:10:00Z", []string{"2025-11-02T05:30:00Z", "2025-11-03T06:30:00Z"}},
		{"30 1 * * *", "2025-11-02T05:30:00Z", []string{"2025-11-03T06:30:00Z"}},
		{"30 1 * * *", "2025-11-02T05:45:00Z", []string{"2025-11-03T06:30:00Z"}},
		{"30 1 * * *", "2025-11-02T06:10:00Z", []string{"2025-11-03T06:30:00Z"}},
		{"30 1 * * *", "2025-11-02T06:45:00Z", []string{"2025-11-03T06:30:00Z"}},
		{"0 1-2 * * *", "2025-11-02T06:10:00Z", []string{"2025-11-02T07:00:00Z"}},
		{"30 * * * *", "2025-11-02T05:45:00Z", []string{"2025-11-02T06:30:00Z", "2025-11-02T07:30:00Z"}},
		{"30 * * * *", "2025-11-02T06:10:00Z", []string{"2025-11-02T06:30:00Z", "2025-11-02T07:30:00Z"}},
		{"30 * * * *", "2025-11-02T06:30:00Z", []string{"2025-11-02T07:30:00Z"}},
	})
}

// Australia/Sydney, 2025: the clocks go from 03:00 AEDT back to 02:00 AEST
// on April 6th (16:00Z on the 5th: 02:00-03:00 is 15:00Z-16:00Z the first
// time, 16:00Z-17:00Z the second) and from 02:00 AEST to 03:00 AEDT on
// October 5th (16:00Z on the 4th).
func TestNextSydneyDST(t *testing.T) {
	runPreviews(t, load(t, "Australia/Sydney"), []previewCase{
		// Fall back.
		{"30 2 * * *", "2025-04-03T12:00:00Z", []string{"2025-04-03T15:30:00Z", "2025-04-04T15:30:00Z", "2025-04-05T15:30:00Z", "2025-04-06T16:30:00Z"}},
		{"0 2 * * *", "2025-04-05T12:00:00Z", []string{"2025-04-05T15:00:00Z", "2025-04-06T16:00:00Z"}},
		{"30 * * * *", "2025-04-05T14:00:00Z", []string{"2025-04-05T14:30:00Z", "2025-04-05T15:30:00Z", "2025-04-05T16:30:00Z", "2025-04-05T17:30:00Z"}},
		{"*/30 * * * *", "2025-04-05T14:50:00Z", []string{"2025-04-05T15:00:00Z", "2025-04-05T15:30:00Z", "2025-04-05T16:00:00Z", "2025-04-05T16:30:00Z", "2025-04-05T17:00:00Z"}},
		{"0 */2 * * *", "2025-04-05T13:30:00Z", []string{"2025-04-05T15:00:00Z", "2025-04-05T16:00:00Z", "2025-04-05T18:00:00Z"}},
		{"30 2 * * *", "2025-04-05T15:15:00Z", []string{"2025-04-05T15:30:00Z", "2025-04-06T16:30:00Z"}},
		{"30 2 * * *", "2025-04-05T15:45:00Z", []string{"2025-04-06T16:30:00Z"}},
		{"30 2 * * *", "2025-04-05T16:15:00Z", []string{"2025-04-06T16:30:00Z"}},
		{"30 * * * *", "2025-04-05T16:15:00Z", []string{"2025-04-05T16:30:00Z"}},
		// Spring forward.
		{"30 2 * * *", "2025-10-03T12:00:00Z", []string{"2025-10-03T16:30:00Z", "2025-10-04T16:00:00Z", "2025-10-05T15:30:00Z"}},
		{"30 * * * *", "2025-10-04T14:00:00Z", []string{"2025-10-04T14:30:00Z", "2025-10-04T15:30:00Z", "2025-10-04T16:30:00Z", "2025-10-04T17:30:00Z"}},
		{"*/30 * * * *", "2025-10-04T15:20:00Z", []string{"2025-10-04T15:30:00Z", "2025-10-04T16:00:00Z", "2025-10-04T16:30:00Z"}},
		{"0 */2 * * *", "2025-10-04T13:30:00Z", []string{"2025-10-04T14:00:00Z", "2025-10-04T17:00:00Z", "2025-10-04T19:00:00Z"}},
		{"30 2 * * *", "2025-10-04T15:59:59Z", []string{"2025-10-04T16:00:00Z", "2025-10-05T15:30:00Z"}},
		{"30 2 * * *", "2025-10-04T16:00:00Z", []string{"2025-10-05T15:30:00Z"}},
	})
}

// Clock changes of three hours or more forward, or of more than three hours
// and one minute back, are followed in real time by every job.
// Pacific/Apia skipped 2011-12-30 (23:59:59 on the 29th at -10:00 was
// followed by 00:00 on the 31st at +14:00).
func TestNextLargeJump(t *testing.T) {
	runPreviews(t, load(t, "Pacific/Apia"), []previewCase{
		{"0 12 * * *", "2011-12-28T12:00:00Z", []string{"2011-12-28T22:00:00Z", "2011-12-29T22:00:00Z", "2011-12-30T22:00:00Z"}},
		{"0 12 30 12 *", "2011-12-01T00:00:00Z", []string{"2012-12-29T22:00:00Z"}},
	})
}

// Antarctica/Casey went forward three hours on 2009-10-18 (02:00 at +08:00
// to 05:00 at +11:00, 18:00Z on the 17th): followed in real time, so 02:30
// does not run that day. It went back three hours on 2010-03-05 (02:00 at
// +11:00 to 23:00 on the 4th at +08:00, 15:00Z on the 4th): daylight saving
// for ISC cron, so midnight, which happened twice, runs once.
func TestNextCasey(t *testing.T) {
	runPreviews(t, load(t, "Antarctica/Casey"), []previewCase{
		{"30 2 * * *", "2009-10-16T12:00:00Z", []string{"2009-10-16T18:30:00Z", "2009-10-18T15:30:00Z"}},
		{"0 0 * * *", "2010-03-03T15:00:00Z", []string{"2010-03-04T13:00:00Z", "2010-03-05T16:00:00Z", "2010-03-06T16:00:00Z"}},
		{"30 1 * * *", "2010-03-03T15:00:00Z", []string{"2010-03-04T14:30:00Z", "2010-03-05T17:30:00Z"}},
		{"0 * * * *", "2010-03-04T14:30:00Z", []string{"2010-03-04T15:00:00Z", "2010-03-04T16:00:00Z"}},
	})
}

// ISC cron's limits: a change forward of less than 180 minutes, or back of
// at most 181, is daylight saving; a larger one is followed in real time.
// The zones change from offset 0 on 2025-01-11: back at 03:00 (UTC), so
// that 01:00 happens twice when the change is 2 hours or more, forward at
// 00:00, so that 01:30 is skipped.
func TestNextClockChangeLimits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		change time.Duration
		expr   string
		want   []string // UTC, after 2025-01-10T12:00:00Z
	}{
		{-179 * time.Minute, "0 1 * * *", []string{"2025-01-11T01:00:00Z", "2025-01-12T03:59:00Z"}},
		{-180 * time.Minute, "0 1 * * *", []string{"2025-01-11T01:00:00Z", "2025-01-12T04:00:00Z"}},
		{-181 * time.Minute, "0 1 * * *", []string{"2025-01-11T01:00:00Z", "2025-01-12T04:01:00Z"}},
		{-182 * time.Minute, "0 1 * * *", []string{"2025-01-11T01:00:00Z", "2025-01-11T04:02:00Z", "2025-01-12T04:02:00Z"}},
		{179 * time.Minute, "30 1 * * *", []string{"2025-01-11T00:00:00Z", "2025-01-11T22:31:00Z"}},
		{180 * time.Minute, "30 1 * * *", []string{"2025-01-11T22:30:00Z", "2025-01-12T22:30:00Z"}},
		{181 * time.Minute, "30 1 * * *", []string{"2025-01-11T22:29:00Z", "2025-01-12T22:29:00Z"}},
		{182 * time.Minute, "30 1 * * *", []string{"2025-01-11T22:28:00Z", "2025-01-12T22:28:00Z"}},
	}
	for _, tt := range tests {
		at := utc(t, "2025-01-11T03:00:00Z")
		if tt.change > 0 {
			at = utc(t, "2025-01-11T00:00:00Z")
		}
		loc := changeZone(t, tt.change.String(), 0, tt.change, at)
		c := mustCron(t, tt.expr, loc)
		from := utc(t, "2025-01-10T12:00:00Z")
		assert.Equal(t, tt.want, format(Preview(c, from, len(tt.want))), "%v %q", tt.change, tt.expr)
		// The replay of ISC cron agrees, so the comparisons with it
		// (TestNextMatchesISCCron) are not vacuous at these limits.
		to := utc(t, tt.want[len(tt.want)-1]).Add(time.Minute)
		assert.Equal(t, tt.want, format(iscRuns(c, from, to)), "the replay: %v %q", tt.change, tt.expr)
	}
}

// offsetChange, the fallback for a zone period reported as ending too
// early, finds the instant the offset changes.
func TestOffsetChange(t *testing.T) {
	c := mustCron(t, "0 0 * * *", load(t, "America/New_York"))
	lo := utc(t, "2025-03-09T00:00:00Z").Unix()
	assert.Equal(t, utc(t, "2025-03-09T07:00:00Z").Unix(), c.offsetChange(lo, -5*3600, lo+secondsPerDay))
	assert.Equal(t, lo+2*secondsPerDay, c.offsetChange(lo+secondsPerDay, -4*3600, lo+2*secondsPerDay), "no change")
	assert.Equal(t, lo+7*3600, c.offsetChange(lo, -5*3600, lo+7*3600))
}
