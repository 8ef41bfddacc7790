package eventlog_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/runtime/eventlog"
)

// adder is a toy machine for replay: events are {"kind":"add","n":N}; the
// action is the running total, starting from the header's state, and a
// second action, "even", follows it when the total is even; a negative N
// is rejected and zero is ignored (no action).
func adder(h eventlog.Header) (eventlog.Step, error) {
	var total int
	if err := json.Unmarshal(h.State, &total); err != nil {
		return nil, err
	}
	return func(raw json.RawMessage) ([]json.RawMessage, bool, error) {
		var ev struct {
			N int `json:"n"`
		}
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, false, err
		}
		switch {
		case ev.N < 0:
			return nil, true, nil
		case ev.N == 0:
			return nil, false, nil
		}
		total += ev.N
		return adderActions(total), false, nil
	}, nil
}

// adderActions returns the actions adder performs when the total becomes total.
func adderActions(total int) []json.RawMessage {
	acts := []json.RawMessage{json.RawMessage(strconv.Itoa(total))}
	if total%2 == 0 {
		acts = append(acts, json.RawMessage(`"even"`))
	}
	return acts
}

// writeLog writes sessions of (start, events) to a new log and returns its path.
func writeLog(t *testing.T, sessions ...[]int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.events.jsonl")
	for _, s := range sessions {
		w, err := eventlog.Open(p)
		require.NoError(t, err)
		require.NoError(t, w.WriteHeader(eventlog.Header{Machine: "adder", Config: json.RawMessage(`{}`), State: json.RawMessage(strconv.Itoa(s[0]))}))
		total := s[0]
		for _, n := range s[1:] {
			rec := eventlog.Record{Event: json.RawMessage(`{"kind":"add","n":` + strconv.Itoa(n) + `}`)}
			switch {
			case n < 0:
				rec.Rejected = true
			case n > 0:
				total += n
				rec.Actions = adderActions(total)
			}
			_, err := w.Append(rec)
			require.NoError(t, err)
		}
		require.NoError(t, w.Close())
	}
	return p
}

func replayFile(t *testing.T, p string) (eventlog.Report, error) {
	t.Helper()
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	return eventlog.Replay(f, adder)
}

// TestReplayExact replays a log of two sessions.
func TestReplayExact(t *testing.T) {
	p := writeLog(t, []int{0, 1, 2, -1, 0, 3}, []int{100, 5})
	rep, err := replayFile(t, p)
	require.NoError(t, err)
	assert.Equal(t, eventlog.Report{Sessions: 2, Events: 6}, rep)

	b, err := os.ReadFile(p)
	require.NoError(t, err)
	var seqs []int64
	var actions []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r eventlog.Record
		require.NoError(t, json.Unmarshal([]byte(line), &r))
		if r.Type == eventlog.TypeEvent {
			seqs = append(seqs, r.Seq)
			a, err := json.Marshal(r.Actions)
			require.NoError(t, err)
			actions = append(actions, string(a))
		}
	}
	assert.Equal(t, []int64{1, 2, 3, 4, 5, 6}, seqs, "numbering continues across sessions")
	assert.Equal(t, []string{`[1]`, `[3]`, `[]`, `[]`, `[6,"even"]`, `[105]`}, actions, "every action of an event, in order; none for a rejected or ignored event")
}

