package redact

import (
	"strings"
)

// Stream redacts a text that arrives in pieces (the deltas of a streamed
// reply), so that a secret split across pieces is caught too: Write
// returns what can be shown of the text so far, Flush the rest once the
// text has ended. A nil or empty Redactor's Stream holds nothing back. A
// Stream is not safe for concurrent use.
//
// What is shown at once and what waits: an end of the text that holds
// [gram] or more characters of a secret's form (a rare sight in ordinary
// text) waits for the next piece, which tells whether it is a run to
// redact; a shorter end that could begin a secret (a word's last letters
// almost always could: every letter is in some form of a key) is shown
// at once, and kept as context: when the next piece goes on with the
// secret into a run, the run is redacted from where the piece starts.
// So at most gram-1 characters of a secret show before its mark, fewer
// than the [MinRun] a run must have to be redacted at all, and a reply's
// last characters are on the screen as soon as they arrive.
type Stream struct {
	r *Redactor
	// shown is the end of the text written so far that could begin a
	// secret, fewer than gram characters of it; pending is what Write
	// held back after it.
	shown, pending string
}

// Stream returns a stream redactor of r.
func (r *Redactor) Stream() *Stream { return &Stream{r: r} }

// Write takes the next piece of the text and returns what of the text so
// far can be shown, redacted: everything but an end that holds a
// gram of a secret's form (see Stream).
func (s *Stream) Write(piece string) string {
	if s.r.Empty() {
		return piece
	}
	text := s.shown + s.pending + piece
	return s.emit(text, len(text)-held(s.r, text))
}

// Flush returns what Write held back, redacted, and empties the stream.
func (s *Stream) Flush() string {
	if s.r.Empty() {
		return ""
	}
	text := s.shown + s.pending
	rest := s.emit(text, len(text))
	s.shown, s.pending = "", ""
	return rest
}

// emit returns text from the end of s.shown up to cut, its runs
// redacted, and keeps the rest as pending: a run that reaches past cut
// is held back whole, a run that starts in s.shown is redacted from the
// end of s.shown on.
func (s *Stream) emit(text string, cut int) string {
	shown := len(s.shown)
	cut = max(cut, shown)
	var runs []region
	scan(s.r, text, func(g region) bool {
		if g.end > cut {
			cut = max(min(cut, g.start), shown)
			return false
		}
		if g.end > shown {
			runs = append(runs, g)
		}
		return true
	})
	var b strings.Builder
	done := shown
	for _, g := range runs {
		b.WriteString(text[done:max(done, g.start)])
		b.WriteString(Mark)
		done = g.end
	}
	b.WriteString(text[done:cut])
	s.pending = text[cut:]
	// The new context: the end of what is shown that could begin a
	// secret, after the last mark.
	from := 0
	if len(runs) > 0 {
		from = done
	}
	s.shown = text[cut-min(cut-from, shortTail(s.r, text[:cut])) : cut]
	return b.String()
}

// held returns the length in bytes of the end of text a Stream holds
// back: the longest end that holds a whole gram of one of r's forms, as
// far back as it goes along the form, whitespace skipped (and the
// whitespace after it included); at most maxTail; 0 when the last gram
// characters are no gram of a form.
func held(r *Redactor, text string) int {
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
	if n < gram {
		return 0
	}
	sp, ok := r.grams.lookup(w)
	if !ok {
		return 0
	}
	start := len(text)
	for _, o := range r.occs[sp.start:sp.end] {
		f := r.forms[o.f].text
		if s, _ := before(text, first, f[:o.off]); s < start {
			start = s
		}
	}
	return min(len(text)-start, maxTail)
}

// shortTail returns the length in bytes of the longest end of text that
// is a piece of one of r's forms shorter than gram, whitespace skipped
// (and the whitespace after it included).
func shortTail(r *Redactor, text string) int {
	for m := gram - 1; m > 0; m-- {
		var piece [gram]byte
		got := 0
		i := len(text) - 1
		for ; i >= 0 && got < m; i-- {
			if c := text[i]; !space[c] {
				got++
				piece[m-got] = c
			}
		}
		if got < m {
			continue
		}
		if _, ok := r.short[pack(piece[:m])]; ok {
			return len(text) - (i + 1)
		}
	}
	return 0
}
