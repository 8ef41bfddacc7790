package redact_test

import (
	"bytes"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/internal/redact"
)

const key = `sk-ant-api03-"Zx/9+q\w_Lm-0123456789abcdef`

func TestRedactForms(t *testing.T) {
	jsonForm, _ := json.Marshal(key)
	tests := []struct {
		name, text string
	}{
		{"raw", "key=" + key + "\n"},
		{"json escaped", `{"content":` + string(jsonForm) + `}`},
		{"url query", "https://x.test/?k=" + url.QueryEscape(key)},
		{"hex", "xxd: " + hex.EncodeToString([]byte(key))},
		{"hex upper", strings.ToUpper(hex.EncodeToString([]byte(key)))},
		{"base64", base64.StdEncoding.EncodeToString([]byte(key))},
		{"base64 url", base64.URLEncoding.EncodeToString([]byte(key))},
		{"base64 inside, offset 1", base64.StdEncoding.EncodeToString([]byte("A" + key + "tail"))},
		{"base64 inside, offset 2", base64.StdEncoding.EncodeToString([]byte("u:" + key))},
		{"base64 inside, offset 0", base64.RawURLEncoding.EncodeToString([]byte("abc" + key + "!"))},
		{"cat /proc/N/environ", "PATH=/bin\x00ANTHROPIC_API_KEY=" + key + "\x00HOME=/root"},
	}
	r := redact.New(key)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.True(t, r.Contains([]byte(tt.text)), "Contains")
			got := r.String(tt.text)
			assert.Contains(t, got, redact.Mark)
			assert.False(t, r.Contains([]byte(got)), "a form survived: %q", got)
			assert.Equal(t, got, string(r.Bytes([]byte(tt.text))))
		})
	}
}

func TestRedactLeavesOtherTextAlone(t *testing.T) {
	r := redact.New(key, "", "short")
	for _, s := range []string{"", "hello world", "short is not redacted", "sk-ant-api03 is a prefix only"} {
		assert.Equal(t, s, r.String(s))
		assert.False(t, r.Contains([]byte(s)))
	}
	b := []byte("nothing here")
	assert.Same(t, &b[0], &r.Bytes(b)[0], "Bytes returns its argument when there is nothing to redact")
}

func TestRedactNothing(t *testing.T) {
	for _, r := range []*redact.Redactor{nil, {}, redact.New(), redact.New("", "1234567")} {
		assert.True(t, r.Empty())
		assert.Equal(t, key, r.String(key))
		assert.False(t, r.Contains([]byte(key)))
		assert.Nil(t, r.Bytes(nil))
	}
	assert.False(t, redact.New(key).Empty())
}

func TestRedactSeveralSecrets(t *testing.T) {
	r := redact.New("first-secret-value", "second-secret-value")
	assert.Equal(t, "a [REDACTED] b [REDACTED]", r.String("a first-secret-value b second-secret-value"))
}

// longKey is shaped like an Anthropic key: a public prefix, then 95
// random characters.
const longKey = "sk-ant-api03-Qx7_Rk2pZ9vLm4Tn8Wc1Yb6Hd3Jf0Gs5Ke2Na7Pq9Ur4Vt1Xw8Zy3Lo6Mi5Bh0Cg2Df7Ej4Fk9Gl1Hm3In6Jo8Kp0Lq5Mr2Ns7AA"

// wrap breaks s into lines of width characters, as base64 and base32
// print.
func wrap(s string, width int) string {
	var b strings.Builder
	for len(s) > width {
		b.WriteString(s[:width] + "\n")
		s = s[width:]
	}
	b.WriteString(s + "\n")
	return b.String()
}

// spaced writes the hex of b in groups of group bytes, as od and xxd do.
func spaced(b []byte, group int, sep string) string {
	var parts []string
	for chunk := range slices.Chunk(b, group) {
		parts = append(parts, hex.EncodeToString(chunk))
	}
	return strings.Join(parts, sep)
}

// rev reverses s, as rev does.
func rev(s string) string {
	b := []byte(s)
	slices.Reverse(b)
	return string(b)
}

