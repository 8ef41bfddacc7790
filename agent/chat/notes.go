package chat

import "strings"

// The notes the agent writes in the user's name: user messages that no one
// typed. They start no turn and are never shown as what the user said;
// a thread's first prompt is its first typed message (IsTyped).

// ContinueNote is the message that asks the model to continue a reply cut
// at its token limit. The reply stays in the conversation as it was cut.
const ContinueNote = "[Your reply reached its token limit and was cut off there. Continue it exactly where it stopped, without repeating anything.]"

// UserStoppedNote is the message the conversation gets when the user stops
// a turn before the model's reply ended, so that the model knows what the
// next message follows.
const UserStoppedNote = "[The user stopped this turn before the reply ended.]"

// QueryResultPrefix starts the message that carries a query's result back
// to the model (see behavior's FormatQueryResult); the turn's queries are
// counted by it.
const QueryResultPrefix = "[query "

// QueryResultEnd ends the message that carries a query's result.
const QueryResultEnd = "[end of the query's result]"

// IsTyped reports whether m is a message the user typed: a user message
// that is not a note the agent wrote in the user's name (IsAgentNote).
func IsTyped(m Message) bool {
	return m.Role == RoleUser && !IsAgentNote(m)
}

// IsAgentNote reports whether a user message is a note the agent wrote in
// the user's name (ContinueNote, UserStoppedNote, a compaction's summary,
// a query's result), not the user's own message: it starts no turn, and is
// not shown as what the user said.
func IsAgentNote(m Message) bool {
	return m.Role == RoleUser && (m.Summary || m.Content == ContinueNote || m.Content == UserStoppedNote || IsQueryResult(m))
}

// IsQueryResult reports whether m is the message that carries a query's
// result back to the model (see behavior's FormatQueryResult).
func IsQueryResult(m Message) bool {
	return m.Role == RoleUser && strings.HasPrefix(m.Content, QueryResultPrefix) && strings.HasSuffix(m.Content, QueryResultEnd)
}
