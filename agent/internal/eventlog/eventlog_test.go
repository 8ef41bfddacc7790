package eventlog_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/eventlog"
)

// adder is a toy machine for replay. Its events are {"kind":"add","n":N}.
// For each it performs {"kind":"total","total":T,"history":[every N added
// in the session]}, T the running total starting from the header's state,
// and then {"kind":"even"} when T is even. A negative N is rejected and
// zero is ignored (no action). Its history grows like the agent's
// conversation.
type adder struct {
	total   int
	history []int
}

// startAdder builds an adder from a session header.
func startAdder(h eventlog.Header) (eventlog.Step, error) {
	a := &adder{}
	if err := json.Unmarshal(h.State, &a.total); err != nil {
		return nil, err
	}
	return func(raw json.RawMessage) ([]json.RawMessage, bool, error) {
		var ev struct {
			N *int `json:"n"`
		}
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, false, err
		}
		if ev.N == nil {
			return nil, false, errors.New("an add event without n")
		}
		acts, rejected := a.add(*ev.N)
		return acts, rejected, nil
	}, nil
}

// add handles one event.
func (a *adder) add(n int) (acts []json.RawMessage, rejected bool) {
	switch {
	case n < 0:
		return nil, true
	case n == 0:
		return nil, false
	}
	a.total += n
	a.history = append(a.history, n)
	h, _ := json.Marshal(a.history)
	acts = append(acts, json.RawMessage(fmt.Sprintf(`{"kind":"total","total":%d,"history":%s}`, a.total, h)))
	if a.total%2 == 0 {
		acts = append(acts, json.RawMessage(`{"kind":"even"}`))
	}
	return acts, false
}

// historyByRef records an adder's history by reference.
var historyByRef = eventlog.RefPolicy{Fields: map[string][]string{"total": {"history"}}}

// session is what writeLog records: the adder's start, the events' N and
// the refs policy; lie, when set, changes what is recorded for an event
// (its number in the session, from 1).
type session struct {
	start  int
	events []int
	refs   eventlog.RefPolicy
	lie    func(i int, rec *eventlog.Record)
}

// writeLog writes the sessions to the log at p (created if needed), each
// through its own Writer, as the adder performs them.
func writeLog(t *testing.T, p string, sessions ...session) {
	t.Helper()
	for _, s := range sessions {
		w, err := eventlog.Open(p)
		require.NoError(t, err)
		require.NoError(t, w.WriteHeader(eventlog.Header{Machine: "adder", Config: json.RawMessage(`{}`), State: json.RawMessage(strconv.Itoa(s.start)), Refs: s.refs}))
		a := &adder{total: s.start}
		for i, n := range s.events {
			rec := eventlog.Record{Event: json.RawMessage(`{"kind":"add","n":` + strconv.Itoa(n) + `}`)}
			rec.Actions, rec.Rejected = a.add(n)
			if s.lie != nil {
				s.lie(i+1, &rec)
			}
			_, err := w.Append(rec)
			require.NoError(t, err)
		}
		require.NoError(t, w.Close())
	}
}

// newLog writes the sessions to a new log and returns its path.
func newLog(t *testing.T, sessions ...session) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.events.jsonl")
	writeLog(t, p, sessions...)
	return p
}

// replayFile replays the log at p with the adder.
func replayFile(t *testing.T, p string) (eventlog.Report, error) {
	t.Helper()
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	return eventlog.Replay(f, startAdder)
}

// verifyFile verifies the log at p.
func verifyFile(t *testing.T, p string) (eventlog.Summary, error) {
	t.Helper()
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	return eventlog.Verify(f)
}

