package eventlog

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sealed chains the given lines (JSON objects without their chain
// member) into a log, as a writer that does not check what it writes
// would.
func sealed(lines ...string) string {
	var b strings.Builder
	prev := ""
	for _, l := range lines {
		line, chain := seal(prev, []byte(l))
		b.Write(line)
		prev = chain
	}
	return b.String()
}

// header is the body of a session header line of this format.
const header = `{"type":"session","format":"` + Format + `","machine":"m","config":{},"state":0}`

// nothing is a machine that performs no action.
func nothing(Header) (Step, error) {
	return func(json.RawMessage) ([]json.RawMessage, bool, error) { return nil, false, nil }, nil
}

// TestLinesOutOfOrder reads logs whose lines chain but are not in order:
// only a writer other than this package's can write them.
func TestLinesOutOfOrder(t *testing.T) {
	event := func(seq string) string {
		return `{"type":"event","seq":` + seq + `,"event":{"kind":"x"},"actions":[],"rejected":false}`
	}
	tests := []struct {
		name  string
		lines []string
		line  int
		want  string
	}{
		{"an event numbered out of turn", []string{header, event("1"), event("3")}, 3, "line 3 is event number 3 where 2 should come"},
		{"numbering that starts again", []string{header, event("1"), header, event("1")}, 4, "line 4 is event number 1 where 2 should come"},
		{"a line of an unknown type", []string{header, `{"type":"note"}`}, 2, `line 2 has the unknown line type "note"`},
		{"a session of another format", []string{header, `{"type":"session","format":"fsmgen-eventlog/2"}`}, 2, `line 2 starts a session of format "fsmgen-eventlog/2"`},
		{"a line that is not an object", []string{header, `{"type":["x"]}`}, 2, "line 2 is not a line of this format: json: cannot unmarshal array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := sealed(tt.lines...)
			_, err := Verify(strings.NewReader(log))
			var le *LineError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, tt.line, le.Line)
			assert.False(t, le.Chain)
			assert.ErrorContains(t, err, tt.want)

			rep, err := Replay(strings.NewReader(log), nothing)
			require.NoError(t, err)
			require.NotNil(t, rep.Diff)
			assert.Equal(t, "record", rep.Diff.What)
			assert.Equal(t, tt.line, rep.Diff.Line)
			assert.Contains(t, rep.Diff.String(), strings.TrimPrefix(tt.want, "line "+string(rune('0'+tt.line))+" "))

			p := filepath.Join(t.TempDir(), "log")
			require.NoError(t, os.WriteFile(p, []byte(log), 0o600))
			_, err = Open(p)
			require.ErrorAs(t, err, &le)
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			assert.Equal(t, log, string(b))
		})
	}
}

// TestSealUnseal checks that a sealed line unseals to its body, and that
// lines that do not end with a chain value are told apart.
func TestSealUnseal(t *testing.T) {
	line, chain := seal("prev", []byte(`{"a":1}`))
	assert.Equal(t, `{"a":1,"chain":"`+chain+`"}`+"\n", string(line))
	head, got, ok := unseal(line[:len(line)-1])
	require.True(t, ok)
	assert.Equal(t, chain, got)
	assert.Equal(t, chain, chainOf("prev", head, []byte("}")))
	for _, bad := range []string{
		"", "{}", `{"chain":"` + chain + `"}`, `{"a":1,"chain":"` + strings.ToUpper(chain) + `"}`,
		`{"a":1,"chain":"` + chain[:63] + `"}`, `{"a":1,"chain":"` + chain + `" }`, `["a",1,"chain":"` + chain + `"}`,
	} {
		_, _, ok := unseal([]byte(bad))
		assert.False(t, ok, "%q", bad)
	}
}

