package app

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fsmgen/fsmgen/agent/internal/ledger"
	"github.com/fsmgen/fsmgen/agent/internal/llm"
	"github.com/fsmgen/fsmgen/agent/internal/redact"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
	"github.com/fsmgen/fsmgen/agent/internal/thread"
	"github.com/fsmgen/fsmgen/agent/internal/threadsync"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
	"github.com/fsmgen/fsmgen/internal/threadwire"
)

// The steps of a session's setup (see agentMain) that settle where it
// works and with what: the threads, the thread, the model, the workspace,
// the keys and bash's sandbox.

// openThreads opens the threads directory (-threads, or the default) and
// makes -log absolute (so that the sandbox can hide the two and the
// workspace check compares like with like); -resume last becomes the
// newest thread of the workspace.
func (s *agentSession) openThreads(context.Context) error {
	o := &s.o
	if o.logFile != "" {
		abs, err := filepath.Abs(o.logFile)
		if err != nil {
			return fmt.Errorf("-log %s: %w", o.logFile, err)
		}
		o.logFile = abs
	}
	store, err := openStore(*o)
	if err != nil {
		return err
	}
	s.store, o.threads = store, store.Dir()
	if o.resume == resumeLast {
		if o.resume, err = lastOf(store, o.workspace); err != nil {
			return err
		}
	}
	return nil
}

