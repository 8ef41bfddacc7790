package schedule

import (
	"encoding/binary"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// iscRuns replays ISC cron's main loop (cron.c in Vixie cron 4.1) over the
// instants (from, to), one wake-up per real minute, and returns the instants
// at which it starts c. The daemon's clock is the wall-clock minute
// ((Unix time + UTC offset) / 60); it keeps a virtual clock and compares the
// two at each wake-up:
//
//	+1              the usual case: run every job of the new minute
//	+2 to +5        it woke up late: run every job of each missed minute
//	+6 to +180      the clocks went forward: run the wildcard jobs of the
//	                current minute and the fixed-time jobs of each skipped one
//	-180 to 0       the clocks went back: run only the wildcard jobs, and
//	                leave the virtual clock where it was
//	otherwise       the time changed a lot: jump and run every job
//
// A job started several times at one wake-up runs once (job_add keeps one
// entry per job in the queue).
func iscRuns(c *Cron, from, to time.Time) []time.Time {
	clock := func(t time.Time) int64 {
		_, off := t.In(c.loc).Zone()
		return floorDiv(t.Unix()+int64(off), 60)
	}
	// find_jobs: does c run at virtual minute vm, given which kinds run?
	find := func(vm int64, doWild, doFixed bool) bool {
		w := time.Unix(vm*60, 0).UTC()
		if c.minute&(1<<w.Minute()) == 0 || c.hour&(1<<w.Hour()) == 0 ||
			c.month&(1<<int(w.Month())) == 0 || !c.dayMatches(w.Day(), int(w.Weekday())) {
			return false
		}
		return c.wild && doWild || !c.wild && doFixed
	}
	var runs []time.Time
	virtual := clock(from)
	for t := from.Add(time.Minute); t.Before(to); t = t.Add(time.Minute) {
		running := clock(t)
		diff := running - virtual
		run := false
		switch {
		case diff == 1:
			virtual = running
			run = find(virtual, true, true)
		case diff > 180 || diff < -180:
			virtual = running
			run = find(running, true, true)
		case diff > 5:
			run = find(running, true, false)
			for virtual < running {
				virtual++
				run = find(virtual, false, true) || run
			}
		case diff > 0:
			for virtual < running {
				virtual++
				run = find(virtual, true, true) || run
			}
		default:
			run = find(running, true, false)
		}
		if run {
			runs = append(runs, t)
		}
	}
	return runs
}

// transitions returns the instants in [from, to) at which loc's offset
// changes, found by probing every hour (not with ZoneBounds, which Next
// uses).
func transitions(loc *time.Location, from, to time.Time) []time.Time {
	offset := func(t time.Time) int {
		_, off := t.In(loc).Zone()
		return off
	}
	var ts []time.Time
	for t := from; t.Before(to); t = t.Add(time.Hour) {
		lo, hi := t, t.Add(time.Hour)
		if offset(lo) == offset(hi) {
			continue
		}
		for hi.Sub(lo) > time.Second {
			mid := lo.Add(hi.Sub(lo) / 2).Truncate(time.Second)
			if offset(mid) == offset(lo) {
				lo = mid
			} else {
				hi = mid
			}
		}
		ts = append(ts, hi)
	}
	return ts
}

// iscExprs mixes fixed-time and wildcard jobs at times that fall before,
// in, at the edges of and after the skipped and repeated hours of the zones
// below.
var iscExprs = []string{
	"* * * * *", "*/30 * * * *", "30 * * * *", "0 */2 * * *", "*/7 2 * * *", "15 */1 * * *", "* 0-3 * * *",
	"30 2 * * *", "30 1 * * *", "0 2 * * *", "0 3 * * *", "0 1 * * *", "59 1 * * *", "0,30 2 * * *",
	"15 1-3 * * *", "45 0-2/2 * * *", "0 0 * * *", "30 23 * * *", "0 12 * * *", "59 23 * * *",
	"45 2 * * SUN", "15 2 1,15 * 0", "10,40 1,2 * * *",
}

type window struct {
	loc      *time.Location
	from, to time.Time
}

// dstWindows returns two days either side of each clock change of the given
// zones in the given year.
func dstWindows(t *testing.T, year int, zones ...string) []window {
	var ws []window
	for _, z := range zones {
		ws = append(ws, changeWindows(t, load(t, z), year, 48*time.Hour)...)
	}
	return ws
}

// changeWindows returns the time span either side of each clock change of
// loc in the given year.
func changeWindows(t *testing.T, loc *time.Location, year int, span time.Duration) []window {
	ts := transitions(loc, time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(year+1, 1, 1, 0, 0, 0, 0, time.UTC))
	require.NotEmpty(t, ts, loc.String())
	var ws []window
	for _, tr := range ts {
		from := tr.Add(-span).Truncate(time.Minute)
		ws = append(ws, window{loc, from, from.Add(2 * span)})
	}
	return ws
}

// changeZone returns a location whose UTC offset goes from before to after
// at the instant at, built as TZif (version 1) data: a clock change of any
// size at any wall time, which no real zone offers.
func changeZone(t testing.TB, name string, before, after time.Duration, at time.Time) *time.Location {
	t.Helper()
	be32 := func(b []byte, v int64) []byte { return binary.BigEndian.AppendUint32(b, uint32(int32(v))) }
	data := append([]byte("TZif"), make([]byte, 16)...) // version 1, reserved
	for _, n := range []int64{0, 0, 0, 1, 2, 4} {       // UT/local, std/wall, leap seconds, transitions, types, abbreviation bytes
		data = be32(data, n)
	}
	data = be32(data, at.Unix())
	data = append(data, 1) // the transition is to type 1
	data = be32(data, int64(before/time.Second))
	data = append(data, 0, 0) // standard time, abbreviation "A"
	data = be32(data, int64(after/time.Second))
	data = append(data, 0, 2) // standard time, abbreviation "B"
	data = append(data, "A\x00B\x00"...)
	loc, err := time.LoadLocationFromTZData(name, data)
	require.NoError(t, err, name)
	return loc
}

// limitZones returns locations whose clocks go forward and back by 179 to
// 182 minutes, around ISC cron's limits for daylight saving (forward by
// less than 180 minutes, back by at most 181), at wall times 00:00 and
// 03:00 on Saturday 2025-01-11.
func limitZones(t testing.TB) []*time.Location {
	var locs []*time.Location
	for _, minutes := range []int{179, 180, 181, 182} {
		d := time.Duration(minutes) * time.Minute
		for _, wall := range []int{0, 3} {
			at := time.Date(2025, 1, 11, wall, 0, 0, 0, time.UTC) // the wall time before the change, at offset 0
			locs = append(locs,
				changeZone(t, fmt.Sprintf("forward %v at %02d:00", d, wall), 0, d, at),
				changeZone(t, fmt.Sprintf("back %v at %02d:00", d, wall), 0, -d, at))
		}
	}
	return locs
}

func allWindows(t *testing.T) []window {
	ws := dstWindows(t, 2025,
		"America/New_York", "Australia/Sydney", "Europe/London",
		"Australia/Lord_Howe", // 30-minute changes at 02:00
		"America/Havana",      // the clocks change at midnight (00:00 to 01:00, 01:00 to 00:00)
		"America/Santiago",    // 24:00 to 23:00 the day before, 00:00 to 01:00
	)
	ws = append(ws, dstWindows(t, 2052, "America/New_York", "Australia/Sydney")...) // computed from the zones' rules
	ws = append(ws, dstWindows(t, 2011, "Pacific/Apia")...)                         // and a whole day skipped
	// Three hours forward (2009-10-18 02:00 to 05:00: followed in real
	// time), and back (2010-03-05 02:00 to 23:00 the day before: daylight
	// saving for ISC cron). A week and a day either side: the first skips the
	// Sunday 02:45 of its week.
	casey := load(t, "Antarctica/Casey")
	ws = append(ws, changeWindows(t, casey, 2009, 8*24*time.Hour)...)
	ws = append(ws, changeWindows(t, casey, 2010, 8*24*time.Hour)...)
	for _, loc := range limitZones(t) {
		ws = append(ws, changeWindows(t, loc, 2025, 48*time.Hour)...)
	}
	return ws
}

// seq returns c's run times in (from, to) by iterating Next.
func seq(c *Cron, from, to time.Time) []time.Time {
	var ts []time.Time
	for t := c.Next(from); t.Before(to); t = c.Next(t) {
		ts = append(ts, t)
	}
	return ts
}

// Next gives the runs ISC cron would make, around every clock change.
func TestNextMatchesISCCron(t *testing.T) {
	for _, w := range allWindows(t) {
		loc := w.loc
		for _, expr := range iscExprs {
			c := mustCron(t, expr, loc)
			want := iscRuns(c, w.from, w.to)
			got := seq(c, w.from, w.to)
			require.NotEmpty(t, want, "%s %q from %s", loc, expr, w.from)
			assert.Equal(t, format(want), format(got), "%s %q from %s", loc, expr, w.from)
		}
	}
}

// Next from any instant gives the next element of the sequence that
// iterating Next from before produces: no run is repeated or skipped, from
// inside a gap's neighbourhood or either copy of a repeated hour.
func TestNextConsistent(t *testing.T) {
	for _, w := range allWindows(t) {
		loc := w.loc
		for _, expr := range iscExprs {
			c := mustCron(t, expr, loc)
			runs := seq(c, w.from, w.to)
			require.NotEmpty(t, runs)
			last := runs[len(runs)-1]
			check := func(at time.Time) {
				i := sort.Search(len(runs), func(i int) bool { return runs[i].After(at) })
				if i == len(runs) {
					return
				}
				if got := c.Next(at); !got.Equal(runs[i]) {
					t.Errorf("%s %q: Next(%s) = %s, want %s", loc, expr, at.UTC().Format(time.RFC3339Nano), got.UTC().Format(time.RFC3339), runs[i].UTC().Format(time.RFC3339))
				}
			}
			for at := w.from; at.Before(last); at = at.Add(7*time.Minute + 13*time.Second) {
				check(at)
			}
			for _, r := range runs {
				for _, d := range []time.Duration{-time.Minute, -time.Second, -time.Nanosecond, 0, time.Nanosecond, time.Second} {
					check(r.Add(d))
				}
			}
			// The instant in another location changes nothing.
			check(runs[0].Add(-time.Second).In(time.FixedZone("X", 5*3600+1800)))
		}
	}
}

func TestISCRunsSelfCheck(t *testing.T) {
	// The replay itself: the pinned New York cases, so that a mistake in it
	// cannot make the comparison above vacuous.
	ny := load(t, "America/New_York")
	for _, tt := range []struct {
		expr, from, to string
		want           []string
	}{
		{"30 2 * * *", "2025-03-08T12:00:00Z", "2025-03-10T12:00:00Z", []string{"2025-03-09T07:00:00Z", "2025-03-10T06:30:00Z"}},
		{"30 1 * * *", "2025-11-01T12:00:00Z", "2025-11-03T12:00:00Z", []string{"2025-11-02T05:30:00Z", "2025-11-03T06:30:00Z"}},
		{"30 * * * *", "2025-11-02T04:00:00Z", "2025-11-02T08:00:00Z", []string{"2025-11-02T04:30:00Z", "2025-11-02T05:30:00Z", "2025-11-02T06:30:00Z", "2025-11-02T07:30:00Z"}},
	} {
		got := iscRuns(mustCron(t, tt.expr, ny), utc(t, tt.from), utc(t, tt.to))
		assert.Equal(t, tt.want, format(got), fmt.Sprint(tt.expr))
	}
}
