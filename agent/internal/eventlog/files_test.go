package eventlog_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/eventlog"
)

// TestOpenRefusesOtherFiles opens files that are not event logs of this
// format: each is refused and left byte for byte as it was.
func TestOpenRefusesOtherFiles(t *testing.T) {
	v2 := `{"type":"session","format":"fsmgen-eventlog/2","machine":"agent","config":{},"state":null}` + "\n" +
		`{"type":"event","seq":1,"event":{"kind":"x"},"actions":[],"rejected":false,"sum":"abc"}` + "\n"
	tests := []struct {
		name, content string
		is            error
		want          string
	}{
		{"text", "my notes\nthat matter\n", eventlog.ErrNotEventLog, "is not an fsmgen event log; give -log a new file or an existing event log"},
		{"text with a partial last line", "my notes\nthat matter", eventlog.ErrNotEventLog, "is not an fsmgen event log"},
		{"one partial line", "my notes", eventlog.ErrNotEventLog, "is not an fsmgen event log"},
		{"a brace", "{", eventlog.ErrNotEventLog, "is not an fsmgen event log"},
		{"another JSON-lines file", `{"type":"event","seq":1}` + "\n", eventlog.ErrNotEventLog, "is not an fsmgen event log"},
		{"binary", "\x00\x01\x02\n\xff", eventlog.ErrNotEventLog, "is not an fsmgen event log"},
		{"a log of format 2", v2, eventlog.ErrFormat, `is an event log of another format ("fsmgen-eventlog/2", not "fsmgen-eventlog/3"); another version of the program wrote it: give -log a new file`},
		{"a log of format 2, cut short", v2[:len(v2)-20], eventlog.ErrFormat, "is an event log of another format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "file")
			require.NoError(t, os.WriteFile(p, []byte(tt.content), 0o644))
			_, err := eventlog.Open(p)
			require.ErrorIs(t, err, tt.is)
			assert.Equal(t, p+" "+tt.want, err.Error()[:min(len(err.Error()), len(p)+1+len(tt.want))])
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.Equal(t, tt.content, string(b), "the file is left as it was")
			fi, err := os.Stat(p)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())

			_, err = eventlog.Replay(strings.NewReader(tt.content), startAdder)
			assert.ErrorIs(t, err, tt.is)
			_, err = eventlog.Verify(strings.NewReader(tt.content))
			assert.ErrorIs(t, err, tt.is)
		})
	}
}

