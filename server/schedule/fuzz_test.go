package schedule

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func FuzzParseCron(f *testing.F) {
	for _, seed := range []string{
		"* * * * *", "*/15 9-17 * * MON-FRI", "30 2 * * *", "30 1 * * *", "0 */2 * * *",
		"0 0 29 2 *", "0 0 29 2 */7", "0 0 1,15 * MON", "7/20 3/8 10/10 11/1 2/3", "@daily", " @Hourly ",
		"0 0 * jan-Mar,DEC sun", "*/59 */23 */31 */12 */7", "\t0  0 * * 7 ",
		"", "* * * *", "60 0 * * *", "* * * * FOO", "0 0 30 2 *", "0 0 31 2,4,jun *", "*/0 * * * *",
		"5-1 * * * *", "1,,2 * * * *", "0 0 L * *", "0 0 * * 5L", "0 0 * * MON#2", "0 0 ? * MON",
		"0 0 0 * * *", "@reboot", "@every 5m", "@daily 5", "1-2-3 */2/3 - , *",
	} {
		f.Add(seed)
	}
	locs := []*time.Location{time.UTC, load(f, "America/New_York"), load(f, "Australia/Sydney"), load(f, "Australia/Lord_Howe"), load(f, "Pacific/Apia"), load(f, "Antarctica/Casey")}
	starts := []time.Time{
		time.Date(2025, 3, 9, 6, 0, 0, 0, time.UTC),   // before New York's spring forward
		time.Date(2025, 11, 2, 5, 45, 0, 0, time.UTC), // in New York's repeated hour
		time.Date(2025, 4, 5, 15, 59, 59, 0, time.UTC),
		time.Date(2011, 12, 29, 10, 0, 0, 0, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 0, 0, time.UTC),
	}
	f.Fuzz(func(t *testing.T, expr string) {
		for i, loc := range locs {
			c, err := ParseCron(expr, loc)
			if err != nil {
				var se *SyntaxError
				if !errors.As(err, &se) || se.Expr != expr || se.Reason == "" {
					t.Fatalf("ParseCron(%q): error %v is not a complete *SyntaxError", expr, err)
				}
				return
			}
			if got := c.String(); got != strings.TrimSpace(expr) {
				t.Fatalf("String() = %q, want %q", got, strings.TrimSpace(expr))
			}
			again, err := ParseCron(c.String(), loc)
			if err != nil || *again != *c {
				t.Fatalf("ParseCron(%q) again: %v, %+v, want %+v", c.String(), err, again, c)
			}
			for _, start := range starts[:2+i%3] {
				at := start
				for range 4 {
					next := c.Next(at)
					if next.IsZero() && (loc == time.UTC || !c.wild) {
						t.Fatalf("%q in %s: Next(%s) found no run time", expr, loc, at)
					}
					if next.IsZero() {
						break
					}
					if !next.After(at) {
						t.Fatalf("%q in %s: Next(%s) = %s, not after", expr, loc, at, next)
					}
					at = next
				}
			}
		}
	})
}
