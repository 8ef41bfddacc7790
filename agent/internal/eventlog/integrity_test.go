package eventlog_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/eventlog"
)

// TestTampering edits a log after it was written, in every way: Replay
// and Verify report the first line that does not chain.
func TestTampering(t *testing.T) {
	// Lines: 1 header, 2-5 events 1-4, 6 header, 7-8 events 5-6, 9
	// header, 10 event 7.
	base := func(t *testing.T) string {
		return newLog(t, session{events: []int{1, 2, -1, 3}, refs: historyByRef}, session{start: 100, events: []int{5, 6}, refs: historyByRef},
			session{start: 7, events: []int{4}})
	}
	tests := []struct {
		name string
		edit func(l []string) []string
		line int
		seq  int64
	}{
		{"an edited event", func(l []string) []string { l[2] = strings.Replace(l[2], `"n":2}`, `"n":8}`, 1); return l }, 3, 2},
		{"an edited event the machine rejects all the same", func(l []string) []string { l[3] = strings.Replace(l[3], `"n":-1}`, `"n":-5}`, 1); return l }, 4, 3},
		{"an edited action", func(l []string) []string { l[4] = strings.Replace(l[4], `"total":6`, `"total":60`, 1); return l }, 5, 4},
		{"an edited header", func(l []string) []string { l[0] = strings.Replace(l[0], `"state":0`, `"state":1`, 1); return l }, 1, 0},
		{"an edited chain value", func(l []string) []string { l[1] = l[1][:len(l[1])-3] + `0"}`; return l }, 2, 1},
		{"a chain value removed", func(l []string) []string { l[1] = l[1][:strings.LastIndex(l[1], `,"chain"`)] + "}"; return l }, 2, 1},
		{"a removed line", func(l []string) []string { return append(l[:2], l[3:]...) }, 3, 3},
		{"a removed session", func(l []string) []string { return append(l[:5], l[8:]...) }, 6, 0},
		{"a line added", func(l []string) []string { return append(l[:3], append([]string{l[2]}, l[3:]...)...) }, 4, 2},
		{"a blank line added", func(l []string) []string { return append(l[:3], append([]string{""}, l[3:]...)...) }, 4, 0},
		{"swapped lines", func(l []string) []string { l[2], l[3] = l[3], l[2]; return l }, 3, 3},
		{"the first line removed", func(l []string) []string { return l[1:] }, 1, 0},
		{"a line edited after a line cut short", func(l []string) []string {
			l[6] = strings.Replace(l[6], `"n":5}`, `"n":7}`, 1)
			return l[:7]
		}, 7, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := base(t)
			edited := strings.Join(tt.edit(lines(t, p)), "\n") + "\n"
			require.NoError(t, os.WriteFile(p, []byte(edited), 0o600))

			if tt.name == "the first line removed" {
				_, err := replayFile(t, p)
				require.ErrorIs(t, err, eventlog.ErrNotEventLog)
				_, err = verifyFile(t, p)
				require.ErrorIs(t, err, eventlog.ErrNotEventLog)
				return
			}
			rep, err := replayFile(t, p)
			require.NoError(t, err)
			require.NotNil(t, rep.Diff)
			assert.Equal(t, "chain", rep.Diff.What)
			assert.Equal(t, tt.line, rep.Diff.Line)
			assert.Equal(t, tt.seq, rep.Diff.Seq)
			assert.Contains(t, rep.Diff.String(), "the line does not chain")

			_, err = verifyFile(t, p)
			var le *eventlog.LineError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, tt.line, le.Line)
			assert.True(t, le.Chain)
			assert.Contains(t, err.Error(), fmt.Sprintf("line %d does not chain", tt.line))

			before, err := os.ReadFile(p)
			require.NoError(t, err)
			_, err = eventlog.Open(p)
			require.ErrorAs(t, err, &le)
			assert.Contains(t, err.Error(), "give -log a new file")
			after, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.Equal(t, before, after, "Open leaves a tampered log as it is")
		})
	}
}

// TestEveryByteIsCovered changes each byte of a small log in turn: Verify
// reports every change, but for the last newline, whose loss makes the
// last line one cut short.
func TestEveryByteIsCovered(t *testing.T) {
	p := newLog(t, session{events: []int{1, 2, -1}, refs: historyByRef}, session{start: 7, events: []int{4}})
	orig, err := os.ReadFile(p)
	require.NoError(t, err)
	for i := range orig {
		b := bytes.Clone(orig)
		b[i] ^= 0x01
		if b[i] == '\n' {
			b[i] ^= 0x03 // not another newline
		}
		sum, err := eventlog.Verify(bytes.NewReader(b))
		if i == len(orig)-1 {
			require.NoError(t, err)
			assert.Equal(t, 6, sum.Torn, "the last line lost its newline")
			continue
		}
		require.Error(t, err, "byte %d (%q) changed", i, orig[i])
	}
}

// TestTornLastLine reads and reopens a log cut short by a crash.
func TestTornLastLine(t *testing.T) {
	tests := []struct {
		name string
		torn string
	}{
		{"a partial event", `{"type":"event","seq":4,"event":{"n":`},
		{"a whole line but its newline", "COMPLETE"},
		{"one byte", "{"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newLog(t, session{events: []int{1, 2, 3}, refs: historyByRef})
			good, err := os.ReadFile(p)
			require.NoError(t, err)
			torn := tt.torn
			if torn == "COMPLETE" { // the next line, as the writer would have written it
				writeLog(t, p, session{start: 6, events: []int{2}})
				all, err := os.ReadFile(p)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(p, good, 0o600))
				torn = strings.TrimSuffix(string(all[len(good):]), "\n")
				torn = torn[:strings.IndexByte(torn, '\n')]
			}
			require.NoError(t, os.WriteFile(p, append(bytes.Clone(good), torn...), 0o600))

			rep, err := replayFile(t, p)
			require.NoError(t, err)
			assert.Equal(t, eventlog.Report{Sessions: 1, Events: 3, Torn: 5}, rep)
			sum, err := verifyFile(t, p)
			require.NoError(t, err)
			assert.Equal(t, 5, sum.Torn)
			assert.Equal(t, 4, sum.Lines)

			w, err := eventlog.Open(p)
			require.NoError(t, err)
			assert.Equal(t, eventlog.Repair{Line: 5, Bytes: len(torn)}, w.Repaired())
			require.NoError(t, w.WriteHeader(eventlog.Header{Machine: "adder", Config: json.RawMessage(`{}`), State: json.RawMessage(`10`)}))
			seq, err := w.Append(eventlog.Record{Event: json.RawMessage(`{"kind":"add","n":4}`), Actions: []json.RawMessage{json.RawMessage(`{"kind":"total","total":14,"history":[4]}`), json.RawMessage(`{"kind":"even"}`)}})
			require.NoError(t, err)
			assert.Equal(t, int64(4), seq, "numbering goes on")
			require.NoError(t, w.Close())

			rep, err = replayFile(t, p)
			require.NoError(t, err)
			assert.Equal(t, eventlog.Report{Sessions: 2, Events: 4}, rep)
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.True(t, bytes.HasPrefix(b, good), "the lines before the cut one are kept as they were")
		})
	}
}
