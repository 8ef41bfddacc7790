// Package redact keeps secrets (an API key, say) out of what the coding
// agent sends, shows and saves: a [Redactor] replaces every occurrence of
// a secret, raw or in the encodings a tool's output is likely to carry it
// in, and every long enough piece of one, with [Mark].
//
// # What is matched
//
// For each secret, these forms are looked for:
//
//   - the raw text, its JSON string escaping (a key with a quote or a
//     backslash, as it appears inside saved JSON) and its URL query
//     escaping;
//   - the text reversed (rev);
//   - lower- and upper-case hexadecimal (xxd -p, od -An -tx1 once its
//     spaces go, hexdump's plain forms);
//   - standard and URL-safe base64 and standard base32 (upper or lower
//     case), each at every alignment the secret can have inside a longer
//     encoded text, so that "KEY=<secret>" or a whole .env encoded at once
//     is caught too, but for the one or two characters on each side of
//     the secret that mix its bits with its neighbours'.
//
// Whitespace does not count: the text is matched as if every space, tab
// and line break were removed, so that base64 wrapped at 76 columns, hex
// in groups ("73 6b 2d" or xxd -p's lines of 60) and a key folded over
// several lines are caught. And not only whole forms are replaced: any
// run of at least [MinRun] consecutive characters of a secret (or, in an
// encoded form, of the characters that [MinRun] of the secret's bytes
// give) is, so that a slice of a key (cut -c5-64) is caught too. Secrets
// shorter than [MinRun] are matched whole.
//
// # What matching cannot catch
//
// A dump that interleaves the bytes with something else every few
// bytes (od's octal words, xxd's and hexdump -C's offsets and character
// columns, which show 16 bytes at a time), a run shorter than [MinRun], a
// character-by-character transformation (tr, a Caesar shift, upper
// case), compression, encryption and any encoding not listed above pass
// through: the model can always write a program that hides what it reads.
// Redaction is a net for the usual ways a key leaks; keeping the model's
// tools from reading a file that holds the key is the defence against a
// model that means to.
//
// Secrets shorter than [MinLen] are ignored: replacing a short string
// everywhere would mangle ordinary text, and such a string is no secret.
package redact

import (
	"cmp"
	"encoding/binary"
	"io"
	"slices"
	"strings"
)

// Mark is what a secret is replaced with.
const Mark = "[REDACTED]"

// MinLen is the length below which a secret is ignored.
const MinLen = 8

// MinRun is the length, in characters of the raw secret, of the shortest
// piece of a secret that is redacted on its own. 24 characters of a
// random key are 140 bits or more: they never occur by chance.
const MinRun = 24

// gram is the length of the pieces of the forms the text is looked up by.
const gram = 8

// maxTail bounds the end of a streamed text a [Stream] holds back, in
// bytes: a run of a secret spread over more whitespace than this is
// shown in two parts.
const maxTail = 16 << 10

// form is one form of one secret.
type form struct {
	text   string // the form, whitespace removed
	minRun int    // the shortest run of text that is redacted
}

// occurrence is where one gram occurs: in form f at offset off.
type occurrence struct {
	f, off int32
}

// Redactor replaces secrets in text. The zero value and a nil *Redactor
// redact nothing. A Redactor is immutable and safe for concurrent use.
type Redactor struct {
	forms []form
	// grams finds every gram of every form: the occurrences of a gram are
	// occs[span.start:span.end].
	grams gramTable
	occs  []occurrence
	// short holds every piece shorter than gram of every form, packed by
	// pack: the ends of a streamed text that could begin a secret.
	short map[uint64]struct{}
	// step is how far apart the text is sampled: every run of minRun
	// characters holds a whole gram ending at a multiple of step.
	step   int
	maxLen int // of a form
}

// New returns a redactor of the given secrets; empty and short ones
// (under MinLen bytes) are skipped.
func New(secrets ...string) *Redactor {
	r := &Redactor{}
	seen := map[string]bool{}
	for _, s := range secrets {
		if len(s) < MinLen {
			continue
		}
		for _, f := range formsOf(s) {
			if len(f.text) >= gram && !seen[f.text] {
				seen[f.text] = true
				r.forms = append(r.forms, f)
			}
		}
	}
	if len(r.forms) == 0 {
		return &Redactor{}
	}
	// Longest first: Forms' order, and the first of two occurrences that
	// extend alike wins.
	slices.SortStableFunc(r.forms, func(a, b form) int { return cmp.Compare(len(b.text), len(a.text)) })
	r.index()
	return r
}

