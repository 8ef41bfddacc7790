package behavior

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// Compaction: before a request whose estimated size passes the threshold
// (CompactAt of the model's context window, or less when that leaves no
// room for the reply's max_tokens: see Threshold), or when the user types /compact between turns,
// the machine asks the model for a summary of the older part of the
// conversation (the summary request: a transcript of that part, without
// tools) and replaces that part by one user-role message holding the
// summary, marked chat.Message.Summary. What is kept whole:
//
//   - the last message the user typed, and
//   - the tail: the message the request answers — a user message; or the
//     pending tool round, the assistant message with tool calls and their
//     results (a tool result never loses its call: both providers refuse
//     an orphan result); or, between turns, the assistant's last reply.
//     When the tail is, or follows, a note that refers to the reply
//     before it (chat.ContinueNote, a query's result), the tail reaches back
//     over the turn's chain of replies and notes: the model is never
//     told to continue a reply it cannot see, and the turn's queries are
//     still counted (see chainStart).
//
// The compacted conversation is [summary, last user message, tail...].

// BytesPerToken is how many bytes of a request the compaction threshold
// counts as one token. Models' tokenizers average 3.5 to 4 bytes a token on
// English and fewer on code; 3 errs towards compacting early.
const BytesPerToken = 3

// DefaultCompactAt is the share of the context window DefaultConfig
// compacts at.
const DefaultCompactAt = 0.8

// SummaryHeading starts the content of the summary message, so that the
// model (and a person reading the thread) knows what it is.
const SummaryHeading = "[Summary of the earlier conversation, written by the model when the agent compacted it to save context. The user's latest message and the work in progress follow it verbatim.]"

// summarySystem is the system prompt of a summary request.
const summarySystem = `You summarise the conversation between a user and a coding agent so that the agent can continue the work from your summary alone: the messages you summarise are then removed from its context.
Write for the agent, not for the user. Be specific and concise; keep exact names (files, functions, commands, flags, errors). Never invent anything.`

// summaryInstructions end the transcript of a summary request.
const summaryInstructions = `Summarise the transcript above. The user's latest message and the tool round in progress, if any, are kept verbatim after your summary, so summarise them only as far as the work already done on them goes. Use these sections:

1. Task: what the user asked for, in their words where it matters, and every constraint or preference they stated.
2. Decisions: what was decided or learned, and why (approaches chosen or rejected, facts found about the code).
3. Files: every file read, created or changed, with what was done to it.
4. State: what was done last, what works, what fails (with the exact error), and what remains to do.

If the transcript starts with an earlier summary, fold it in: nothing it says may be lost unless it no longer holds. Answer with the summary only.`

// transcriptCap bounds one message's part of a transcript at first; a
// transcript longer than the budget is cut further (see transcript).
const transcriptCap = 4 << 10

// compactionOn reports whether the threshold is set.
func (a *Agent) compactionOn() bool { return a.cfg.CompactAt > 0 && a.cfg.ContextWindow > 0 }

// SummaryMaxTokens is the longest summary the summary request asks for,
// in tokens (less when Config.MaxTokens is less, or a quarter of the
// context window is).
const SummaryMaxTokens = 8192

// Margin returns the tokens of the context window the agent leaves free
// besides a request's input and its reply's max_tokens, for the error of
// its estimate (see EstimateTokens): a fiftieth of the window, at least
// 256; 0 when the window is not known.
func (a *Agent) Margin() int {
	if a.cfg.ContextWindow <= 0 {
		return 0
	}
	return max(256, a.cfg.ContextWindow/50)
}

// Threshold returns the estimated tokens of a request above which the
// conversation is compacted before it is sent; 0 when compaction is off.
// It is CompactAt of the context window, or less when that leaves no room
// for the reply: providers refuse a request whose input and max_tokens
// together pass the window, so the threshold is at most the window less
// the reply's limit (at most half the window counted) and the margin.
func (a *Agent) Threshold() int { return a.threshold }

// computeThreshold computes Threshold from the configuration, once, in
// New: every request is checked against it.
func (a *Agent) computeThreshold() int {
	if !a.compactionOn() {
		return 0
	}
	w := a.cfg.ContextWindow
	return max(1, min(int(a.cfg.CompactAt*float64(w)), w-min(a.cfg.MaxTokens, w/2)-a.Margin()))
}

