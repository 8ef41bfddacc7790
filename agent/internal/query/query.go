// Package query recognises, in the streamed reply of a model that cannot
// call tools, the places where the model asks for something only the agent
// can give it — "I need to read src/main.rs", "What's in the environment?",
// "QUERY: search TODO in cmd" — so that the agent can cut the reply there,
// run the query through its tools and send the result back (the seeds'
// server query detection and injection).
//
// A [Strategy] makes one [Detector] per reply; the detector is fed the
// reply's text delta by delta and reports the first query as soon as the
// text that completes it has arrived, with the offset where it ends. The
// package provides [Phrases], which recognises both an explicit protocol
// the system prompt teaches ([ProtocolHelp]) and the way models phrase
// such needs in prose, and [Runner], which runs a query.
package query

import "github.com/fsmgen/fsmgen/agent/chat"

// Match is a query recognised in a reply.
type Match struct {
	// Query is what the model asked for.
	Query chat.Query
	// End is the offset, in bytes, in the reply's text (every delta fed so
	// far, joined) just past the sentence or line that asks the query: the
	// reply is cut there.
	End int
	// Sentence is the sentence or line the query was recognised in.
	Sentence string
}

// Detector recognises queries in one streamed reply. It is not safe for
// concurrent use.
type Detector interface {
	// Feed gives the detector the next piece of the reply's text and
	// returns the first query whose sentence is complete in the text so
	// far. Once it has reported a query it reports no other: the reply is
	// cut there.
	Feed(delta string) (Match, bool)
	// Flush says the reply has ended: a query in its last sentence, which
	// no terminator ended, is complete now.
	Flush() (Match, bool)
}

// Strategy is a way of recognising queries: it makes a fresh [Detector]
// for each reply.
type Strategy interface {
	NewDetector() Detector
}

// Detect feeds the whole text to a new detector of s, as one delta, and
// returns the query it finds: for tests and for text that is not streamed.
func Detect(s Strategy, text string) (Match, bool) {
	d := s.NewDetector()
	if m, ok := d.Feed(text); ok {
		return m, true
	}
	return d.Flush()
}