// index builds the lookup tables of r.forms.
func (r *Redactor) index() {
	type entry struct {
		g   uint64
		occ occurrence
	}
	var all []entry
	r.short = map[uint64]struct{}{}
	minRun := r.forms[0].minRun
	for i, f := range r.forms {
		minRun = min(minRun, f.minRun)
		r.maxLen = max(r.maxLen, len(f.text))
		for off := 0; off+gram <= len(f.text); off++ {
			all = append(all, entry{binary.LittleEndian.Uint64([]byte(f.text[off : off+gram])), occurrence{int32(i), int32(off)}})
		}
		for n := 1; n < gram; n++ {
			for off := 0; off+n <= len(f.text); off++ {
				r.short[pack(f.text[off:off+n])] = struct{}{}
			}
		}
	}
	r.step = minRun - gram + 1
	slices.SortStableFunc(all, func(a, b entry) int { return cmp.Compare(a.g, b.g) })
	r.occs = make([]occurrence, len(all))
	var keys []uint64
	var spans []span
	for i, e := range all {
		r.occs[i] = e.occ
		if n := len(keys); n > 0 && keys[n-1] == e.g {
			spans[n-1].end++
			continue
		}
		keys = append(keys, e.g)
		spans = append(spans, span{int32(i), int32(i + 1)})
	}
	r.grams = newGramTable(keys, spans)
}

// pack packs a piece of fewer than 8 bytes, and its length, in a uint64.
func pack[T ~string | ~[]byte](piece T) uint64 {
	var v uint64
	for i := len(piece) - 1; i >= 0; i-- {
		v = v<<8 | uint64(piece[i])
	}
	return v | uint64(len(piece))<<56
}

// String returns s with every secret replaced by Mark.
func (r *Redactor) String(s string) string {
	var b strings.Builder
	done := 0
	scan(r, s, func(g region) bool {
		if done == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[done:g.start])
		b.WriteString(Mark)
		done = g.end
		return true
	})
	if done == 0 {
		return s // the usual case, without a copy
	}
	b.WriteString(s[done:])
	return b.String()
}

// Bytes returns b with every secret replaced by Mark; b itself when it
// holds none (a nil b stays nil).
func (r *Redactor) Bytes(b []byte) []byte {
	var out []byte
	done := 0
	scan(r, b, func(g region) bool {
		if out == nil {
			out = make([]byte, 0, len(b))
		}
		out = append(out, b[done:g.start]...)
		out = append(out, Mark...)
		done = g.end
		return true
	})
	if out == nil {
		return b
	}
	return append(out, b[done:]...)
}

// Contains reports whether b holds a secret in any of its forms.
func (r *Redactor) Contains(b []byte) bool {
	found := false
	scan(r, b, func(region) bool {
		found = true
		return false
	})
	return found
}

// ContainsString reports whether s holds a secret in any of its forms.
func (r *Redactor) ContainsString(s string) bool {
	found := false
	scan(r, s, func(region) bool {
		found = true
		return false
	})
	return found
}

// readChunk is how much ContainsReader reads at a time.
const readChunk = 64 << 10

// ContainsReader reports whether what rd reads, to its end, holds a
// secret in any of its forms. It reads in chunks, keeping only what a
// form could span between two of them: memory stays small whatever the
// size. It stops reading at the first secret; an error is rd's.
func (r *Redactor) ContainsReader(rd io.Reader) (bool, error) {
	if r.Empty() {
		return false, nil
	}
	chunk := make([]byte, readChunk)
	buf := make([]byte, 0, readChunk+r.maxLen)
	for {
		n, err := rd.Read(chunk)
		// Whitespace goes at once: it does not count, and what is kept
		// between chunks stays short. Without a branch: each byte is
		// written, and the next one goes over it when it is a space.
		j := len(buf)
		buf = buf[:j+n]
		for _, c := range chunk[:n] {
			buf[j] = c
			j += int(keepMask[c] & 1)
		}
		buf = buf[:j]
		if r.Contains(buf) {
			return true, nil
		}
		if keep := r.maxLen - 1; len(buf) > keep {
			buf = append(buf[:0], buf[len(buf)-keep:]...)
		}
		switch {
		case err == io.EOF:
			return false, nil
		case err != nil:
			return false, err
		}
	}
}

// Forms returns the whole forms of every secret r looks for (the raw
// secrets and their encodings, whitespace removed), longest first. A
// program searching for them finds whole forms only: Contains and
// ContainsReader also find pieces and forms broken by whitespace. Keep
// what it returns as secret as the secrets themselves.
func (r *Redactor) Forms() []string {
	if r == nil {
		return nil
	}
	out := make([]string, len(r.forms))
	for i, f := range r.forms {
		out[i] = f.text
	}
	return out
}

// Empty reports whether r redacts nothing.
func (r *Redactor) Empty() bool { return r == nil || len(r.forms) == 0 }
