package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
)

// withKind returns the JSON object fields (empty for none) with "kind"
// added: a state or event as UnmarshalState and UnmarshalEvent read it.
func withKind(kind, fields string) (json.RawMessage, error) {
	obj := map[string]json.RawMessage{}
	if fields = strings.TrimSpace(fields); fields != "" {
		if err := json.Unmarshal([]byte(fields), &obj); err != nil {
			return nil, fmt.Errorf("the fields are a JSON object: %w", err)
		}
	}
	if _, ok := obj["kind"]; ok {
		return nil, errors.New(`give the fields without "kind": the name says it`)
	}
	obj["kind"] = json.RawMessage(strconv.Quote(kind))
	return json.Marshal(obj)
}

// item is an action or call as a script writes it: Name(k=v, ...).
type item struct {
	name string
	args [][2]string
}

// parseItems reads a space-separated list of items.
func parseItems(text string) ([]item, error) {
	words, err := split(text, ' ')
	if err != nil {
		return nil, err
	}
	var out []item
	for _, w := range words {
		name, rest, paren := strings.Cut(w, "(")
		it := item{name: name}
		if paren {
			if !strings.HasSuffix(rest, ")") {
				return nil, fmt.Errorf("%q: an item is Name or Name(k=v, ...)", w)
			}
			args, err := split(strings.TrimSuffix(rest, ")"), ',')
			if err != nil {
				return nil, err
			}
			for _, a := range args {
				k, v, ok := strings.Cut(a, "=")
				if !ok {
					return nil, fmt.Errorf("%q: arguments are k=v", w)
				}
				it.args = append(it.args, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
			}
		}
		out = append(out, it)
	}
	return out, nil
}

// split cuts text at sep where sep is outside JSON strings, brackets,
// braces and parentheses, dropping empty pieces; for sep ' ' any run of
// white space separates.
func split(text string, sep rune) ([]string, error) {
	var out []string
	var cur strings.Builder
	depth, inString, escaped := 0, false, false
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			out = append(out, s)
		}
		cur.Reset()
	}
	for _, r := range text {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case r == '\\':
				escaped = true
			case r == '"':
				inString = false
			}
		case r == '"':
			inString = true
		case r == '(' || r == '[' || r == '{':
			depth++
		case r == ')' || r == ']' || r == '}':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("unbalanced %q in %q", r, text)
			}
		case depth == 0 && (r == sep || sep == ' ' && (r == '\t' || r == ' ')):
			flush()
			continue
		}
		cur.WriteRune(r)
	}
	if inString || depth != 0 {
		return nil, fmt.Errorf("unterminated string or bracket in %q", text)
	}
	flush()
	return out, nil
}

// expectAction renders an expected action: every field of the action
// given once.
func (mdl *model) expectAction(it item) (string, error) {
	a := mdl.action(func(a *fsm.Action) bool { return a.Name == it.name })
	if a == nil {
		return "", fmt.Errorf("%s: no such action", it.name)
	}
	return expectItem(it, a.Fields, "action "+a.Name)
}

// expectCall renders an expected call of a guard or effect: every value
// it reads given once.
func (mdl *model) expectCall(it item) (string, error) {
	fn := mdl.fn(it.name)
	if fn == nil {
		return "", fmt.Errorf("%s: the machine calls no such guard or effect", it.name)
	}
	return expectItem(it, fn.Reads, fn.Name)
}

func expectItem(it item, fields []*fsm.Field, what string) (string, error) {
	vals := map[string]json.RawMessage{}
	for _, kv := range it.args {
		i := slices.IndexFunc(fields, func(f *fsm.Field) bool { return f.Name == kv[0] })
		if i < 0 {
			return "", fmt.Errorf("%s has no field %s (it has %s)", what, kv[0], fieldList(fields))
		}
		if _, dup := vals[kv[0]]; dup {
			return "", fmt.Errorf("%s: %s given twice", what, kv[0])
		}
		raw, err := parseValue(fields[i].Type, kv[1])
		if err != nil {
			return "", fmt.Errorf("%s, %s: %w", what, kv[0], err)
		}
		vals[kv[0]] = raw
	}
	if len(vals) != len(fields) {
		return "", fmt.Errorf("%s: give every field (%s), so that nothing goes unchecked", what, fieldList(fields))
	}
	return render(it.name, fields, vals), nil
}

func fieldList(fields []*fsm.Field) string {
	if len(fields) == 0 {
		return "none"
	}
	var names []string
	for _, f := range fields {
		names = append(names, f.Name)
	}
	return strings.Join(names, ", ")
}

