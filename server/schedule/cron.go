package schedule

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// Schedule gives the run times of a job.
type Schedule interface {
	// Next returns the first run time strictly after t (compared as
	// instants; the result is in the schedule's location). It returns the
	// zero Time if there is none.
	Next(t time.Time) time.Time
}

// Cron is a parsed cron expression in a location. Its zero value is not
// usable; make one with [ParseCron]. A *Cron is immutable and safe for
// concurrent use.
type Cron struct {
	expr string
	loc  *time.Location

	minute uint64 // bit i: minute i (0-59)
	hour   uint32 // bit i: hour i (0-23)
	dom    uint32 // bit i: day of month i (1-31)
	month  uint16 // bit i: month i (1-12)
	dow    uint8  // bit i: weekday i (0-6, Sunday = 0)

	// orDays: both day fields are restricted, so a day matches if either
	// does (cron's day rule); otherwise both must.
	orDays bool
	// wild: the minute or the hour field begins with '*' (ISC's MIN_STAR or
	// HR_STAR): the job follows real time across clock changes.
	wild bool
}

var _ Schedule = (*Cron)(nil)

// SyntaxError is the error [ParseCron] returns for an expression it refuses.
// Callers tell it from other errors with errors.As.
type SyntaxError struct {
	// Expr is the expression exactly as passed to ParseCron.
	Expr string
	// Field names the field at fault: "minute", "hour", "day-of-month",
	// "month" or "day-of-week"; it is empty when the error is about the
	// expression as a whole (its number of fields, a macro).
	Field string
	// Value is the text of that field (empty when Field is).
	Value string
	// Reason says what is wrong and, where it helps, what to write instead.
	Reason string
}

// Error returns, for example,
//
//	"60 0 * * *": minute field "60": 60 is out of range 0-59
//	"* * * *": 4 fields, want 5: minute hour day-of-month month day-of-week (or a macro such as @daily)
func (e *SyntaxError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%q: %s", e.Expr, e.Reason)
	}
	return fmt.Sprintf("%q: %s field %q: %s", e.Expr, e.Field, e.Value, e.Reason)
}

// field describes one of the five fields.
type field struct {
	name     string
	min, max int
	names    []string // names[i] is the name of value min+i (month, day-of-week)
	want     string   // what a value may be, for messages
}

