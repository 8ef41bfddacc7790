package schedule

import (
	"errors"
	"math/bits"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// values lists the set bits of set.
func values(set uint64) []int {
	var vs []int
	for set != 0 {
		v := bits.TrailingZeros64(set)
		vs = append(vs, v)
		set &^= 1 << v
	}
	return vs
}

func span(lo, hi, step int) []int {
	var vs []int
	for v := lo; v <= hi; v += step {
		vs = append(vs, v)
	}
	return vs
}

func TestParseCronValid(t *testing.T) {
	all := func(f int) []int { return span(fields[f].min, fields[f].max, 1) }
	allDays := span(0, 6, 1)
	tests := []struct {
		expr                   string
		minute, hour, dom, mon []int
		dow                    []int
		orDays, wild           bool
	}{
		{"* * * * *", all(0), all(1), all(2), all(3), allDays, false, true},
		{"0 0 * * *", []int{0}, []int{0}, all(2), all(3), allDays, false, false},
		{"*/15 9-17 * * MON-FRI", []int{0, 15, 30, 45}, span(9, 17, 1), all(2), all(3), span(1, 5, 1), false, true},
		{"5,10,15 1,2 1,15 1,6 1", []int{5, 10, 15}, []int{1, 2}, []int{1, 15}, []int{1, 6}, []int{1}, true, false},
		{"10-50/20 0-23/6 1-31/10 */5 *", []int{10, 30, 50}, []int{0, 6, 12, 18}, []int{1, 11, 21, 31}, []int{1, 6, 11}, allDays, false, false},
		{"7/20 3/8 10/10 11/1 2/3", []int{7, 27, 47}, []int{3, 11, 19}, []int{10, 20, 30}, []int{11, 12}, []int{2, 5}, true, false},
		{"0 0 * jan-Mar,DEC sun", []int{0}, []int{0}, all(2), []int{1, 2, 3, 12}, []int{0}, false, false},
		{"0 0 * * 7", []int{0}, []int{0}, all(2), all(3), []int{0}, false, false},
		{"0 0 * * 0", []int{0}, []int{0}, all(2), all(3), []int{0}, false, false},
		{"0 0 * * 5-7", []int{0}, []int{0}, all(2), all(3), []int{0, 5, 6}, false, false},
		{"0 0 * * */2", []int{0}, []int{0}, all(2), all(3), []int{0, 2, 4, 6}, false, false},
		{"0 0 * * 1/2", []int{0}, []int{0}, all(2), all(3), []int{0, 1, 3, 5}, false, false},
		{"0 0 * * FRI-SAT,sun", []int{0}, []int{0}, all(2), all(3), []int{0, 5, 6}, false, false},
		{"30 */2 * * *", []int{30}, span(0, 22, 2), all(2), all(3), allDays, false, true},
		{"*/59 */23 */31 */12 */7", []int{0, 59}, []int{0, 23}, []int{1}, []int{1}, []int{0}, false, true},
		{"05 09 * * *", []int{5}, []int{9}, all(2), all(3), allDays, false, false},
		{"0 0 1,* * 1", []int{0}, []int{0}, all(2), all(3), []int{1}, true, false},
		{"  0\t0  *   * *\t ", []int{0}, []int{0}, all(2), all(3), allDays, false, false},
		{"0 0 31 2,3 *", []int{0}, []int{0}, []int{31}, []int{2, 3}, allDays, false, false},
		{"0 0 30 2 1", []int{0}, []int{0}, []int{30}, []int{2}, []int{1}, true, false},
		{"@yearly", []int{0}, []int{0}, []int{1}, []int{1}, allDays, false, false},
		{"@annually", []int{0}, []int{0}, []int{1}, []int{1}, allDays, false, false},
		{"@monthly", []int{0}, []int{0}, []int{1}, all(3), allDays, false, false},
		{"@weekly", []int{0}, []int{0}, all(2), all(3), []int{0}, false, false},
		{"@daily", []int{0}, []int{0}, all(2), all(3), allDays, false, false},
		{"@midnight", []int{0}, []int{0}, all(2), all(3), allDays, false, false},
		{" @Hourly ", []int{0}, all(1), all(2), all(3), allDays, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			c, err := ParseCron(tt.expr, time.UTC)
			require.NoError(t, err)
			assert.Equal(t, tt.minute, values(c.minute), "minute")
			assert.Equal(t, tt.hour, values(uint64(c.hour)), "hour")
			assert.Equal(t, tt.dom, values(uint64(c.dom)), "day-of-month")
			assert.Equal(t, tt.mon, values(uint64(c.month)), "month")
			assert.Equal(t, tt.dow, values(uint64(c.dow)), "day-of-week")
			assert.Equal(t, tt.orDays, c.orDays, "day rule")
			assert.Equal(t, tt.wild, c.wild, "wildcard job")
			assert.Equal(t, strings.TrimSpace(tt.expr), c.String())
		})
	}
}

