package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/internal/compiler/fsm"
	"github.com/fsmgen/fsmgen/internal/compiler/generate"
)

// harnessSpec is a small machine for the harness's own tests: a field,
// a guard, an effect, a timer.
const harnessSpec = `version: 2
machine: Job
package: job
output:
  go: .
states:
  Idle:
    initial: true
    ignore: [Stop]
  Busy:
    fields:
      peer: string
    entry: Started
    ignore: [Start]
    after:
      delay: 5s
      to: Idle
events:
  Start:
    fields:
      peer: string
  Stop: {}
actions:
  Started:
    fields:
      peer: string
  Stopped:
    fields:
      n: int
guards:
  ok:
    reads:
      peer: string
effects:
  note:
    sets:
      n: int
transitions:
  - from: Idle
    on: Start
    guards:
      - if: ok
        to: Busy
      - else: true
        ignore: true
  - from: Busy
    on: Stop
    to: Idle
    effect: note
    action: Stopped
`

// harnessModel generates harnessSpec in-process.
func harnessModel(t *testing.T) *model {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "spec.yaml")
	require.NoError(t, os.WriteFile(path, []byte(harnessSpec), 0o644))
	res, err := generate.Load(path)
	require.NoError(t, err)
	require.NotNil(t, res.Machine, "%s", res.Diags)
	return newModel(res.Machine)
}

// TestTranslate checks how script lines become operations and checks,
// and that mistakes in them are refused with a message saying what is
// wrong.
func TestTranslate(t *testing.T) {
	mdl := harnessModel(t)
	tests := []struct {
		line    string
		op      string // the operation's JSON, or ""
		items   []string
		wantErr string
	}{
		{line: "new", op: `{"op":"new","data":{"kind":"idle"}}`},
		{line: `restore Busy {"peer": "x"}`, op: `{"op":"restore","data":{"kind":"busy","peer":"x"}}`},
		{line: `send Start {"peer": "x"}`, op: `{"op":"send","data":{"kind":"start","peer":"x"}}`},
		{line: "fire 3", op: `{"op":"send","data":{"kind":"timer_fired","timer":3}}`},
		{line: "guard ok true", op: `{"op":"guard","name":"ok","answer":true}`},
		{line: "effect note 4", op: `{"op":"effect","name":"note","results":[4]}`},
		{line: "want actions: Started(peer=x) StartTimer(timer=1, delay=5s) Stopped(n=2)", items: []string{`Started(peer="x")`, "StartTimer(timer=1, delay=5s)", "Stopped(n=2)"}},
		{line: `want actions: Started(peer="a, (b)")`, items: []string{`Started(peer="a, (b)")`}},
		{line: "want actions:", items: nil},
		{line: `want calls: ok(peer="two words") note`, items: []string{`ok(peer="two words")`, "note"}},
		{line: "want timers: 1:5s 2:90s", items: []string{"1:5s", "2:1m30s"}},
		{line: "send Nope", wantErr: "no such event"},
		{line: `send Start {"kind": "stop"}`, wantErr: `without "kind"`},
		{line: "send Start [1]", wantErr: "JSON object"},
		{line: "restore Nowhere", wantErr: "no such leaf state"},
		{line: "fire x", wantErr: "timer id"},
		{line: "guard ok maybe", wantErr: "true or false"},
		{line: "guard note true", wantErr: "true or false"},
		{line: "effect note", wantErr: "sets 1 values (n), the line gives 0"},
		{line: "effect ok 1", wantErr: "no such effect"},
		{line: "want actions: Started", wantErr: "give every field (peer)"},
		{line: "want actions: Started(peer=x, peer=y)", wantErr: "given twice"},
		{line: "want actions: Started(who=x)", wantErr: "has no field who"},
		{line: "want actions: Started(peer=x", wantErr: "unterminated"},
		{line: "want actions: Nope", wantErr: "no such action"},
		{line: "want actions: StartTimer(timer=1, delay=soon)", wantErr: "invalid duration"},
		{line: "want calls: Started(peer=x)", wantErr: "no such guard or effect"},
		{line: "want state: Nope", wantErr: "no such leaf state"},
		{line: "want state: Busy [1]", wantErr: "JSON object"},
		{line: "want timers: 1", wantErr: "ID:DELAY"},
		{line: "want error: (", wantErr: "missing closing"},
		{line: "want nothing: x", wantErr: "unknown instruction"},
		{line: "fly", wantErr: "unknown instruction"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			l, err := parseLine("script:1", tt.line)
			require.NoError(t, err)
			s, err := mdl.translate(l)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			if tt.op != "" {
				require.NotNil(t, s.op)
				got, err := json.Marshal(s.op)
				require.NoError(t, err)
				assert.JSONEq(t, tt.op, string(got))
				return
			}
			require.NotNil(t, s.check)
			assert.Equal(t, tt.items, s.check.items)
		})
	}
	_, err := parseLine("script:1", "want actions Started")
	assert.ErrorContains(t, err, "want needs a colon")
}

