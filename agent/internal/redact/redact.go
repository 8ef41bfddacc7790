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
	"encoding/base32"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
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

// region is a part of a text to replace: text[start:end].
type region struct{ start, end int }

// scan finds the runs of the forms in text, in order, and calls found for
// each, with the part of text it spans (whitespace inside included); it
// stops when found returns false. Runs that overlap are reported once,
// merged.
//
// The text is read once, whitespace skipped; the last gram characters
// read are kept in a register, and at every step-th character the
// register is looked up in the table of the forms' grams. A hit is
// extended both ways along the form; a run of at least the form's minRun
// characters is reported. Since step is the shortest minRun less gram
// plus one, every such run holds a sampled gram.
func scan[T ~string | ~[]byte](r *Redactor, text T, found func(region) bool) {
	if r == nil || len(r.forms) == 0 {
		return
	}
	var w uint64
	k, next := 0, r.step*((gram+r.step-1)/r.step) // characters read; the next sample
	cur := region{-1, -1}
	for i := 0; i < len(text); i++ {
		// Without a branch on whitespace, which ordinary text makes
		// unpredictable: keep is all ones for a character, 0 for a space.
		c := text[i]
		keep := keepMask[c]
		w = (w>>8|uint64(c)<<56)&keep | w&^keep
		if k += int(keep & 1); k < next {
			continue
		}
		next += r.step
		sp, ok := r.grams.lookup(w)
		if !ok {
			continue
		}
		g, ok := extend(r, text, i, sp)
		if !ok {
			continue
		}
		switch {
		case cur.start < 0:
			cur = g
		case g.start <= cur.end:
			cur.start, cur.end = min(cur.start, g.start), max(cur.end, g.end)
		default:
			if !found(cur) {
				return
			}
			cur = g
		}
		// Go on after the run, from a clean register.
		i, w, k, next = g.end-1, 0, 0, r.step*((gram+r.step-1)/r.step)
	}
	if cur.start >= 0 {
		found(cur)
	}
}

// extend extends the gram of text ending at index last along each of
// the occurrences sp lists, and returns the widest run that is at least
// as long as its form's minRun, if any.
func extend[T ~string | ~[]byte](r *Redactor, text T, last int, sp span) (region, bool) {
	// The gram's first character.
	first, n := last, 1
	for n < gram {
		if first--; !space[text[first]] {
			n++
		}
	}
	best, ok := region{}, false
	for _, o := range r.occs[sp.start:sp.end] {
		f := r.forms[o.f].text
		start, back := before(text, first, f[:o.off])
		end, ahead := after(text, last+1, f[int(o.off)+gram:])
		if back+gram+ahead < r.forms[o.f].minRun {
			continue
		}
		if !ok {
			best, ok = region{start, end}, true
			continue
		}
		best.start, best.end = min(best.start, start), max(best.end, end)
	}
	return best, ok
}

// before matches the end of f against text just before index i,
// whitespace skipped, and returns where the match starts in text and how
// many characters of f it holds.
func before[T ~string | ~[]byte](text T, i int, f string) (start, n int) {
	start = i
	for j := i - 1; j >= 0 && n < len(f); j-- {
		c := text[j]
		if space[c] {
			continue
		}
		if c != f[len(f)-1-n] {
			break
		}
		n++
		start = j
	}
	return start, n
}

