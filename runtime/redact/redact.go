// Package redact keeps secrets (an API key, say) out of what the coding
// agent sends, shows and saves: a [Redactor] replaces every occurrence of
// a secret, raw or in the encodings a tool's output is likely to carry it
// in, with [Mark].
//
// The encodings recognised are: the raw text; JSON string escaping (a key
// with a quote or a backslash, as it appears inside saved JSON); URL query
// escaping; lower- and upper-case hexadecimal; and standard and URL-safe
// base64, padded or not, at each of the three alignments the secret can
// have inside a longer base64 text (so "user:KEY" encoded whole is caught
// too, apart from the one or two characters on each side of the secret
// that mix its bits with its neighbours').
//
// Secrets shorter than [MinLen] are ignored: replacing a short string
// everywhere would mangle ordinary text, and such a string is no secret.
package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// Mark is what a secret is replaced with.
const Mark = "[REDACTED]"

// MinLen is the length below which a secret is ignored.
const MinLen = 8

// Redactor replaces secrets in text. The zero value and a nil *Redactor
// redact nothing. A Redactor is immutable and safe for concurrent use.
type Redactor struct {
	forms    []string // every form of every secret, longest first
	replacer *strings.Replacer
}

// New returns a redactor of the given secrets; empty and short ones
// (under MinLen bytes) are skipped.
func New(secrets ...string) *Redactor {
	seen := map[string]bool{}
	var forms []string
	add := func(f string) {
		// A form shorter than MinLen (the middle of a short secret's
		// base64, say) would match ordinary text.
		if len(f) >= MinLen && !seen[f] {
			seen[f] = true
			forms = append(forms, f)
		}
	}
	for _, s := range secrets {
		if len(s) < MinLen {
			continue
		}
		for _, f := range encodings(s) {
			add(f)
		}
	}
	if len(forms) == 0 {
		return &Redactor{}
	}
	// Longest first, so that a form containing another is replaced whole.
	slices.SortFunc(forms, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		pairs = append(pairs, f, Mark)
	}
	return &Redactor{forms: forms, replacer: strings.NewReplacer(pairs...)}
}

// encodings returns the forms of s to look for.
func encodings(s string) []string {
	b := []byte(s)
	forms := []string{
		s,
		url.QueryEscape(s),
		hex.EncodeToString(b),
		strings.ToUpper(hex.EncodeToString(b)),
	}
	if j, err := json.Marshal(s); err == nil {
		forms = append(forms, string(j[1:len(j)-1]))
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		forms = append(forms, enc.EncodeToString(b))
		forms = append(forms, base64Aligned(enc.WithPadding(base64.NoPadding), b)...)
	}
	return forms
}

// base64Aligned returns, for each of the three offsets (0, 1 or 2 bytes
// before s in a longer text), the base64 characters that depend on s
// alone.
func base64Aligned(enc *base64.Encoding, s []byte) []string {
	forms := make([]string, 0, 3)
	for pad := range 3 {
		buf := append(make([]byte, pad, pad+len(s)), s...)
		full := enc.EncodeToString(buf)
		// The first character that depends on s alone: s starts at bit
		// 8*pad; characters are 6 bits wide.
		start := (8*pad + 5) / 6
		// The last whole character inside s: s ends at bit 8*(pad+len(s)).
		end := (8 * (pad + len(s))) / 6
		if end > start {
			forms = append(forms, full[start:end])
		}
	}
	return forms
}

// String returns s with every secret replaced by Mark.
func (r *Redactor) String(s string) string {
	if r == nil || r.replacer == nil || !r.containsString(s) {
		return s // the usual case, and without the replacer's copy
	}
	return r.replacer.Replace(s)
}

// containsString reports whether s holds a secret in any of its forms.
func (r *Redactor) containsString(s string) bool {
	for _, f := range r.forms {
		if strings.Contains(s, f) {
			return true
		}
	}
	return false
}

// Bytes returns b with every secret replaced by Mark; b itself when it
// holds none (a nil b stays nil).
func (r *Redactor) Bytes(b []byte) []byte {
	if !r.Contains(b) {
		return b
	}
	return []byte(r.replacer.Replace(string(b)))
}

// Contains reports whether b holds a secret in any of its forms.
func (r *Redactor) Contains(b []byte) bool {
	if r == nil {
		return false
	}
	for _, f := range r.forms {
		if bytes.Contains(b, []byte(f)) {
			return true
		}
	}
	return false
}

// Forms returns every form of every secret r looks for (the raw secrets
// and their encodings), longest first; for handing to a program that
// searches for them, such as git grep. Keep what it returns as secret as
// the secrets themselves.
func (r *Redactor) Forms() []string {
	if r == nil {
		return nil
	}
	return slices.Clone(r.forms)
}

// Empty reports whether r redacts nothing.
func (r *Redactor) Empty() bool { return r == nil || len(r.forms) == 0 }

// Stream redacts a text that arrives in pieces (the deltas of a streamed
// reply), so that a secret split across two pieces is caught too: Write
// returns what can be shown of the text so far and holds back the end that
// could be the start of a secret, Flush returns the rest. A nil or empty
// Redactor's Stream holds nothing back. A Stream is not safe for
// concurrent use.
type Stream struct {
	r       *Redactor
	pending string
}

// Stream returns a stream redactor of r.
func (r *Redactor) Stream() *Stream { return &Stream{r: r} }

// Write takes the next piece of the text and returns what of the text so
// far is certain not to hold any part of a secret, redacted.
func (s *Stream) Write(piece string) string {
	if s.r.Empty() {
		return piece
	}
	text := s.r.String(s.pending + piece)
	keep := s.r.partial(text)
	s.pending = text[len(text)-keep:]
	return text[:len(text)-keep]
}

// Flush returns what Write held back, redacted, and empties the stream.
func (s *Stream) Flush() string {
	rest := s.pending
	s.pending = ""
	return rest
}

// partial returns the length of the longest end of text that is the start
// of one of r's forms (shorter than the form): the part a next piece could
// complete into a secret.
func (r *Redactor) partial(text string) int {
	longest := 0
	for _, f := range r.forms {
		for n := min(len(f)-1, len(text)); n > longest; n-- {
			if strings.HasSuffix(text, f[:n]) {
				longest = n
				break
			}
		}
	}
	return longest
}