// parseValue reads a value as a script writes it: a Go duration for a
// time.Duration, JSON, or a bare word for a string.
func parseValue(typ, text string) (json.RawMessage, error) {
	if isDuration(typ) {
		d, err := time.ParseDuration(text)
		if err != nil {
			return nil, err
		}
		return json.RawMessage(strconv.FormatInt(int64(d), 10)), nil
	}
	if json.Valid([]byte(text)) {
		return json.RawMessage(text), nil
	}
	return json.Marshal(text)
}

func isDuration(typ string) bool { return typ == "time.Duration" }

// render writes an action or call as Name(k=v, ...): the fields in
// declaration order, then any others sorted; durations as Go durations,
// other values as canonical JSON.
func render(name string, fields []*fsm.Field, vals map[string]json.RawMessage) string {
	var parts []string
	seen := map[string]bool{}
	for _, f := range fields {
		if v, ok := vals[f.Name]; ok {
			parts = append(parts, f.Name+"="+renderValue(f.Type, v))
			seen[f.Name] = true
		}
	}
	var rest []string
	for k := range vals {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		parts = append(parts, k+"="+renderValue("", vals[k]))
	}
	if len(parts) == 0 {
		return name
	}
	return name + "(" + strings.Join(parts, ", ") + ")"
}

func renderValue(typ string, v json.RawMessage) string {
	if isDuration(typ) {
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return time.Duration(n).String()
		}
	}
	c, err := canonical(v)
	if err != nil {
		return string(v)
	}
	return c
}

// canonical re-encodes JSON with sorted keys and exact numbers.
func canonical(v json.RawMessage) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return "", err
	}
	out, err := json.Marshal(x)
	return string(out), err
}

func timerText(id uint64, d time.Duration) string { return fmt.Sprintf("%d:%s", id, d) }

// record mirrors driver.Record, entry driver.Entry.
type record struct {
	Trace    []entry         `json:"trace"`
	Err      string          `json:"err"`
	Rejected bool            `json:"rejected"`
	State    json.RawMessage `json:"state"`
	Timers   []timerRecord   `json:"timers"`
}

// timerRecord mirrors driver.Timer.
type timerRecord struct {
	ID    uint64        `json:"id"`
	Delay time.Duration `json:"delay"`
}

type entry struct {
	Type   string                     `json:"type"`
	Name   string                     `json:"name"`
	Args   map[string]json.RawMessage `json:"args"`
	Rule   int                        `json:"rule"`
	From   string                     `json:"from"`
	To     string                     `json:"to"`
	Action json.RawMessage            `json:"action"`
}

// gotAction renders an action the Recorder held, from its JSON.
func (mdl *model) gotAction(raw json.RawMessage) string {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "undecodable action " + string(raw)
	}
	var kind string
	_ = json.Unmarshal(obj["kind"], &kind)
	delete(obj, "kind")
	a := mdl.action(func(a *fsm.Action) bool { return a.Snake == kind })
	if a == nil {
		return "unknown action " + string(raw)
	}
	vals := map[string]json.RawMessage{}
	for k, v := range obj {
		name := k
		if f := slices.IndexFunc(a.Fields, func(f *fsm.Field) bool { return f.JSONName == k }); f >= 0 {
			name = a.Fields[f].Name
		}
		vals[name] = v
	}
	return render(a.Name, a.Fields, vals)
}

// gotCall renders a recorded call of a guard or effect.
func (mdl *model) gotCall(e entry) string {
	fn := mdl.fn(e.Name)
	if fn == nil {
		return render(e.Name, nil, e.Args)
	}
	return render(fn.Name, fn.Reads, e.Args)
}

// gotState returns the name of a recorded state and its fields as
// canonical JSON.
func (mdl *model) gotState(raw json.RawMessage) (string, string) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return "no state (" + string(raw) + ")", ""
	}
	var kind string
	_ = json.Unmarshal(obj["kind"], &kind)
	delete(obj, "kind")
	name := "unknown state " + kind
	if s := mdl.leaf(func(s *fsm.State) bool { return s.Snake == kind }); s != nil {
		name = s.Name
	}
	data, _ := json.Marshal(obj)
	fields, _ := canonical(data)
	return name, fields
}

// reporter is where checks report failures: a *testing.T, or a
// recorder in the harness's own tests.
type reporter interface {
	Errorf(format string, args ...any)
}

