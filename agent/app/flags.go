package app

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/agent/internal/approval"
	"github.com/fsmgen/fsmgen/agent/internal/autocommit"
	"github.com/fsmgen/fsmgen/agent/internal/ledger"
	"github.com/fsmgen/fsmgen/agent/internal/llm"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
	"github.com/fsmgen/fsmgen/agent/internal/subagent"
	"github.com/fsmgen/fsmgen/agent/internal/threadsync"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
)

// options are the parsed command line.
type options struct {
	prompt, workspace, provider, model, baseURL string
	resume, threads, logFile, price             string
	sync                                        string
	// syncAllowHTTP is -sync-allow-http: plain http:// to any host.
	syncAllowHTTP           bool
	maxRetries              int
	retryDelay, toolTimeout time.Duration
	// compactAt and contextWindow set compaction (see behavior.Config).
	compactAt     float64
	contextWindow int
	// maxTokens is -max-tokens (0: the model's largest reply) and
	// thinking -thinking (0: off).
	maxTokens, thinking int
	// The limits.
	maxToolCalls, parallelTools int
	// subagentCalls is -subagent-calls: the tool calls of one subagent;
	// 0 offers no task tool.
	subagentCalls int
	// subagentWrite is -subagent-write: a task call may ask for a
	// subagent that writes ("write": true).
	subagentWrite bool
	// subagentModel is -subagent-model: the model the subagents run on,
	// "" for the session's; subagentProvider its provider, settled by
	// the run's first session (see settleSubagentModel).
	subagentModel, subagentProvider                   string
	maxToolArgs, maxEditSize, maxInputLine            byteSize
	maxRoundOutput                                    byteSize
	commitMaxNewFile                                  byteSize
	llmMaxReply                                       byteSize
	llmHeaderTimeout, llmIdleTimeout, llmReplyTimeout time.Duration
	commitTimeout                                     time.Duration
	commit                                            string
	sandbox                                           sandbox.Mode
	sandboxNetwork                                    bool
	sandboxFlags                                      sandboxFlags
	hooks                                             string // -hooks: whose hooks run (hooksAll, hooksUser, hooksOff)
	// mode is -mode (modeAuto or modePlan); approve is -approve.
	mode                   string
	approve                approval.Policy
	verbose, json, version bool
	// toolCalls is false for a model without tool calling, which asks
	// queries in its replies instead.
	toolCalls  bool
	maxQueries int
	// configPath is -config; config the config file read (never nil once
	// the flags are parsed for the agent or sessions).
	configPath string
	config     *configFile
	// first is the prompt given as an argument: the first message of an
	// interactive session.
	first string
	set   map[string]bool // flags given explicitly
	// switchedModel says the session goes on with the thread of the one
	// before on another model (/model): what the thread holds is on the
	// screen already.
	switchedModel bool
	// earlierPrices are the prices -price gave the models the sessions
	// before this one left with /model, by model: the turns of the thread
	// they served are priced so (see terminal.priceOfModel).
	earlierPrices map[string]string
	// baseURLFor is the provider -base-url (or the config file's
	// base_url) applies to: the first session's. A session of another
	// provider (/model NAME of another provider's, /resume of another's
	// thread) uses that provider's variable, ANTHROPIC_BASE_URL or
	// OPENAI_BASE_URL, else its public API (see sessionBaseURL).
	baseURLFor string
	// ownFiles are the event logs and threads directories of earlier
	// sessions that still exist, hidden from commands (see ownfiles.go);
	// set when a session starts.
	ownFiles []string
	// command is the subcommand ("replay") and commandArgs its arguments;
	// command is empty when the agent is to run.
	command     string
	commandArgs []string
}

// commandFlags are the subcommands and the flags that apply to each.
var commandFlags = map[string]map[string]bool{
	"replay":   {"v": true},
	"sessions": {"threads": true, "price": true, "config": true},
}

// parseFlags parses the command line; code is -1 unless the program should
// exit with it.
func parseFlags(args []string, stderr io.Writer) (options, int) {
	var o options
	fs := o.flagSet(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, exitOK
		}
		return o, exitUsage
	}
	o.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
	if err := o.applyConfig(fs); err != nil {
		fmt.Fprintf(stderr, "agent: %v\n", err)
		return o, exitUsage
	}
	var err error
	switch allowed, ok := commandFlags[fs.Arg(0)]; {
	case ok && fs.NArg() > 0:
		o.command, o.commandArgs = fs.Arg(0), fs.Args()[1:]
		err = o.checkCommandFlags(allowed)
	case o.version:
		// run prints it
	default:
		if err = o.takePrompt(fs.Args()); err == nil {
			err = o.check()
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "agent: %v\n", err)
		return o, exitUsage
	}
	return o, -1
}