// TestOpenEmptyAndNew opens an empty file and a missing one: both become
// logs.
func TestOpenEmptyAndNew(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	for _, p := range []string{empty, filepath.Join(dir, "new")} {
		writeLog(t, p, session{events: []int{2}})
		rep, err := replayFile(t, p)
		require.NoError(t, err)
		assert.Equal(t, eventlog.Report{Sessions: 1, Events: 1}, rep)
	}
	fi, err := os.Stat(filepath.Join(dir, "new"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

// TestWriterChain checks that Writer.Chain is the last line's chain value
// and Verify's Summary.Chain.
func TestWriterChain(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	w, err := eventlog.Open(p)
	require.NoError(t, err)
	assert.Empty(t, w.Chain())
	require.NoError(t, w.WriteHeader(eventlog.Header{Machine: "adder", Config: json.RawMessage(`{}`), State: json.RawMessage(`0`)}))
	afterHeader := w.Chain()
	_, err = w.Append(eventlog.Record{Event: json.RawMessage(`{"kind":"add","n":0}`)})
	require.NoError(t, err)
	last := w.Chain()
	require.NoError(t, w.Close())
	assert.NotEqual(t, afterHeader, last)
	sum, err := verifyFile(t, p)
	require.NoError(t, err)
	assert.Equal(t, last, sum.Chain)

	w, err = eventlog.Open(p)
	require.NoError(t, err)
	assert.Equal(t, last, w.Chain(), "a reopened log goes on from its last line")
	require.NoError(t, w.Close())

	l := lines(t, p)
	require.NoError(t, os.WriteFile(p, []byte(l[0]+"\n"), 0o600))
	sum, err = verifyFile(t, p)
	require.NoError(t, err, "a log cut after a whole line chains")
	assert.Equal(t, afterHeader, sum.Chain, "but its last chain value is not the one noted")
}

// TestWriterErrors misuses a Writer.
func TestWriterErrors(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	w, err := eventlog.Open(p)
	require.NoError(t, err)
	_, err = w.Append(eventlog.Record{Event: json.RawMessage(`{}`)})
	require.ErrorContains(t, err, "before the session header")

	err = w.WriteHeader(eventlog.Header{Machine: "adder", Refs: eventlog.RefPolicy{Fields: map[string][]string{"x": {"a..b"}}}})
	require.ErrorContains(t, err, `path "a..b" has an empty member name`)
	err = w.WriteHeader(eventlog.Header{Machine: "adder", Refs: eventlog.RefPolicy{MaxBytes: -1}})
	require.ErrorContains(t, err, "max_bytes is -1")

	require.NoError(t, w.WriteHeader(eventlog.Header{Machine: "adder", Config: json.RawMessage(`{}`), State: json.RawMessage(`0`)}))
	_, err = w.Append(eventlog.Record{Event: json.RawMessage(`{}`), Actions: []json.RawMessage{json.RawMessage(`{"kind":`)}})
	require.ErrorContains(t, err, "event 1: action 1: not JSON")
	_, err = w.Append(eventlog.Record{Event: json.RawMessage(`{"kind":"add","n":0}`)})
	require.NoError(t, err)
	require.NoError(t, w.Close())

	rep, err := replayFile(t, p)
	require.NoError(t, err)
	assert.Equal(t, eventlog.Report{Sessions: 1, Events: 1}, rep, "a refused record leaves nothing behind")
}

// TestReplayErrors replays logs the machine cannot take.
func TestReplayErrors(t *testing.T) {
	tests := []struct {
		name   string
		events []string
		start  eventlog.Start
		want   string
	}{
		{"an event the machine cannot decode", []string{`"x"`}, startAdder, "line 2 (event 1): json: cannot unmarshal"},
		{"an event the machine does not know", []string{`{"kind":"sub"}`}, startAdder, "line 2 (event 1): an add event without n"},
		{"a machine that cannot start", nil, func(eventlog.Header) (eventlog.Step, error) { return nil, errors.New("no such machine") }, "line 1: start the machine: no such machine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "log")
			w, err := eventlog.Open(p)
			require.NoError(t, err)
			require.NoError(t, w.WriteHeader(eventlog.Header{Machine: "adder", Config: json.RawMessage(`{}`), State: json.RawMessage(`0`)}))
			for _, ev := range tt.events {
				_, err := w.Append(eventlog.Record{Event: json.RawMessage(ev)})
				require.NoError(t, err)
			}
			require.NoError(t, w.Close())
			f, err := os.Open(p)
			require.NoError(t, err)
			defer f.Close()
			_, err = eventlog.Replay(f, tt.start)
			require.ErrorContains(t, err, tt.want)
		})
	}
	_, err := eventlog.Replay(strings.NewReader(""), startAdder)
	require.ErrorIs(t, err, eventlog.ErrNotEventLog)
	_, err = eventlog.Replay(strings.NewReader(`{"type":"session","format":"fsmgen-eventlog/3","machine":"x"`), startAdder)
	require.ErrorContains(t, err, "only line was cut short")
}

// TestOpenError opens a log in a missing directory.
func TestOpenError(t *testing.T) {
	_, err := eventlog.Open(filepath.Join(t.TempDir(), "missing", "dir", "log"))
	require.ErrorContains(t, err, "-log")
	_, err = eventlog.Open(t.TempDir())
	require.ErrorContains(t, err, "-log")
}