// TestReplayFindsTheFirstDifference edits one record of a log in each way.
func TestReplayFindsTheFirstDifference(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		want     eventlog.Diff
		events   int
	}{
		{
			name: "an edited event", old: `"n":2}`, new: `"n":8}`,
			want:   eventlog.Diff{Line: 3, Seq: 2, What: "action", Want: "[3]", Got: "[9]"},
			events: 1,
		},
		{
			name: "an edited action", old: `"actions":[6,`, new: `"actions":[60,`,
			want:   eventlog.Diff{Line: 5, Seq: 4, What: "action", Want: `[60,"even"]`, Got: `[6,"even"]`},
			events: 3,
		},
		{
			name: "a removed action", old: `"actions":[6,"even"]`, new: `"actions":[6]`,
			want:   eventlog.Diff{Line: 5, Seq: 4, What: "action", Want: `[6]`, Got: `[6,"even"]`},
			events: 3,
		},
		{
			name: "swapped actions", old: `"actions":[6,"even"]`, new: `"actions":["even",6]`,
			want:   eventlog.Diff{Line: 5, Seq: 4, What: "action", Want: `["even",6]`, Got: `[6,"even"]`},
			events: 3,
		},
		{
			name: "an edit the machine does not notice", old: `"n":-1}`, new: `"n":-5}`,
			want:   eventlog.Diff{Line: 4, Seq: 3, What: "record"},
			events: 2,
		},
		{
			name: "a removed line", old: `{"type":"event","seq":3,`, new: `{"type":"removed","seq":3,`,
			want:   eventlog.Diff{Line: 4, Seq: 4, What: "record", Want: "event number 3", Got: "event number 4 (lines were removed, added or moved)"},
			events: 2,
		},
		{
			name: "a rejection that was not", old: `"n":-1}`, new: `"n":1}`,
			want:   eventlog.Diff{Line: 4, Seq: 3, What: "rejection", Want: "rejected=true", Got: "rejected=false"},
			events: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeLog(t, []int{0, 1, 2, -1, 3})
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			require.Contains(t, string(b), tt.old)
			edited := strings.Replace(string(b), tt.old, tt.new, 1)
			if strings.Contains(tt.new, "removed") { // drop that whole line
				var keep []string
				for _, l := range strings.Split(edited, "\n") {
					if !strings.Contains(l, `"type":"removed"`) {
						keep = append(keep, l)
					}
				}
				edited = strings.Join(keep, "\n")
			}
			require.NoError(t, os.WriteFile(p, []byte(edited), 0o600))
			rep, err := replayFile(t, p)
			require.NoError(t, err)
			require.NotNil(t, rep.Diff)
			d := *rep.Diff
			d.Event = nil
			if tt.want.What == "record" && tt.want.Want == "" {
				assert.Contains(t, d.Got, "edited after it was written")
				d.Want, d.Got = "", ""
			}
			assert.Equal(t, tt.want, d)
			assert.Equal(t, tt.events, rep.Events)
			assert.Contains(t, rep.Diff.String(), "expected: "+tt.want.Want)
		})
	}
}

// TestReplayDamagedLogs replays logs that are not logs.
func TestReplayDamagedLogs(t *testing.T) {
	header := `{"type":"session","format":"fsmgen-eventlog/2","machine":"adder","config":{},"state":0}`
	tests := []struct {
		name, log, want string
	}{
		{"empty", "", "no session"},
		{"not JSON", "hello\n", "not a JSON line"},
		{"event before header", `{"type":"event","seq":1,"event":{"n":1},"actions":[1],"rejected":false}` + "\n", "before any session header"},
		{"format 1", `{"type":"session","format":"fsmgen-eventlog/1"}` + "\n", `log format "fsmgen-eventlog/1", want "fsmgen-eventlog/2"`},
		{"other format", `{"type":"session","format":"other/9"}` + "\n", `log format "other/9"`},
		{"unknown line", header + "\n" + `{"type":"weird"}` + "\n", `unknown line type "weird"`},
		{"bad event", header + "\n" + `{"type":"event","seq":1,"event":"x","actions":[],"rejected":false}` + "\n", "event 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := eventlog.Replay(strings.NewReader(tt.log), adder)
			require.ErrorContains(t, err, tt.want)
		})
	}
	_, err := eventlog.Replay(strings.NewReader(header+"\n"), func(eventlog.Header) (eventlog.Step, error) {
		return nil, errors.New("no such machine")
	})
	require.ErrorContains(t, err, "no such machine")
}

// TestOpenDropsAPartialLastLine reopens a log cut short by a crash.
func TestOpenDropsAPartialLastLine(t *testing.T) {
	p := writeLog(t, []int{0, 1, 2})
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"type":"event","seq":3,"event":{"n":`) // killed mid-write
	require.NoError(t, err)
	require.NoError(t, f.Close())

	w, err := eventlog.Open(p)
	require.NoError(t, err)
	seq, err := w.Append(eventlog.Record{Event: json.RawMessage(`{"n":4}`), Actions: []json.RawMessage{json.RawMessage(`7`)}})
	require.NoError(t, err)
	assert.Equal(t, int64(3), seq)
	require.NoError(t, w.Close())

	rep, err := replayFile(t, p)
	require.NoError(t, err)
	assert.Nil(t, rep.Diff)
	assert.Equal(t, 3, rep.Events)
}

// TestOpenError opens a log in a missing directory.
func TestOpenError(t *testing.T) {
	_, err := eventlog.Open(filepath.Join(t.TempDir(), "missing", "dir", "log"))
	require.ErrorContains(t, err, "-log")
}
