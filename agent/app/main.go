// Package app is the coding agent's program: its flags, sessions, terminal
// and subcommands, run by cmd/agent (whose package doc is its manual).
package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fsmgen/fsmgen/agent/behavior"
	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/agent/internal/approval"
	"github.com/fsmgen/fsmgen/agent/internal/autocommit"
	"github.com/fsmgen/fsmgen/agent/internal/eventlog"
	"github.com/fsmgen/fsmgen/agent/internal/instructions"
	"github.com/fsmgen/fsmgen/agent/internal/ledger"
	"github.com/fsmgen/fsmgen/agent/internal/llm"
	"github.com/fsmgen/fsmgen/agent/internal/query"
	"github.com/fsmgen/fsmgen/agent/internal/redact"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
	"github.com/fsmgen/fsmgen/agent/internal/thread"
	"github.com/fsmgen/fsmgen/agent/internal/threadsync"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
	"github.com/fsmgen/fsmgen/gen/agent"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// Default models per provider.
var defaultModels = map[string]string{
	llm.NameAnthropic: "claude-sonnet-4-5",
	llm.NameOpenAI:    "gpt-4.1",
}

// systemPrompt is the system prompt of every request.
const systemPrompt = `You are a coding agent working in a software project (the workspace).
Use the tools to look at the code before changing it: list_files to find your way, read_file to read a file before editing it, edit_file to change or create files, bash to build, test and inspect.
Paths are relative to the workspace root. Make small, focused changes and check them (build, run the tests) when you can.
Your changes are committed to git automatically at the end of each turn; the first line of your last reply becomes the commit's subject, so end by saying briefly what you did.`

// queryPrompt is the system prompt of every request to a model without
// tool calling (-tool-calls=false): it teaches the queries the agent
// recognises in the model's replies (see agent/internal/query).
const queryPrompt = `You are a coding agent working in a software project (the workspace), helping the user with its code.
` + query.ProtocolHelp + `
You cannot change files or run commands yourself: once you know enough, answer with the changes to make (as unified diffs or whole files) and the commands to run.`

// Main runs the agent (cmd/agent) on the process's arguments, standard
// streams and environment, and returns its exit code.
func Main() int {
	// No descriptor the agent inherited reaches a command it runs.
	if err := errors.Join(hideKeys(), sandbox.CloseInheritedFDs()); err != nil {
		fmt.Fprintf(os.Stderr, "agent: %v\n", err)
		return exitError
	}
	return run(context.Background(), os.Args[1:], nil, os.Stdout, os.Stderr)
}

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
	maxToolCalls, parallelTools                       int
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

// run is the program; stdin nil means the process's standard input.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opt, code := parseFlags(args, stderr)
	if code >= 0 {
		return code
	}
	if opt.version {
		fmt.Fprintln(stdout, version())
		return exitOK
	}
	switch opt.command {
	case "replay":
		return replay(opt.commandArgs, opt.verbose, stdout, stderr)
	case "sessions":
		return listSessions(opt, stdout, stderr)
	}
	in := &sessionInput{stdin: stdin}
	defer in.close()
	for {
		err := agentMain(ctx, opt, in, stdout, stderr)
		var next switchThread
		if errors.As(err, &next) {
			// /resume or /fork: the same terminal goes on with another
			// thread.
			opt.resume, opt.first = string(next), ""
			continue
		}
		if err != nil {
			var ex exitCode
			if errors.As(err, &ex) {
				return int(ex)
			}
			fmt.Fprintf(stderr, "agent: %v\n", err)
			return exitError
		}
		return exitOK
	}
}

// switchThread is what agentMain returns when the session goes on with
// another thread (/resume, /fork): its ID.
type switchThread string

// Error implements error.
func (s switchThread) Error() string { return "continue with thread " + string(s) }

// exitCode is an error that only sets the exit status; its message was
// already shown.
type exitCode int

