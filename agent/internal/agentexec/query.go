package agentexec

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/query"
	"github.com/fsmgen/fsmgen/gen/agent"
)

// RunQuery implements agent.Handler: it runs the query the model asked
// in its reply (see Config.Queries) through the same tools as the tool
// calls (read_file, list_files, search_files) or gathers the facts it asks
// for, and sends QueryCompleted with the outcome, redacted and bounded as
// a round's results are.
func (a *Agent) RunQuery(q chat.Query) {
	a.perform(&agent.RunQuery{Query: q})
	a.startQuery(q)
}

// queryCall is the tool call that shows query q to the user: the tool it
// runs, or a call of "environment" or "project" without arguments.
func queryCall(q chat.Query, id string) chat.ToolCall {
	if c, ok := query.Call(q, id); ok {
		return c
	}
	return chat.ToolCall{ID: id, Name: string(q.Kind), Arguments: json.RawMessage(`{}`)}
}

// startQuery runs q in a task of the tools' work, whose completion is
// dropped when the turn is stopped, and sends QueryCompleted.
func (a *Agent) startQuery(q chat.Query) {
	tctx, valid := a.tools.restart(a.ctx)
	id := fmt.Sprintf("query-%d", a.conversation().Len())
	call := queryCall(q, id)
	clear(a.calls)
	a.calls[id] = call
	a.queryID = id
	a.display.ToolCall(call)
	a.noteConversation()
	l := a.loop
	a.later(func() {
		running := newTaskCount()
		a.toolsStopped = running.done
		defer running.close()
		running.add()
		started := l.Go(tctx, "query "+q.String(), func(ctx context.Context) {
			defer running.end()
			out := query.Run(ctx, toolPath{a}, a.facts(), q, id, nil)
			out.Content = newOutputBudget(a.limits.RoundOutput).take(a.secrets.String(out.Content))
			if c, ok := query.Call(q, id); ok {
				out.Content += a.note(ctx, c)
			}
			_ = l.SendIf(ctx, &agent.QueryCompleted{Outcome: out}, valid)
		})
		if !started {
			running.end()
		}
	})
}

// facts returns what answers the queries of facts: Config.Facts, with
// the workspace and the tools filled in.
func (a *Agent) facts() query.Facts {
	f := a.cfg.Facts
	if f.Workspace == "" {
		f.Workspace = a.cfg.Workspace
	}
	if f.Tools == nil {
		f.Tools = toolPath{a}
	}
	return f
}
