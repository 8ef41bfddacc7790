package termtext

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSanitize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"plain text", "hello\n\tworld ✓ \uFFFD", "hello\n\tworld ✓ \uFFFD"},
		{"colour", "\x1b[1;31mred\x1b[0m text", "red text"},
		{"clear screen", "a\x1b[2J\x1b[Hb", "ab"},
		{"window title (OSC, BEL)", "\x1b]0;pwned\x07after", "after"},
		{"clipboard write (OSC 52, ST)", "x\x1b]52;c;ZXZpbA==\x1b\\y", "xy"},
		{"OSC cut off", "x\x1b]52;c;ZXZp", "x"},
		{"C1 CSI", "a\u009b31mb", "ab"},
		{"DCS", "a\x1bPq#0;2;0;0;0\x1b\\b", "ab"},
		{"reset (two characters)", "a\x1bcb", "ab"},
		{"lone escape at the end", "a\x1b", "a"},
		{"carriage return and backspace", "safe\rEVIL\x08\x08", "safeEVIL"},
		{"bell and NUL", "a\x07b\x00c", "abc"},
		{"bidirectional override", "if admin \u202e{ }\u2066", "if admin { }"},
		{"invalid UTF-8", "a\xffb", "a\uFFFDb"},
		{"control in a CSI ends it", "a\x1b[3\nb", "a\nb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, Sanitize(tt.in))
		})
	}
}

func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"\x1b[31mx", "\x1b]0;t\x07", "a\u009b", "\xff\x1b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Sanitize(s)
		for _, r := range out {
			if unsafeRune(r) {
				t.Fatalf("Sanitize(%q) = %q keeps %U", s, out, r)
			}
		}
		assert.Equal(t, out, Sanitize(out), "Sanitize is idempotent")
	})
}