// TestWriteFailureStopsTheWriter closes the file under a Writer: the
// failed write is reported, and so is every later one, since the chain
// could no longer be trusted.
func TestWriteFailureStopsTheWriter(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	w, err := Open(p)
	require.NoError(t, err)
	defer w.Close() // releases the lock, whose file is closed under it
	require.NoError(t, w.WriteHeader(Header{Machine: "m", Config: json.RawMessage(`{}`), State: json.RawMessage(`0`)}))
	require.NoError(t, w.f.Close())
	_, err = w.Append(Record{Event: json.RawMessage(`{"kind":"x"}`)})
	require.ErrorContains(t, err, "check the disk")
	_, err = w.Append(Record{Event: json.RawMessage(`{"kind":"x"}`)})
	require.ErrorContains(t, err, "an earlier write failed")
	require.Error(t, w.WriteHeader(Header{Machine: "m"}))
	sum, err := Verify(bytes.NewReader(must(os.ReadFile(p))))
	require.NoError(t, err)
	assert.Equal(t, Summary{Lines: 1, Sessions: 1, Chain: sum.Chain}, sum)
}

// must returns v, panicking on err (for test set-up only).
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestScannerOnBadInput gives the JSON scanner malformed input: it stops
// early, never out of bounds.
func TestScannerOnBadInput(t *testing.T) {
	for _, in := range []string{"", "{", "[", `{"a`, `{"a":`, `{"a":[1,`, `["\`, `{"a":1,}`, `{1:2}`, `[1,2`, `"`, `{"a"1}`} {
		b := []byte(in)
		assert.NotPanics(t, func() {
			for range members(b) {
			}
			for range elements(b) {
			}
			_ = skip(b, 0)
			_ = referAt(b, []string{"a"})
			_, _, _, _ = isRef(b)
			_, _, _ = firstDiff(b, []byte(`{"a":2}`))
			_, _, _ = firstDiff([]byte(`[1]`), b)
		}, "%q", in)
	}
	assert.Equal(t, 1, skip([]byte("1"), 0))
	assert.Equal(t, 0, skip(nil, 0))
}

// FuzzReduce checks that reducing never panics, and that a valid action
// reduces to valid JSON, always the same, that reduces to itself and is
// no longer than max_bytes unless it is a reference.
func FuzzReduce(f *testing.F) {
	for _, s := range []string{`{"kind":"x","a":[1,{"b":"}"}],"c":"\"{"}`, `{"kind":"x","a":{"a":[]}}`, `[1,2]`, `"s"`, `{"kind":"x","\u0061":1}`} {
		f.Add(s, "a.a", 40)
	}
	f.Fuzz(func(t *testing.T, action, path string, maxBytes int) {
		p := RefPolicy{Fields: map[string][]string{"x": {path}}, MaxBytes: max(0, maxBytes)}
		out, err := p.Reduce(json.RawMessage(action))
		if err != nil {
			if json.Valid([]byte(action)) {
				t.Fatalf("valid action %q refused: %v", action, err)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("reduced %q to invalid JSON %q", action, out)
		}
		again, err := p.Reduce(json.RawMessage(action))
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("reducing %q twice gave %q, then %q, %v", action, out, again, err)
		}
		if twice, err := p.Reduce(out); err != nil || !bytes.Equal(twice, out) {
			t.Fatalf("reducing %q gave %q, and reducing that %q, %v", action, out, twice, err)
		}
		if _, _, _, ref := isRef(out); p.MaxBytes > 0 && len(out) > p.MaxBytes && !ref {
			t.Fatalf("reduced %q to %d bytes, more than max_bytes %d, and not to a reference", action, len(out), p.MaxBytes)
		}
	})
}

// FuzzVerify checks that reading any bytes as a log never panics.
func FuzzVerify(f *testing.F) {
	f.Add(sealed(header, `{"type":"event","seq":1,"event":{"kind":"x"},"actions":[],"rejected":false}`))
	f.Add("not a log\n")
	f.Add(header + "\n")
	f.Fuzz(func(t *testing.T, log string) {
		_, _ = Verify(strings.NewReader(log))
		_, _ = Replay(strings.NewReader(log), nothing)
	})
}