// maxTokensFor returns the reply's limit of a request whose input is
// estimated at tokens: want, or what the context window leaves (less the
// margin) when that is less, so that no request asks for more than the
// window holds. It is at least 1: a request that does not fit at all is
// sent, and the provider's refusal says so.
func (a *Agent) maxTokensFor(want, tokens int) int {
	if a.cfg.ContextWindow <= 0 {
		return want
	}
	return max(1, min(want, a.cfg.ContextWindow-tokens-a.Margin()))
}

// thinkingFor returns the thinking budget that fits a reply of maxTokens:
// Config.Thinking, or half the reply when the reply was cut to less than
// it, or none when half is under Anthropic's least budget (1024).
func (a *Agent) thinkingFor(maxTokens int) int {
	if a.cfg.Thinking < maxTokens {
		return a.cfg.Thinking
	}
	if maxTokens/2 < 1024 {
		return 0
	}
	return maxTokens / 2
}

// EstimateTokens estimates the tokens of the request for the conversation:
// its system prompt, tools and messages, at BytesPerToken. It costs O(1).
func (a *Agent) EstimateTokens(c chat.Conversation) int {
	return (a.fixedBytes + c.Size()) / BytesPerToken
}

// NeedsCompaction reports whether the request for the conversation would
// pass the compaction threshold and compaction would shorten it.
func (a *Agent) NeedsCompaction(c chat.Conversation) bool {
	return a.threshold > 0 && a.EstimateTokens(c) > a.threshold && a.CanCompact(c)
}

// CanCompact reports whether the conversation has an older part that
// compaction would summarise: a message besides the kept ones and an
// earlier summary.
func (a *Agent) CanCompact(c chat.Conversation) bool {
	dropped, _ := split(c.Messages())
	for _, m := range dropped {
		if !m.Summary {
			return true
		}
	}
	return false
}

// IsCompaction reports whether the error is of a summary request.
func (a *Agent) IsCompaction(origin chat.ErrorOrigin) bool {
	return origin == chat.OriginCompaction || origin == chat.OriginCompactCommand
}

// IsCompactCommand reports whether the user asked for the compaction
// between turns (/compact), with no request waiting for it.
func (a *Agent) IsCompactCommand(origin chat.ErrorOrigin) bool {
	return origin == chat.OriginCompactCommand
}

// EmptySummary reports whether the summary reply holds no text.
func (a *Agent) EmptySummary(response chat.Response) bool {
	return strings.TrimSpace(response.Message.Content) == ""
}

// StartCompaction builds the summary request of the conversation's older
// part, before the request that would pass the threshold.
func (a *Agent) StartCompaction(c chat.Conversation) (chat.ErrorOrigin, chat.Request) {
	return chat.OriginCompaction, a.SummaryRequest(c)
}

// StartCompactCommand builds the summary request of the conversation's
// older part, as the user asked between turns.
func (a *Agent) StartCompactCommand(c chat.Conversation) (chat.ErrorOrigin, chat.Request) {
	return chat.OriginCompactCommand, a.SummaryRequest(c)
}

// RetryCompaction builds the summary request again, for a retry.
func (a *Agent) RetryCompaction(c chat.Conversation) chat.Request {
	return a.SummaryRequest(c)
}

// ScheduleCompactionRetry counts the failed attempt of the summary request
// and computes the backoff delay, as for any request.
func (a *Agent) ScheduleCompactionRetry(retries int, err chat.LLMError) (int, int, time.Duration) {
	attempt := retries + 1
	return attempt, attempt, a.Backoff(attempt, err.RetryAfter)
}

// GiveUpCompaction describes the error the summary request failed with.
// The turn ends: the conversation is kept whole, and the next request
// tries to compact it again.
func (a *Agent) GiveUpCompaction(retries int, err chat.LLMError) string {
	return fmt.Sprintf("compacting the conversation failed: %s; it is kept whole. Send a message to go on (the agent tries to compact it again first), type /compact, or start a new thread",
		strings.TrimPrefix(a.GiveUp(retries, err), "LLM request failed: "))
}

