// Package schedule computes the run times of periodic jobs: cron
// expressions ([ParseCron]) evaluated in a time zone the way ISC cron
// (Vixie cron 4.1, the cron of Debian and Ubuntu) runs them, and fixed
// intervals ([Interval]). It is the schedule engine of a cron-monitoring
// server: given a job's schedule and the time of its last ping, [Schedule.Next]
// says when the next one is due.
//
// # Cron syntax
//
// An expression has five fields separated by spaces or tabs:
//
//	minute        0-59
//	hour          0-23
//	day-of-month  1-31
//	month         1-12 or JAN-DEC
//	day-of-week   0-7 or SUN-SAT (0 and 7 are both Sunday)
//
// Each field is a comma-separated list of items; an item is `*` (the whole
// range), a number or name, a range `a-b`, or one of those with a step: `*/n`,
// `a-b/n`, or `a/n` (a through the field's maximum; 7 for day-of-week). Names
// are case-insensitive. A step must be between 1 and the field's maximum. The
// macros @yearly (= @annually), @monthly, @weekly, @daily (= @midnight) and
// @hourly stand for "0 0 1 1 *", "0 0 1 * *", "0 0 * * 0", "0 0 * * *" and
// "0 * * * *". @reboot, seconds and year fields (6 or 7 fields) and the
// Quartz extensions L, W, # and ? are refused.
//
// The day rule is cron's: when both day-of-month and day-of-week are
// restricted (neither field starts with `*`), a day matches if either field
// matches; otherwise both must match. So "0 0 1,15 * MON" runs on the 1st,
// the 15th and every Monday, while "0 0 */2 * MON" runs on Mondays that fall
// on an odd day of the month.
//
// An expression that can never run, such as "0 0 30 2 *" (February 30th), is
// refused by [ParseCron]. Every parse error is a [*SyntaxError] naming the
// field at fault.
//
// # Daylight saving time
//
// A cron expression is read in its location's wall-clock time. When the
// clocks change, ISC cron treats two kinds of jobs differently, and so does
// this package:
//
//   - A wildcard job is one whose minute field or hour field begins with `*`
//     (ISC's MIN_STAR and HR_STAR flags): "*/15 * * * *", "30 * * * *",
//     "0 */2 * * *" and @hourly are wildcard jobs. They follow real time: they
//     run whenever the wall clock shows a matching minute, so they do not run
//     at wall times that are skipped, and they run twice at wall times that
//     happen twice.
//   - Every other job is a fixed-time job: "30 2 * * *", "0 9-17 * * *",
//     "0 2,14 * * *", @daily. A fixed-time job runs exactly once for each of its
//     times, whatever the clocks do. If a time is skipped when the clocks go
//     forward, the job runs at the moment of the jump (the first instant of
//     the new offset), once, however many of its times were skipped. If a
//     time happens twice when the clocks go back, the job runs only the first
//     time.
//
// For example, in America/New_York the clocks go from 02:00 EST to 03:00 EDT
// on 2025-03-09 and from 02:00 EDT back to 01:00 EST on 2025-11-02:
//
//	"30 2 * * *"    2025-03-08 02:30 EST, 2025-03-09 03:00 EDT (the jump), 2025-03-10 02:30 EDT
//	"0 */2 * * *"   2025-03-09 00:00 EST, 04:00 EDT (02:00 does not exist)
//	"30 1 * * *"    2025-11-02 01:30 EDT only (not again at 01:30 EST)
//	"30 * * * *"    2025-11-02 00:30 EDT, 01:30 EDT, 01:30 EST, 02:30 EST
//
// These rules apply, as in ISC cron, when the clocks go forward by less than
// three hours (179 minutes at most) or back by three hours and one minute
// (181 minutes) at most. ISC cron wakes up every minute and compares the
// wall clock with a clock of its own, one minute behind: a change of d
// minutes shows as a difference of d+1, and it takes differences from -180
// to 180 for daylight saving. So when Antarctica/Casey went back three hours
// on 2010-03-05, from 02:00 at +11:00 to 23:00 the day before at +08:00,
// "0 0 * * *" ran at 00:00+11:00 and not again at 00:00+08:00. A larger
// change (a zone moving to another offset, such as Pacific/Apia skipping
// 2011-12-30, or Casey going forward three hours in 2009) is followed in
// real time by every job: a fixed-time job does not run at skipped wall
// times and runs again at repeated ones. ISC cron also catches up wildcard jobs after a forward jump
// of at most five minutes (its "woke up late" case); such jumps occur only in
// historical zone data, and here they are treated like any other small jump.
//
// The run times form one fixed sequence of instants: Next from any instant,
// inside a skipped or repeated hour or not, returns the next element of that
// sequence, so iterating Next never repeats or skips a run.
package schedule
