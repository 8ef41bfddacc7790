package redact_test

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fsmgen/fsmgen/runtime/redact"
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

// BenchmarkRedact measures the redaction of a text delta and of a tool's
// output, with and without the secret in it.
func BenchmarkRedact(b *testing.B) {
	r := redact.New(key)
	output := strings.Repeat("ok  \tgithub.com/x/y\t0.012s\n", 64<<10/26)
	for _, bb := range []struct {
		name, text string
	}{
		{"delta", "Let me look at the"},
		{"output-64KiB", output},
		{"output-64KiB-with-key", output[:32<<10] + key + output[32<<10:]},
	} {
		b.Run(bb.name, func(b *testing.B) {
			b.SetBytes(int64(len(bb.text)))
			b.ReportAllocs()
			for b.Loop() {
				_ = r.String(bb.text)
			}
		})
	}
}

// TestStream checks that a secret split across the pieces of a streamed
// text never comes out whole, and that the text comes out otherwise
// unchanged once flushed.
func TestStream(t *testing.T) {
	text := "before " + key + " middle " + base64.StdEncoding.EncodeToString([]byte(key)) + " after"
	want := redact.New(key).String(text)
	for _, size := range []int{1, 2, 3, 5, 7, 11, 64, len(text)} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			s := redact.New(key).Stream()
			var out strings.Builder
			for i := 0; i < len(text); i += size {
				got := s.Write(text[i:min(i+size, len(text))])
				assert.NotContains(t, out.String()+got, key[:len(key)-1], "a piece let the secret through")
				out.WriteString(got)
			}
			out.WriteString(s.Flush())
			assert.Equal(t, want, out.String())
		})
	}
	var nothing *redact.Redactor
	s := nothing.Stream()
	assert.Equal(t, "sk-ant", s.Write("sk-ant"))
	assert.Empty(t, s.Flush())
}
