package app

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/ledger"
	"github.com/fsmgen/fsmgen/agent/internal/termtext"
	"github.com/fsmgen/fsmgen/agent/internal/thread"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// resumeLast is the -resume value that names the newest thread of the
// workspace.
const resumeLast = "last"

// session is a saved thread as "agent sessions" lists it.
type session struct {
	thread *threadwire.Thread
	first  string // the first thing the user asked, on one line
}

// sessions reads every thread of the store, the most recently saved
// first; problems says which journals could not be read, and why.
func sessions(store *thread.Store) (list []session, problems []error, err error) {
	ids, err := store.List()
	if err != nil {
		return nil, nil, err
	}
	for _, id := range ids {
		t, err := store.Load(id)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		first := firstPrompt(t)
		switch {
		case t.SubagentOf != "":
			// A subagent's task came from its parent's model: say whose.
			first = "(subagent of " + t.SubagentOf + ") " + first
		case t.ForkedFrom != "":
			// A fork's conversation starts as its parent's: say whose.
			first = "(fork of " + t.ForkedFrom + ") " + first
		}
		list = append(list, session{thread: t, first: first})
	}
	slices.SortStableFunc(list, func(a, b session) int { return b.thread.Updated.Compare(a.thread.Updated) })
	return underParents(list), problems, nil
}

// underParents returns list with each subagent's thread moved right
// after its parent's (the subagents of one parent newest first), as
// "agent sessions" lists them; a subagent whose parent is not in list
// stays where it is.
func underParents(list []session) []session {
	has := map[string]bool{}
	for _, s := range list {
		has[s.thread.ID] = true
	}
	children := map[string][]session{}
	var top []session
	for _, s := range list {
		if p := s.thread.SubagentOf; p != "" && has[p] && p != s.thread.ID {
			children[p] = append(children[p], s)
			continue
		}
		top = append(top, s)
	}
	out := make([]session, 0, len(list))
	for _, s := range top {
		out = append(out, s)
		out = append(out, children[s.thread.ID]...)
	}
	return out
}

// firstPrompt returns the thread's first user message, or its first queued
// input, on one line: the one the thread keeps (FirstPrompt), through
// compactions and forks. In a thread saved before it was kept, it is the
// first in the conversation; compacted, the first one after the summary,
// marked so: such a thread does not keep the ones before.
func firstPrompt(t *threadwire.Thread) string {
	if t.FirstPrompt != "" {
		return oneLine(t.FirstPrompt)
	}
	var msgs []chat.Message
	for _, raw := range t.Messages {
		var m chat.Message
		if json.Unmarshal(raw, &m) == nil {
			msgs = append(msgs, m)
		}
	}
	first := oneLine(threadwire.FirstPrompt(msgs, t.QueuedInput))
	if len(msgs) > 0 && msgs[0].Summary {
		first = "(compacted) " + first
	}
	return first
}

// oneLine returns s on one line of at most 60 characters.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(termtext.Sanitize(s)), " ")
	if r := []rune(s); len(r) > 60 {
		s = string(r[:59]) + "…"
	}
	return s
}

// newestOf returns the most recently saved thread of the workspace ws.
func newestOf(store *thread.Store, ws string) (string, error) {
	list, _, err := sessions(store)
	if err != nil {
		return "", err
	}
	for _, s := range list {
		if s.thread.Workspace == ws && s.thread.SubagentOf == "" {
			return s.thread.ID, nil
		}
	}
	return "", fmt.Errorf("-resume last: no thread of the workspace %s in %s; list the threads with: agent sessions", ws, store.Dir())
}

// newestOther returns the newest thread of the workspace ws but the
// thread current.
func newestOther(store *thread.Store, ws, current string) (string, error) {
	list, _, err := sessions(store)
	if err != nil {
		return "", err
	}
	for _, s := range list {
		if s.thread.Workspace == ws && s.thread.ID != current && s.thread.SubagentOf == "" {
			return s.thread.ID, nil
		}
	}
	return "", fmt.Errorf("no other thread of the workspace %s in %s; /sessions lists the threads", ws, store.Dir())
}

// lineage returns the thread id and the threads it was forked from,
// newest first, as far as they are in the store.
func lineage(store *thread.Store, t *threadwire.Thread) []string {
	ids := []string{t.ID}
	for from := t.ForkedFrom; from != "" && len(ids) < 64 && !slices.Contains(ids, from); {
		ids = append(ids, from)
		parent, err := store.Load(from)
		if err != nil {
			break
		}
		from = parent.ForkedFrom
	}
	return ids
}