// RefuseSummary says that the model's summary was empty.
func (a *Agent) RefuseSummary(chat.Response) string {
	return "compacting the conversation failed: the model's summary was empty; it is kept whole. Send a message to go on (the agent tries to compact it again first), or type /compact"
}

// CompactAndResume replaces the conversation's older part by the summary
// and builds the request that waited for it.
func (a *Agent) CompactAndResume(c chat.Conversation, response chat.Response) (chat.Conversation, chat.Request) {
	c = a.Compact(c, response)
	return c, a.BuildRequest(c)
}

// Compact replaces the conversation's older part by the summary: the
// result is the summary message, the last message the user typed, and the
// tail (see the top of this file).
func (a *Agent) Compact(c chat.Conversation, response chat.Response) chat.Conversation {
	_, kept := split(c.Messages())
	summary := chat.Message{Role: chat.RoleUser, Summary: true,
		Content: SummaryHeading + "\n\n" + strings.TrimSpace(response.Message.Content)}
	return chat.NewConversation(c.ID()).Grow(len(kept) + 1).Append(summary).Append(kept...)
}

// SummaryRequest builds the request that asks the model to summarise the
// conversation's older part: a transcript of it (the last user message
// and the tail included, for context) as one user message, then the
// instructions. No tools are offered, and nothing is written to the
// prompt cache (no later request starts as it does). The reply is limited
// to SummaryMaxTokens, and the transcript is cut to fit the context
// window with it and the margin (see transcript).
func (a *Agent) SummaryRequest(c chat.Conversation) chat.Request {
	msgs := c.Messages()
	_, kept := split(msgs)
	// The tail's tool results are not summarised (they are kept): the
	// transcript ends with the last message the user typed.
	upTo := len(msgs) - len(kept)
	if len(kept) > 0 && kept[0].Role == chat.RoleUser && !kept[0].Summary {
		upTo++
	}
	w := a.cfg.ContextWindow
	maxTokens := min(SummaryMaxTokens, a.cfg.MaxTokens)
	budget := 0
	if w > 0 {
		maxTokens = max(1, min(maxTokens, w/4))
		budget = max(1, (w-maxTokens-a.Margin())*BytesPerToken-len(summarySystem)-len(summaryInstructions)-256)
	}
	text := "Transcript of the conversation to summarise:\n\n" + transcript(msgs[:min(upTo, len(msgs))], budget) +
		"\n---\n\n" + summaryInstructions
	return chat.Request{
		Model:       a.cfg.Model,
		System:      summarySystem,
		Messages:    []chat.Message{chat.UserMessage(text)},
		MaxTokens:   maxTokens,
		Temperature: a.cfg.Temperature,
		NoCache:     true,
	}
}

// split returns the messages compaction summarises and those it keeps
// whole, in order: the last message the user typed and the tail.
func split(msgs []chat.Message) (dropped, kept []chat.Message) {
	n := len(msgs)
	if n == 0 {
		return nil, nil
	}
	t := n - 1 // the tail's start: back over the results to their call
	for t > 0 && msgs[t].Role == chat.RoleTool {
		t--
	}
	if chat.IsTyped(msgs[t]) {
		return msgs[:t], msgs[t:]
	}
	u := t - 1
	for u >= 0 && !chat.IsTyped(msgs[u]) {
		u--
	}
	t = chainStart(msgs, u, t)
	if u < 0 {
		return msgs[:t], msgs[t:]
	}
	dropped = append(append(dropped, msgs[:u]...), msgs[u+1:t]...)
	kept = append(append(kept, msgs[u]), msgs[t:]...)
	return dropped, kept
}

// chainBytes bounds the size of the replies and notes chainStart keeps
// before the tail, when no query result is among them.
const chainBytes = 64 << 10