// leaks returns the pieces of key that text still holds, whitespace
// ignored: any MinRun characters of it, raw or reversed, and the
// hexadecimal, base64 and base32 of any MinRun of its bytes (the
// encodings at every alignment, less a character at each end).
func leaks(key, text string) []string {
	flat := strings.Join(strings.Fields(text), "")
	var found []string
	look := func(what, piece string) {
		if strings.Contains(flat, piece) {
			found = append(found, what+": "+piece)
		}
	}
	for i := 0; i+redact.MinRun <= len(key); i++ {
		piece := key[i : i+redact.MinRun]
		look("raw", piece)
		look("reversed", rev(piece))
		look("hex", hex.EncodeToString([]byte(piece)))
		look("HEX", strings.ToUpper(hex.EncodeToString([]byte(piece))))
		for pad := range 3 {
			e := base64.StdEncoding.EncodeToString(append(make([]byte, pad), piece...))
			look("base64", e[pad+1:len(e)-2])
		}
		for pad := range 5 {
			e := base32.StdEncoding.EncodeToString(append(make([]byte, pad), piece...))
			e = strings.TrimRight(e, "=")
			look("base32", e[2*pad+1:len(e)-2])
			look("base32 lower", strings.ToLower(e[2*pad+1:len(e)-2]))
		}
	}
	return found
}

// TestRedactEncodingsThatGotThrough checks the forms issue 20 found
// passing through: base64 wrapped at 76 columns, xxd -p, hex in groups,
// base32, the key reversed, and slices of the key, each alone and inside
// a longer text.
func TestRedactEncodingsThatGotThrough(t *testing.T) {
	env := "ANTHROPIC_API_KEY=" + longKey + "\n"
	b := []byte(longKey)
	tests := []struct {
		name, text string
	}{
		{"base64 wrapped", wrap(base64.StdEncoding.EncodeToString(b), 76)},
		{"base64 of .env wrapped", wrap(base64.StdEncoding.EncodeToString([]byte("# keys\n"+env)), 76)},
		{"base64 of .env, offset 1, CRLF", strings.ReplaceAll(wrap(base64.StdEncoding.EncodeToString([]byte("X"+env)), 64), "\n", "\r\n")},
		{"xxd -p", wrap(hex.EncodeToString([]byte(env)), 60)},
		{"od -An -tx1", " " + spaced([]byte(env), 1, " ")},
		{"hex in words", spaced([]byte(env), 2, " ")},
		{"HEX in lines", wrap(strings.ToUpper(hex.EncodeToString(b)), 32)},
		{"base32", wrap(base32.StdEncoding.EncodeToString([]byte(env)), 76)},
		{"base32 offset 3", base32.StdEncoding.EncodeToString([]byte("abc" + longKey))},
		{"base32 lower", strings.ToLower(base32.StdEncoding.EncodeToString(b))},
		{"rev", rev(env)},
		{"a slice of 60", "part: " + longKey[20:80] + "\n"},
		{"a slice of 24", "part: " + longKey[50:74] + ".\n"},
		{"folded", wrap(longKey, 10)},
		{"two slices", longKey[:40] + " and " + longKey[60:]},
	}
	r := redact.New(longKey)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NotEmpty(t, leaks(longKey, tt.text), "the test text holds the key")
			assert.True(t, r.ContainsString(tt.text))
			got := r.String(tt.text)
			assert.Contains(t, got, redact.Mark)
			assert.Empty(t, leaks(longKey, got), "redacted: %q", got)
			assert.False(t, r.ContainsString(got), "a form survived: %q", got)
			assert.Equal(t, got, string(r.Bytes([]byte(tt.text))))
			found, err := r.ContainsReader(iotest.OneByteReader(strings.NewReader(tt.text)))
			require.NoError(t, err)
			assert.True(t, found, "ContainsReader")
		})
	}
}