// collector is a reporter that keeps what it is told.
type collector struct{ msgs []string }

func (c *collector) Errorf(format string, args ...any) {
	c.msgs = append(c.msgs, fmt.Sprintf(format, args...))
}

// TestRunChecks feeds the checks records as the driver would write them
// and checks what they report: nothing when the records meet the
// script, a message naming the line when they do not.
func TestRunChecks(t *testing.T) {
	mdl := harnessModel(t)
	started := entry{Type: "action", Action: json.RawMessage(`{"kind":"started","peer":"x"}`)}
	timer := entry{Type: "action", Action: json.RawMessage(`{"kind":"start_timer","timer":1,"delay":5000000000}`)}
	okCall := entry{Type: "call", Name: "ok", Args: map[string]json.RawMessage{"peer": json.RawMessage(`"x"`)}}
	step := entry{Type: "step", Rule: 0, From: "Idle", To: "Busy"}
	busy := json.RawMessage(`{"kind":"busy","peer":"x"}`)
	idle := json.RawMessage(`{"kind":"idle"}`)
	rec := func(state json.RawMessage, trace ...entry) record { return record{State: state, Trace: trace} }
	tests := []struct {
		name    string
		script  string
		records []record
		want    []string // substrings, one per reported failure, in order
	}{
		{
			name:    "met",
			script:  "new\nguard ok true\nsend Start {\"peer\": \"x\"}\nwant calls: ok(peer=x)\nwant actions: Started(peer=x) StartTimer(timer=1, delay=5s)\nwant state: Busy {\"peer\": \"x\"}",
			records: []record{rec(idle), rec(idle), rec(busy, okCall, step, started, timer)},
		},
		{
			name:    "other actions",
			script:  "new\nsend Start {\"peer\": \"x\"}\nwant actions: Started(peer=y) StartTimer(timer=1, delay=5s)",
			records: []record{rec(idle), rec(busy, okCall, step, started, timer)},
			want:    []string{"script:3: want actions: Started(peer=y)"},
		},
		{
			name:    "actions left unchecked",
			script:  "new\nsend Start {\"peer\": \"x\"}",
			records: []record{rec(idle), rec(busy, okCall, step, started, timer)},
			want:    []string{`end of script: actions no want actions line checked: Started(peer="x") StartTimer(timer=1, delay=5s)`},
		},
		{
			name:    "actions left unchecked before new",
			script:  "new\nsend Start {\"peer\": \"x\"}\nnew\nwant actions:",
			records: []record{rec(idle), rec(busy, okCall, step, started, timer), rec(idle)},
			want:    []string{"script:3: new: actions no want actions line checked"},
		},
		{
			name:    "other state",
			script:  "new\nwant state: Busy",
			records: []record{rec(idle)},
			want:    []string{"script:2: want state: Busy"},
		},
		{
			name:    "other fields",
			script:  "restore Busy {\"peer\": \"x\"}\nwant state: Busy {\"peer\": \"y\"}",
			records: []record{rec(busy)},
			want:    []string{`script:2: want state: Busy {"peer": "y"}`},
		},
		{
			name:    "unexpected error",
			script:  "new\nsend Stop\nsend Stop",
			records: []record{rec(idle), {State: idle, Err: "job: boom"}, rec(idle)},
			want:    []string{"script:2: send Stop: unexpected error: job: boom"},
		},
		{
			name:    "expected error that did not happen",
			script:  "new\nsend Stop\nwant error: rejected",
			records: []record{rec(idle), rec(idle)},
			want:    []string{"script:3: want error: rejected: the last operation returned no error"},
		},
		{
			name:    "error that is not a rejection",
			script:  "new\nsend Stop\nwant error: rejected",
			records: []record{rec(idle), {State: idle, Err: "job: boom"}},
			want:    []string{"does not wrap ErrRejected"},
		},
		{
			name:    "error matched",
			script:  "new\nsend Stop\nwant error: bo+m",
			records: []record{rec(idle), {State: idle, Err: "job: boom"}},
		},
		{
			name:    "timers",
			script:  "restore Busy {\"peer\": \"x\"}\nwant timers: 1:6s",
			records: []record{{State: busy, Timers: []timerRecord{{ID: 1, Delay: 5e9}}}},
			want:    []string{"script:2: want timers: 1:6s"},
		},
		{
			name:    "action between a call and its rule's mark",
			script:  "new\nsend Start {\"peer\": \"x\"}\nwant actions: Started(peer=x)",
			records: []record{rec(idle), rec(busy, step, okCall, started)},
			want:    []string{"script:2: send Start"},
		},
		{
			name:    "action before any mark",
			script:  "new\nsend Start {\"peer\": \"x\"}\nwant actions: Started(peer=x)",
			records: []record{rec(idle), rec(busy, started, step)},
			want:    []string{"script:2: send Start"},
		},
		{
			name:    "calls of the next rule after the actions of the first",
			script:  "new\nsend Start {\"peer\": \"x\"}\nwant actions: Started(peer=x) Started(peer=x)",
			records: []record{rec(idle), rec(busy, step, started, okCall, step, started)},
		},
		{
			name:    "call after an action at New",
			script:  "new\nwant actions: Started(peer=x)",
			records: []record{rec(idle, started, okCall)},
			want:    []string{"script:1: new: guards and effects must all run before"},
		},
		{
			name:    "driver stopped",
			script:  "new\nsend Stop",
			records: []record{{State: idle, Err: "panic: boom"}},
			want:    []string{"script:1: new: panic: boom", "script:2: send Stop: not run"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &prepared{c: &corpusCase{path: "case.txtar"}, m: mdl.m}
			for i, text := range strings.Split(tt.script, "\n") {
				l, err := parseLine(fmt.Sprintf("script:%d", i+1), text)
				require.NoError(t, err)
				s, err := mdl.translate(l)
				require.NoError(t, err)
				p.steps = append(p.steps, s)
			}
			c := &collector{}
			runChecks(c, p, tt.records)
			require.Len(t, c.msgs, len(tt.want), "reported: %q", c.msgs)
			for i, w := range tt.want {
				assert.Contains(t, c.msgs[i], w)
			}
		})
	}
}

// TestRender checks the notation failures are shown in: fields in
// declaration order, durations as Go durations, other values as JSON.
func TestRender(t *testing.T) {
	fields := []*fsm.Field{{Name: "b", Type: "time.Duration"}, {Name: "a", Type: "string"}}
	tests := []struct {
		vals map[string]json.RawMessage
		want string
	}{
		{nil, "X"},
		{map[string]json.RawMessage{"a": json.RawMessage(`"s"`), "b": json.RawMessage(`90000000000`)}, `X(b=1m30s, a="s")`},
		{map[string]json.RawMessage{"z": json.RawMessage(`{"y":1, "x":2}`)}, `X(z={"x":2,"y":1})`},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, render("X", fields, tt.vals))
	}
}
