package agentexec

import (
	"context"
	"errors"
	"fmt"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/gen/agent"
)

// noteCompaction notes, as an LLM request is sent, whether it is a summary
// request (the machine is Compacting) and tells the user so. Loop
// goroutine only.
func (a *Agent) noteCompaction() {
	st, ok := a.m.State().(agent.Compacting)
	a.summarizing = ok
	if !ok {
		return
	}
	a.compactFrom = st.Conversation.Len()
	b := a.cfg.Behavior
	n := st.Conversation.Len()
	switch {
	case st.Retries > 0:
		a.display.Notice(fmt.Sprintf("compacting the conversation (%d messages), attempt %d", n, st.Retries+1))
	case b.IsCompactCommand(st.Origin):
		a.display.Notice(fmt.Sprintf("compacting the conversation (%d messages), as you asked: the model summarises it", n))
	default:
		cfg := b.Config()
		a.display.Notice(fmt.Sprintf("compacting the conversation (%d messages): the next request, about %d tokens, would pass %g of the %d-token context window (-compact-at, -context-window); the model summarises it first",
			n, b.EstimateTokens(st.Conversation), cfg.CompactAt, cfg.ContextWindow))
	}
}

// compacted tells the user what compaction did, once the summary arrived.
// Loop goroutine only.
func (a *Agent) compacted(summary chat.Response) {
	a.summarizing = false
	conv := a.conversation()
	if conv.Len() == 0 || a.cfg.Behavior.EmptySummary(summary) {
		return // shut down, or the summary was refused (see DisplayError)
	}
	a.display.Notice(fmt.Sprintf("compacted: %d messages are now %d (the summary, your last message and the work in progress); about %d tokens",
		a.compactFrom, conv.Len(), a.cfg.Behavior.EstimateTokens(conv)))
}

// ErrNothingToCompact is Compact's error for a conversation without an
// older part to summarise.
var ErrNothingToCompact = errors.New("nothing to compact: the conversation holds no exchange before the last one to summarise (an earlier summary is not summarised again alone)")

// Compact asks the model for a summary of the older part of the
// conversation and replaces that part by it, as the threshold does before
// a request (see package behavior): the last message the user typed and
// the last reply stay whole. It returns once the machine took the
// request, ErrBusy while a turn runs, ErrNothingToCompact when there is
// nothing to summarise. Call it only while Run runs, from another
// goroutine (a command, say).
func (a *Agent) Compact(ctx context.Context) error {
	var err error
	if cerr := a.Do(ctx, func() {
		switch {
		case a.m.Kind() != agent.StateWaitingForUserInput:
			err = ErrBusy
		case !a.cfg.Behavior.CanCompact(a.conversation()):
			err = ErrNothingToCompact
		default:
			a.loop.Next(&agent.CompactRequested{})
		}
	}); cerr != nil {
		return cerr
	}
	return err
}