var fields = [5]field{
	{name: "minute", min: 0, max: 59, want: "0-59"},
	{name: "hour", min: 0, max: 23, want: "0-23"},
	{name: "day-of-month", min: 1, max: 31, want: "1-31"},
	{name: "month", min: 1, max: 12, want: "JAN-DEC or 1-12",
		names: []string{"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}},
	{name: "day-of-week", min: 0, max: 7, want: "SUN-SAT or 0-7",
		names: []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}},
}

const fieldList = "minute hour day-of-month month day-of-week"

var macros = map[string]string{
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
	"@monthly":  "0 0 1 * *",
	"@weekly":   "0 0 * * 0",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@hourly":   "0 * * * *",
}

// ParseCron parses a cron expression: five fields or a macro (see the
// package documentation for the syntax). Leading and trailing white space is
// ignored. The schedule is evaluated in loc's wall-clock time; a nil loc
// means UTC. An expression that is malformed, uses an unsupported feature or
// can never run is refused with a [*SyntaxError].
func ParseCron(expr string, loc *time.Location) (*Cron, error) {
	if loc == nil {
		loc = time.UTC
	}
	s := strings.TrimSpace(expr)
	fail := func(reason string) (*Cron, error) {
		return nil, &SyntaxError{Expr: expr, Reason: reason}
	}
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' })
	if len(parts) == 0 {
		return fail("empty expression: want 5 fields: " + fieldList + " (or a macro such as @daily)")
	}
	text := parts
	if strings.HasPrefix(parts[0], "@") {
		name := strings.ToLower(parts[0])
		switch body, ok := macros[name]; {
		case name == "@reboot":
			return fail("@reboot is not supported: a schedule needs times (use @daily or 5 fields: " + fieldList + ")")
		case name == "@every":
			return fail("@every is not supported in a cron expression: use an interval schedule")
		case !ok:
			return fail(fmt.Sprintf("unknown macro %q: want @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly", parts[0]))
		case len(parts) > 1:
			return fail(fmt.Sprintf("%s takes no fields, but %q follows it", parts[0], strings.Join(parts[1:], " ")))
		default:
			text = strings.Fields(body)
		}
	}
	switch n := len(text); {
	case n == 6 || n == 7:
		return fail(fmt.Sprintf("%d fields, want 5: seconds and year fields are not supported; write %s", n, fieldList))
	case n != 5:
		return fail(fmt.Sprintf("%d fields, want 5: %s (or a macro such as @daily)", n, fieldList))
	}

	c := &Cron{expr: s, loc: loc}
	var sets [5]uint64
	for i, f := range fields {
		set, reason := f.parse(text[i])
		if reason != "" {
			return nil, &SyntaxError{Expr: expr, Field: f.name, Value: text[i], Reason: reason}
		}
		sets[i] = set
	}
	if sets[4]&(1<<7) != 0 { // 7 is Sunday too
		sets[4] |= 1
	}
	c.minute = sets[0]
	c.hour = uint32(sets[1])
	c.dom = uint32(sets[2])
	c.month = uint16(sets[3])
	c.dow = uint8(sets[4] & 0x7f)
	c.wild = text[0][0] == '*' || text[1][0] == '*'
	c.orDays = text[2][0] != '*' && text[4][0] != '*'
	if reason := c.neverRuns(); reason != "" {
		return nil, &SyntaxError{Expr: expr, Field: fields[2].name, Value: text[2], Reason: reason}
	}
	return c, nil
}

// maxDays is the most days each month can have.
var maxDays = [13]int{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

// neverRuns returns why c can never run, or "". With cron's OR day rule
// every selected month has a matching day (all weekdays occur in every
// month). Otherwise c runs if some selected month can have some selected day:
// over the Gregorian 400-year cycle every possible date (February 29th
// included) falls on every weekday.
func (c *Cron) neverRuns() string {
	if c.orDays {
		return ""
	}
	var months []string
	for m := 1; m <= 12; m++ {
		if c.month&(1<<m) == 0 {
			continue
		}
		if uint64(c.dom)&(1<<(maxDays[m]+1)-1) != 0 {
			return ""
		}
		months = append(months, time.Month(m).String())
	}
	var days []string
	for d := 29; d <= 31; d++ {
		if c.dom&(1<<d) != 0 {
			days = append(days, strconv.Itoa(d))
		}
	}
	have := "has"
	if len(months) > 1 {
		have = "have"
	}
	return fmt.Sprintf("never runs: %s %s no day %s", joinOr(months, "and"), have, joinOr(days, "or"))
}

// joinOr joins words as "a, b and c".
func joinOr(words []string, conj string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " " + conj + " " + words[len(words)-1]
}

// parse returns the set of values of text (bit v for value v), or the
// reason it is refused.
func (f field) parse(text string) (uint64, string) {
	if strings.Contains(text, "?") {
		return 0, "? is not supported: write * for any value"
	}
	if strings.Contains(text, "#") {
		return 0, "# (the nth weekday of the month) is not supported"
	}
	var set uint64
	items := strings.Split(text, ",")
	for _, item := range items {
		if item == "" {
			return 0, "empty list item: remove the extra comma"
		}
		quote := func(s string) string { // names the part at fault when the field has more to it
			if s == text {
				return ""
			}
			return fmt.Sprintf(" %q", s)
		}
		base, stepText, hasStep := strings.Cut(item, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepText)
			switch {
			case stepText == "":
				return 0, fmt.Sprintf("step%s: missing number after /", quote(item))
			case strings.Contains(stepText, "/"):
				return 0, fmt.Sprintf("item%s has more than one /", quote(item))
			case !isDigits(stepText):
				return 0, fmt.Sprintf("step %q is not a number", stepText)
			case err != nil || n > f.max:
				return 0, fmt.Sprintf("step %s is too large: at most %d", stepText, f.max)
			case n == 0:
				return 0, "step 0: a step must be at least 1"
			}
			step = n
		}
		lo, hi := f.min, f.max
		switch a, b, isRange := strings.Cut(base, "-"); {
		case base == "*":
		case isRange:
			if a == "" || b == "" {
				return 0, fmt.Sprintf("range%s: missing number before or after -", quote(base))
			}
			if strings.Contains(b, "-") {
				return 0, fmt.Sprintf("range%s has more than one -", quote(base))
			}
			var reason string
			if lo, reason = f.value(a, text); reason != "" {
				return 0, reason
			}
			if hi, reason = f.value(b, text); reason != "" {
				return 0, reason
			}
			if lo > hi {
				return 0, fmt.Sprintf("range %s is reversed: write %s-%s, or a list", base, b, a)
			}
		default:
			var reason string
			if lo, reason = f.value(base, text); reason != "" {
				return 0, reason
			}
			if !hasStep {
				hi = lo
			}
		}
		for v := lo; v <= hi; v += step {
			set |= 1 << v
		}
	}
	return set, ""
}

// value parses one number or name of the field (text is the whole field,
// for messages).
func (f field) value(s, text string) (int, string) {
	if s == "" {
		return 0, "missing number"
	}
	if isDigits(s) {
		n, err := strconv.Atoi(s)
		if err != nil || n < f.min || n > f.max {
			return 0, fmt.Sprintf("%s is out of range %d-%d", s, f.min, f.max)
		}
		return n, ""
	}
	u := strings.ToUpper(s)
	for i, name := range f.names {
		if u == name {
			return f.min + i, ""
		}
	}
	switch {
	case f.name == "day-of-month" && (u == "L" || u == "LW" || strings.HasSuffix(u, "W") && isDigits(u[:len(u)-1])):
		return 0, "L (last day) and W (nearest weekday) are not supported"
	case f.name == "day-of-week" && (u == "L" || strings.HasSuffix(u, "L") && isDigits(u[:len(u)-1])):
		return 0, "L (last weekday of the month) is not supported"
	}
	what := "unknown name"
	if f.names == nil {
		what = "not a number"
	}
	if s != text {
		what += fmt.Sprintf(" %q", s)
	}
	return 0, fmt.Sprintf("%s (want %s)", what, f.want)
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// String returns the expression as given to ParseCron, without leading and
// trailing white space.
func (c *Cron) String() string { return c.expr }

// Location returns the location the expression is evaluated in.
func (c *Cron) Location() *time.Location { return c.loc }

// nextBit returns the lowest set bit of set at or above i, if any.
func nextBit(set uint64, i int) (int, bool) {
	if i >= 64 {
		return 0, false
	}
	rest := set >> uint(i) << uint(i)
	if rest == 0 {
		return 0, false
	}
	return bits.TrailingZeros64(rest), true
}