// lines returns the lines of the file at p, without their newlines.
func lines(t *testing.T, p string) []string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// TestReplayExact replays logs of two sessions, with actions recorded
// whole and by reference.
func TestReplayExact(t *testing.T) {
	tests := []struct {
		name        string
		refs        eventlog.RefPolicy
		wantActions []string
	}{
		{"whole", eventlog.RefPolicy{}, []string{
			`[{"kind":"total","total":1,"history":[1]}]`,
			`[{"kind":"total","total":3,"history":[1,2]}]`,
			`[]`, `[]`,
			`[{"kind":"total","total":6,"history":[1,2,3]},{"kind":"even"}]`,
			`[{"kind":"total","total":105,"history":[5]}]`,
		}},
		{"by reference", historyByRef, []string{
			`[{"kind":"total","total":1,"history":` + ref(`[1]`) + `}]`,
			`[{"kind":"total","total":3,"history":` + ref(`[1,2]`) + `}]`,
			`[]`, `[]`,
			`[{"kind":"total","total":6,"history":` + ref(`[1,2,3]`) + `},{"kind":"even"}]`,
			`[{"kind":"total","total":105,"history":` + ref(`[5]`) + `}]`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newLog(t, session{start: 0, events: []int{1, 2, -1, 0, 3}, refs: tt.refs}, session{start: 100, events: []int{5}, refs: tt.refs})
			rep, err := replayFile(t, p)
			require.NoError(t, err)
			assert.Equal(t, eventlog.Report{Sessions: 2, Events: 6}, rep)

			var seqs []int64
			var actions []string
			for _, line := range lines(t, p) {
				var r eventlog.Record
				require.NoError(t, json.Unmarshal([]byte(line), &r))
				assert.Regexp(t, `,"chain":"[0-9a-f]{64}"}$`, line, "every line ends with its chain value")
				if r.Type == eventlog.TypeEvent {
					seqs = append(seqs, r.Seq)
					a, err := json.Marshal(r.Actions)
					require.NoError(t, err)
					actions = append(actions, string(a))
				}
			}
			assert.Equal(t, []int64{1, 2, 3, 4, 5, 6}, seqs, "numbering continues across sessions")
			assert.Equal(t, tt.wantActions, actions, "every action of an event, in order; none for a rejected or ignored event")

			sum, err := verifyFile(t, p)
			require.NoError(t, err)
			l := lines(t, p)
			var last struct {
				Chain string `json:"chain"`
			}
			require.NoError(t, json.Unmarshal([]byte(l[len(l)-1]), &last))
			assert.Equal(t, eventlog.Summary{Lines: 8, Sessions: 2, Events: 6, Chain: last.Chain}, sum)
		})
	}
}

// ref returns the reference that stands for the compact JSON v.
func ref(v string) string {
	sum := sha256.Sum256([]byte(v))
	out := fmt.Sprintf(`{"$digest":"sha256:%s","bytes":%d`, hex.EncodeToString(sum[:]), len(v))
	if strings.HasPrefix(v, "[") {
		var a []json.RawMessage
		if json.Unmarshal([]byte(v), &a) == nil {
			out += fmt.Sprintf(`,"count":%d`, len(a))
		}
	}
	return out + "}"
}