// Error implements error.
func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// parseFlags parses the command line; code is -1 unless the program should
// exit with it.
func parseFlags(args []string, stderr io.Writer) (options, int) {
	var o options
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage:\n  agent [flags]               interactive\n  agent [flags] -p PROMPT     one-shot\n  agent [flags] -resume ID    continue a thread (last: the workspace's newest)\n  agent sessions              list the saved threads\n  agent replay LOG            check a recorded session\n\nflags:\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&o.prompt, "p", "", "run one turn with this `prompt`, print the reply and exit")
	fs.StringVar(&o.workspace, "workspace", "", "the `dir`ectory the agent works in (default: current directory, or the resumed thread's)")
	fs.StringVar(&o.provider, "provider", llm.NameAnthropic, "LLM provider: anthropic or openai (OpenAI-compatible servers too)")
	fs.StringVar(&o.model, "model", "", "model `name` (default: claude-sonnet-4-5 or gpt-4.1, or the resumed thread's)")
	fs.StringVar(&o.baseURL, "base-url", "", "API base `URL` (default: $ANTHROPIC_BASE_URL or $OPENAI_BASE_URL, else the public API)")
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
	fs.Var(&o.approve, "approve", "the approval `policy`: when to ask you before a tool call that may change anything: untrusted (before every one), on-request (when the model asks) or never")
	fs.BoolVar(&o.toolCalls, "tool-calls", true, "offer the model tools; false for a model without tool calling, whose replies are read for queries (read, list and search files, environment and project facts) that the agent runs and answers")
	fs.IntVar(&o.maxQueries, "max-queries", behavior.DefaultMaxQueries, "with -tool-calls=false: the queries one turn may ask; the one after them ends the turn")
	o.sandboxFlags.register(fs)
	fs.StringVar(&o.price, "price", "", "the model's `price` in dollars per million tokens: INPUT,OUTPUT[,CACHE_WRITE,CACHE_READ] (default: the list price of the default models)")
	fs.BoolVar(&o.verbose, "v", false, "show tool calls' arguments and results whole, the server's whole message on every retry, and log debug records to standard error")
	fs.BoolVar(&o.json, "json", false, "with -p: print the result as one JSON object (session, answer, error, usage, cost)")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	fs.StringVar(&o.configPath, "config", "", "the config `file` (default: $XDG_CONFIG_HOME/fsmgen-agent/config.yaml, or ~/.config/fsmgen-agent/config.yaml, if it exists)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, exitOK
		}
		return o, exitUsage
	}
	o.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
	if o.version || (fs.NArg() > 0 && fs.Arg(0) == "replay") {
		o.config = &configFile{}
	} else {
		// The config file's defaults, for the flags not given.
		var only map[string]bool
		if fs.NArg() > 0 && fs.Arg(0) == "sessions" {
			only = commandFlags["sessions"]
		}
		c, err := loadConfig(o.configPath, fs)
		if err == nil {
			err = c.apply(fs, o.set, only)
		}
		if err != nil {
			fmt.Fprintf(stderr, "agent: %v\n", err)
			return o, exitUsage
		}
		o.config = c
	}
	if allowed, ok := commandFlags[fs.Arg(0)]; ok && fs.NArg() > 0 {
		o.command, o.commandArgs = fs.Arg(0), fs.Args()[1:]
		for name := range o.set {
			if !allowed[name] {
				names := slices.Sorted(maps.Keys(allowed))
				only := "-" + names[0] + " does"
				if len(names) > 1 {
					only = "-" + strings.Join(names[:len(names)-1], ", -") + " and -" + names[len(names)-1] + " do"
				}
				fmt.Fprintf(stderr, "agent: -%s does not apply to %s; only %s\n", name, o.command, only)
				return o, exitUsage
			}
		}
		return o, -1
	}
	if o.version {
		return o, -1 // run prints it
	}
	switch {
	case fs.NArg() > 1:
		fmt.Fprintf(stderr, "agent: unexpected argument %q after the prompt %q; put the flags before the prompt, and quote the prompt as one argument\n", fs.Arg(1), fs.Arg(0))
		return o, exitUsage
	case fs.NArg() == 1 && o.set["p"]:
		fmt.Fprintf(stderr, "agent: unexpected argument %q: -p gives the prompt already\n", fs.Arg(0))
		return o, exitUsage
	case fs.NArg() == 1:
		o.first = fs.Arg(0)
	}
	if o.json && !o.set["p"] {
		fmt.Fprintln(stderr, "agent: -json applies to a one-shot run; give the prompt with -p")
		return o, exitUsage
	}
	if o.set["p"] && o.prompt == "" {
		fmt.Fprintln(stderr, "agent: -p needs a non-empty prompt")
		return o, exitUsage
	}
	if err := errors.Join(checkBehavior(o), o.sandboxFlags.check()); err != nil {
		fmt.Fprintf(stderr, "agent: %v\n", err)
		return o, exitUsage
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
		{llm.FlagMaxTokens, o.maxTokens >= 0, "be positive (or 0: the model's own limit)"},
		{llm.FlagThinking, o.thinking == 0 || o.thinking >= minThinking, fmt.Sprintf("be 0 (off) or a budget of at least %d tokens (Anthropic's least), e.g. 8000", minThinking)},
	} {
		if !f.ok {
			fmt.Fprintf(stderr, "agent: -%s must %s\n", f.name, f.want)
			return o, exitUsage
		}
	}
	if !slices.Contains(modes, o.mode) {
		fmt.Fprintf(stderr, "agent: -mode %q: use %s\n", o.mode, strings.Join(modes, " or "))
		return o, exitUsage
	}
	if o.approve.Asks() && o.set["p"] {
		fmt.Fprintln(stderr, needsTerminal(o.approve))
		return o, exitUsage
	}
	if !slices.Contains(commitModes, o.commit) {
		fmt.Fprintf(stderr, "agent: -commit %q: use %s\n", o.commit, strings.Join(commitModes, ", "))
		return o, exitUsage
	}
	if o.price != "" {
		if _, err := ledger.ParsePrice(o.price); err != nil {
			fmt.Fprintf(stderr, "agent: -price: %v\n", err)
			return o, exitUsage
		}
	}
	if o.sync != "" { // given, or from the config file
		if err := checkSync(o.sync, o.syncAllowHTTP); err != nil {
			fmt.Fprintf(stderr, "agent: %v\n", err)
			return o, exitUsage
		}
	}
	return o, -1
}