// openThread opens the thread -resume names, locked (before its journal
// is opened: opening may repair it), and takes from it what the flags do
// not set (provider, model, workspace, tool calling); without -resume it
// starts a new thread.
func (s *agentSession) openThread(context.Context) error {
	o := &s.o
	if o.resume == "" {
		s.thread = &threadwire.Thread{Version: threadwire.Version, ID: thread.NewID(s.now), Created: s.now, Updated: s.now}
		return nil
	}
	unlock, err := s.store.Lock(o.resume)
	if err != nil {
		return err
	}
	s.onClose(unlock)
	t, journal, err := s.store.Open(o.resume)
	if err != nil {
		return err
	}
	s.onClose(func() { _ = journal.Close() })
	s.thread, s.journal = t, journal
	if r := journal.Repaired(); r.Bytes > 0 {
		s.notef("the last record of %s (at offset %d, %d bytes) was cut short by a crash and was removed; nothing it held had been acted on", journal.Path(), r.Offset, r.Bytes)
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
	return nil
}

// settleModel settles the model (-model, the thread's, or the provider's
// default) and checks the limits of its replies against -max-tokens and
// -thinking, which it refuses as a usage error.
func (s *agentSession) settleModel(context.Context) error {
	o := &s.o
	if o.baseURLFor == "" {
		o.baseURLFor = o.provider // the first session's: -base-url is its
	}
	if o.model == "" {
		o.model = defaultModels[o.provider]
	}
	_, tokensNote, err := maxTokensOf(*o, o.model)
	if err != nil {
		s.notef("%v", err)
		return exitCode(exitUsage)
	}
	if tokensNote != "" {
		s.notef("%s", tokensNote)
	}
	if err := s.settleSubagentModel(); err != nil {
		s.notef("%v", err)
		return exitCode(exitUsage)
	}
	if o.thinking > 0 && o.provider != llm.NameAnthropic {
		s.notef("-%s applies to the %s provider: the %s provider sends no thinking budget (a model that reasons does so on its own, and its reasoning is not shown as the answer)",
			llm.FlagThinking, llm.NameAnthropic, o.provider)
	}
	return nil
}

// openWorkspace opens the workspace (-workspace, the thread's, or the
// current directory) and refuses one the agent must not work in (see
// checkWorkspace).
func (s *agentSession) openWorkspace(context.Context) error {
	if s.o.workspace == "" {
		s.o.workspace = "."
	}
	ws, err := tools.NewWorkspace(s.o.workspace)
	if err != nil {
		return fmt.Errorf("%w (set it with -workspace)", err)
	}
	s.onClose(func() { _ = ws.Close() })
	s.ws = ws
	return checkWorkspace(ws.Root(), s.o.threads, s.o.logFile)
}

// takeKeys takes the API keys and the sync token out of the environment
// (once, for every session of the run: /resume, /fork), and configures
// the LLM with the provider's key.
func (s *agentSession) takeKeys(context.Context) error {
	o, in := &s.o, s.in
	if in.keys == nil {
		in.keys = map[string]string{}
		for _, v := range keyVars {
			in.keys[v] = os.Getenv(v)
		}
	}
	for _, v := range keyVars {
		_ = os.Unsetenv(v)
	}
	s.llmCfg = s.llmConfig(o.provider)
	provider, err := llm.New(o.provider, s.llmCfg)
	if err != nil {
		return err
	}
	s.provider = provider
	s.syncToken = in.keys[threadsync.TokenVar]
	// Every secret of the session, as agentexec.Config.Secrets has them:
	// the key in use, the sync token, and every other key variable's
	// value (another provider's key is a secret all the same).
	s.secrets = redact.New(append([]string{s.llmCfg.APIKey, s.syncToken}, slices.Sorted(maps.Values(in.keys))...)...)
	return nil
}

// llmConfig returns the configuration of the LLM of provider (the
// session's, or the subagents' with -subagent-model): its key, its base
// URL (see sessionBaseURL), the flags' timeouts and limits. The keys
// must have been taken (takeKeys).
func (s *agentSession) llmConfig(provider string) llm.Config {
	o := s.o
	o.provider = provider
	return llm.FromEnv(provider, llm.Config{APIKey: s.in.keys[llm.KeyVar(provider)], BaseURL: sessionBaseURL(o), Logger: s.logger,
		HeaderTimeout: o.llmHeaderTimeout, IdleTimeout: o.llmIdleTimeout, ReplyTimeout: o.llmReplyTimeout,
		MaxReplyBytes: int(o.llmMaxReply), TextOnly: ledger.TextOnly})
}

// sessionBaseURL returns the base URL the session's provider is given:
// -base-url when it applies to the provider (see options.baseURLFor);
// "" otherwise, for the provider's variable or its public API (see
// llm.FromEnv).
func sessionBaseURL(o options) string {
	if o.baseURLFor != "" && o.baseURLFor != o.provider {
		return ""
	}
	return o.baseURL
}

// lockThread locks a new thread (openThread locked a resumed one).
func (s *agentSession) lockThread(context.Context) error {
	if s.journal != nil {
		return nil
	}
	unlock, err := s.store.Lock(s.thread.ID)
	if err != nil {
		return err
	}
	s.onClose(unlock)
	return nil
}

// hideOwnFiles settles the event log's file (-log, or the thread's own)
// and lists the files of this session and the earlier ones that commands
// must not see (see ownfiles.go); failing to list them is only told.
func (s *agentSession) hideOwnFiles(context.Context) error {
	s.logPath = s.o.logFile
	if s.logPath == "" {
		s.logPath = filepath.Join(s.store.Dir(), s.thread.ID+".events.jsonl")
	}
	own, err := recordOwnFiles(stateDir(), s.logPath, s.store.Dir())
	if err != nil {
		s.notef("%v; commands may see the event logs of earlier sessions that were not in the workspace or the threads directory", err)
	}
	// Never the workspace, nor a directory that holds it: an earlier
	// session's threads directory may be this one's project.
	s.o.ownFiles = slices.DeleteFunc(own, func(p string) bool {
		rel, err := filepath.Rel(p, s.ws.Root())
		return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
	})
	return nil
}

// openSandbox sets up bash's sandbox as -sandbox asks, says how bash runs
// (or why it is disabled) and which programs of the PATH it lacks, and
// masks the workspace's files that hold secrets.
func (s *agentSession) openSandbox(ctx context.Context) error {
	o := s.o
	s.sandboxOpt = sandboxOptions(o, s.store.Dir(), s.logPath, s.llmCfg.APIKey)
	s.programs = hostPrograms(o, s.ws.Root(), s.sandboxOpt)
	s.sandboxOpt.Programs = s.programs
	sb, err := sandbox.New(ctx, s.sandboxOpt)
	if err != nil {
		return fmt.Errorf("-sandbox=%s: %w", o.sandbox, err)
	}
	s.sandbox = sb
	// Said by the first session of the run: the sessions a /fork or a
	// /resume starts on the same terminal have the same sandbox.
	var note strings.Builder
	if why := sb.Disabled(); why != nil {
		fmt.Fprintf(&note, "agent: bash is disabled: %v\n", why)
	} else {
		fmt.Fprintf(&note, "agent: bash sandbox: %s\n", sb)
	}
	notePATH(s.programs.Skipped(), sb.HiddenPATH(), o.verbose, &note)
	if s.in == nil || s.in.once(note.String()) {
		fmt.Fprint(s.stderr, note.String())
	}
	return maskWorkspace(ctx, s.ws, s.llmCfg.APIKey, s.stderr)
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
