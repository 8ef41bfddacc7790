package agentflow

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/temporal/fsmtemporal"
)

// SessionConfig is what a session's machine decides with: the same on
// every worker of the workflow, since the workflow replays its steps.
type SessionConfig struct {
	// Model is the model the requests name; System the system prompt.
	Model, System string
	// MaxTokens limits each reply; 0 means 8192.
	MaxTokens int
	// RetryDelay is the first delay between retries of a failed LLM call;
	// 0 means the agent's default.
	RetryDelay time.Duration
}

// Behavior returns the machine's Behavior for sessions of cfg: the
// agent's defaults, with the model, the system prompt and the agent's
// standard tools (read_file, list_files, edit_file, bash).
func Behavior(cfg SessionConfig) (agent.Behavior, error) {
	c := behavior.DefaultConfig()
	c.Model, c.System = cfg.Model, cfg.System
	c.MaxTokens = 8192
	if cfg.MaxTokens > 0 {
		c.MaxTokens = cfg.MaxTokens
	}
	if cfg.RetryDelay > 0 {
		c.BaseDelay = cfg.RetryDelay
	}
	set := tools.Default(nil, tools.Options{})
	c.Tools, c.MutatingTools = set.Specs(), set.MutatingNames()
	b, err := behavior.New(c)
	if err != nil {
		return nil, fmt.Errorf("agentflow: the session's behaviour: %w", err)
	}
	return b, nil
}

// workspaceActions run on the workspace's host: they read or change it.
var workspaceActions = []agent.ActionKind{agent.ActionExecuteTools, agent.ActionRunQuery, agent.ActionRunPostToolsHook}

// Options returns how a session's workflow runs its actions:
//
//   - the tools, the queries and the post-tools hook on toolsQueue, the
//     task queue of the worker on the workspace's host, once each (a
//     command that may have run is not run again by a retry): when that
//     worker is lost, the turn is stopped (the machine's Interrupt) and
//     the model is told at the next message, as when the user stops it;
//   - the LLM call with Temporal's retry policy (a call is safe to send
//     again), a reply taking up to llmTimeout;
//   - the display actions, the wait for input, the turn's cancel and the
//     shutdown inside the workflow: they do no I/O here (the
//     conversation is in the state query; an error shown to the user is
//     logged by the workflow's replay-safe logger).
func Options(toolsQueue string, llmTimeout time.Duration) fsmtemporal.Options[agent.Event, agent.Action] {
	once := &temporal.RetryPolicy{MaximumAttempts: 1}
	actions := map[string]workflow.ActivityOptions{
		agent.ActionSendLLMRequest.String(): {StartToCloseTimeout: llmTimeout},
		agent.ActionScheduleRetry.String():  {StartToCloseTimeout: behavior.DefaultMaxDelay + time.Minute},
	}
	for _, k := range workspaceActions {
		actions[k.String()] = workflow.ActivityOptions{TaskQueue: toolsQueue, StartToCloseTimeout: time.Hour, RetryPolicy: once}
	}
	nothing := func(workflow.Context, agent.Action) error { return nil }
	return fsmtemporal.Options[agent.Event, agent.Action]{
		Actions: actions,
		InWorkflow: map[string]func(workflow.Context, agent.Action) error{
			agent.ActionWaitForInput.String():   nothing,
			agent.ActionDisplayMessage.String(): nothing,
			agent.ActionCancelTurn.String():     nothing,
			agent.ActionShutdown.String():       nothing,
			agent.ActionDisplayError.String(): func(ctx workflow.Context, a agent.Action) error {
				if e, ok := a.(*agent.DisplayError); ok {
					workflow.GetLogger(ctx).Warn("agentflow: the turn ended with an error", "error", e.Message)
				}
				return nil
			},
		},
		ActionFailed: func(a agent.Action, _ error) (agent.Event, bool) {
			switch a.(type) {
			case *agent.ExecuteTools, *agent.RunQuery, *agent.SendLLMRequest:
				return &agent.Interrupt{}, true
			}
			return nil, false
		},
	}
}
