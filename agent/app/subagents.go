package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/agent/internal/approval"
	"github.com/fsmgen/fsmgen/agent/internal/llm"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
	"github.com/fsmgen/fsmgen/agent/internal/subagent"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
	"github.com/fsmgen/fsmgen/internal/suggest"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// The refusals a subagent's model reads when it calls a tool it is not
// offered.
const (
	subagentReadOnly = "a subagent only reads: the workspace is read-only and nothing is changed; " +
		"say in your answer what should change instead"
	subagentNoBash = "a subagent only reads, and with -sandbox off nothing keeps a command from changing " +
		"the workspace, so bash is not offered; read with read_file and list_files"
	subagentNoAsk   = "a subagent cannot ask the user, and this tool asks before every call (approve: always)"
	subagentNoDepth = "a subagent cannot start subagents; do the task yourself"
	// subagentNoWrite and subagentPlanWrite refuse a task call with
	// "write": true.
	subagentNoWrite = "not run: \"write\": true asks for a subagent that changes the workspace, and this session's subagents " +
		"only read (the agent runs without -subagent-write; subagent_write: true in the config file sets it too); nothing was " +
		"changed: make the change yourself, or give the subagent a read-only task"
	subagentPlanWrite = "not run: \"write\": true asks for a subagent that changes the workspace, and in plan mode (-mode plan) " +
		"the workspace is read-only, for subagents too; nothing was changed: give the subagent a read-only task, and propose the change in your plan"
)

// addSubagents offers the model the task tool (see agent/internal/subagent),
// whose calls run a child agent with the session's read-only tools, bash
// in a read-only sandbox, the session's secrets, limits and
// pre_tool/post_tool hooks, and its own system prompt, on -subagent-model
// or else the session's model: the one this session runs on, which a
// /model switch changed (each switch starts a session of its own). None
// with -subagent-calls 0 or -tool-calls=false. With -subagent-write
// (outside plan mode) a call may ask for a writing child (see
// subagentWriter).
func (s *agentSession) addSubagents(ctx context.Context) error {
	o := s.o
	if o.subagentCalls == 0 || !o.toolCalls {
		return nil
	}
	parentSet := s.toolSet
	set, err := s.subagentTools(ctx)
	if err != nil {
		return err
	}
	model, provider, err := s.subagentLLM()
	if err != nil {
		return err
	}
	bc := behaviorConfig(o, model, set.Specs())
	if model != o.model && !o.set["context-window"] {
		bc.ContextWindow = contextWindowOf(model)
	}
	bc.System = subagent.Prompt
	if s.instructions != nil {
		bc.System += s.instructions.System()
	}
	bc.MutatingTools = set.MutatingNames()
	b, err := behavior.New(bc)
	if err != nil {
		return fmt.Errorf("the subagents' configuration: %w", err)
	}
	cfg := subagent.Config{
		Behavior:  b,
		Provider:  provider,
		Tools:     toolRunner(set, s.instructions),
		Workspace: s.ws.Root(),
		Store:     s.store,
		Sync:      func(id string) func(*threadwire.Thread) { return s.syncSubagent(ctx, id) },
		Parent:    s.thread.ID,
		Hooks:     s.hooks,
		Secrets:   s.subagentSecrets(),
		Limits: agentexec.Limits{ToolCalls: o.maxToolCalls, ParallelTools: o.parallelTools,
			InputLine: int(o.maxInputLine), RoundOutput: int(o.maxRoundOutput)},
		MaxCalls: o.subagentCalls,
		Summary:  callSummary,
		Usage:    s.addUsage,
		Logger:   s.logger,
		NoWrite:  subagentNoWrite,
	}
	task := tools.Task
	switch {
	case o.mode == modePlan:
		cfg.NoWrite = subagentPlanWrite
	case o.subagentWrite:
		if cfg.Writer, err = s.subagentWriter(parentSet, model); err != nil {
			return err
		}
		task = tools.WritingTask
	}
	r, err := subagent.New(cfg)
	if err != nil {
		return err
	}
	if s.toolSet, err = s.toolSet.With(task(r.Run)); err != nil {
		return fmt.Errorf("the task tool: %w", err)
	}
	return nil
}

// subagentWriter returns what a writing subagent works with: the
// session's tools (set, as the mode offers them, and as the approval
// policy offers them to the model) in the session's sandbox, the task
// tool refused; the session's hooks, as they run for its own calls; the
// session's approval policy, its questions asked through the session's
// agent (sessionAsker). Its changes need nothing of their own to be the
// turn's: it runs within the parent's task call, a mutating call (see
// tools.WritingTask), whose round the parent's post-tools hook notes for
// the turn's commit.
func (s *agentSession) subagentWriter(set *tools.Set, model string) (*subagent.Writer, error) {
	o := s.o
	set = set.Refuse(subagentNoDepth, tools.TaskName)
	bc := behaviorConfig(o, model, offerApproval(o.approve, set, io.Discard))
	if model != o.model && !o.set["context-window"] {
		bc.ContextWindow = contextWindowOf(model)
	}
	bc.System = subagent.WritePrompt
	if s.instructions != nil {
		bc.System += s.instructions.System()
	}
	bc.MutatingTools = set.MutatingNames()
	b, err := behavior.New(bc)
	if err != nil {
		return nil, fmt.Errorf("the writing subagents' configuration: %w", err)
	}
	return &subagent.Writer{Behavior: b, Tools: toolRunner(set, s.instructions), Hooks: s.hooks,
		Approval: o.approve, Ask: sessionAsker{s: s}}, nil
}