// TestReduce reduces actions under policies.
func TestReduce(t *testing.T) {
	req := `{"kind":"send","request":{"model":"m","system":"be brief","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}],"max_tokens":9}}`
	tests := []struct {
		name   string
		policy eventlog.RefPolicy
		action string
		want   string
	}{
		{"no policy: compact", eventlog.RefPolicy{}, "{ \"kind\" : \"x\", \"a\" : [1, 2] }", `{"kind":"x","a":[1,2]}`},
		{"no policy: escaped as json.Marshal writes", eventlog.RefPolicy{}, `{"kind":"x","a":"<&>"}`, `{"kind":"x","a":"\u003c\u0026\u003e"}`},
		{"nested members, in order",
			eventlog.RefPolicy{Fields: map[string][]string{"send": {"request.messages", "request.system"}}}, req,
			`{"kind":"send","request":{"model":"m","system":` + ref(`"be brief"`) + `,"messages":` + ref(`[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]`) + `,"max_tokens":9}}`},
		{"a whole member", eventlog.RefPolicy{Fields: map[string][]string{"send": {"request"}}}, req,
			`{"kind":"send","request":` + ref(`{"model":"m","system":"be brief","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}],"max_tokens":9}`) + `}`},
		{"another kind is left whole", eventlog.RefPolicy{Fields: map[string][]string{"other": {"request"}}}, req, req},
		{"a missing member is skipped", eventlog.RefPolicy{Fields: map[string][]string{"send": {"request.tools", "request.model.x", "nope"}}}, req, req},
		{"an empty array", eventlog.RefPolicy{Fields: map[string][]string{"x": {"a"}}}, `{"kind":"x","a":[]}`, `{"kind":"x","a":` + ref(`[]`) + `}`},
		{"null", eventlog.RefPolicy{Fields: map[string][]string{"x": {"a"}}}, `{"kind":"x","a":null}`, `{"kind":"x","a":` + ref(`null`) + `}`},
		{"strings with quotes and braces", eventlog.RefPolicy{Fields: map[string][]string{"x": {"b"}}},
			`{"kind":"x","a":"}\",{[","b":["]\\"]}`, `{"kind":"x","a":"}\",{[","b":` + ref(`["]\\"]`) + `}`},
		{"an escaped key", eventlog.RefPolicy{Fields: map[string][]string{"x": {"a"}}}, `{"kind":"x","\u0061":[1]}`, `{"kind":"x","\u0061":` + ref(`[1]`) + `}`},
		{"over max_bytes: whole, keeping the kind", eventlog.RefPolicy{MaxBytes: 20}, `{"kind":"x","a":[1,2,3]}`,
			`{"kind":"x",` + ref(`{"kind":"x","a":[1,2,3]}`)[1:]},
		{"max_bytes after the members", eventlog.RefPolicy{Fields: map[string][]string{"x": {"a"}}, MaxBytes: 200}, `{"kind":"x","a":[1,2,3]}`,
			`{"kind":"x","a":` + ref(`[1,2,3]`) + `}`},
		{"over max_bytes without a kind", eventlog.RefPolicy{MaxBytes: 3}, `[1,2,3]`, ref(`[1,2,3]`)},
		{"a reference stays as it is", eventlog.RefPolicy{Fields: map[string][]string{"x": {"a"}}}, `{"kind":"x","a":` + ref(`[1]`) + `}`, `{"kind":"x","a":` + ref(`[1]`) + `}`},
		{"a whole reference stays as it is", eventlog.RefPolicy{MaxBytes: 20}, `{"kind":"x",` + ref(`{"kind":"x","a":[1,2,3]}`)[1:], `{"kind":"x",` + ref(`{"kind":"x","a":[1,2,3]}`)[1:]},
		{"a look-alike is not a reference", eventlog.RefPolicy{Fields: map[string][]string{"x": {"a"}}}, `{"kind":"x","a":{"$digest":"sha256:00"}}`, `{"kind":"x","a":` + ref(`{"$digest":"sha256:00"}`) + `}`},
		{"not an object", eventlog.RefPolicy{Fields: map[string][]string{"x": {"a"}}}, `"x"`, `"x"`},
		{"a kind that is not a string", eventlog.RefPolicy{Fields: map[string][]string{"1": {"a"}}}, `{"kind":1,"a":[1]}`, `{"kind":1,"a":[1]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.policy.Reduce(json.RawMessage(tt.action))
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
			assert.True(t, json.Valid(got))
		})
	}
	for _, bad := range []string{"", "{", `{"kind":"x",}`, "nope"} {
		_, err := eventlog.RefPolicy{}.Reduce(json.RawMessage(bad))
		assert.ErrorContains(t, err, "not JSON", "%q", bad)
	}
}

// TestCopyThroughWriter copies a log line by line through a Writer: the
// copy is the same, byte for byte, references and chain included.
func TestCopyThroughWriter(t *testing.T) {
	p := newLog(t, session{events: []int{1, 2, -1, 3}, refs: historyByRef}, session{start: 5, events: []int{4, 0}, refs: eventlog.RefPolicy{MaxBytes: 30}})
	cp := filepath.Join(t.TempDir(), "copy")
	w, err := eventlog.Open(cp)
	require.NoError(t, err)
	for _, line := range lines(t, p) {
		if strings.HasPrefix(line, `{"type":"session"`) {
			var h eventlog.Header
			require.NoError(t, json.Unmarshal([]byte(line), &h))
			require.NoError(t, w.WriteHeader(h))
			continue
		}
		var r eventlog.Record
		require.NoError(t, json.Unmarshal([]byte(line), &r))
		_, err := w.Append(r)
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	want, err := os.ReadFile(p)
	require.NoError(t, err)
	got, err := os.ReadFile(cp)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
	assert.Contains(t, string(got), `"$digest"`)
}

// TestByReferenceGrowsLinearly writes an adder whose history grows with
// every event: recorded whole, each line is longer than the one before;
// by reference, the lines stay the same length.
func TestByReferenceGrowsLinearly(t *testing.T) {
	events := make([]int, 400)
	for i := range events {
		events[i] = 1000 + i // four digits, so every total is odd or even in turn and history grows 5 bytes an event
	}
	lineLen := func(refs eventlog.RefPolicy) (first, last int) {
		l := lines(t, newLog(t, session{events: events, refs: refs}))
		return len(l[10]), len(l[len(l)-1])
	}
	first, last := lineLen(eventlog.RefPolicy{})
	assert.Greater(t, last, first+1500, "whole, the history grows")
	first, last = lineLen(historyByRef)
	assert.Less(t, last, first+first/10, "by reference, the lines stay the same length but for the digits of the numbers")
}

// TestReplayFindsTheFirstDifference replays logs that recorded other
// actions or rejections than the machine performs (written by an older
// program, say: they chain).
func TestReplayFindsTheFirstDifference(t *testing.T) {
	set := func(at int, f func(*eventlog.Record)) func(int, *eventlog.Record) {
		return func(i int, r *eventlog.Record) {
			if i == at {
				f(r)
			}
		}
	}
	tests := []struct {
		name   string
		refs   eventlog.RefPolicy
		lie    func(int, *eventlog.Record)
		want   eventlog.Diff
		events int
		text   string
	}{
		{
			name: "another total", lie: set(2, func(r *eventlog.Record) {
				r.Actions[0] = json.RawMessage(`{"kind":"total","total":4,"history":[1,2]}`)
			}),
			want:   eventlog.Diff{Line: 3, Seq: 2, What: "action", Action: 1, Kind: "total", Path: "total", Want: "4", Got: "3"},
			events: 1, text: "event 2 (line 3) add: action differs: action 1 (total) at total\n  expected: 4\n  got:      3",
		},
		{
			name: "another history, by reference", refs: historyByRef, lie: set(2, func(r *eventlog.Record) {
				r.Actions[0] = json.RawMessage(`{"kind":"total","total":3,"history":[1,2,7]}`)
			}),
			want: eventlog.Diff{Line: 3, Seq: 2, What: "action", Action: 1, Kind: "total", Path: "history",
				Want: describeRef(`[1,2,7]`), Got: describeRef(`[1,2]`)},
			events: 1, text: "at history\n  expected: 3 elements, 7 bytes, sha256 ",
		},
		{
			name: "an element of an array", lie: set(4, func(r *eventlog.Record) {
				r.Actions[0] = json.RawMessage(`{"kind":"total","total":6,"history":[1,2,4]}`)
			}),
			want:   eventlog.Diff{Line: 5, Seq: 4, What: "action", Action: 1, Kind: "total", Path: "history[2]", Want: "4", Got: "3"},
			events: 3,
		},
		{
			name: "a member more", lie: set(1, func(r *eventlog.Record) {
				r.Actions[0] = json.RawMessage(`{"kind":"total","total":1,"history":[1],"extra":true}`)
			}),
			want:   eventlog.Diff{Line: 2, Seq: 1, What: "action", Action: 1, Kind: "total", Path: "extra", Want: "true", Got: "(absent)"},
			events: 0,
		},
		{
			name: "a removed action", lie: set(4, func(r *eventlog.Record) { r.Actions = r.Actions[:1] }),
			want: eventlog.Diff{Line: 5, Seq: 4, What: "action",
				Want: `[{"kind":"total","total":6,"history":[1,2,3]}]`, Got: `[{"kind":"total","total":6,"history":[1,2,3]},{"kind":"even"}]`},
			events: 3,
		},
		{
			name: "swapped actions", lie: set(4, func(r *eventlog.Record) { r.Actions[0], r.Actions[1] = r.Actions[1], r.Actions[0] }),
			want:   eventlog.Diff{Line: 5, Seq: 4, What: "action", Action: 1, Kind: "even", Want: `{"kind":"even"}`, Got: `{"kind":"total","total":6,"history":[1,2,3]}`},
			events: 3,
		},
		{
			name: "a rejection that was not", lie: set(3, func(r *eventlog.Record) { r.Rejected = false }),
			want:   eventlog.Diff{Line: 4, Seq: 3, What: "rejection", Want: "rejected=false", Got: "rejected=true"},
			events: 2, text: "event 3 (line 4) add: rejection differs\n  expected: rejected=false\n  got:      rejected=true",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newLog(t, session{events: []int{1, 2, -1, 3}, refs: tt.refs, lie: tt.lie})
			rep, err := replayFile(t, p)
			require.NoError(t, err)
			require.NotNil(t, rep.Diff)
			d := *rep.Diff
			d.Event = nil
			assert.Equal(t, tt.want, d)
			assert.Equal(t, tt.events, rep.Events)
			assert.Contains(t, rep.Diff.String(), tt.text)

			_, err = verifyFile(t, p)
			assert.NoError(t, err, "the log chains: it was written as it is")
		})
	}
}

// describeRef is how a Diff shows the reference for the JSON v.
func describeRef(v string) string {
	sum := sha256.Sum256([]byte(v))
	d := hex.EncodeToString(sum[:])
	return fmt.Sprintf("%d elements, %d bytes, sha256 %s…", strings.Count(v, ",")+1, len(v), d[:12])
}