// minThinking is the least thinking budget Anthropic's API accepts.
const minThinking = 1024

// behaviorFlags are the flags that set the behaviour's configuration: how
// each sets it, and what behavior.New asks of it, in the user's terms.
var behaviorFlags = []struct {
	name string
	set  func(c *behavior.Config, o options)
	want string
}{
	{"max-retries", func(c *behavior.Config, o options) { c.MaxRetries = o.maxRetries }, "must be 0 or more"},
	{"retry-delay", func(c *behavior.Config, o options) { c.BaseDelay = o.retryDelay },
		"must be positive and at most " + behavior.DefaultMaxDelay.String() + " (the longest delay between retries)"},
	{"compact-at", func(c *behavior.Config, o options) { c.CompactAt = o.compactAt },
		"must be a share of the context window from 0 (never compact) to 1, e.g. 0.8"},
	{"context-window", func(c *behavior.Config, o options) { c.ContextWindow = o.contextWindow },
		"must be the model's context window in tokens, e.g. 200000 (0: not known, no compaction)"},
	{"max-queries", func(c *behavior.Config, o options) { c.MaxQueries = o.maxQueries }, "must be 0 or more"},
}

// behaviorConfig returns the behaviour's configuration: the defaults, the
// flags, and what the program settled on (the model: -model, the resumed
// thread's or the provider's default; the reply's token limit, see
// maxTokensOf) or provides (the system prompt, the tools).
func behaviorConfig(o options, model string, specs []chat.ToolSpec) behavior.Config {
	c := behavior.DefaultConfig()
	for _, f := range behaviorFlags {
		f.set(&c, o)
	}
	c.Model, c.System, c.Tools = model, systemPromptOf(o.mode), specs
	if !o.set["context-window"] {
		c.ContextWindow = contextWindowOf(model)
	}
	c.MaxTokens, _, _ = maxTokensOf(o, model)
	c.Thinking = o.thinking
	if !o.toolCalls {
		c.System, c.Tools = queryPromptOf(o.mode), nil
	}
	return c
}

// maxTokensOf returns the reply's token limit for model: -max-tokens, or
// the model's largest reply, or ledger.DefaultMaxOutput with a note to
// show once for a model whose limits are not known. It is an error for
// -max-tokens to pass the model's known limit, or for -thinking not to
// leave room for an answer.
func maxTokensOf(o options, model string) (n int, note string, err error) {
	lim, known := ledger.LimitsOf(model)
	switch {
	case o.maxTokens > 0:
		n = o.maxTokens
		if known && n > lim.MaxOutput {
			return n, "", fmt.Errorf("-%s %d: %s writes at most %d tokens a reply; give %d or less", llm.FlagMaxTokens, n, model, lim.MaxOutput, lim.MaxOutput)
		}
	case known:
		n = lim.MaxOutput
	default:
		n = ledger.DefaultMaxOutput
		note = fmt.Sprintf("the token limits of %s are not known: its replies are limited to %d tokens (-%s changes it)", model, n, llm.FlagMaxTokens)
	}
	if o.thinking > 0 && o.thinking >= n {
		return n, note, fmt.Errorf("-%s %d: the thinking budget must be less than the reply's limit of %d tokens, which it is part of; lower it or raise -%s", llm.FlagThinking, o.thinking, n, llm.FlagMaxTokens)
	}
	return n, note, nil

}

