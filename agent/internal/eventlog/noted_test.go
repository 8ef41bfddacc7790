package eventlog_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/eventlog"
)

// chainAt returns the chain value of line n (from 1) of the log at p.
func chainAt(t *testing.T, p string, n int) string {
	t.Helper()
	l := lines(t, p)[n-1]
	i := strings.LastIndex(l, `,"chain":"`)
	require.Positive(t, i)
	return l[i+len(`,"chain":"`) : len(l)-2]
}

// rechain computes the chain of lines again, as a forger who knows the
// format would after editing them.
func rechain(t *testing.T, ls []string) []string {
	t.Helper()
	prev := ""
	out := make([]string, len(ls))
	for i, l := range ls {
		j := strings.LastIndex(l, `,"chain":"`)
		require.Positive(t, j)
		body := l[:j] + "}"
		sum := sha256.Sum256([]byte(prev + "\n" + body))
		prev = hex.EncodeToString(sum[:])
		out[i] = l[:j] + `,"chain":"` + prev + `"}`
	}
	return out
}

// TestNotedChain checks a log against a chain value noted while it was
// written: a log cut after a whole line, or rewritten with its chain
// computed again, passes Verify and Replay but not VerifyAgainst and
// ReplayAgainst.
func TestNotedChain(t *testing.T) {
	// Lines: 1 header, 2-4 events 1-3, 5 header, 6-7 events 4-5.
	base := func(t *testing.T) string {
		return newLog(t, session{events: []int{1, 2, 3}, refs: historyByRef}, session{start: 6, events: []int{4, 5}})
	}
	tests := []struct {
		name string
		// noted is the line whose chain value is noted, before change
		// changes the log.
		noted  int
		change func(t *testing.T, p string)
		// wantNoted is the line that has the noted value; 0 when none
		// has, and the check fails.
		wantNoted int
	}{
		{"the whole log, noted at its end", 7, func(*testing.T, string) {}, 7},
		{"lines written after the value was noted", 4, func(*testing.T, string) {}, 4},
		{"the log cut after a whole line (head -n 5)", 7, func(t *testing.T, p string) {
			require.NoError(t, os.WriteFile(p, []byte(strings.Join(lines(t, p)[:5], "\n")+"\n"), 0o600))
		}, 0},
		{"the log cut after the noted line", 4, func(t *testing.T, p string) {
			require.NoError(t, os.WriteFile(p, []byte(strings.Join(lines(t, p)[:5], "\n")+"\n"), 0o600))
		}, 4},
		{"the last session replaced by another, appended properly", 7, func(t *testing.T, p string) {
			require.NoError(t, os.WriteFile(p, []byte(strings.Join(lines(t, p)[:4], "\n")+"\n"), 0o600))
			writeLog(t, p, session{start: 6, events: []int{4, 5}, lie: func(i int, rec *eventlog.Record) { rec.Error = "forged" }})
		}, 0},
		{"an event edited and the chain computed again", 7, func(t *testing.T, p string) {
			l := lines(t, p)
			// Replay does not compare a record's error text: the forged
			// log replays.
			forged := strings.Replace(l[2], `"rejected":false`, `"rejected":false,"error":"forged"`, 1)
			require.NotEqual(t, l[2], forged)
			l[2] = forged
			require.NoError(t, os.WriteFile(p, []byte(strings.Join(rechain(t, l), "\n")+"\n"), 0o600))
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := base(t)
			noted := chainAt(t, p, tt.noted)
			tt.change(t, p)

			_, err := verifyFile(t, p)
			require.NoError(t, err, "the chain alone does not tell")
			rep, err := replayFile(t, p)
			require.NoError(t, err)
			require.Nil(t, rep.Diff, "the chain alone does not tell: %v", rep.Diff)

			f, err := os.Open(p)
			require.NoError(t, err)
			defer f.Close()
			sum, err := eventlog.VerifyAgainst(f, noted)
			_, _ = f.Seek(0, 0)
			rep, rerr := eventlog.ReplayAgainst(f, startAdder, noted)
			require.NoError(t, rerr)
			if tt.wantNoted != 0 {
				require.NoError(t, err)
				assert.Equal(t, tt.wantNoted, sum.Noted)
				assert.Nil(t, rep.Diff)
				assert.Equal(t, tt.wantNoted, rep.Noted)
				return
			}
			require.ErrorIs(t, err, eventlog.ErrNotedChain)
			assert.Contains(t, err.Error(), "no line of the log has the chain value noted for it ("+noted[:12]+"…); lines were removed from its end, or rewritten, since the value was noted")
			assert.Zero(t, sum.Noted)
			require.NotNil(t, rep.Diff)
			assert.Equal(t, "end", rep.Diff.What)
			assert.Equal(t, sum.Lines, rep.Diff.Line)
			assert.Contains(t, rep.Diff.String(), "the log has no line with the chain value noted for it")
			assert.Contains(t, rep.Diff.String(), "noted:     chain value "+noted[:12]+"…")
		})
	}
}

// TestNotedChainIsChecked gives VerifyAgainst and ReplayAgainst values
// that are no chain values, and an edited line before the noted one.
func TestNotedChainIsChecked(t *testing.T) {
	p := newLog(t, session{events: []int{1, 2}})
	for _, bad := range []string{"abc", strings.Repeat("A", 64), strings.Repeat("0", 65)} {
		_, err := eventlog.VerifyAgainst(strings.NewReader(""), bad)
		require.ErrorContains(t, err, "is not one (64 hex digits)")
		_, err = eventlog.ReplayAgainst(strings.NewReader(""), startAdder, bad)
		require.ErrorContains(t, err, "is not one (64 hex digits)")
	}

	noted := chainAt(t, p, 3)
	l := lines(t, p)
	l[1] = strings.Replace(l[1], `"n":1}`, `"n":3}`, 1)
	require.NoError(t, os.WriteFile(p, []byte(strings.Join(l, "\n")+"\n"), 0o600))
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	_, err = eventlog.VerifyAgainst(f, noted)
	var le *eventlog.LineError
	require.ErrorAs(t, err, &le, "the first line that does not chain is told first")
	assert.Equal(t, 2, le.Line)
}
