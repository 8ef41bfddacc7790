package agentflow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/agent/internal/llm"
	"github.com/fsmgen/fsmgen/agent/internal/query"
	"github.com/fsmgen/fsmgen/agent/internal/redact"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/temporal/fsmtemporal"
)

// WorkerConfig says which LLM a worker calls and which workspace its
// tools work in.
type WorkerConfig struct {
	// Provider is "anthropic" or "openai"; APIKey and BaseURL as the
	// agent's -provider and -base-url take them (empty: from the
	// environment, as the agent does).
	Provider, APIKey, BaseURL string
	// Workspace is the directory the tools work in: the worker runs on its
	// host, and serves the task queue Options sends the tools to.
	Workspace string
	// ToolTimeout bounds each tool call; 0 means the agent's default.
	ToolTimeout time.Duration
	// Secrets are redacted, with the API key, from everything the
	// activities report: the reply, the tools' output.
	Secrets []string
}

// Worker performs a session's actions; it implements Activities. Make it
// with NewWorker and register it with fsmtemporal.RegisterActivities.
type Worker struct {
	llm       llm.Provider
	tools     *tools.Set
	workspace string
	secrets   *redact.Redactor
}

var _ Activities = (*Worker)(nil)

// NewWorker returns the worker of cfg, or what is wrong with cfg.
func NewWorker(cfg WorkerConfig) (*Worker, error) {
	p, err := llm.New(cfg.Provider, llm.Config{APIKey: cfg.APIKey, BaseURL: cfg.BaseURL})
	if err != nil {
		return nil, fmt.Errorf("agentflow: the worker's LLM: %w", err)
	}
	ws, err := tools.NewWorkspace(cfg.Workspace)
	if err != nil {
		return nil, fmt.Errorf("agentflow: the worker's workspace: %w", err)
	}
	secrets := redact.New(append([]string{cfg.APIKey, llm.FromEnv(cfg.Provider, llm.Config{}).APIKey}, cfg.Secrets...)...)
	return &Worker{
		llm:       p,
		tools:     tools.Default(ws, tools.Options{Timeout: cfg.ToolTimeout}),
		workspace: ws.Root(),
		secrets:   secrets,
	}, nil
}

// SendLLMRequest implements Activities: it calls the LLM and reports its
// reply (LLMCompleted) or its failure (LLMError), which the machine
// retries or not by its own rules. The text received so far is the
// activity's heartbeat, for a client that shows progress. An error is a
// cancelled call only (Temporal then retries the activity).
func (w *Worker) SendLLMRequest(ctx context.Context, request chat.Request) error {
	var end llm.Event
	received := 0
	err := w.llm.Stream(ctx, request, func(ev llm.Event) {
		switch ev := ev.(type) {
		case llm.TextDelta:
			received += len(ev.Text)
			heartbeat(ctx, received)
		case llm.Completed, llm.Failed:
			end = ev
		}
	})
	switch ev := end.(type) {
	case llm.Completed:
		return fsmtemporal.Report(ctx, &agent.LLMCompleted{Response: agentexec.RedactResponse(w.secrets, ev.Response)})
	case llm.Failed:
		e := ev.Err
		e.Message = w.secrets.String(e.Message)
		return fsmtemporal.Report(ctx, &agent.LLMError{Error: e})
	}
	if err == nil {
		err = errors.New("the stream ended without a reply or an error")
	}
	return fmt.Errorf("agentflow: %s: %w", w.llm.Name(), err)
}

// ExecuteTools implements Activities: it runs the calls one after the
// other, in the LLM's order, and reports a ToolCompleted for each, its
// output redacted. A running command's progress is the heartbeat.
func (w *Worker) ExecuteTools(ctx context.Context, calls []chat.ToolCall) error {
	for _, c := range calls {
		out := w.tools.Run(ctx, c, func(p chat.ToolProgress) { heartbeat(ctx, p) })
		out.Content = w.secrets.String(out.Content)
		if err := fsmtemporal.Report(ctx, &agent.ToolCompleted{CallID: c.ID, Outcome: out}); err != nil {
			return err
		}
	}
	return nil
}

// RunPostToolsHook implements Activities: a session on Temporal commits
// nothing (the workspace's host may do so when the session ends), so the
// hook reports at once that it took no action.
func (w *Worker) RunPostToolsHook(ctx context.Context, _ chat.ToolRound) error {
	return fsmtemporal.Report(ctx, &agent.PostToolsHookCompleted{})
}

// RunQuery implements Activities: it answers a model without tool calling
// the query it asked, through the tools, and reports QueryCompleted.
func (w *Worker) RunQuery(ctx context.Context, q chat.Query) error {
	out := query.Run(ctx, w.tools, query.Facts{Workspace: w.workspace, Tools: w.tools}, q, "query", nil)
	out.Content = w.secrets.String(out.Content)
	return fsmtemporal.Report(ctx, &agent.QueryCompleted{Outcome: out})
}

// ScheduleRetry implements Activities: it waits the delay the machine
// chose, then reports RetryTimeoutFired. A worker lost while it waits has
// the activity retried, which waits again.
func (w *Worker) ScheduleRetry(ctx context.Context, delay time.Duration, _ int, _ chat.LLMError) error {
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
		return fsmtemporal.Report(ctx, &agent.RetryTimeoutFired{})
	case <-ctx.Done():
		return ctx.Err()
	}
}

// The actions below run inside the workflow (see Options); as activities
// they do nothing, for a worker registered without those options.

// WaitForInput implements Activities: there is nothing to do.
func (w *Worker) WaitForInput(context.Context) error { return nil }

// DisplayMessage implements Activities: the reply is in the conversation,
// which the state query serves.
func (w *Worker) DisplayMessage(context.Context, string) error { return nil }

// DisplayError implements Activities: see Options.
func (w *Worker) DisplayError(context.Context, string) error { return nil }

// Shutdown implements Activities: the workflow ends with the machine.
func (w *Worker) Shutdown(context.Context) error { return nil }

// CancelTurn implements Activities: the workflow waits for each activity,
// so nothing is in flight when the machine takes the interrupt.
func (w *Worker) CancelTurn(context.Context) error { return nil }

// heartbeat records progress of the activity in ctx, if ctx is one.
func heartbeat(ctx context.Context, details any) {
	if activity.IsActivity(ctx) {
		activity.RecordHeartbeat(ctx, details)
	}
}
