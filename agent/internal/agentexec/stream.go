package agentexec

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/llm"
	"github.com/fsmgen/fsmgen/agent/internal/query"
	"github.com/fsmgen/fsmgen/agent/internal/redact"
	"github.com/fsmgen/fsmgen/gen/agent"
)

// startStream sends req to the LLM in a task and feeds its stream back as
// events, cancelling any stream still running. The events of a cancelled
// stream are dropped, even those already queued.
func (a *Agent) startStream(req chat.Request) {
	sctx, valid := a.stream.restart(a.ctx)
	l := a.loop
	reply := &replyText{red: a.secrets.Stream()}
	a.reply = reply
	a.later(func() { l.Go(sctx, "llm stream", func(ctx context.Context) { a.streamReply(ctx, req, valid, reply) }) })
}

// replyText is the text of a reply as its stream redacted and sent it,
// shared by the stream's task and the loop: when the user stops the turn,
// the loop shows what the machine had not shown of it (events queued,
// which a stopped stream's are dropped) and what the redactor held back
// (see takeRest), so that the reply's last characters are on the screen.
type replyText struct {
	mu      sync.Mutex
	red     *redact.Stream  // redacts the text as it arrives
	sent    strings.Builder // the text sent in TextDelta events
	shown   int             // how much of sent the machine has shown
	stopped bool            // takeRest took the rest: nothing more is sent
}

// write redacts the next piece of the text and returns what can be sent
// of it, noted as sent; false once the rest was taken.
func (r *replyText) write(piece string, flush bool) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return "", false
	}
	out := r.red.Write(piece)
	if flush {
		out += r.red.Flush()
	}
	r.sent.WriteString(out)
	return out, true
}

// show notes that the machine showed n bytes of the text.
func (r *replyText) show(n int) {
	r.mu.Lock()
	r.shown = min(r.shown+n, r.sent.Len())
	r.mu.Unlock()
}

// takeRest returns what was sent and not shown, and what the redactor
// held back, redacted; the stream sends no more text after it.
func (r *replyText) takeRest() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return ""
	}
	r.stopped = true
	return r.sent.String()[r.shown:] + r.red.Flush()
}

