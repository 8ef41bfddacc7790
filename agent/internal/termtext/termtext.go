// Package termtext makes text fit for a terminal: what the model wrote
// and what a tool printed, before the agent shows it.
package termtext

import (
	"strings"
	"unicode/utf8"
)

// Sanitize returns s fit for a terminal: what the model wrote and what a
// tool printed may hold escape sequences that change the window title,
// write the clipboard (OSC 52), clear the screen or move the cursor, and
// characters that reorder the text shown (bidirectional overrides). Escape
// sequences are removed whole (CSI, OSC, DCS and two-byte ones), other C0
// and C1 control characters and the bidirectional controls are removed;
// newlines and tabs stay. Invalid UTF-8 becomes U+FFFD.
func Sanitize(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x1b || r == 0x9b || r == 0x9d || r == 0x90:
			i += escapeLen(s[i:])
			continue
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case !unsafeRune(r):
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// clean reports whether s has nothing for Sanitize to change.
func clean(s string) bool {
	for i, r := range s {
		if unsafeRune(r) || r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD") {
			return false
		}
	}
	return true
}

// unsafeRune reports whether r is a control character a terminal acts on
// (other than newline and tab) or a bidirectional control.
func unsafeRune(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e || r == 0x200f || r == 0x061c:
		return true
	}
	return false
}

// escapeLen returns the length of the escape sequence s starts with (at
// least the introducer itself): CSI (ESC [ or U+009B) up to its final
// byte, OSC (ESC ] or U+009D) and DCS (ESC P or U+0090) up to BEL or
// ST (ESC \ or U+009C), ESC and one more character otherwise. A sequence
// cut off at the end of s runs to the end.
func escapeLen(s string) int {
	r, n := utf8.DecodeRuneInString(s)
	kind := r
	if r == 0x1b {
		if len(s) == n {
			return n
		}
		next, m := utf8.DecodeRuneInString(s[n:])
		n += m
		switch next {
		case '[':
			kind = 0x9b
		case ']':
			kind = 0x9d
		case 'P', 'X', '^', '_':
			kind = 0x90
		default:
			return n // a two-character sequence, e.g. ESC c (reset)
		}
	}
	switch kind {
	case 0x9b: // parameters and intermediates, then a final byte 0x40–0x7e
		for n < len(s) {
			switch c := s[n]; {
			case c >= 0x40 && c <= 0x7e:
				return n + 1
			case c < 0x20 || c > 0x7e:
				return n // not part of the sequence: left to the caller
			}
			n++
		}
		return n
	default: // a string, ended by BEL or ST
		for n < len(s) {
			if s[n] == 0x07 {
				return n + 1
			}
			if s[n] == 0x1b && n+1 < len(s) && s[n+1] == '\\' {
				return n + 2
			}
			if strings.HasPrefix(s[n:], "\u009c") {
				return n + len("\u009c")
			}
			n++
		}
		return n
	}
}