// queryStrategy returns how the replies are read for queries: not at all
// when the model calls tools.
func queryStrategy(o options) query.Strategy {
	if o.toolCalls {
		return nil
	}
	return query.Phrases{}
}

// checkBehavior reports, in terms of the flags, what behavior.New would
// refuse in the configuration the flags give: each flag is tried alone on
// the defaults, so the error names every flag at fault.
func checkBehavior(o options) error {
	var errs []error
	for _, f := range behaviorFlags {
		c := behavior.DefaultConfig()
		f.set(&c, o)
		if _, err := behavior.New(c); err != nil {
			errs = append(errs, fmt.Errorf("-%s %s", f.name, f.want))
		}
	}
	return errors.Join(errs...)
}

// notedChain returns the chain value of the event log's last line that
// the log's thread noted when it was last saved, and the thread's file,
// when the log is a thread's own (<threads>/<ID>.events.jsonl beside
// <threads>/<ID>.journal); "" otherwise.
func notedChain(logPath string) (chain, threadFile string) {
	base, ok := strings.CutSuffix(filepath.Base(logPath), ".events.jsonl")
	if !ok || threadwire.CheckID(base) != nil {
		return "", ""
	}
	store, err := thread.NewStore(filepath.Dir(logPath)) // the log's directory exists
	if err != nil {
		return "", ""
	}
	t, err := store.Load(base)
	if err != nil {
		return "", ""
	}
	return t.LogChain, store.Path(base)
}

// checkWorkspace refuses a workspace the agent must not work in: one that
// holds the home directory (its keys and settings, which the file tools
// would read and the auto-commit commit), or the threads or the event log
// (the agent would read, edit and commit its own records).
func checkWorkspace(ws, threads, logFile string) error {
	inside := func(p string) bool {
		rel, err := filepath.Rel(ws, p)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
	}
	if home, err := os.UserHomeDir(); err == nil {
		if real, err := filepath.EvalSymlinks(home); err == nil && inside(real) {
			return fmt.Errorf("the workspace %s holds your home directory %s, with its keys and settings; run the agent in a project directory (-workspace)", ws, real)
		}
	}
	for _, p := range []struct{ path, flag string }{{threads, "-threads"}, {logFile, "-log"}} {
		if p.path == "" {
			continue
		}
		real := p.path
		if r, err := filepath.EvalSymlinks(p.path); err == nil {
			real = r
		}
		if inside(real) {
			return fmt.Errorf("%s %s is inside the workspace %s, where the agent would read, change and commit it; give %s a directory outside the workspace", p.flag, p.path, ws, p.flag)
		}
	}
	return nil
}

// sandboxOptions are the options of bash's sandbox the options ask for:
// it hides the thread store and the event log from the commands, keeps
// their build cache in the user's cache directory, and knows the API key.
// Programs is left for the caller to set (see hostPrograms).
func sandboxOptions(o options, threads, logPath, key string) sandbox.Options {
	opt := sandbox.Options{
		Mode:     o.sandbox,
		Network:  o.sandboxNetwork,
		Hidden:   append(append(sandbox.DefaultHidden(), threads, logPath), o.ownFiles...),
		Redactor: redact.New(key),
		// Plan mode: commands read the project and change none of it.
		ReadOnlyWorkspace: o.mode == modePlan,
	}
	if dir, err := os.UserCacheDir(); err == nil {
		opt.CacheDir = filepath.Join(dir, "fsmgen-agent", "sandbox")
	}
	o.sandboxFlags.apply(&opt)
	return opt
}

// priceOf returns the model's price: -price, or the known list price.
func priceOf(o options) (ledger.Price, error) {
	if o.price != "" {
		p, err := ledger.ParsePrice(o.price)
		if err != nil {
			return p, fmt.Errorf("-price: %w", err)
		}
		return p, nil
	}
	return ledger.PriceOf(o.model)
}

// defaultThreadsDir is $XDG_DATA_HOME/fsmgen-agent/threads, or
// ~/.local/share/fsmgen-agent/threads.
func defaultThreadsDir() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "fsmgen-agent", "threads"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find the threads directory: %w; pass one with -threads", err)
	}
	return filepath.Join(home, ".local", "share", "fsmgen-agent", "threads"), nil
}

