package chat

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Conversation is an append-only list of messages with an identifier.
//
// A Conversation is a small value (a pointer to shared storage, which
// holds the identifier too, a length and a size) that is cheap to copy.
// Append never modifies what other copies see: copies share storage while
// they are used in a line, as a state machine uses them, and a copy that
// appends after another one did gets storage of its own. Appending is
// amortised O(1) whatever the length, so the cost of a transition does not
// grow with the conversation.
//
// The zero Conversation is empty and ready to use.
type Conversation struct {
	// log is the storage, nil for the zero Conversation. The identifier
	// is kept there, not here: the compiler keeps a struct of at most
	// four words in registers, and with the identifier's two words a
	// Conversation had five, so that every copy of it, which a machine's
	// every step makes, went through memory (docs/performance.md, issue 31).
	log *messageLog
	n   int
	// size is the Size of the n messages, kept as they are appended.
	size int
}

// messageLog is the storage that copies of a Conversation share, and the
// tool rounds started from them (see ToolRound).
type messageLog struct {
	// id is the identifier of the conversations that use the storage;
	// empty in a round's storage of its own.
	id      string
	msgs    []Message
	reports []toolReport
}

// NewConversation returns an empty conversation with the given identifier.
func NewConversation(id string) Conversation {
	if id == "" {
		return Conversation{}
	}
	return Conversation{log: &messageLog{id: id}}
}

// ID returns the conversation's identifier.
func (c Conversation) ID() string {
	if c.log == nil {
		return ""
	}
	return c.log.id
}

// Len returns the number of messages.
func (c Conversation) Len() int { return c.n }

// Messages returns the messages in order. The slice shares memory with the
// conversation: read it, never modify it. Appending to it is safe (its
// capacity is clipped, so append copies).
func (c Conversation) Messages() []Message {
	if c.n == 0 {
		return nil // an empty conversation encodes as null, whatever its copies appended
	}
	return c.log.msgs[:c.n:c.n]
}

// Size returns an estimate of the bytes the messages take in a request:
// their text, tool calls and tool results, their images at the text
// their tokens come to (see ImageTokens), and a few bytes of framing
// each. It is kept as messages are appended, so it costs O(1); a
// conversation cut back with Truncate counts its messages again.
func (c Conversation) Size() int { return c.size }

// messageOverhead is what Size counts for a message's framing: its role
// and the structure around its content.
const messageOverhead = 16

// size returns the bytes m takes in a request, as Size counts them.
func (m *Message) size() int {
	n := messageOverhead + len(m.Content) + len(m.ToolCallID) + len(m.ToolName)
	for i := range m.ToolCalls {
		tc := &m.ToolCalls[i]
		n += messageOverhead + len(tc.ID) + len(tc.Name) + len(tc.Arguments)
	}
	for _, th := range m.Thinking { // sent back with the message
		n += messageOverhead + len(th.Text) + len(th.Signature) + len(th.Redacted)
	}
	// An image counts what the model reads of it, not its base64.
	n += len(m.Images) * (messageOverhead + imageSize)
	return n
}

// Last returns the last message and true, or false when the conversation is empty.
func (c Conversation) Last() (Message, bool) {
	if c.n == 0 {
		return Message{}, false
	}
	return c.log.msgs[c.n-1], true
}

// Append returns the conversation with msgs added at the end. c itself is
// unchanged.
func (c Conversation) Append(msgs ...Message) Conversation {
	if len(msgs) == 0 {
		return c
	}
	if !c.roomFor(len(msgs)) {
		c = c.reserve(len(msgs))
	}
	c.log.msgs = append(c.log.msgs, msgs...)
	c.n = len(c.log.msgs)
	for i := range msgs {
		c.size += msgs[i].size()
	}
	return c
}

// AppendMessage returns the conversation with *msg added at the end, with
// role when msg has none. c itself is unchanged, and so is *msg.
func (c Conversation) AppendMessage(msg *Message, role Role) Conversation {
	if !c.roomFor(1) {
		c = c.reserve(1)
	}
	c.log.msgs = append(c.log.msgs, *msg)
	c.n = len(c.log.msgs)
	if last := &c.log.msgs[c.n-1]; last.Role == "" {
		last.Role = role
	}
	c.size += msg.size()
	return c
}

// roomFor reports whether c may append k messages in place: c is the last
// copy that appended to its storage, and the storage has room. It is the
// appends' common case, checked where they are called (reserve is not
// inlined).
func (c *Conversation) roomFor(k int) bool {
	return c.log != nil && len(c.log.msgs) == c.n && c.n+k <= cap(c.log.msgs)
}

// reserve returns c with room for k more messages at the end of its
// storage, which it may then append in place: c's own storage when c is
// the last copy that appended to it, new storage otherwise.
func (c Conversation) reserve(k int) Conversation {
	switch need := c.n + k; {
	case c.log == nil || len(c.log.msgs) != c.n:
		// Empty, or another copy appended first: take storage of our own.
		c.log = &messageLog{id: c.ID(), msgs: c.moved(max(2*need, 8))}
	case need > cap(c.log.msgs):
		// Full: double, so that each message is copied about once in all
		// (append's growth slows to 1.25x for large slices, which copies
		// a long conversation four times as often).
		c.log.msgs = c.moved(max(2*cap(c.log.msgs), need, 8))
	}
	return c
}