// envHelp ends -h: the environment variables the agent reads.
var envHelp = `
environment:
  ANTHROPIC_API_KEY     the API key with -provider anthropic (the default)
  OPENAI_API_KEY        the API key with -provider openai
  ANTHROPIC_BASE_URL, OPENAI_BASE_URL
                        each provider's base URL when -base-url (which is the first
                        session's provider's) does not apply
  ` + threadsync.TokenVar + `   the server's token, with -sync
  NO_COLOR              no colour, whatever the terminal
  XDG_CONFIG_HOME       the config file: $XDG_CONFIG_HOME/fsmgen-agent/config.yaml (~/.config/…)
  XDG_CACHE_HOME        the sandbox's caches of each workspace (~/.cache/fsmgen-agent/sandbox)
  XDG_STATE_HOME, XDG_DATA_HOME
                        the agent's own files, the threads (~/.local/state/…, ~/.local/share/…)
The keys are read once, at start, and kept out of the agent's environment and every command's.
`

// flagSet returns the agent's flags, each bound to a field of o (it sets
// the defaults of the flags of a type of their own, such as the sizes);
// the usage goes to stderr.
func (o *options) flagSet(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage:\n  agent [flags]               interactive\n  agent [flags] -p PROMPT     one-shot\n  agent [flags] -resume ID    continue a thread (last: the workspace's newest)\n  agent sessions              list the saved threads\n  agent replay LOG            check a recorded session\n\nflags:\n")
		fs.PrintDefaults()
		fmt.Fprint(stderr, envHelp)
	}
	fs.StringVar(&o.prompt, "p", "", "run one turn with this `prompt`, print the reply and exit")
	fs.StringVar(&o.workspace, "workspace", "", "the `dir`ectory the agent works in (default: current directory, or the resumed thread's)")
	fs.StringVar(&o.provider, "provider", llm.NameAnthropic, "LLM provider: anthropic or openai (OpenAI-compatible servers too)")
	fs.StringVar(&o.model, "model", "", "model `name` (default: claude-sonnet-4-5 or gpt-4.1, or the resumed thread's); list: the models known, their prices and limits")
	fs.StringVar(&o.baseURL, "base-url", "", "API base `URL` of the session's provider (default: $ANTHROPIC_BASE_URL or $OPENAI_BASE_URL, else the public API); another provider a /model switches to uses its variable")
	fs.StringVar(&o.resume, "resume", "", "continue the thread `ID`, or \"last\": the newest thread of the workspace (agent sessions lists them)")
	fs.StringVar(&o.threads, "threads", "", "`dir`ectory of saved threads (default: $XDG_DATA_HOME/fsmgen-agent/threads)")
	fs.StringVar(&o.sync, "sync", "", "push the thread, redacted, in the background to the server at this base `URL` (cmd/server; its token in $"+threadsync.TokenVar+")")
	fs.BoolVar(&o.syncAllowHTTP, threadsync.FlagAllowHTTP, false, "let -sync use plain http:// to a host other than this machine: the token and the thread then cross the network unencrypted (a private network you trust)")
	fs.StringVar(&o.logFile, "log", "", "event log `file` (default: <threads>/<ID>.events.jsonl)")
	fs.StringVar(&o.commit, "commit", commitCurrent, "where the agent's commits go: `current` (the branch checked out), branch (a branch of its own, agent/<thread>) or off")
	fs.IntVar(&o.maxTokens, llm.FlagMaxTokens, 0, "the longest reply of the model, in tokens (default: the model's own limit, or "+strconv.Itoa(ledger.DefaultMaxOutput)+" for a model whose limit is not known)")
	fs.IntVar(&o.thinking, llm.FlagThinking, 0, "let the model think this many `tokens` before it answers (Anthropic's extended thinking); 0: off")
	fs.IntVar(&o.maxRetries, "max-retries", behavior.DefaultMaxRetries, "retries of a failed LLM request; 0 for none")
	fs.DurationVar(&o.retryDelay, "retry-delay", behavior.DefaultBaseDelay, "delay before the first retry, doubled for each next one (at most "+behavior.DefaultMaxDelay.String()+")")
	fs.Float64Var(&o.compactAt, "compact-at", behavior.DefaultCompactAt, "compact the conversation (the model summarises its older part) before a request that would pass this `share` of the model's context window; 0: never")
	fs.IntVar(&o.contextWindow, "context-window", 0, "the model's context window in `tokens` (default: known for the providers' models; for another model compaction is off unless given)")
	fs.DurationVar(&o.toolTimeout, "tool-timeout", tools.DefaultTimeout, "time limit of each tool call")
	o.maxToolArgs, o.maxEditSize = tools.DefaultMaxArgBytes, tools.DefaultMaxEditBytes
	o.maxInputLine, o.llmMaxReply = byteSize(agentexec.DefaultLimits.InputLine), llm.DefaultMaxReplyBytes
	o.maxRoundOutput = byteSize(agentexec.DefaultLimits.RoundOutput)
	fs.IntVar(&o.maxToolCalls, "max-tool-calls", agentexec.DefaultLimits.ToolCalls, "tool calls of one reply that are run; the model is told about the others")
	fs.IntVar(&o.subagentCalls, "subagent-calls", subagent.DefaultMaxCalls, "tool calls one subagent (the task tool's child agent) may run; 0 offers no task tool")
	fs.BoolVar(&o.subagentWrite, "subagent-write", false, "let the task tool start subagents that change the workspace (\"write\": true): your tools, sandbox and -approve, their questions asked here, their changes committed and undone with the turn; never in -mode plan")
	fs.StringVar(&o.subagentModel, "subagent-model", "", "the model `name` subagents run on, of its provider (default: the session's model, after a /model too); one the agent does not know (agent -model list) only on a server of your own")
	fs.IntVar(&o.parallelTools, "parallel-tools", agentexec.DefaultLimits.ParallelTools, "tool calls run at once")
	fs.Var(&o.maxToolArgs, "max-tool-args", "the largest arguments of a tool call, e.g. 1MiB; a larger call is refused")
	fs.Var(&o.maxEditSize, "max-edit-size", "the largest file edit_file changes, e.g. 16MiB")
	fs.Var(&o.maxRoundOutput, "max-round-output", "the results of one round of tool calls, all sent to the model at once; later results are cut short")
	fs.Var(&o.maxInputLine, "max-input-line", "the longest input line sent as a message; a longer one is refused")
	fs.Var(&o.llmMaxReply, llm.FlagMaxReply, "the largest reply of the LLM (text and tool call arguments); a larger one is cut off and fails the turn")
	fs.DurationVar(&o.llmHeaderTimeout, llm.FlagHeaderTimeout, llm.DefaultHeaderTimeout, "how long the LLM server may take to start its reply")
	fs.DurationVar(&o.llmIdleTimeout, llm.FlagIdleTimeout, llm.DefaultIdleTimeout, "how long the LLM's reply may make no progress (keep-alives do not count); the request is then retried")
	fs.DurationVar(&o.llmReplyTimeout, llm.FlagReplyTimeout, llm.DefaultReplyTimeout, "how long one LLM reply may stream in all")
	o.commitMaxNewFile = byteSize(autocommit.DefaultMaxNewFileBytes)
	fs.Var(&o.commitMaxNewFile, "commit-max-new-file", "the largest new file the auto-commit commits; larger ones are left out and named")
	fs.DurationVar(&o.commitTimeout, "commit-timeout", autocommit.DefaultTimeout, "time limit of each git command of the auto-commit")
	o.sandbox = sandbox.Auto
	fs.Var(&o.sandbox, "sandbox", "how bash commands are confined: auto (bubblewrap if it works, else bash is disabled), bwrap (bubblewrap or an error) or off (unconfined)")
	fs.BoolVar(&o.sandboxNetwork, "sandbox-network", false, "let sandboxed bash commands reach the network")
	fs.StringVar(&o.mode, "mode", modeAuto, "`mode`: auto (the agent changes the workspace and commits) or plan (read-only tools, a read-only workspace: it investigates, writes a plan and stops)")
	o.approve = approval.Never
	fs.StringVar(&o.hooks, "hooks", hooksAll, "whose `hooks` run, in the sandbox: all (yours, in the config directory's hooks.yaml, and the project's .agent/hooks.yaml), user (yours only) or off")
	fs.Var(&o.approve, "approve", "the approval `policy`: when to ask you before a tool call that may change anything: untrusted (before every one), on-request (when the model asks) or never")
	fs.BoolVar(&o.toolCalls, "tool-calls", true, "offer the model tools; false for a model without tool calling, whose replies are read for queries (read, list and search files, environment and project facts) that the agent runs and answers")
	fs.IntVar(&o.maxQueries, "max-queries", behavior.DefaultMaxQueries, "with -tool-calls=false: the queries one turn may ask; the one after them ends the turn")
	o.sandboxFlags.register(fs)
	fs.StringVar(&o.price, "price", "", "the model's `price` in dollars per million tokens: INPUT,OUTPUT[,CACHE_WRITE,CACHE_READ] (default: the list price of the default models)")
	fs.BoolVar(&o.verbose, "v", false, "show tool calls' arguments and results whole, the server's whole message on every retry, and log debug records to standard error")
	fs.BoolVar(&o.json, "json", false, "with -p: print JSON events, one a line, as the turn runs (text, tool calls and results, progress), the result (session, answer, error, usage, cost) last")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	fs.StringVar(&o.configPath, "config", "", "the config `file` (default: $XDG_CONFIG_HOME/fsmgen-agent/config.yaml, or ~/.config/fsmgen-agent/config.yaml, if it exists)")
	return fs
}

