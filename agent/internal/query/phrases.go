package query

import (
	"strings"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// Phrases is the agent's detection strategy. It splits the reply into
// sentences and lines as they complete (skipping fenced code blocks) and
// recognises in each:
//
//   - the protocol of [ProtocolHelp]: a line "QUERY: read src/main.rs", or
//     a tag <query kind="read" path="src/main.rs"/>, recognised as soon as
//     its line (or the tag) ends;
//   - a request in prose, by a small classifier over the sentence's cues:
//     an intent (I need to, let me, I'd like to see, can you show me, a
//     question that is not put to the user), a verb that says what is
//     wanted (read, open, look at; list, what files; search, grep, where
//     is X defined; environment, installed, which branch), and a target:
//     a path-like token (a slash, a known extension or file name, a name in
//     backquotes), a quoted pattern. Negative cues veto a sentence: the
//     past tense (I read, I've looked at), advice or hypotheticals (you
//     can, if you, I could, once I), questions put to the user (should I,
//     do you want me to), descriptions without an intent (the file
//     src/x.go contains ...). "it" or "that file" after a read verb means
//     the last file the reply named, and a request that ends with a colon
//     takes its target from the next line.
//
// Its precision and recall on the corpus of agent/internal/query/testdata are
// reported by TestCorpus and in docs/queries.md.
type Phrases struct{}

// NewDetector implements [Strategy].
func (Phrases) NewDetector() Detector { return &phraseDetector{} }

// phraseDetector is the Detector of [Phrases].
type phraseDetector struct {
	text      strings.Builder
	start     int    // the start of the sentence being read
	lineStart int    // the start of the line being read
	scan      int    // the next byte to examine
	fence     bool   // inside a fenced code block
	pending   bool   // the last sentence asked to read what the next line names
	lastFile  string // the last file the reply named outside code
	done      bool   // a query was reported
	cls       classifier
}

// Feed implements [Detector].
func (d *phraseDetector) Feed(delta string) (Match, bool) {
	if d.done {
		return Match{}, false
	}
	d.text.WriteString(delta)
	text := d.text.String()
	for i := d.scan; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\n':
			line := strings.TrimSpace(text[d.lineStart:i])
			if strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") {
				d.fence = !d.fence
				d.start, d.lineStart = i+1, i+1
				continue
			}
			if d.fence && !isProtocolLine(line) {
				d.start, d.lineStart = i+1, i+1
				continue
			}
			if m, ok := d.sentence(text, i+1, true); ok {
				return m, true
			}
			d.lineStart = i + 1
		case d.fence:
		case c == '.' || c == '?' || c == '!':
			if i+1 == len(text) {
				d.scan = i // decided by the next byte
				return Match{}, false
			}
			if n := text[i+1]; n == ' ' || n == '\t' || n == '\r' {
				if m, ok := d.sentence(text, i+1, false); ok {
					return m, true
				}
			}
		case c == '>' && i > 0 && text[i-1] == '/':
			if strings.Contains(text[d.start:i], "<query") {
				if m, ok := d.sentence(text, i+1, false); ok {
					return m, true
				}
			}
		}
	}
	d.scan = len(text)
	return Match{}, false
}

// Flush implements [Detector].
func (d *phraseDetector) Flush() (Match, bool) {
	if d.done {
		return Match{}, false
	}
	text := d.text.String()
	if d.fence {
		line := strings.TrimSpace(text[d.lineStart:])
		if !isProtocolLine(line) {
			return Match{}, false
		}
	}
	return d.sentence(text, len(text), true)
}

// sentence classifies text[d.start:end], which a terminator ended (lineEnd:
// a newline or the end of the reply), and starts the next sentence at end.
func (d *phraseDetector) sentence(text string, end int, lineEnd bool) (Match, bool) {
	s := text[d.start:end]
	d.start = end
	trimmed := strings.TrimSpace(s)
	if trimmed == "" {
		return Match{}, false
	}
	pending := d.pending
	d.pending = false
	q, v := d.cls.classify(trimmed, d.lastFile, pending)
	if v.file != "" {
		d.lastFile = v.file
	}
	if v.pending && (lineEnd || strings.HasSuffix(trimmed, ":")) {
		d.pending = true
	}
	if !v.ok {
		return Match{}, false
	}
	d.done = true
	return Match{Query: q, End: end, Sentence: trimmed}, true
}

// typographic replaces typographic quotes with plain ones.
var typographic = strings.NewReplacer("\u2019", "'", "\u2018", "'", "\u201c", `"`, "\u201d", `"`)

// verdict is what the classifier says of a sentence besides its query.
type verdict struct {
	ok      bool   // the sentence asks the query
	pending bool   // it asks to read what the next line names
	file    string // the last file it names, for "it" in the next ones
}

// classifier recognises the query of one sentence.
type classifier struct{}

// classify returns the query the sentence asks, if any. lastFile is the
// file the reply named last; pending says the sentence before asked for a
// file it did not name.
func (classifier) classify(s, lastFile string, pending bool) (chat.Query, verdict) {
	if q, ok := parseProtocol(s); ok {
		return q, verdict{ok: true}
	}
	s = typographic.Replace(s)
	s = stripMarker(s)
	ts := targetsOf(s)
	var v verdict
	if f := lastFileOf(ts); f != "" {
		v.file = f
	}
	if rest, cut := presentClauses(s); cut {
		if v.file != "" {
			lastFile = v.file // "it" is the file just read
		}
		s, ts = rest, targetsOf(rest)
	}
	lower := strings.ToLower(s)
	if pending {
		if f := firstFile(ts); f != "" && len(strings.Fields(s)) <= 3 {
			v.ok = true
			return chat.Query{Kind: chat.QueryRead, Path: f}, v
		}
	}
	if vetoed(lower) || !hasIntent(lower) || plansEdit(lower) {
		return chat.Query{}, v
	}
	if hasAny(lower, searchVerbs) {
		if pat, dir := searchOf(s, lower, ts); pat != "" {
			v.ok = true
			return chat.Query{Kind: chat.QuerySearch, Pattern: pat, Path: dir}, v
		}
	}
	readish := hasAny(lower, readVerbs)
	if f := firstFile(ts); f != "" && readish {
		v.ok = true
		return chat.Query{Kind: chat.QueryRead, Path: f}, v
	}
	if readish && lastFile != "" && hasAny(lower, pronouns) && firstDir(ts) == "" {
		v.ok = true
		return chat.Query{Kind: chat.QueryRead, Path: lastFile}, v
	}
	if hasAny(lower, envCues) {
		v.ok = true
		return chat.Query{Kind: chat.QueryEnvironment}, v
	}
	if hasAny(lower, projectCues) {
		v.ok = true
		return chat.Query{Kind: chat.QueryProject}, v
	}
	dir := firstDir(ts)
	if hasAny(lower, listVerbs) || (readish && dir != "") {
		if dir == "" && firstFile(ts) != "" {
			return chat.Query{}, v // a file with a list verb: not a listing
		}
		if dir == "" {
			dir = "."
		}
		v.ok = true
		return chat.Query{Kind: chat.QueryList, Path: dir}, v
	}
	if readish && strings.HasSuffix(s, ":") {
		v.pending = true
	}
	return chat.Query{}, v
}

// stripMarker removes a list marker or a quote mark from the start of s.
func stripMarker(s string) string {
	s = strings.TrimLeft(s, "-*•> \t")
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i > 0 && i < len(s) && (s[i] == '.' || s[i] == ')') {
		s = strings.TrimSpace(s[i+1:])
	}
	return s
}