// chainStart extends the tail starting at t back over the chain of the
// turn's replies it answers: when the tail is, or follows, an agent's
// note that refers to the reply before it (chat.ContinueNote, a query's
// result), the reply is kept with it, and so on back, never past u (the
// last message the user typed). A chain of continuations is kept as far
// as chainBytes allows (its last reply always); a chain with a query's
// result is kept whole, so that the turn's queries are still counted
// (see QueryLimitReached) — MaxQueries bounds it.
func chainStart(msgs []chat.Message, u, t int) int {
	refers := func(m chat.Message) bool {
		return m.Role == chat.RoleUser && (m.Content == chat.ContinueNote || chat.IsQueryResult(m))
	}
	isReply := func(i int) bool { return i > u && msgs[i].Role == chat.RoleAssistant }
	s := t
	if refers(msgs[s]) && isReply(s-1) {
		s--
	}
	start, size, query := s, 0, chat.IsQueryResult(msgs[t])
	for s-2 > u && msgs[s].Role == chat.RoleAssistant && refers(msgs[s-1]) && isReply(s-2) {
		query = query || chat.IsQueryResult(msgs[s-1])
		s -= 2
	}
	if query {
		return s
	}
	for i := start; i < len(msgs); i++ {
		size += textBytes(msgs[i])
	}
	for start-2 >= s {
		grown := size + textBytes(msgs[start-1]) + textBytes(msgs[start-2])
		if grown > chainBytes {
			break
		}
		start, size = start-2, grown
	}
	return start
}

// textBytes returns the bytes of m's text and tool calls' arguments.
func textBytes(m chat.Message) int {
	n := len(m.Content)
	for _, tc := range m.ToolCalls {
		n += len(tc.Arguments)
	}
	return n
}

// transcript renders msgs as text for a summary request. Each message's
// text, tool call and tool result is cut to transcriptCap bytes (its head
// and its end kept); when budget is positive and the transcript passes
// it, the cap is halved until it fits or reaches 256 bytes, and then the
// oldest messages after the first are left out, with a note saying how
// many.
func transcript(msgs []chat.Message, budget int) string {
	parts := func(limit int) []string {
		out := make([]string, len(msgs))
		for i, m := range msgs {
			out[i] = render(m, limit)
		}
		return out
	}
	total := func(ps []string) int {
		n := 0
		for _, p := range ps {
			n += len(p)
		}
		return n
	}
	limit := transcriptCap
	ps := parts(limit)
	for budget > 0 && total(ps) > budget && limit > 256 {
		limit /= 2
		ps = parts(limit)
	}
	if budget > 0 && total(ps) > budget && len(ps) > 2 {
		// Keep the first message (the earlier summary, or the task) and
		// the newest that fit.
		rest := budget - len(ps[0])
		start := len(ps)
		for start > 1 && rest-len(ps[start-1]) >= 0 {
			rest -= len(ps[start-1])
			start--
		}
		if start > 1 {
			note := fmt.Sprintf("[%d messages left out here: the transcript was too long to summarise whole]\n\n", start-1)
			ps = append([]string{ps[0], note}, ps[start:]...)
		}
	}
	return strings.Join(ps, "")
}

// render renders one message of a transcript, each part cut to limit
// bytes.
func render(m chat.Message, limit int) string {
	var b strings.Builder
	switch {
	case m.Summary:
		fmt.Fprintf(&b, "[earlier summary]\n%s\n\n", cut(strings.TrimPrefix(m.Content, SummaryHeading+"\n\n"), 4*limit))
	case m.Role == chat.RoleTool:
		status := "result"
		if m.IsError {
			status = "error"
		}
		fmt.Fprintf(&b, "[tool %s of %s %s]\n%s\n\n", status, m.ToolName, m.ToolCallID, cut(m.Content, limit))
	default:
		if m.Content != "" {
			fmt.Fprintf(&b, "[%s]\n%s\n\n", m.Role, cut(m.Content, limit))
		}
		for _, tc := range m.ToolCalls {
			args := string(tc.Arguments)
			if !json.Valid(tc.Arguments) {
				args = fmt.Sprintf("%q", args)
			}
			fmt.Fprintf(&b, "[%s calls %s %s]\n%s\n\n", m.Role, tc.Name, tc.ID, cut(args, limit))
		}
	}
	return b.String()
}

// cut returns s, or its head and end with a note of what was left out
// when it is longer than limit bytes. It never splits a UTF-8 sequence.
func cut(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	head, tail := limit*3/4, limit/4
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	end := len(s) - tail
	for end < len(s) && !utf8.RuneStart(s[end]) {
		end++
	}
	return fmt.Sprintf("%s\n[... %d bytes left out ...]\n%s", s[:head], end-head, s[end:])
}