// streamReply streams the reply to req, sending its events while valid says
// the stream is still the current one. Everything the LLM sent is
// redacted before the machine sees it.
//
// With Config.Queries, the reply's text, as the machine sees it, is fed
// to a detector: once a query is complete in it, the text up to the query
// is sent, then QueryDetected, and the LLM call is cancelled (the stream
// pauses there; the request after the query's result resumes it).
// QueryDetected carries what the cut reply is known to have used, for the
// ledger: the provider's last llm.Usage (Anthropic's prompt tokens; none
// from OpenAI, which reports usage only at a reply's end) with the output
// estimated from the bytes received.
func (a *Agent) streamReply(parent context.Context, req chat.Request, valid func() bool, reply *replyText) {
	l := a.loop
	ended := false
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	send := func(ev agent.Event) { _ = l.SendIf(parent, ev, valid) }
	var det query.Detector
	if a.cfg.Queries != nil {
		det = a.cfg.Queries.NewDetector()
	}
	var sent strings.Builder // the text sent so far, when a detector reads it
	// known is the usage the provider has reported so far (llm.Usage) and
	// replyBytes the bytes of the reply received: a reply cut at a query
	// counts them (its output estimated), its Completed never coming.
	var known chat.Usage
	replyBytes := 0
	soFar := func() chat.Usage {
		u := known
		u.OutputTokens = max(u.OutputTokens, llm.TokensOf(replyBytes))
		return u
	}
	// sendText sends a piece of the reply's text, or the part of it up to
	// a query the piece completes, then the query with usage, the reply's
	// usage as far as known; it reports whether it found one.
	sendText := func(piece string, usage chat.Usage, final bool) bool {
		if det == nil {
			if piece != "" {
				send(&agent.TextDelta{Content: piece})
			}
			return false
		}
		m, ok := det.Feed(piece)
		if !ok && final {
			m, ok = det.Flush()
		}
		if !ok {
			if piece != "" {
				sent.WriteString(piece)
				send(&agent.TextDelta{Content: piece})
			}
			return false
		}
		if keep := m.End - sent.Len(); keep > 0 {
			sent.WriteString(piece[:keep])
			send(&agent.TextDelta{Content: piece[:keep]})
		}
		ended = true
		cancel()
		reply.takeRest() // what follows the query is not the reply's
		send(&agent.QueryDetected{Query: m.Query, Text: sent.String(), Usage: usage})
		return true
	}
	// A secret split across two deltas is caught by redacting each text
	// as a stream: what could be the start of a secret waits for the next
	// delta, and is sent before the reply ends.
	args := map[string]*redact.Stream{}
	var callIDs []string
	flush := func() {
		if rest, _ := reply.write("", true); rest != "" && det == nil {
			send(&agent.TextDelta{Content: rest})
		}
		for _, id := range callIDs {
			if rest := args[id].Flush(); rest != "" {
				send(&agent.ToolCallDelta{CallID: id, ArgumentsFragment: rest})
			}
		}
	}
	err := a.cfg.Provider.Stream(ctx, req, func(e llm.Event) {
		if ended {
			return // cut at a query
		}
		switch e := e.(type) {
		case llm.Usage:
			known = e.Usage
		case llm.TextDelta:
			replyBytes += len(e.Text)
			if shown, _ := reply.write(e.Text, false); shown != "" {
				sendText(shown, soFar(), false)
			}
		case llm.ToolCallDelta:
			replyBytes += len(e.Fragment)
			// The model chooses the call's ID and the tool's name too.
			id, name := a.secrets.String(e.CallID), a.secrets.String(e.ToolName)
			st, ok := args[id]
			if !ok {
				st = a.secrets.Stream()
				args[id] = st
				callIDs = append(callIDs, id)
			}
			if shown := st.Write(e.Fragment); shown != "" || !ok {
				send(&agent.ToolCallDelta{CallID: id, ToolName: name, ArgumentsFragment: shown})
			}
		case llm.Completed:
			if det != nil && sendText(first(reply.write("", true)), e.Response.Usage, true) {
				return
			}
			ended = true
			flush()
			send(&agent.LLMCompleted{Response: a.redactResponse(e.Response)})
		case llm.Failed:
			ended = true
			if det != nil {
				if rest, _ := reply.write("", true); rest != "" {
					send(&agent.TextDelta{Content: rest})
				}
			}
			flush()
			e.Err.Message = a.secrets.String(e.Err.Message)
			send(&agent.LLMError{Error: e.Err})
		}
	})
	if parent.Err() != nil || ended {
		return
	}
	// The provider broke its contract; fail the call so the turn goes on.
	msg := "the LLM stream ended without a reply or an error"
	if err != nil {
		msg = err.Error()
	}
	a.log.Error("llm provider ended a stream without Completed or Failed", "provider", a.cfg.Provider.Name(), "error", err)
	send(&agent.LLMError{Error: chat.LLMError{Kind: chat.ErrNetwork, Message: a.secrets.String(msg)}})
}

// redactResponse returns r with the secrets redacted (see RedactResponse).
func (a *Agent) redactResponse(r chat.Response) chat.Response { return RedactResponse(a.secrets, r) }

// RedactResponse returns r with secrets redacted from its text, its
// thinking, its stop reason and its tool calls: their IDs, tools' names and arguments,
// which the model chose. A tool call's arguments stay valid JSON: a
// secret inside a JSON string becomes the mark, which needs no escaping.
func RedactResponse(secrets *redact.Redactor, r chat.Response) chat.Response {
	if secrets.Empty() {
		return r
	}
	r.Message.Content = secrets.String(r.Message.Content)
	r.StopReason = secrets.String(r.StopReason)
	if len(r.Message.Thinking) > 0 {
		// The model's thinking is shown and saved like its text. Its
		// signature covers the text as written: a block the redaction
		// changed fails the provider's check when sent back, and the
		// request fails with an error rather than leak the key.
		th := slices.Clone(r.Message.Thinking)
		for i := range th {
			th[i].Text = secrets.String(th[i].Text)
		}
		r.Message.Thinking = th
	}
	if len(r.Message.ToolCalls) > 0 {
		calls := slices.Clone(r.Message.ToolCalls)
		for i := range calls {
			c := &calls[i]
			c.ID, c.Name = secrets.String(c.ID), secrets.String(c.Name)
			c.Arguments = secrets.Bytes(c.Arguments)
		}
		r.Message.ToolCalls = calls
	}
	return r
}

// first returns the first of two values.
func first[T any](v T, _ bool) T { return v }