// openStore opens the threads folder the options name: -threads, or the
// default, made absolute (so that the sandbox can hide it and the
// workspace check compares like with like).
func openStore(o options) (*thread.Store, error) {
	dir := o.threads
	if dir == "" {
		d, err := defaultThreadsDir()
		if err != nil {
			return nil, err
		}
		dir = d
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("-threads %s: %w", dir, err)
	}
	return thread.NewStore(abs)
}

// lastOf returns the newest thread of the workspace dir ("" for the
// current directory).
func lastOf(store *thread.Store, dir string) (string, error) {
	if dir == "" {
		dir = "."
	}
	ws, err := tools.NewWorkspace(dir)
	if err != nil {
		return "", fmt.Errorf("-resume last: %w (set it with -workspace)", err)
	}
	defer ws.Close()
	return newestOf(store, ws.Root())
}

// agentMain sets the agent up from the options and runs it.
func agentMain(ctx context.Context, o options, in *sessionInput, stdout, stderr io.Writer) error {
	level := slog.LevelWarn
	if o.verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	if o.approve.Asks() && !canAsk(in.stdin, stderr) {
		fmt.Fprintln(stderr, needsTerminal(o.approve))
		return exitCode(exitUsage)
	}
	if o.config == nil {
		o.config = &configFile{}
	}

	if o.logFile != "" {
		// Absolute, so that the sandbox can hide it and the workspace
		// check below compares like with like.
		abs, err := filepath.Abs(o.logFile)
		if err != nil {
			return err
		}
		o.logFile = abs
	}
	store, err := openStore(o)
	if err != nil {
		return err
	}
	o.threads = store.Dir()
	if o.resume == resumeLast {
		if o.resume, err = lastOf(store, o.workspace); err != nil {
			return err
		}
	}

	now := time.Now().UTC()
	var (
		t       *threadwire.Thread
		journal *thread.Journal
	)
	if o.resume != "" {
		// Locked before the journal is opened: Open may repair it.
		unlock, err := store.Lock(o.resume)
		if err != nil {
			return err
		}
		defer unlock()
		if t, journal, err = store.Open(o.resume); err != nil {
			return err
		}
		defer journal.Close()
		if r := journal.Repaired(); r.Bytes > 0 {
			fmt.Fprintf(stderr, "agent: the last record of %s (at offset %d, %d bytes) was cut short by a crash and was removed; nothing it held had been acted on\n", journal.Path(), r.Offset, r.Bytes)
		}
		if !o.set["provider"] && t.Provider != "" {
			o.provider = t.Provider
		}
		if !o.set["model"] && t.Model != "" {
			o.model = t.Model
		}
		if !o.set["workspace"] {
			o.workspace = t.Workspace
		}
		if !o.set["tool-calls"] { // the thread's, whatever the config file says
			o.toolCalls = !t.NoToolCalls
		}
	} else {
		t = &threadwire.Thread{Version: threadwire.Version, ID: thread.NewID(now), Created: now, Updated: now}
	}
	if o.model == "" {
		o.model = defaultModels[o.provider]
	}
	_, tokensNote, err := maxTokensOf(o, o.model)
	if err != nil {
		fmt.Fprintf(stderr, "agent: %v\n", err)
		return exitCode(exitUsage)
	}
	if tokensNote != "" {
		fmt.Fprintf(stderr, "agent: %s\n", tokensNote)
	}
	if o.thinking > 0 && o.provider != llm.NameAnthropic {
		fmt.Fprintf(stderr, "agent: -%s applies to the %s provider: the %s provider sends no thinking budget (a model that reasons does so on its own, and its reasoning is not shown as the answer)\n",
			llm.FlagThinking, llm.NameAnthropic, o.provider)
	}
	if o.workspace == "" {
		o.workspace = "."
	}
	ws, err := tools.NewWorkspace(o.workspace)
	if err != nil {
		return fmt.Errorf("%w (set it with -workspace)", err)
	}
	defer ws.Close()
	if err := checkWorkspace(ws.Root(), o.threads, o.logFile); err != nil {
		return err
	}

	// The keys are taken from the environment once, for every session of
	// the run (/resume, /fork).
	if in.keys == nil {
		in.keys = map[string]string{}
		for _, v := range keyVars {
			in.keys[v] = os.Getenv(v)
		}
	}
	for _, v := range keyVars {
		_ = os.Unsetenv(v)
	}
	llmCfg := llm.FromEnv(o.provider, llm.Config{APIKey: in.keys[llm.KeyVar(o.provider)], BaseURL: o.baseURL, Logger: logger,
		HeaderTimeout: o.llmHeaderTimeout, IdleTimeout: o.llmIdleTimeout, ReplyTimeout: o.llmReplyTimeout,
		MaxReplyBytes: int(o.llmMaxReply)})
	provider, err := llm.New(o.provider, llmCfg)
	if err != nil {
		return err
	}
	syncToken := in.keys[threadsync.TokenVar]
	// Every secret of the session, as agentexec.Config.Secrets has them:
	// the key in use, the sync token, and every other key variable's
	// value (another provider's key is a secret all the same).
	secrets := redact.New(append([]string{llmCfg.APIKey, syncToken}, slices.Sorted(maps.Values(in.keys))...)...)

	if journal == nil {
		unlock, err := store.Lock(t.ID)
		if err != nil {
			return err
		}
		defer unlock()
	}

	logPath := o.logFile
	if logPath == "" {
		logPath = filepath.Join(store.Dir(), t.ID+".events.jsonl")
	}
	// Every session's own files are hidden from commands: this one's and
	// those of the sessions before it (see ownfiles.go).
	own, err := recordOwnFiles(stateDir(), logPath, store.Dir())
	if err != nil {
		fmt.Fprintf(stderr, "agent: %v; commands may see the event logs of earlier sessions that were not in the workspace or the threads directory\n", err)
	}
	// Never the workspace, nor a directory that holds it: an earlier
	// session's threads directory may be this one's project.
	o.ownFiles = slices.DeleteFunc(own, func(p string) bool {
		rel, err := filepath.Rel(p, ws.Root())
		return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
	})
	sbOpt := sandboxOptions(o, store.Dir(), logPath, llmCfg.APIKey)
	programs := hostPrograms(o, ws.Root(), sbOpt)
	sbOpt.Programs = programs
	sb, err := sandbox.New(ctx, sbOpt)
	if err != nil {
		return fmt.Errorf("-sandbox=%s: %w", o.sandbox, err)
	}
	if why := sb.Disabled(); why != nil {
		fmt.Fprintf(stderr, "agent: bash is disabled: %v\n", why)
	} else {
		fmt.Fprintf(stderr, "agent: bash sandbox: %s\n", sb)
	}
	notePATH(programs.Skipped(), sb.HiddenPATH(), o.verbose, stderr)
	if err := maskWorkspace(ctx, ws, llmCfg.APIKey, stderr); err != nil {
		return err
	}
	guard, err := tools.NewGitGuard(ctx, ws)
	if err != nil {
		return err
	}
	noteUnusualRepositories(guard, stderr)
	toolSet := tools.Default(ws, tools.Options{Timeout: o.toolTimeout, Logger: logger,
		MaxArgBytes: int(o.maxToolArgs), MaxEditBytes: int64(o.maxEditSize), Sandbox: sb, GitGuard: guard,
		Search: !o.toolCalls})
	servers, err := startMCP(ctx, o, ws, sbOpt, secrets, logger, stderr)
	if err != nil {
		return err
	}
	defer servers.Close()
	if toolSet, err = toolSet.With(servers.Tools()...); err != nil {
		return fmt.Errorf("the MCP servers' tools: %w", err)
	}
	toolSet = modeTools(o.mode, sb, toolSet)
	// Without tool calls no tool is offered, so none is asked about.
	if asked := alwaysAsked(toolSet); o.toolCalls && len(asked) > 0 && !canAsk(in.stdin, stderr) {
		fmt.Fprintf(stderr, "agent: %s ask before every call (approve: always in the config file's mcp_servers) and need a terminal to ask; run interactively, or set their approve to policy or never\n", strings.Join(asked, ", "))
		return exitCode(exitUsage)
	}
	var ins *instructions.Set
	if !o.config.instructions.disabled {
		iopt := o.config.instructionsOptions()
		iopt.Redactor = secrets
		ins = instructions.Load(ws, iopt)
		noteInstructions(ins, stderr)
	}

	specs := offerApproval(o.approve, toolSet, stderr)
	bc := behaviorConfig(o, o.model, specs)
	if ins != nil {
		bc.System += ins.System()
	}
	bc.MutatingTools = toolSet.MutatingNames()
	b, err := behavior.New(bc)
	if err != nil {
		return fmt.Errorf("the agent's configuration: %w", err)
	}
	t.Provider, t.Model, t.Workspace = provider.Name(), o.model, ws.Root()
	t.NoToolCalls = !o.toolCalls

	// A session that ends before its first message leaves nothing behind:
	// no journal (see agentexec.Agent.save) and no event log of its own.
	_, statErr := os.Stat(logPath)
	newLog := o.logFile == "" && errors.Is(statErr, fs.ErrNotExist)
	journalOf := func() *thread.Journal { return journal }
	defer func() {
		if newLog && journalOf() == nil {
			_ = os.Remove(logPath)
		}
	}()
	elog, err := eventlog.Open(logPath)
	if errors.Is(err, eventlog.ErrFormat) && o.logFile == "" {
		// The thread's own log, written by an older agent: keep it aside
		// and start a log of this format.
		old := logPath + "." + now.Format("20060102-150405") + ".old"
		if rerr := os.Rename(logPath, old); rerr != nil {
			return fmt.Errorf("%w; moving it aside failed: %w", err, rerr)
		}
		fmt.Fprintf(stderr, "agent: the thread's event log is of an older format; it was moved to %s and a new one started\n", old)
		elog, err = eventlog.Open(logPath)
	}
	if err != nil {
		return err
	}
	if r := elog.Repaired(); r.Line != 0 {
		fmt.Fprintf(stderr, "agent: the last line of the event log (line %d, %d bytes) was cut short by a crash and was removed\n", r.Line, r.Bytes)
	}

	interactive := o.prompt == ""
	if interactive {
		if err := in.open(stderr, int(o.maxInputLine)); err != nil {
			return err
		}
	}
	display := &terminal{out: stdout, diag: stderr, stream: interactive, prompt: in.prompt}
	if in.editor != nil {
		display.useEditor(in.editor, stdout)
	}
	if p, err := priceOf(o); err == nil {
		display.price = &p
	} else {
		display.noPrice = priceNote(err)
	}
	display.verbose, display.color = o.verbose, colorOf(stderr)
	if o.mode == modePlan {
		display.planned = fmt.Sprintf("plan mode: nothing was changed; to carry the plan out: agent -resume %s -mode auto", t.ID)
	}
	display.editLine = func(call chat.ToolCall) (int, int) {
		return tools.EditLine(ctx, ws, call.Arguments, int64(o.maxEditSize))
	}

	if removed, err := tools.CleanTemp(ctx, ws); err != nil {
		display.Notice(fmt.Sprintf("could not remove the temporary files of edits cut short: %v", err))
	} else if len(removed) > 0 {
		display.Notice(fmt.Sprintf("removed %d temporary files of edits cut short: %s", len(removed), strings.Join(removed, ", ")))
	}
	slash := &slashSession{display: display, commands: slashCommands(), store: store, thread: t.ID, lineage: lineage(store, t), workspace: ws.Root(), instructions: ins}
	if o.price != "" {
		slash.price = display.price
	}
	committer, c := openCommitter(ctx, o, ws.Root(), t.ID, llmCfg.APIKey, programs, guard, stderr)
	if c != nil {
		slash.committer, slash.branchCommits = c, o.commit == commitBranch
		if slash.base, err = c.Head(ctx); err != nil {
			display.Notice(fmt.Sprintf("/diff will show the whole repository: reading its HEAD failed: %v", err))
		}
	}

	pusher, err := startSync(ctx, o.sync, o.syncAllowHTTP, syncToken, []string{llmCfg.APIKey}, display.diag)
	if err != nil {
		_ = elog.Close()
		return err
	}
	var saved func(*threadwire.Thread)
	if pusher != nil {
		saved = pusher.Saved
	}
	a, err := agentexec.New(agentexec.Config{
		Behavior:  b,
		Provider:  provider,
		Tools:     toolRunner(toolSet, ins),
		Workspace: ws.Root(),
		Committer: committer,
		Display:   display,
		Logger:    logger,
		Thread:    t,
		Store:     store,
		Journal:   journal,
		EventLog:  elog,
		Secrets:   []string{llmCfg.APIKey, syncToken},
		Prompt:    o.prompt + o.first,
		// One-shot, a script resumes a thread to have its turn finished.
		ContinueTurn: !interactive,
		Editor:       in.messages,
		Commands:     func(ctx context.Context, line string) { slash.run(ctx, line) },
		Signals:      []os.Signal{syscall.SIGTERM},
		Interrupts:   []os.Signal{os.Interrupt},
		Limits: agentexec.Limits{ToolCalls: o.maxToolCalls, ParallelTools: o.parallelTools,
			InputLine: int(o.maxInputLine), RoundOutput: int(o.maxRoundOutput)},
		Saved:    saved,
		Approval: o.approve,
		Queries:  queryStrategy(o),
		// The environment query's version commands run as bash's do.
		Facts: query.Facts{Sandbox: sb},
	})
	if err != nil {
		stopSync(ctx, pusher, t.ID, stderr)
		_ = elog.Close()
		return err
	}
	slash.agent = a
	journalOf = a.Journal
	verb := "started"
	if o.resume != "" {
		verb = "resumed"
	}
	fmt.Fprintf(stderr, "agent: thread %s %s (%s %s in %s)\n", t.ID, verb, t.Provider, t.Model, t.Workspace)
	if pusher != nil {
		fmt.Fprintf(stderr, "agent: thread syncs to %s (in the background, redacted)\n", pusher.URL())
	}
	if o.resume != "" && interactive {
		if conv, ok := behavior.ConversationOf(a.Machine().State()); ok {
			showEarlier(stderr, conv.Messages(), earlierExchanges)
		}
	}
	if interactive {
		fmt.Fprintln(stderr, "agent: type a message and press Enter; Ctrl-D to quit, Ctrl-C to stop at once")
		if a.Machine().Kind() == agent.StateWaitingForUserInput {
			display.showPrompt()
		}
	}

	res, runErr := a.Run(ctx)
	if !interactive {
		display.finishOneShot(t.ID, res, o.json)
	}
	closeErr := elog.Close()
	if j := a.Journal(); j != nil {
		closeErr = errors.Join(closeErr, j.Close())
	}
	display.endLine()
	stopSync(ctx, pusher, t.ID, stderr)
	reportGitChanges(context.WithoutCancel(ctx), guard, stderr)
	if slash.next != "" && runErr == nil && a.Journal() != nil {
		fmt.Fprintf(stderr, "agent: thread %s saved; continue it with: agent -resume %s\n", t.ID, t.ID)
		return errors.Join(closeErr, switchThread(slash.next))
	}
	if a.Journal() != nil {
		fmt.Fprintf(stderr, "agent: thread %s saved; continue it with: agent -resume %s\n", t.ID, t.ID)
	} else {
		fmt.Fprintf(stderr, "agent: thread %s had no message; nothing was saved\n", t.ID)
	}
	if err := errors.Join(runErr, closeErr); err != nil {
		return err
	}
	if !interactive {
		switch {
		case !res.Idle:
			fmt.Fprintln(stderr, "agent: the turn was interrupted before it ended")
			return exitCode(exitError)
		case res.LastError != "":
			return exitCode(exitError)
		}
	}
	return nil
}