// after matches the start of f against text from index i on, whitespace
// skipped, and returns where the match ends in text and how many
// characters of f it holds.
func after[T ~string | ~[]byte](text T, i int, f string) (end, n int) {
	end = i
	for j := i; j < len(text) && n < len(f); j++ {
		c := text[j]
		if space[c] {
			continue
		}
		if c != f[n] {
			break
		}
		n++
		end = j + 1
	}
	return end, n
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

// Stream redacts a text that arrives in pieces (the deltas of a streamed
// reply), so that a secret split across pieces is caught too: Write
// returns what can be shown of the text so far and holds back its end
// when that end could be part of a secret, Flush returns the rest. A nil
// or empty Redactor's Stream holds nothing back. A Stream is not safe for
// concurrent use.
type Stream struct {
	r       *Redactor
	pending string
}

// Stream returns a stream redactor of r.
func (r *Redactor) Stream() *Stream { return &Stream{r: r} }

// Write takes the next piece of the text and returns what of the text so
// far is certain not to hold any part of a secret that is still to come,
// redacted.
func (s *Stream) Write(piece string) string {
	if s.r.Empty() {
		return piece
	}
	text := s.pending + piece
	// What is held back: the longest end of the text that is a piece of
	// a form (a run the next piece could make long enough, or longer),
	// and any run that reaches into it.
	cut := len(text) - tail(s.r, text)
	var runs []region
	scan(s.r, text, func(g region) bool {
		if g.end > cut {
			cut = min(cut, g.start)
			return false
		}
		runs = append(runs, g)
		return true
	})
	var b strings.Builder
	done := 0
	for _, g := range runs {
		b.WriteString(text[done:g.start])
		b.WriteString(Mark)
		done = g.end
	}
	b.WriteString(text[done:cut])
	s.pending = text[cut:]
	return b.String()
}

// Flush returns what Write held back, redacted, and empties the stream.
func (s *Stream) Flush() string {
	rest := s.r.String(s.pending)
	s.pending = ""
	return rest
}

// tail returns the length in bytes of the longest end of text that is a
// piece of one of r's forms, whitespace skipped (and the whitespace after
// it included); at most maxTail.
func tail(r *Redactor, text string) int {
	// The last gram characters, and where the earliest of them is.
	var w uint64
	n, first := 0, len(text)
	for i := len(text) - 1; i >= 0 && n < gram; i-- {
		if c := text[i]; !space[c] {
			w = w<<8 | uint64(c)
			n++
			first = i
		}
	}
	if n == 0 {
		return 0
	}
	start := len(text)
	if n == gram {
		if sp, ok := r.grams.lookup(w); ok {
			for _, o := range r.occs[sp.start:sp.end] {
				f := r.forms[o.f].text
				if s, _ := before(text, first, f[:o.off]); s < start {
					start = s
				}
			}
			return min(len(text)-start, maxTail)
		}
	}
	// No piece of gram characters or more: try shorter ones, longest
	// first.
	for m := min(n, gram-1); m > 0; m-- {
		var piece [gram]byte
		got := 0
		i := len(text) - 1
		for ; i >= 0 && got < m; i-- {
			if c := text[i]; !space[c] {
				got++
				piece[m-got] = c
			}
		}
		if _, ok := r.short[pack(piece[:m])]; ok {
			return len(text) - (i + 1)
		}
	}
	return 0
}

// span is where a gram's occurrences lie in Redactor.occs.
type span struct{ start, end int32 }

// gramTable maps grams to their spans: an open-addressing hash table,
// at most a quarter full, so that a gram that is not there (nearly every
// lookup) costs a multiplication and a load or two.
type gramTable struct {
	keys  []uint64
	spans []span // end 0: an empty slot
	shift uint
}

// newGramTable returns the table of keys, with spans[i] the span of
// keys[i].
func newGramTable(keys []uint64, spans []span) gramTable {
	size, bits := 8, uint(3)
	for size < 4*len(keys) {
		size, bits = 2*size, bits+1
	}
	t := gramTable{keys: make([]uint64, size), spans: make([]span, size), shift: 64 - bits}
	for i, k := range keys {
		j := t.slot(k)
		for t.spans[j].end != 0 {
			j = (j + 1) & (len(t.keys) - 1)
		}
		t.keys[j], t.spans[j] = k, spans[i]
	}
	return t
}

// slot returns the first slot to look in for k.
func (t *gramTable) slot(k uint64) int { return int((k * 0x9E3779B97F4A7C15) >> t.shift) }

// lookup returns the span of the gram k, if it is in the table.
func (t *gramTable) lookup(k uint64) (span, bool) {
	if len(t.keys) == 0 {
		return span{}, false
	}
	for j := t.slot(k); ; j = (j + 1) & (len(t.keys) - 1) {
		sp := t.spans[j]
		if sp.end == 0 {
			return span{}, false
		}
		if t.keys[j] == k {
			return sp, true
		}
	}
}
