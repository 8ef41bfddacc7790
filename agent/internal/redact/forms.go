package redact

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// formsOf returns the forms of the secret s to look for.
func formsOf(s string) []form {
	s = squeeze(s)
	b := []byte(s)
	run := min(MinRun, len(b))
	plain := func(text string) form { return form{text, min(run, len(text))} }
	forms := []form{plain(s), plain(reverse(s)), plain(url.QueryEscape(s))}
	if j, err := json.Marshal(s); err == nil {
		forms = append(forms, plain(string(j[1:len(j)-1])))
	}
	h := hex.EncodeToString(b)
	forms = append(forms, form{h, 2 * run}, form{strings.ToUpper(h), 2 * run})
	b64 := encodedRun(run, 6)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for _, t := range aligned(enc.WithPadding(base64.NoPadding).EncodeToString, b, 3, 6) {
			forms = append(forms, form{t, min(b64, len(t))})
		}
	}
	b32 := encodedRun(run, 5)
	for _, t := range aligned(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString, b, 5, 5) {
		forms = append(forms, form{t, min(b32, len(t))}, form{strings.ToLower(t), min(b32, len(t))})
	}
	return forms
}

// aligned returns, for each of the offsets 0 to group-1 (the bytes before
// s in a longer text, modulo the encoding's group of bytes), the
// characters of the encoding (bits bits each) of s that depend on s
// alone.
func aligned(encode func([]byte) string, s []byte, group, bits int) []string {
	forms := make([]string, 0, group)
	for pad := range group {
		full := encode(append(make([]byte, pad, pad+len(s)), s...))
		// s starts at bit 8*pad and ends at bit 8*(pad+len(s)); the
		// characters wholly inside are the ones that depend on s alone.
		start := (8*pad + bits - 1) / bits
		end := 8 * (pad + len(s)) / bits
		if end > start {
			forms = append(forms, full[start:end])
		}
	}
	return forms
}

// encodedRun returns the fewest characters of an encoding of bits bits
// per character that n consecutive bytes are sure to give alone, wherever
// they lie in the encoded text.
func encodedRun(n, bits int) int {
	fewest := n * 8 / bits
	for k := range bits { // the byte offsets, modulo bits, give every bit alignment
		a := 8 * k % bits
		fewest = min(fewest, (a+8*n)/bits-(a+bits-1)/bits)
	}
	return fewest
}

// reverse returns s with its characters in the opposite order, as rev
// prints them.
func reverse(s string) string {
	if !utf8.ValidString(s) {
		b := []byte(s)
		slices.Reverse(b)
		return string(b)
	}
	r := []rune(s)
	slices.Reverse(r)
	return string(r)
}

// space marks the bytes that matching skips.
var space = [256]bool{' ': true, '\t': true, '\n': true, '\r': true, '\v': true, '\f': true}

// keepMask is, for each byte, all ones when matching reads it and 0
// when it skips it.
var keepMask = func() (m [256]uint64) {
	for c := range m {
		if !space[c] {
			m[c] = ^uint64(0)
		}
	}
	return m
}()

// squeeze returns s without whitespace.
func squeeze(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r < 256 && space[r] }) {
		return s
	}
	var b strings.Builder
	for i := range len(s) {
		if !space[s[i]] {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