// TestRedactRuns checks that every run of MinRun characters of a key is
// redacted, wherever it starts, and a shorter one is not.
func TestRedactRuns(t *testing.T) {
	r := redact.New(longKey)
	for i := 0; i+redact.MinRun <= len(longKey); i++ {
		run := longKey[i : i+redact.MinRun]
		assert.Equal(t, "<"+redact.Mark+">", r.String("<"+run+">"), "run at %d", i)
		short := run[:redact.MinRun-1]
		assert.Equal(t, "<"+short+">", r.String("<"+short+">"), "short run at %d", i)
		assert.Equal(t, "<"+redact.Mark+">", r.String("<"+rev(run)+">"), "reversed run at %d", i)
	}
	// A prefix that every key of the kind shares is no secret.
	assert.Equal(t, "export ANTHROPIC_API_KEY=sk-ant-api03-...", r.String("export ANTHROPIC_API_KEY=sk-ant-api03-..."))
}

// TestContainsReaderAcrossChunks puts the key's base64 across the
// boundary of ContainsReader's chunks.
func TestContainsReaderAcrossChunks(t *testing.T) {
	r := redact.New(longKey)
	enc := wrap(base64.StdEncoding.EncodeToString([]byte(longKey)), 76)
	for _, at := range []int{0, 64<<10 - 50, 64<<10 - 1, 64 << 10, 128<<10 - 7} {
		text := strings.Repeat("x y\n", at/4) + strings.Repeat("z", at%4) + enc + strings.Repeat("tail ", 100)
		found, err := r.ContainsReader(strings.NewReader(text))
		require.NoError(t, err)
		assert.True(t, found, "at %d", at)
	}
	found, err := r.ContainsReader(strings.NewReader(strings.Repeat("no key here\n", 20000)))
	require.NoError(t, err)
	assert.False(t, found)
	_, err = r.ContainsReader(iotest.ErrReader(io.ErrUnexpectedEOF))
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
}

// BenchmarkContainsReader measures the search of 64 KiB of a file's
// content, as the auto-commit searches what it stages.
func BenchmarkContainsReader(b *testing.B) {
	content := strings.Repeat("func f() { return x }\n", 64<<10/22)
	r := redact.New(longKey)
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	for b.Loop() {
		if found, _ := r.ContainsReader(strings.NewReader(content)); found {
			b.Fatal("found a key")
		}
	}
}

// TestRedactOrdinaryText runs the redactor over this package's own
// source, which holds no key: nothing changes.
func TestRedactOrdinaryText(t *testing.T) {
	r := redact.New(longKey, key)
	for _, f := range []string{"redact.go", "redact_test.go"} {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		// The test file holds longKey and key: take them out.
		b = bytes.ReplaceAll(bytes.ReplaceAll(b, []byte(longKey), nil), []byte(key), nil)
		assert.Equal(t, string(b), string(r.Bytes(b)), f)
	}
}

// BenchmarkRedact measures the redaction of a text delta and of 64 KiB
// of a tool's output, without and with the secret in it, for a short
// secret and for a key of an Anthropic key's length.
func BenchmarkRedact(b *testing.B) {
	output := strings.Repeat("ok  \tgithub.com/x/y\t0.012s\n", 64<<10/26)
	for _, secret := range []struct{ name, key string }{{"", key}, {"long-key/", longKey}} {
		r := redact.New(secret.key)
		for _, bb := range []struct {
			name, text string
		}{
			{"delta", "Let me look at the"},
			{"output-64KiB", output},
			{"output-64KiB-with-key", output[:32<<10] + secret.key + output[32<<10:]},
		} {
			b.Run(secret.name+bb.name, func(b *testing.B) {
				b.SetBytes(int64(len(bb.text)))
				b.ReportAllocs()
				for b.Loop() {
					_ = r.String(bb.text)
				}
			})
		}
	}
}

// BenchmarkStream measures a reply of 4 KiB streamed in deltas of 16
// bytes through a Stream, as the agent redacts the model's text.
func BenchmarkStream(b *testing.B) {
	reply := strings.Repeat("Let me look at the failing test first. ", 4<<10/39)
	r := redact.New(longKey)
	b.SetBytes(int64(len(reply)))
	b.ReportAllocs()
	for b.Loop() {
		s := r.Stream()
		for i := 0; i < len(reply); i += 16 {
			_ = s.Write(reply[i:min(i+16, len(reply))])
		}
		_ = s.Flush()
	}
}