// applyConfig reads the config file (-config, or the default one) and
// sets from it the flags not given; "agent sessions" takes only the
// settings that apply to it, and -version and "agent replay" read none.
func (o *options) applyConfig(fs *flag.FlagSet) error {
	if o.version || fs.Arg(0) == "replay" {
		o.config = &configFile{}
		return nil
	}
	var only map[string]bool
	if fs.Arg(0) == "sessions" {
		only = commandFlags["sessions"]
	}
	c, err := loadConfig(o.configPath, fs)
	if err == nil {
		err = c.apply(fs, o.set, only)
	}
	if err != nil {
		return err
	}
	o.config = c
	return nil
}

// checkCommandFlags refuses a flag given to the subcommand that it does
// not apply to, naming those that do.
func (o *options) checkCommandFlags(allowed map[string]bool) error {
	for name := range o.set {
		if !allowed[name] {
			names := slices.Sorted(maps.Keys(allowed))
			only := "-" + names[0] + " does"
			if len(names) > 1 {
				only = "-" + strings.Join(names[:len(names)-1], ", -") + " and -" + names[len(names)-1] + " do"
			}
			return fmt.Errorf("-%s does not apply to %s; only %s", name, o.command, only)
		}
	}
	return nil
}

// takePrompt takes the prompt of an interactive session from the
// arguments left after the flags (at most one), and checks the one-shot
// flags: -p with a prompt, -json only with -p.
func (o *options) takePrompt(args []string) error {
	switch {
	case len(args) > 1:
		return fmt.Errorf("unexpected argument %q after the prompt %q; put the flags before the prompt, and quote the prompt as one argument", args[1], args[0])
	case len(args) == 1 && o.set["p"]:
		return fmt.Errorf("unexpected argument %q: -p gives the prompt already", args[0])
	case len(args) == 1:
		o.first = args[0]
	}
	if o.json && !o.set["p"] {
		return errors.New("-json applies to a one-shot run; give the prompt with -p")
	}
	if o.set["p"] && o.prompt == "" {
		return errors.New("-p needs a non-empty prompt")
	}
	return nil
}