// writeSessions writes the table of "agent sessions": ID, workspace,
// started, first prompt, tokens, the part of them read from the prompt
// cache, and cost (when the model's price is known, or given with -price).
func writeSessions(w io.Writer, list []session, price *ledger.Price) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tWORKSPACE\tSTARTED\tTOKENS\tCACHED\tCOST\tFIRST PROMPT")
	for _, s := range list {
		t := s.thread
		total := t.Ledger.Total
		cost := "-"
		// -price is the thread's model's; the models it used before,
		// their list prices.
		priceOf := func(m string) (ledger.Price, error) {
			if price != nil && m == t.Model {
				return *price, nil
			}
			return ledger.PriceOf(m)
		}
		if c, err := ledger.ThreadCost(t.Ledger, t.Model, priceOf); err == nil {
			cost = fmt.Sprintf("$%.2f", c)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\n", t.ID, t.Workspace, t.Created.Local().Format(time.DateTime),
			total.InputTokens+total.OutputTokens, total.CacheReadInputTokens, cost, s.first)
	}
	return tw.Flush()
}

// listSessions runs "agent sessions".
func listSessions(o options, stdout, stderr io.Writer) int {
	if len(o.commandArgs) > 0 {
		fmt.Fprintf(stderr, "agent sessions: unexpected argument %q; it takes none (-threads DIR names the folder)\n", o.commandArgs[0])
		return exitUsage
	}
	store, err := openStore(o)
	if err != nil {
		fmt.Fprintf(stderr, "agent sessions: %v\n", err)
		return exitError
	}
	list, problems, err := sessions(store)
	if err != nil {
		fmt.Fprintf(stderr, "agent sessions: %v\n", err)
		return exitError
	}
	for _, p := range problems {
		fmt.Fprintf(stderr, "agent sessions: %v\n", p)
	}
	if len(list) == 0 {
		fmt.Fprintf(stderr, "agent sessions: no threads in %s\n", store.Dir())
		return exitOK
	}
	var price *ledger.Price
	if o.price != "" {
		p, err := ledger.ParsePrice(o.price)
		if err != nil {
			fmt.Fprintf(stderr, "agent sessions: -price: %v\n", err)
			return exitUsage
		}
		price = &p
	}
	if err := writeSessions(stdout, list, price); err != nil {
		fmt.Fprintf(stderr, "agent sessions: %v\n", err)
		return exitError
	}
	return exitOK
}

// earlierExchanges is how many of its last exchanges a resumed session
// shows.
const earlierExchanges = 3

// showEarlier writes the last exchanges of the conversation msgs (from the
// user's message that starts each): the user's messages after "> ", the
// model's text, its tool calls by name and whether they failed.
func showEarlier(w io.Writer, msgs []chat.Message, exchanges int) {
	start, seen := 0, 0
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := msgs[i]; m.Role == chat.RoleUser && (!chat.IsAgentNote(m) || m.Summary) { // an exchange starts with the user's message, or the summary of those before
			if seen++; seen == exchanges {
				start = i
				break
			}
		}
	}
	if len(msgs) == 0 {
		return
	}
	fmt.Fprintf(w, "── earlier in this thread (%d messages; the last %d shown) ──\n", len(msgs), len(msgs)-start)
	for _, m := range msgs[start:] {
		switch m.Role {
		case chat.RoleUser:
			switch {
			case m.Content == chat.ContinueNote: // the agent's, not the user's: the reply goes on below
				continue
			case m.Summary:
				fmt.Fprintf(w, "  · (the conversation before, summarised by the model: %d lines)\n", strings.Count(strings.TrimSpace(m.Content), "\n")+1)
				continue
			case chat.IsQueryResult(m):
				first, _, _ := strings.Cut(m.Content, "\n")
				fmt.Fprintf(w, "  · %s\n", termtext.Sanitize(first))
				continue
			}
			fmt.Fprintf(w, "> %s\n", strings.ReplaceAll(termtext.Sanitize(strings.TrimSpace(m.Content)), "\n", "\n  "))
		case chat.RoleAssistant:
			if text := strings.TrimSpace(m.Content); text != "" {
				fmt.Fprintln(w, termtext.Sanitize(text))
			}
			for _, c := range m.ToolCalls {
				fmt.Fprintf(w, "  · %s\n", termtext.Sanitize(c.Name))
			}
		case chat.RoleTool:
			if m.IsError {
				fmt.Fprintf(w, "  ✗ %s failed\n", termtext.Sanitize(m.ToolName))
			}
		}
	}
	fmt.Fprintln(w, "──")
}
