package redact

import (
	"strings"
)

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