// minThinking is the least thinking budget Anthropic's API accepts.
const minThinking = 1024

// check reports the first value of the flags (or of the config file) that
// the agent cannot run with, or for the behaviour's flags and the
// sandbox's all of them, saying what to give instead.
func (o *options) check() error {
	if err := errors.Join(checkBehavior(*o), o.sandboxFlags.check()); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		ok   bool
		want string
	}{
		{"tool-timeout", o.toolTimeout > 0, "be positive"},
		{llm.FlagHeaderTimeout, o.llmHeaderTimeout > 0, "be positive"},
		{llm.FlagIdleTimeout, o.llmIdleTimeout > 0, "be positive"},
		{llm.FlagReplyTimeout, o.llmReplyTimeout > 0, "be positive"},
		{"commit-timeout", o.commitTimeout > 0, "be positive"},
		{"max-tool-calls", o.maxToolCalls > 0, "be at least 1"},
		{"parallel-tools", o.parallelTools > 0, "be at least 1"},
		{"subagent-calls", o.subagentCalls >= 0, "be 0 (no subagents) or more"},
		{llm.FlagMaxTokens, o.maxTokens >= 0, "be positive (or 0: the model's own limit)"},
		{llm.FlagThinking, o.thinking == 0 || o.thinking >= minThinking, fmt.Sprintf("be 0 (off) or a budget of at least %d tokens (Anthropic's least), e.g. 8000", minThinking)},
	} {
		if !f.ok {
			return fmt.Errorf("-%s must %s", f.name, f.want)
		}
	}
	if err := checkHooks(o.hooks); err != nil {
		return err
	}
	if !slices.Contains(modes, o.mode) {
		return fmt.Errorf("-mode %q: use %s", o.mode, strings.Join(modes, " or "))
	}
	if o.approve.Asks() && o.set["p"] {
		return needsTerminal(o.approve)
	}
	if !slices.Contains(commitModes, o.commit) {
		return fmt.Errorf("-commit %q: use %s", o.commit, strings.Join(commitModes, ", "))
	}
	if o.price != "" {
		if _, err := ledger.ParsePrice(o.price); err != nil {
			return fmt.Errorf("-price: %w", err)
		}
	}
	if o.sync != "" { // given, or from the config file
		return checkSync(o.sync, o.syncAllowHTTP)
	}
	return nil
}