// replay runs "agent replay LOG"; verbose also says how many sessions the
// log holds.
func replay(args []string, verbose bool, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agent replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, "usage: agent [-v] replay [-v] LOG") }
	fs.BoolVar(&verbose, "v", verbose, "also say how many sessions the log holds")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "agent replay: %v\n", err)
		return exitError
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
		fmt.Fprintf(stderr, "agent replay: %s is not a file; give an event log, such as <threads>/<ID>.events.jsonl\n", fs.Arg(0))
		return exitError
	}
	noted, threadFile := notedChain(fs.Arg(0))
	rep, err := agentexec.ReplayAgentAgainst(f, noted)
	if err != nil {
		fmt.Fprintf(stderr, "agent replay: %s: %v\n", fs.Arg(0), err)
		return exitError
	}
	if rep.Diff != nil {
		fmt.Fprintf(stdout, "replay differs after %d identical events: %s\n", rep.Events, rep.Diff)
		return exitError
	}
	if rep.Torn != 0 {
		fmt.Fprintf(stderr, "agent replay: %s: line %d was cut short (the agent stopped while writing it) and was not replayed\n", fs.Arg(0), rep.Torn)
	}
	if verbose {
		fmt.Fprintf(stderr, "agent replay: %s: %d sessions\n", fs.Arg(0), rep.Sessions)
		if noted != "" {
			fmt.Fprintf(stderr, "agent replay: %s: line %d is the last one %s noted\n", fs.Arg(0), rep.Noted, threadFile)
		}
	}
	fmt.Fprintf(stdout, "replay ok: %d events\n", rep.Events)
	return exitOK
}
