package schedule

import "time"

const (
	secondsPerDay = 86400

	// ISC cron wakes up once a minute and compares the wall-clock minute
	// with a virtual clock of its own, one minute behind: when the clocks
	// change by d minutes in between, it finds a difference of d+1. It
	// treats a difference from 6 to 180 as the clocks going forward (2 to
	// 5 as having woken up late) and one from -180 to 0 as the clocks
	// going back (daylight saving), and anything else as a change of time
	// to follow at once. So the clocks
	// going forward by less than 3 hours (at most 179 minutes), or back by
	// at most 3 hours and 1 minute (181 minutes), get the daylight-saving
	// treatment; larger changes are followed in real time. In seconds, the
	// limits (exclusive) of the changes so treated:
	dstForward  = 3 * 3600      // < 180 minutes forward
	dstBackward = 3*3600 + 2*60 // < 182 minutes back

	// searchLimit bounds Next's search (in seconds): the Gregorian calendar
	// repeats every 400 years, so an expression accepted by ParseCron has a
	// matching wall-clock time within any 401 years.
	searchLimit = 401 * 366 * secondsPerDay
)

// Next returns the first run time strictly after t, in c's location. The
// run times are the instants at which ISC cron would start the job (see the
// package documentation for what happens when the clocks change). Next
// returns the zero Time if the job has no run time in the 401 years after t:
// in practice only a wildcard job whose every matching wall time falls in a
// skipped interval of its location, or a t near the ends of time.Time's
// range. The search jumps over days and hours that cannot match; a typical
// call takes well under a microsecond.
func (c *Cron) Next(t time.Time) time.Time {
	// Run times are whole seconds, so "after t" means at or after lo.
	lo := t.Unix() + 1
	limit := lo + searchLimit
	// Walk the zone's periods of constant offset from the one holding lo,
	// looking in each for the first matching wall-clock minute.
	for lo < limit {
		z := time.Unix(lo, 0).In(c.loc)
		_, offset := z.Zone()
		off := int64(offset)
		startT, endT := z.ZoneBounds()
		end := limit
		if !endT.IsZero() && endT.Unix() < end {
			end = endT.Unix()
		}
		if end <= lo {
			// Past a zone's last listed transition Go computes the periods
			// from its TZ rule, and ends leap years a day early: the
			// period holding lo can be reported as ending before it.
			end = c.offsetChange(lo, off, min(lo+secondsPerDay, limit))
		}
		from := ceilMinute(lo + off)
		if !c.wild && !startT.IsZero() && lo-startT.Unix() < dstBackward {
			start := startT.Unix()
			_, prevOffset := time.Unix(start-1, 0).In(c.loc).Zone()
			prev := int64(prevOffset)
			switch jump := off - prev; {
			case jump > 0 && jump < dstForward && lo == start:
				// The clocks went forward at start, skipping the wall
				// times [start+prev, start+off): a fixed-time job with
				// a time in there runs at the jump, once.
				if _, ok := c.nextWall(ceilMinute(start+prev), start+off); ok {
					return time.Unix(start, 0).In(c.loc)
				}
			case jump < 0 && -jump < dstBackward:
				// The clocks went back at start, repeating the wall
				// times [start+off, start+prev): a fixed-time job ran
				// at those the first time round.
				from = max(from, ceilMinute(start+prev))
			}
		}
		if w, ok := c.nextWall(from, end+off); ok {
			return time.Unix(w-off, 0).In(c.loc)
		}
		lo = end
	}
	return time.Time{}
}

// offsetChange returns the first instant in (lo, hi] at which c's location
// has an offset other than off, or hi. It assumes at most one change in
// between.
func (c *Cron) offsetChange(lo, off, hi int64) int64 {
	offsetAt := func(sec int64) int64 {
		_, o := time.Unix(sec, 0).In(c.loc).Zone()
		return int64(o)
	}
	if offsetAt(hi-1) == off {
		return hi
	}
	// offsetAt(lo) == off != offsetAt(hi-1): bisect.
	for lo+1 < hi-1 {
		mid := lo + (hi-1-lo)/2
		if offsetAt(mid) == off {
			lo = mid
		} else {
			hi = mid + 1
		}
	}
	return hi - 1
}

// nextWall returns the first wall-clock minute w with from <= w < limit
// whose fields match c. Wall times are counted in seconds like Unix time, as
// if the wall clock were UTC; from is a whole minute.
func (c *Cron) nextWall(from, limit int64) (int64, bool) {
	days := floorDiv(from, secondsPerDay)
	sec := int(from - days*secondsPerDay)
	h, mi := sec/3600, sec%3600/60
	y, m, d := civil(days)
	wd := int(days%7+7+4) % 7 // 1970-01-01 was a Thursday
	for days*secondsPerDay < limit {
		if c.month&(1<<m) != 0 && c.dayMatches(d, wd) {
			for h < 24 {
				hh, ok := nextBit(uint64(c.hour), h)
				if !ok {
					break
				}
				if hh != h {
					mi = 0
				}
				if mm, ok := nextBit(c.minute, mi); ok {
					w := days*secondsPerDay + int64(hh*3600+mm*60)
					return w, w < limit
				}
				h, mi = hh+1, 0
			}
			d++
			days++
			wd = (wd + 1) % 7
		} else if c.month&(1<<m) == 0 {
			n := daysIn(y, m) - d + 1 // to the 1st of next month
			d += n
			days += int64(n)
			wd = (wd + n) % 7
		} else {
			d++
			days++
			wd = (wd + 1) % 7
		}
		h, mi = 0, 0
		if d > daysIn(y, m) {
			d = 1
			if m++; m > 12 {
				m = 1
				y++
			}
		}
	}
	return 0, false
}

// dayMatches applies cron's day rule to day of month d, weekday wd.
func (c *Cron) dayMatches(d, wd int) bool {
	domOK := c.dom&(1<<d) != 0
	dowOK := c.dow&(1<<wd) != 0
	if c.orDays {
		return domOK || dowOK
	}
	return domOK && dowOK
}

// civil returns the Gregorian date of day n counted from 1970-01-01 (the
// days-from-civil algorithm run backwards: 400-year eras of 146097 days,
// years starting on March 1st).
func civil(n int64) (y int64, m, d int) {
	n += 719468 // days from 0000-03-01 to 1970-01-01
	era := floorDiv(n, 146097)
	doe := n - era*146097                                  // day of era, [0, 146096]
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // year of era, [0, 399]
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // day of year from March 1st, [0, 365]
	mp := (5*doy + 2) / 153                                // month from March, [0, 11]
	d = int(doy - (153*mp+2)/5 + 1)
	m = int(mp+2)%12 + 1
	y = era*400 + yoe
	if m <= 2 {
		y++
	}
	return y, m, d
}

func daysIn(y int64, m int) int {
	if m == 2 && !(y%4 == 0 && (y%100 != 0 || y%400 == 0)) {
		return 28
	}
	return maxDays[m]
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

func ceilMinute(sec int64) int64 { return floorDiv(sec+59, 60) * 60 }