// TestStream checks that a secret split across the pieces of a streamed
// text never comes out whole, and that the text comes out as the whole
// text redacted but for at most gram-1 characters of a secret shown
// before its mark (see sameBut).
func TestStream(t *testing.T) {
	texts := map[string]struct{ secret, text string }{
		"raw and base64":     {key, "before " + key + " middle " + base64.StdEncoding.EncodeToString([]byte(key)) + " after"},
		"encodings":          {longKey, "wrapped:\n" + wrap(base64.StdEncoding.EncodeToString([]byte(longKey)), 76) + "hex: " + spaced([]byte(longKey), 2, " ") + "\nslice " + longKey[30:70] + "."},
		"a slice at the end": {longKey, "the end is " + longKey[10:60]},
	}
	for name, tt := range texts {
		want := redact.New(tt.secret).String(tt.text)
		require.Empty(t, leaks(tt.secret, want))
		for _, size := range []int{1, 2, 3, 5, 7, 11, 64, len(tt.text)} {
			t.Run(fmt.Sprint(name, "/", size), func(t *testing.T) {
				s := redact.New(tt.secret).Stream()
				var out strings.Builder
				for i := 0; i < len(tt.text); i += size {
					got := s.Write(tt.text[i:min(i+size, len(tt.text))])
					assert.Empty(t, leaks(tt.secret, out.String()+got), "a piece let the secret through")
					assert.NotContains(t, out.String()+got, tt.secret[:min(len(tt.secret)-1, redact.MinRun)], "a piece let the secret through")
					out.WriteString(got)
				}
				out.WriteString(s.Flush())
				sameBut(t, want, out.String())
			})
		}
	}
	var nothing *redact.Redactor
	s := nothing.Stream()
	assert.Equal(t, "sk-ant", s.Write("sk-ant"))
	assert.Empty(t, s.Flush())
}

// sameBut checks that got is want but for the characters of a secret a
// Stream showed before each mark: fewer than 8 but for whitespace.
func sameBut(t *testing.T, want, got string) {
	t.Helper()
	w, g := strings.Split(want, redact.Mark), strings.Split(got, redact.Mark)
	require.Len(t, g, len(w), "marks in %q, want %q", got, want)
	for i := range w {
		if i == len(w)-1 {
			assert.Equal(t, w[i], g[i], "after the last mark")
			continue
		}
		require.True(t, strings.HasPrefix(g[i], w[i]), "%q is not %q and a secret's first characters", g[i], w[i])
		extra := strings.Join(strings.Fields(g[i][len(w[i]):]), "")
		assert.Less(t, len(extra), 8, "%q shown before a mark", extra)
	}
}

// TestStreamShowsAtOnce checks that what a Stream is given is returned at
// once when it holds no gram of a secret's form, even when its end could
// begin one: a reply's last characters are not held back, and a reply
// that stalls is on the screen whole.
func TestStreamShowsAtOnce(t *testing.T) {
	t.Parallel()
	r := redact.New(longKey, key)
	for _, pieces := range [][]string{
		{"Each line ends with a newline"},
		{"Each line ", "ends with a new", "line"},
		{"The key starts with sk-", "ant"},
		{"a", "b", "c", "d", "e", "f", "0", "1"},
	} {
		s := r.Stream()
		for _, p := range pieces {
			assert.Equal(t, p, s.Write(p), "%q", pieces)
		}
		assert.Empty(t, s.Flush(), "%q", pieces)
	}
	// Eight characters of the key wait for what follows them; what
	// follows shows whether they are a run.
	s := r.Stream()
	assert.Equal(t, "key: ", s.Write("key: "+longKey[20:28]))
	assert.Equal(t, longKey[20:28]+" is all", s.Write(" is all"))
	s = r.Stream()
	assert.Equal(t, "key: "+longKey[:7], s.Write("key: "+longKey[:7]))
	assert.Empty(t, s.Write(longKey[7:40]))
	assert.Equal(t, redact.Mark+".", s.Write("."))
}