func TestParseCronStringAndLocation(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	c, err := ParseCron(" \t*/5 * * * MON\n", ny)
	require.NoError(t, err)
	assert.Equal(t, "*/5 * * * MON", c.String())
	assert.Equal(t, ny, c.Location())

	c, err = ParseCron("@daily", nil)
	require.NoError(t, err)
	assert.Equal(t, "@daily", c.String())
	assert.Equal(t, time.UTC, c.Location())
}

func TestParseCronErrors(t *testing.T) {
	const want5 = "want 5: minute hour day-of-month month day-of-week (or a macro such as @daily)"
	tests := []struct {
		expr, field, value, msg string
	}{
		{"60 0 * * *", "minute", "60", `"60 0 * * *": minute field "60": 60 is out of range 0-59`},
		{"* * * *", "", "", `"* * * *": 4 fields, ` + want5},
		{"* * * * FOO", "day-of-week", "FOO", `"* * * * FOO": day-of-week field "FOO": unknown name (want SUN-SAT or 0-7)`},
		{"* * * * MON,FOO", "day-of-week", "MON,FOO", `"* * * * MON,FOO": day-of-week field "MON,FOO": unknown name "FOO" (want SUN-SAT or 0-7)`},
		{"* * * FOO *", "month", "FOO", `"* * * FOO *": month field "FOO": unknown name (want JAN-DEC or 1-12)`},
		{"x * * * *", "minute", "x", `"x * * * *": minute field "x": not a number (want 0-59)`},
		{"* MON * * *", "hour", "MON", `"* MON * * *": hour field "MON": not a number (want 0-23)`},
		{"", "", "", `"": empty expression: want 5 fields: minute hour day-of-month month day-of-week (or a macro such as @daily)`},
		{" \t ", "", "", `" \t ": empty expression: want 5 fields: minute hour day-of-month month day-of-week (or a macro such as @daily)`},
		{"*", "", "", `"*": 1 fields, ` + want5},
		{"* * * * * * * *", "", "", `"* * * * * * * *": 8 fields, ` + want5},
		{"0 0 0 * * *", "", "", `"0 0 0 * * *": 6 fields, want 5: seconds and year fields are not supported; write minute hour day-of-month month day-of-week`},
		{"0 0 0 * * * 2025", "", "", `"0 0 0 * * * 2025": 7 fields, want 5: seconds and year fields are not supported; write minute hour day-of-month month day-of-week`},
		{"*/0 * * * *", "minute", "*/0", `"*/0 * * * *": minute field "*/0": step 0: a step must be at least 1`},
		{"* * * * 1-5/0", "day-of-week", "1-5/0", `"* * * * 1-5/0": day-of-week field "1-5/0": step 0: a step must be at least 1`},
		{"*/60 * * * *", "minute", "*/60", `"*/60 * * * *": minute field "*/60": step 60 is too large: at most 59`},
		{"* */99999999999999999999 * * *", "hour", "*/99999999999999999999", `"* */99999999999999999999 * * *": hour field "*/99999999999999999999": step 99999999999999999999 is too large: at most 23`},
		{"*/ * * * *", "minute", "*/", `"*/ * * * *": minute field "*/": step: missing number after /`},
		{"1,*/ * * * *", "minute", "1,*/", `"1,*/ * * * *": minute field "1,*/": step "*/": missing number after /`},
		{"*/x * * * *", "minute", "*/x", `"*/x * * * *": minute field "*/x": step "x" is not a number`},
		{"*/2/3 * * * *", "minute", "*/2/3", `"*/2/3 * * * *": minute field "*/2/3": item has more than one /`},
		{"5-1 * * * *", "minute", "5-1", `"5-1 * * * *": minute field "5-1": range 5-1 is reversed: write 1-5, or a list`},
		{"* * * * FRI-MON", "day-of-week", "FRI-MON", `"* * * * FRI-MON": day-of-week field "FRI-MON": range FRI-MON is reversed: write MON-FRI, or a list`},
		{"1-2-3 * * * *", "minute", "1-2-3", `"1-2-3 * * * *": minute field "1-2-3": range has more than one -`},
		{"-5 * * * *", "minute", "-5", `"-5 * * * *": minute field "-5": range: missing number before or after -`},
		{"5- * * * *", "minute", "5-", `"5- * * * *": minute field "5-": range: missing number before or after -`},
		{"1,,2 * * * *", "minute", "1,,2", `"1,,2 * * * *": minute field "1,,2": empty list item: remove the extra comma`},
		{"1, * * * *", "minute", "1,", `"1, * * * *": minute field "1,": empty list item: remove the extra comma`},
		{",1 * * * *", "minute", ",1", `",1 * * * *": minute field ",1": empty list item: remove the extra comma`},
		{"0 24 * * *", "hour", "24", `"0 24 * * *": hour field "24": 24 is out of range 0-23`},
		{"0 0 0 * *", "day-of-month", "0", `"0 0 0 * *": day-of-month field "0": 0 is out of range 1-31`},
		{"0 0 32 * *", "day-of-month", "32", `"0 0 32 * *": day-of-month field "32": 32 is out of range 1-31`},
		{"0 0 * 13 *", "month", "13", `"0 0 * 13 *": month field "13": 13 is out of range 1-12`},
		{"0 0 * 0 *", "month", "0", `"0 0 * 0 *": month field "0": 0 is out of range 1-12`},
		{"0 0 * * 8", "day-of-week", "8", `"0 0 * * 8": day-of-week field "8": 8 is out of range 0-7`},
		{"0 0 1-40 * *", "day-of-month", "1-40", `"0 0 1-40 * *": day-of-month field "1-40": 40 is out of range 1-31`},
		{"0 0 99999999999999999999 * *", "day-of-month", "99999999999999999999", `"0 0 99999999999999999999 * *": day-of-month field "99999999999999999999": 99999999999999999999 is out of range 1-31`},
		{"+5 * * * *", "minute", "+5", `"+5 * * * *": minute field "+5": not a number (want 0-59)`},
		{"*-5 * * * *", "minute", "*-5", `"*-5 * * * *": minute field "*-5": not a number "*" (want 0-59)`},
		{"0 0 L * *", "day-of-month", "L", `"0 0 L * *": day-of-month field "L": L (last day) and W (nearest weekday) are not supported`},
		{"0 0 15W * *", "day-of-month", "15W", `"0 0 15W * *": day-of-month field "15W": L (last day) and W (nearest weekday) are not supported`},
		{"0 0 LW * *", "day-of-month", "LW", `"0 0 LW * *": day-of-month field "LW": L (last day) and W (nearest weekday) are not supported`},
		{"0 0 * * 5L", "day-of-week", "5L", `"0 0 * * 5L": day-of-week field "5L": L (last weekday of the month) is not supported`},
		{"0 0 * * MON#2", "day-of-week", "MON#2", `"0 0 * * MON#2": day-of-week field "MON#2": # (the nth weekday of the month) is not supported`},
		{"0 0 ? * MON", "day-of-month", "?", `"0 0 ? * MON": day-of-month field "?": ? is not supported: write * for any value`},
		{"@reboot", "", "", `"@reboot": @reboot is not supported: a schedule needs times (use @daily or 5 fields: minute hour day-of-month month day-of-week)`},
		{"@every 5m", "", "", `"@every 5m": @every is not supported in a cron expression: use an interval schedule`},
		{"@fortnightly", "", "", `"@fortnightly": unknown macro "@fortnightly": want @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly`},
		{"@daily 5", "", "", `"@daily 5": @daily takes no fields, but "5" follows it`},
		{"0 0 30 2 *", "day-of-month", "30", `"0 0 30 2 *": day-of-month field "30": never runs: February has no day 30`},
		{"0 0 30,31 FEB */1", "day-of-month", "30,31", `"0 0 30,31 FEB */1": day-of-month field "30,31": never runs: February has no day 30 or 31`},
		{"0 0 31 2,4,jun *", "day-of-month", "31", `"0 0 31 2,4,jun *": day-of-month field "31": never runs: February, April and June have no day 31`},
		{"0 0 31 4 */2", "day-of-month", "31", `"0 0 31 4 */2": day-of-month field "31": never runs: April has no day 31`},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			c, err := ParseCron(tt.expr, time.UTC)
			require.Error(t, err)
			assert.Nil(t, c)
			assert.Equal(t, tt.msg, err.Error())
			var se *SyntaxError
			require.True(t, errors.As(err, &se), "a *SyntaxError")
			assert.Equal(t, tt.expr, se.Expr)
			assert.Equal(t, tt.field, se.Field)
			assert.Equal(t, tt.value, se.Value)
		})
	}
}

// The never-runs check agrees with a search over a whole 400-year cycle:
// every accepted expression with a single month and day-of-month runs, and
// every refused one does not.
func TestParseCronNeverRuns(t *testing.T) {
	start := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	for m := 1; m <= 12; m++ {
		for d := 28; d <= 31; d++ {
			expr := "0 0 " + itoa(d) + " " + itoa(m) + " *"
			c, err := ParseCron(expr, time.UTC)
			runs := false
			for day := start; day.Year() < 2400; day = day.AddDate(0, 1, 0) {
				if int(day.Month()) == m && d <= time.Date(day.Year(), day.Month()+1, 0, 0, 0, 0, 0, time.UTC).Day() {
					runs = true
					break
				}
			}
			if runs {
				assert.NoError(t, err, expr)
				assert.Equal(t, m, int(c.Next(start).Month()), expr)
			} else {
				assert.ErrorContains(t, err, "never runs", expr)
			}
		}
	}
}

func itoa(n int) string { return string(rune('0'+n/10)) + string(rune('0'+n%10)) }