// AppendToolResults returns the conversation with one tool message per
// call of the round, in the LLM's order, each with the call's outcome (or
// none, for a call that has not completed). c itself is unchanged.
func (c Conversation) AppendToolResults(r ToolRound) Conversation {
	k := len(r.calls)
	if k == 0 {
		return c
	}
	if !c.roomFor(k) {
		c = c.reserve(k)
	}
	start := len(c.log.msgs)
	c.log.msgs = c.log.msgs[:start+k]
	for i := range r.calls {
		// Field by field, where the message lies (see ToolRound.report).
		call, msg := &r.calls[i], &c.log.msgs[start+i]
		msg.Role, msg.ToolCallID, msg.ToolName, msg.ToolCalls = RoleTool, call.ID, call.Name, nil
		msg.Content, msg.IsError = "", false
		if o := r.outcome(i); o != nil {
			msg.Content, msg.IsError = o.Content, o.IsError
		}
		c.size += msg.size()
	}
	c.n = len(c.log.msgs)
	return c
}

// Grow returns the conversation with room for n more messages, and for n
// more reports of the tool rounds started from it: appending them, one
// copy after another, allocates nothing. c itself is unchanged; the result
// has storage of its own unless c already had the room.
func (c Conversation) Grow(n int) Conversation {
	if n <= 0 || c.log != nil && len(c.log.msgs) == c.n && cap(c.log.msgs)-c.n >= n && cap(c.log.reports)-len(c.log.reports) >= n {
		return c
	}
	c.log = &messageLog{id: c.ID(), msgs: c.moved(c.n + n), reports: make([]toolReport, 0, n)}
	return c
}

// moved returns new storage of the given capacity holding c's messages.
func (c Conversation) moved(capacity int) []Message {
	fresh := make([]Message, c.n, capacity)
	if c.log != nil {
		copy(fresh, c.log.msgs[:c.n])
	}
	return fresh
}

// Truncate returns the conversation's first n messages: all of them when n
// is Len or more, none when n is 0 or less. c itself is unchanged, and so
// are the other copies: appending to the result gives it storage of its
// own.
func (c Conversation) Truncate(n int) Conversation {
	if n = min(max(n, 0), c.n); n == c.n {
		return c
	}
	c.n, c.size = n, 0
	for i := range c.log.msgs[:n] {
		c.size += c.log.msgs[i].size()
	}
	return c
}

// Common returns how many messages c and o share at their start: o.Len()
// when c is o with messages appended. It is O(1) when c grew from o (a
// copy appending to the storage o uses), O(n) otherwise.
func (c Conversation) Common(o Conversation) int {
	n := min(c.n, o.n)
	if n == 0 || c.log == o.log {
		// Storage is only ever appended to: what two copies sharing it
		// hold up to the shorter one's length is the same.
		return n
	}
	a, b := c.Messages(), o.Messages()
	for i := range n {
		if !a[i].equal(b[i]) {
			return i
		}
	}
	return n
}

// conversationJSON is the wire form of a Conversation.
type conversationJSON struct {
	ID       string    `json:"id"`
	Messages []Message `json:"messages"`
}

// MarshalJSON encodes the conversation as {"id": ..., "messages": [...]}.
func (c Conversation) MarshalJSON() ([]byte, error) {
	return json.Marshal(conversationJSON{ID: c.ID(), Messages: c.Messages()})
}

// UnmarshalJSON decodes the form MarshalJSON writes.
func (c *Conversation) UnmarshalJSON(data []byte) error {
	var w conversationJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return fmt.Errorf("decode conversation: %w", err)
	}
	*c = NewConversation(w.ID).Append(w.Messages...)
	return nil
}

// Equal reports whether two conversations have the same identifier and messages.
func (c Conversation) Equal(o Conversation) bool {
	if c.ID() != o.ID() || c.n != o.n {
		return false
	}
	a, b := c.Messages(), o.Messages()
	for i := range a {
		if !a[i].equal(b[i]) {
			return false
		}
	}
	return true
}

// equal reports whether two messages are the same.
func (m Message) equal(o Message) bool {
	if m.Role != o.Role || m.Content != o.Content || m.ToolCallID != o.ToolCallID ||
		m.ToolName != o.ToolName || m.IsError != o.IsError || m.Summary != o.Summary || m.ID != o.ID || len(m.ToolCalls) != len(o.ToolCalls) ||
		!slices.Equal(m.Thinking, o.Thinking) || !slices.EqualFunc(m.Images, o.Images, Image.equal) {
		return false
	}
	for i, tc := range m.ToolCalls {
		oc := o.ToolCalls[i]
		if tc.ID != oc.ID || tc.Name != oc.Name || string(tc.Arguments) != string(oc.Arguments) {
			return false
		}
	}
	return true
}