// sessionAsker asks the user about a writing subagent's calls through
// the session's agent: its gate, its display (agentexec.Agent.AskUser).
type sessionAsker struct{ s *agentSession }

// Granted implements agentexec.Asker.
func (a sessionAsker) Granted(tool string) bool {
	return a.s.agent != nil && a.s.agent.Granted(tool)
}

// AskUser implements agentexec.Asker.
func (a sessionAsker) AskUser(ctx context.Context, key string, q approval.Question) (approval.Answer, error) {
	if a.s.agent == nil {
		return approval.Answer{Verdict: approval.Refused, Reason: "the session is not running"}, nil
	}
	return a.s.agent.AskUser(ctx, key, q)
}

// subagentTools returns the tools of the session's subagents: the
// session's tools that only read, bash among them when a read-only
// sandbox confines it; the others are refused, saying why, and so is the
// task tool.
func (s *agentSession) subagentTools(ctx context.Context) (*tools.Set, error) {
	ro := s.sandbox
	if ro.Confined() && !ro.ReadOnlyWorkspace() {
		opt := s.sandboxOpt
		opt.ReadOnlyWorkspace = true
		var err error
		if ro, err = sandbox.New(ctx, opt); err != nil {
			return nil, fmt.Errorf("the read-only sandbox of the subagents: %w", err)
		}
	}
	opt := s.toolOpt
	opt.Sandbox = ro
	set := tools.Default(s.ws, opt)
	// The MCP servers' tools, as the session offers them.
	builtin := set.Names()
	for _, n := range s.toolSet.Names() {
		if t, ok := s.toolSet.Tool(n); ok && !slices.Contains(builtin, n) {
			var err error
			if set, err = set.With(t); err != nil {
				return nil, fmt.Errorf("the subagents' tools: %w", err)
			}
		}
	}
	if !ro.Confined() && ro.Disabled() == nil {
		set = set.Refuse(subagentNoBash, "bash")
	}
	set = set.Refuse(subagentReadOnly, "edit_file")
	set = set.Refuse(subagentReadOnly, set.MutatingNames()...)
	set = set.Refuse(subagentNoAsk, alwaysAsked(set)...)
	return set.Refuse(subagentNoDepth, tools.TaskName), nil
}

// addUsage adds what a subagent's replies used (l) to the thread's
// ledger, on the agent's loop: the turn's cost and the thread's hold it.
func (s *agentSession) addUsage(ctx context.Context, l chat.Ledger) {
	if s.agent == nil {
		return
	}
	err := s.agent.Do(ctx, func() {
		s.thread.Ledger.AddLedger(l)
	})
	if err != nil {
		s.logger.Warn("a subagent's usage was not counted", "error", err)
	}
}

// subagentLLM returns the model the subagents run on and the provider
// that serves it, with its configuration: -subagent-model and its
// provider (settled by settleSubagentModel), or the session's.
func (s *agentSession) subagentLLM() (string, llm.Provider, error) {
	o := s.o
	if o.subagentModel == "" || o.subagentProvider == "" {
		return o.model, s.provider, nil
	}
	if o.subagentProvider == s.provider.Name() {
		return o.subagentModel, s.provider, nil
	}
	p, err := llm.New(o.subagentProvider, s.llmConfig(o.subagentProvider))
	if err != nil {
		return "", nil, fmt.Errorf("-subagent-model %s: %w", o.subagentModel, err)
	}
	return o.subagentModel, p, nil
}

// subagentSecrets are what the subagents' records and pushes are
// redacted of: every key the run took (the subagents' provider's among
// them) and the sync token.
func (s *agentSession) subagentSecrets() []string {
	out := []string{s.llmCfg.APIKey, s.syncToken}
	if s.in != nil {
		for _, v := range keyVars {
			out = append(out, s.in.keys[v])
		}
	}
	return out
}

// settleSubagentModel settles the provider of -subagent-model, once for
// the run (in its first session, while the keys are in the environment;
// the sessions a /model, /resume or /fork starts keep it, whatever their
// own provider): the provider the agent knows the model to be of, else the session's. It
// refuses, saying why: "list"; a model the agent does not know (a typo
// would only show when a subagent first runs) unless the provider's
// requests go to a server of the user's own (-base-url, or the provider's
// base URL variable), where any name is sent as it is, as -model's is; a
// provider whose API key is not set; and a model whose largest reply
// -max-tokens or -thinking passes.
func (s *agentSession) settleSubagentModel() error {
	o := &s.o
	name := o.subagentModel
	if name == "" || o.subagentProvider != "" {
		return nil
	}
	if name == modelList {
		return errors.New("-subagent-model list: agent -model list lists the models; give -subagent-model the name of one")
	}
	provider := o.provider
	if isKnownModel(name) {
		provider = providerOf(name)
	} else {
		at := *o
		at.provider = provider
		if sessionBaseURL(at) == "" && os.Getenv(llm.BaseURLVar(provider)) == "" {
			return fmt.Errorf("-subagent-model %s: not a model the agent knows%s (agent -model list lists them); a name it does not know is sent only to a server of your own (-base-url, or $%s)",
				name, suggest.DidYouMean(name, knownModels()), llm.BaseURLVar(provider))
		}
	}
	if os.Getenv(llm.KeyVar(provider)) == "" {
		return fmt.Errorf("-subagent-model %s: a model of %s, whose API key %s is not set; set it, or give a model of %s",
			name, provider, llm.KeyVar(provider), o.provider)
	}
	if _, _, err := maxTokensOf(*o, name); err != nil {
		return fmt.Errorf("-subagent-model %s: %w", name, err)
	}
	o.subagentProvider = provider
	return nil
}
