package behavior

import (
	"fmt"
	"strings"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// FormatQueryResult returns the message that gives the model the outcome
// of q: a first line naming the query and saying whether it failed, the
// outcome, and a closing line, so that the model tells the result from
// the user's words.
func FormatQueryResult(q chat.Query, outcome chat.ToolOutcome) string {
	status := "result"
	if outcome.IsError {
		status = "failed"
	}
	content := strings.TrimRight(outcome.Content, "\n")
	if content == "" {
		content = "(nothing)"
	}
	return fmt.Sprintf("%s%s: %s]\n%s\n%s", chat.QueryResultPrefix, q, status, content, chat.QueryResultEnd)
}

// QueryLimitReached reports whether the turn has had MaxQueries queries:
// whether that many results of queries follow the turn's last message of
// the user. It looks back over the turn's messages only, at most until it
// has counted MaxQueries results. A compaction keeps the turn's queries
// and their results whole after the summary (see split), so the count
// survives it.
func (a *Agent) QueryLimitReached(c chat.Conversation) bool {
	if a.cfg.MaxQueries <= 0 {
		return true
	}
	msgs := c.Messages()
	n := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		switch {
		case m.Role != chat.RoleUser || m.Content == chat.ContinueNote:
			continue // a continued reply is still the turn's
		case !chat.IsQueryResult(m):
			return false // the turn's first message, or the note that stopped it
		}
		if n++; n >= a.cfg.MaxQueries {
			return true
		}
	}
	return false
}

// StartQuery appends the reply's text up to the query (the query
// included) as the assistant's message.
func (a *Agent) StartQuery(c chat.Conversation, text string) chat.Conversation {
	return c.Append(chat.Message{Role: chat.RoleAssistant, Content: text})
}

// RefuseQuery appends the reply's text up to the query and describes the
// limit the turn reached, for the error the turn ends with.
func (a *Agent) RefuseQuery(c chat.Conversation, text string) (chat.Conversation, string) {
	c = a.StartQuery(c, text)
	return c, fmt.Sprintf("the model asked more than %d queries in one turn (the limit, -max-queries); the turn ends here: tell it what to do next, or raise the limit", a.cfg.MaxQueries)
}

// InjectQueryResult appends the query's result as a user message (see
// FormatQueryResult) and builds the next request.
func (a *Agent) InjectQueryResult(c chat.Conversation, q chat.Query, outcome chat.ToolOutcome) (chat.Conversation, chat.Request) {
	c = c.Append(chat.UserMessage(FormatQueryResult(q, outcome)))
	return c, a.BuildRequest(c)
}