// runChecks walks the script with the driver's records: every operation
// has one record, every want line checks the records so far. Actions
// and calls accumulate until a want line checks them; an operation's
// error must be checked by the want error line that follows it; every
// action must be checked by the end of the script, and before the next
// new or restore.
func runChecks(t reporter, p *prepared, records []record) {
	mdl := newModel(p.m)
	var actions, calls []string
	var last *record
	var errLine *scriptLine // the operation whose error is unchecked
	unchecked := func(at string) {
		if errLine != nil {
			t.Errorf("%s: unexpected error: %s (add want error: if the machine should fail here)", errLine, last.Err)
			errLine = nil
		}
		if len(actions) > 0 {
			t.Errorf("%s: actions no want actions line checked: %s", at, strings.Join(actions, " "))
			actions = nil
		}
	}
	n := 0
	for _, s := range p.steps {
		l := s.line
		if s.op != nil {
			if n >= len(records) {
				t.Errorf("%s: not run: the driver stopped at an earlier line", l)
				return
			}
			rec := &records[n]
			n++
			if s.op.Op == "new" || s.op.Op == "restore" {
				unchecked(l.String())
				calls = nil
			} else if errLine != nil {
				unchecked(l.String())
			}
			if strings.HasPrefix(rec.Err, "harness: ") || strings.HasPrefix(rec.Err, "panic: ") {
				t.Errorf("%s: %s", l, rec.Err)
				continue
			}
			last = rec
			if rec.Err != "" {
				ll := l
				errLine = &ll
			}
			for _, e := range rec.Trace {
				switch e.Type {
				case "action":
					actions = append(actions, mdl.gotAction(e.Action))
				case "call":
					calls = append(calls, mdl.gotCall(e))
				}
			}
			checkOrder(t, l, s.op.Op, rec.Trace)
			continue
		}
		if last == nil {
			t.Errorf("%s: nothing to check yet", l)
			continue
		}
		c := s.check
		switch c.what {
		case "actions":
			assert.Equal(t, nonNil(c.items), nonNil(actions), "%s", l)
			actions = nil
		case "calls":
			assert.Equal(t, nonNil(c.items), nonNil(calls), "%s", l)
			calls = nil
		case "state":
			name, fields := mdl.gotState(last.State)
			want, got := c.state, name
			if c.fields != "" {
				want, got = want+" "+c.fields, got+" "+fields
			}
			assert.Equal(t, want, got, "%s", l)
		case "timers":
			var got []string
			for _, tm := range last.Timers {
				got = append(got, timerText(tm.ID, tm.Delay))
			}
			assert.Equal(t, nonNil(c.items), nonNil(got), "%s", l)
		case "error":
			switch {
			case errLine == nil:
				t.Errorf("%s: the last operation returned no error", l)
			case c.rejected:
				assert.True(t, last.Rejected, "%s: the error does not wrap ErrRejected: %s", l, last.Err)
			default:
				assert.Regexp(t, c.re, last.Err, "%s", l)
			}
			errLine = nil
		}
	}
	unchecked(p.c.path + ": end of script")
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// checkOrder checks what every step of every case must do, whatever the
// spec: the guards and effects a rule calls all run before the first
// action it hands out. The observer marks where each rule fired (after
// its calls, before its actions), so a trace is, rule after rule, calls,
// a mark, actions: an action before the first mark, or after a call with
// no mark between them, breaks the order. New has no observer: its calls
// (entry effects, delays) all come before its actions.
func checkOrder(t reporter, l scriptLine, op string, trace []entry) {
	// For New the whole trace is one step, marked from the start.
	marked, called, acted := op == "new", false, false
	for _, e := range trace {
		bad := false
		switch e.Type {
		case "step":
			marked, called, acted = true, false, false
		case "call":
			called = true
			bad = op == "new" && acted
		case "action":
			acted = true
			bad = !marked || (called && op != "new")
		}
		if bad {
			t.Errorf("%s: guards and effects must all run before the actions of their step; the trace was: %s", l, traceText(trace))
			return
		}
	}
}

// traceText lists a trace briefly, for messages.
func traceText(trace []entry) string {
	var parts []string
	for _, e := range trace {
		switch e.Type {
		case "step":
			parts = append(parts, fmt.Sprintf("[rule %d: %s -> %s]", e.Rule, e.From, e.To))
		case "call":
			parts = append(parts, e.Name+"()")
		case "action":
			parts = append(parts, string(e.Action))
		}
	}
	return strings.Join(parts, " ")
}
