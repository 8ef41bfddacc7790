// Command agent is a coding agent: it talks to an LLM (Anthropic, or any
// OpenAI-compatible server), reads and edits the files of a workspace, runs
// shell commands there, and commits every change to git. Its decisions are
// made by the state machine generated from spec/agent.yaml; this program
// performs them.
//
// Usage:
//
//	agent [flags] ["PROMPT"]      interactive, PROMPT (if given) the first message
//	agent [flags] -p "PROMPT"     one-shot: run one turn to the end, print the answer
//	agent [flags] -resume ID      continue a saved thread where it stopped
//	agent [flags] -resume last    continue the newest thread of the workspace
//	agent [-threads DIR] sessions list the saved threads, newest first
//	agent [-v] replay LOG         check that a recorded session replays exactly
//	agent -version                print the version
//
// Interactive, the agent streams its reply to standard output as it
// arrives; tool calls, their results, commits, errors and retries go
// to standard error. A tool call is shown by what it works on (a path, a
// command), an edit as a unified diff numbered from its line, a command by
// its last 10 lines and the count of those hidden (/expand shows them
// all), an error whole; -v shows every call's arguments and every result
// whole. A running command's output is shown as it comes: on a terminal
// its last 5 lines, drawn again in place, otherwise as plain lines. Colour is used when standard error is a terminal, unless NO_COLOR
// is set or TERM is "dumb". A message typed while the agent is busy is
// queued and sent when the current turn ends: input is never dropped.
//
// On a terminal, messages are typed in a line editor (golang.org/x/term):
// Enter sends; a line ending with a backslash goes on on the next line;
// lines pasted at once (bracketed paste) are one message, sent with the
// next Enter; Left, Right, Home, End, Ctrl-A, Ctrl-E, Ctrl-U, Ctrl-K,
// Ctrl-W, Ctrl-T edit (/help lists them); Up and Down recall the lines
// typed before; Ctrl-C with text typed clears the line, as shells do;
// Ctrl-D on an empty line quits once the turn has ended. From a pipe or a file, the agent reads one message per
// line, so that scripts work as before: a slash command there runs once the
// turns of the lines before it have ended.
//
// A line that starts with a slash and a command's name is a command,
// answered by the agent itself and never sent to the model: /help (the
// commands and keys), /diff (what changed in the workspace since the
// session started: the agent's commits, then what is not committed, each
// under its heading), /undo
// (take the last turn back: see below), /expand (the last round of tools'
// whole output), /usage (the tokens used and their cost), /compact (replace the earlier
// conversation by the model's summary of it, now), /sessions (the
// saved threads), /resume ID or /resume last (save this thread and go on
// with another, on the same terminal), /fork (go on in a copy of this
// thread, a new ID, leaving this one as it is), /instructions (the
// instructions files loaded, their sizes and what was cut), /quit (stop the turn, save
// and quit), /model (the model, its price and limits) and /model
// [PROVIDER] NAME (go on with this thread on another model, of this
// provider or of the other when its key was set at start: the session
// ends and the thread is resumed on it, at once; the thread records
// provider and model, and the price and limits are the new model's). Custom commands are Markdown files, the project's in
// .agent/commands/ and the user's in ~/.config/fsmgen-agent/commands/
// (the project's taking the place of the user's of the same name, said at
// start): /review sends review.md's text to the model, $ARGUMENTS
// replaced by what follows the name and $1 to $9 by its words (-p
// "/review src" runs one as the one-shot prompt); /help
// lists them with their first lines. Each is read as AGENTS.md is (32 KiB
// at most, no link out of its folder, no FIFO); a name that is a built-in
// command's is refused, saying so. "@path" in a message (or in -p)
// attaches the file's contents, or a folder's listing, to what the model
// gets (64 KiB a file, 256 KiB a message, redacted; a path outside the
// workspace, a link out of it, a masked or binary file refused, saying
// why); on a terminal, Tab after "@" completes the path. An unknown
// command is an error that suggests the closest one. A message that starts
// with "//" is sent with one slash less ("//help" sends "/help"); a line
// such as "/src/main.go:3: undefined" (a path) is a message.
//
// Ctrl-C stops the turn, as a crash would: the LLM request and the
// commands in flight are cancelled, a round that may have changed files is
// committed, the model is told the user stopped it, and the agent waits
// for the next message. Ctrl-C again within 2 seconds, or at an empty
// prompt while the agent waits for input, saves the thread and quits. SIGTERM and SIGHUP end the
// session.
//
// The task tool runs a focused sub-task in a subagent: a child agent (the
// same machine) on a conversation and thread of its own, with read-only
// tools (bash's sandbox keeping the workspace read-only) and no task tool;
// its last reply is the call's result. Its steps are shown under the call,
// marked "subagent" (with -json, as the call's tool_progress events), what
// it used counts in the session's usage, and "agent sessions" lists its
// thread under its parent's. The call's -tool-timeout, Ctrl-C and
// -subagent-calls bound it. It runs on the session's model as it is then
// (after a /model, the new one), or on -subagent-model NAME, of the
// provider the agent knows NAME to be of (checked at start, as -model is).
// With -subagent-write (off by default; subagent_write: true in the config
// file) a task call may ask for a subagent that writes ("write": true): it
// has the session's tools in the session's sandbox, under the session's
// -approve, its questions asked on the session's terminal and labelled as
// its own; what it changes is the turn's, committed with the turn (never
// the user's own changes) and reverted by /undo. Task calls then run one
// after another. Plan mode keeps every subagent read-only.
//
// A reply cut at its token limit in its text is kept and continued: the
// model is asked to go on where it stopped, up to 3 times a turn, and
// one-shot, the answer is the pieces joined. Anthropic requests mark the
// prompt cache (the tools, the system prompt, the conversation), so that
// each round of a turn reads the one before from the cache; /usage and
// "agent sessions" show the tokens read from it.
//
// One-shot (-p), the agent runs one user turn to the end, every tool round
// included, prints the assistant's last text (its answer, not the
// narration before it) on standard output and exits 0; diagnostics, and at
// the end the tokens used, go to standard error. With -json standard
// output gets instead one JSON object a line, each as it happens: "start"
// (session, provider, model, workspace, mode), "text" (a piece of the
// reply as it streams), "reply", "tool_call", "tool_progress",
// "tool_result", "approval", "commit", "retry", "notice", "error", and
// last "result": {"type", "session", "answer", "error", "usage", "cost"}
// (cost null when no price is known); every line redacted. docs/agent.md,
// "JSON output", gives each event's fields. It exits 1 when the turn ends
// with an error (the LLM request failed, retries used up), or is stopped.
//
// # Flags
//
//	-p PROMPT         one-shot mode: run this prompt and exit
//	-workspace DIR    the directory the agent works in (default: the current
//	                  directory; when resuming, the thread's workspace)
//	-provider NAME    anthropic (default) or openai (OpenAI, or an OpenAI-
//	                  compatible server such as llama.cpp, vLLM or Ollama)
//	-model NAME       the model (default claude-sonnet-4-5 for anthropic,
//	                  gpt-4.1 for openai; when resuming, the thread's);
//	                  -model list lists the models known, with their
//	                  list prices and limits, and exits
//	-subagent-model NAME
//	                  the model subagents run on, of its provider
//	                  (default: the session's model, after /model too)
//	-base-url URL     the API's base URL (default: $ANTHROPIC_BASE_URL or
//	                  $OPENAI_BASE_URL, else the provider's public API),
//	                  the first session's provider's: another that /model
//	                  switches to is reached at its variable's URL, else
//	                  at its public API;
//	                  for anthropic a final /v1 is dropped (the API's paths
//	                  start with it); a URL that is not the API's fails at
//	                  once with the URL the request went to
//	-resume ID        continue the thread ID; "last": the workspace's newest
//	-threads DIR      where threads are saved (default
//	                  $XDG_DATA_HOME/fsmgen-agent/threads, or
//	                  ~/.local/share/fsmgen-agent/threads)
//	-log FILE         the event log (default <threads>/<ID>.events.jsonl): a
//	                  new file or an event log of this format
//	-sync URL         push every saved version of the thread, in the
//	                  background, to the server (cmd/server) at this base
//	                  URL; its API token in $FSMGEN_SERVER_TOKEN. https://,
//	                  or http:// to this machine (loopback, localhost)
//	-sync-allow-http  let -sync use plain http:// to another host: the
//	                  token and the thread cross the network unencrypted
//	-max-tokens N     the longest reply, in tokens (default: the model's own
//	                  limit, dated names included, see agent/internal/ledger
//	                  LimitsOf; 8192, said once, for a model not listed)
//	-thinking BUDGET  let the model think BUDGET tokens before it answers
//	                  (Anthropic's extended thinking; default 0: off); its
//	                  thinking is shown dimmed on stderr (-v: whole), saved
//	                  in the thread and sent back with the tool results
//	-max-retries N    retries of a failed LLM request (default 3; 0: none)
//	-retry-delay D    delay before the first retry, doubled for each next
//	                  one up to 30s (default 1s; at most 30s); a server's
//	                  retry-after wins
//	-sandbox MODE     how bash is confined: auto (default: bubblewrap if it
//	                  works, else bash is disabled and the agent says why),
//	                  bwrap (bubblewrap, or an error) or off (unconfined)
//	-sandbox-network  let sandboxed commands reach the network
//	-sandbox-expose PATH  show sandboxed commands this path of the home
//	                  directory, which they otherwise see empty (read-only;
//	                  PATH:rw for writable); repeatable. Go's module cache
//	                  is shown by default
//	-price P          the model's price in dollars per million tokens,
//	                  INPUT,OUTPUT[,CACHE_WRITE,CACHE_READ], for the costs
//	                  shown (default: the list price of the providers'
//	                  current models, dated names included; for another
//	                  model the agent says once that it shows no cost)
//	-config FILE      the config file (default
//	                  $XDG_CONFIG_HOME/fsmgen-agent/config.yaml, or
//	                  ~/.config/fsmgen-agent/config.yaml, when it exists)
//	-json             with -p: print JSON events, one a line, as the turn
//	                  runs, the result last
//	-tool-calls       offer the model tools (default true); false for a
//	                  model without tool calling: see "Server queries"
//	-max-queries N    with -tool-calls=false, the queries one turn may ask
//	                  (default 8; the one after them ends the turn)
//	-version          print the version and exit
//	-v                show tool calls' arguments and results whole, the
//	                  server's whole message on every retry (else on the
//	                  first only), and log debug records to standard error
//
// The limits, each reached with a message (and, where the model can act on
// it, an error result the model reads); sizes take units such as 64KiB:
//
//	-llm-header-timeout D  the wait for the LLM's response headers (5m)
//	-llm-idle-timeout D    an LLM reply making no progress (2m); both are
//	                       retried
//	-llm-reply-timeout D   one LLM reply in all (30m)
//	-llm-max-reply SIZE    one reply's text and tool calls (4MiB)
//	-max-tool-calls N      tool calls run per reply (64)
//	-parallel-tools N      tool calls running at once (8)
//	-subagent-calls N      tool calls of one subagent (40; 0 offers no
//	                       task tool, and so no subagents)
//	-subagent-write        let a task call start a subagent that writes
//	                       ("write": true; off: subagents only read)
//	-max-tool-args SIZE    one tool call's arguments (1MiB)
//	-max-edit-size SIZE    the file edit_file changes (16MiB)
//	-max-round-output SIZE the results of one round of tools (512KiB)
//	-tool-timeout D        one tool call (2m)
//	-commit-timeout D      each git command of the auto-commit (1m)
//	-commit-max-new-file SIZE  a new file the auto-commit commits (5MiB)
//	-max-input-line SIZE   one line of input (1MiB)
//	-sandbox-memory SIZE   the memory each process of a bash command may
//	                       allocate (1GiB; 0: no limit, as for the next five)
//	-sandbox-processes N   a bash command's processes and threads at once
//	                       (1024; for root, only where cgroup v1 is mounted)
//	-sandbox-cpu D         the CPU time of each process of a command (10m)
//	-sandbox-file-size SIZE  a file a command writes (1GiB)
//	-sandbox-tmp-size SIZE a command's private /tmp, in memory (512MiB)
//	-sandbox-disk SIZE     what a command writes to the disk (the workspace,
//	                       its build cache, the writable exposures), all its
//	                       files together (1GiB); past it the command is
//	                       stopped with everything it started
//
// The API key comes from ANTHROPIC_API_KEY or OPENAI_API_KEY (an OpenAI-
// compatible local server may need none); -h lists these and the other
// variables the agent reads. The agent restarts itself at once
// without it in its environment, handing it on through a pipe, and is not
// dumpable, so that no command can read it from /proc. Everything that
// reaches the agent — tool output, the model's text as it streams, the tool
// names and call IDs it chooses, input, errors — is redacted of the key
// before the model, the screen, the thread, the event log or a commit sees
// it: raw, escaped, reversed, in hex, base64 or base32, whitespace ignored,
// and any 24 characters of it; the auto-commit leaves out any changed file
// that holds it so. Redaction cannot catch a key the model's commands
// transform otherwise (see agent/internal/redact): keep the key out of the
// workspace.
//
// # Plan mode and approval
//
//	-mode MODE        auto (default: the agent changes the workspace and
//	                  commits) or plan: only read_file, list_files, the
//	                  MCP tools listed read-only and bash are offered,
//	                  bash sees the workspace read-only (with
//	                  -sandbox off it is not offered), a call of edit_file is
//	                  answered "not run: plan mode", the model is asked to
//	                  investigate, write a plan and stop, and nothing is
//	                  committed; the plan is the last reply (with -p, the
//	                  answer)
//	-approve POLICY   when to ask you before a call of a tool that may
//	                  change anything (edit_file, bash): never (default),
//	                  untrusted (before every one) or on-request (when the
//	                  model asks, through the arguments ask_approval and
//	                  approval_reason its schemas then offer)
//
// Reads are never asked about, unless a tool's own setting says so (an
// MCP server's approve: always asks before every call of it, whatever the
// policy; a does not lift it). The question shows the call exactly (an
// edit as its diff, numbered from the line it changes; a command whole),
// with the model's reason, and the prompt becomes "approve? [y/n/a]": y
// runs it, a runs it and every later call of its tool this session, n
// (or "n WHY", or any other text) refuses it. A refused call is not run:
// its result tells the model, with your reason; every answer is recorded
// with the call's outcome, in the thread and the event log. Ctrl-C while
// asked stops the turn; the call never runs, nor does it on resume after
// a crash. A policy that asks needs a terminal: with -p, or standard
// input or error not a terminal, the agent refuses to start (exit 2).
//
// # Config file, instructions and MCP servers
//
// The config file (-config) gives the flags their defaults, by their names
// with "_" for "-" (model, base_url, max_retries, sandbox_expose as a
// list, ...; not p, resume, json, version, config, log, workspace, v): a
// flag given wins, and a resumed thread keeps its provider and model. It
// also holds "instructions" and "mcp_servers". It is read strictly: an
// unknown key, a key given twice or a bad value is an error naming the
// file, the line and what is allowed, and the agent exits 2.
// docs/agent-config.example.yaml explains every key.
//
// Instructions: AGENTS.md (or, where a directory has none, CLAUDE.md) at
// the workspace root and the user's $XDG_CONFIG_HOME/fsmgen-agent/AGENTS.md
// end the system prompt; a subdirectory's, and those of the directories
// between, are appended to the result of the first read_file, list_files
// or edit_file call (or query) that touches a path under it, after the
// round's output budget cut it, so that the system prompt, and the
// provider's cache of it, stay the same all session; they come again once
// the conversation no longer holds them (cut by /undo, summarised).
// They are read through the workspace handle (a link leading outside is
// refused), cut at 32 KiB each and 64 KiB in all with a note, and redacted
// of the session's secrets (the API key, the sync token).
//
// MCP servers: each entry of mcp_servers is a stdio server (command), run
// in a bubblewrap sandbox as bash is, with the network, paths, variables
// and workspace access its entry grants, killed when the session ends; or
// an HTTP server (url, headers from the environment). Their tools are
// offered as mcp__<server>__<tool>; a server that fails to start is named
// and left out. Results are text (other content described), cut at 64
// KiB, redacted. An MCP tool may change files unless read_only_tools lists
// it; approve sets per tool whether a call asks first (policy, always,
// never).
//
// # Hooks
//
//	-hooks WHOSE      whose hooks run: all (default: yours, in hooks.yaml
//	                  of the config directory, and the project's
//	                  .agent/hooks.yaml), user (yours only) or off
//
// A hooks file lists commands under pre_tool (before a call of the tools
// it names, and before -approve asks about it; one that fails refuses the
// call, unasked, its output the reason the model reads), post_tool (after a call that ran; its output is appended
// to the result) and turn_end (once a turn ended with the model's reply;
// its output is shown, and goes to the model with the next message, which
// waits for it, kept in the thread for a resumed session; Ctrl-C stops it), each with command, tools and timeout
// (1m). A hook reads the call as JSON on standard input (AGENT_HOOK_EVENT,
// AGENT_TOOL_NAME, AGENT_SESSION in its environment), redacted, and runs
// only in bash's sandbox, never on the host (with -sandbox off none runs,
// and a pre_tool hook refuses its calls): the workspace writable for the
// hooks of a call that may change it, read-only otherwise. The start
// banner lists every hook with its command. docs/agent.md#hooks has the
// format.
//
// # Threads, resume and replay
//
// Every conversation is a thread with an ID, printed when the agent starts.
// The thread — the machine's state, conversation included, and its account
// of tokens — is saved after every event that changes it, at every turn end
// and on shutdown, in its journal <threads>/<ID>.journal: each save appends
// one checksummed record with what changed and syncs it, and a round's
// tools start only once the record of their state is synced: a crash or
// SIGKILL loses nothing that was saved and never runs a tool twice. A
// record cut short by a crash is removed on resume, with a message; a
// journal damaged before its last record is refused, naming the file and
// the offset. The journal is rewritten whole, atomically, when it holds
// more than twice its thread and a megabyte. A session that ends before
// its first message saves nothing. Threads saved by an earlier agent
// (<ID>.json) are refused: continue them with that agent.
//
// /fork copies the thread, as it is when the agent waits for input, into
// a new thread (its journal notes the thread it was forked from, its
// account of tokens starts at zero, its event log is its own) and the
// session goes on in the copy; the thread forked is left as it is, to be
// resumed later. /resume ID (or last, the workspace's newest other
// thread) saves the thread and goes on with another on the same terminal,
// as -resume would.
//
// "agent sessions" lists the threads of the folder, the most recently
// saved first: ID, workspace, start, tokens, tokens read from the prompt
// cache, cost (at the model's list
// price, or -price) and the first prompt, which the thread keeps through
// /compact and /fork (a fork's marked; in a thread saved before it was
// kept and since compacted, the first after the summary, marked). "-resume last" continues the
// newest thread of the workspace (-workspace, or the current directory).
// A resumed interactive session shows its last three exchanges first and
// never acts before the user does: tool calls that may have run when the
// session stopped get an "interrupted" result (never run twice) and the
// round's changes are noted, then the turn the session stopped in is
// stopped as Ctrl-C stops it (the model is told), and nothing is sent to
// the model until the user types a message; a message typed but not sent
// before the session stopped is shown ("not sent before the session
// stopped: …"), not sent. One-shot, "-resume ID -p PROMPT" finishes the
// turn instead, as a script wants: an LLM request in flight is sent again,
// a pending retry is scheduled again, the queued messages are sent, then
// PROMPT. A thread that cannot be resumed is refused with an error.
//
// Every event handed to the machine is appended to the event log, one JSON
// line each, with the actions the machine performed for it, in order; what
// the model was sent is recorded by reference (the conversation's length
// and SHA-256), so the log grows linearly, and each line carries a hash
// chained to the line before it; the thread notes the last one when it is
// saved. "agent replay LOG" feeds the events to a fresh machine, needing no
// network, and checks that every line chains, that a thread's own log
// still has the line its thread noted, and that every action and rejection
// is identical: it prints "replay ok: N events" and exits 0, or prints the
// first difference (or the first line edited after it was written, or
// that the log was cut) and exits 1.
//
// With -sync URL, the thread is pushed to the server (cmd/server: PUT
// /api/threads/ID, with the token of $FSMGEN_SERVER_TOKEN, which the agent
// hides from its environment and its commands as it hides the API keys)
// after every save, by a goroutine of its own: a save only hands it a
// copy, and versions saved while a push is on its way collapse into the
// newest. What is pushed is redacted of the API key and the token. While
// the server is down, or answers 5xx, 408 or 429, the push is retried with
// exponential backoff and jitter (at least what Retry-After asks), and the
// agent says so once, and once when it answers again; turns never wait. A
// refusal (a wrong token, a thread too large) is said once and ends the
// sync for the session. The start banner says where the thread syncs to.
// On exit the agent tries for up to 3 s to push the last version and says
// if it could not; that version is pushed the next time the agent runs on
// the thread with -sync (a resumed thread is pushed at start).
//
// # Compaction
//
// Before each request the agent estimates its size (system prompt, tools
// and messages, at 3 bytes a token); when it would pass the threshold —
// -compact-at of the model's context window, or less when that would
// leave no room for the reply: the window less the reply's limit
// (-max-tokens, at most half the window counted) and a margin of a
// fiftieth of it — the model is first asked for a summary of the older
// part of the conversation (the task, the decisions, the files touched,
// what remains), which then replaces that part as one message marked as a
// summary. The last message the user typed and the request's tail (the
// pending round of tools, call and results; or the new message; or,
// between turns, the last reply; a reply cut at its token limit, or one
// that asked a query, stays with the note that continues or answers it)
// are kept whole. /compact does the same between turns. The summary's
// reply is limited to 8192 tokens and its transcript to what the window
// leaves, and no request asks for a reply longer than the window leaves
// after its input: providers refuse a request whose input and max_tokens
// pass the window. A summary request that fails for good ends the turn
// with the error and keeps the conversation whole.
//
//	-compact-at SHARE     compact before a request that would pass this
//	                      share of the context window (default 0.8; 0: never)
//	-context-window N     the model's context window in tokens (default:
//	                      the model's, as agent/internal/ledger LimitsOf knows it,
//	                      dated names included; for another model
//	                      compaction is off unless it is given)
//
// # Tools
//
// read_file, list_files, edit_file (replace one exact occurrence, or create
// a file) and bash. The file tools reach files only beneath an open handle
// of the workspace, so no path, symbolic link or race leads outside; they
// refuse hard-linked files, edit_file never writes under .git nor in a git
// repository, and drops the setuid and setgid bits of a file it edits. bash
// runs in the workspace inside a bubblewrap sandbox (-sandbox): it can write
// only the workspace (not its .git), a private /tmp and the workspace's own
// toolchain caches (Go's build and module caches, npm's, pip's, cargo's,
// kept across sessions, never the user's own), sees
// an empty home directory (-sandbox-expose), no other credentials it knows
// of, no network (-sandbox-network) and no other process, and everything it
// starts is killed when it ends. The files of the workspace that hold the
// API key are masked from bash and the file tools alike: the agent names
// them at start. After every command, before every commit and when the
// agent stops, what a tool changed of the workspace's other git
// repositories (a submodule's gitdir pointer, a nested .git's configuration
// and hooks) is put back, and a .git or a repository a tool created is
// removed; the agent tells the model at once, and the user at the end. A
// tool call whose arguments are not a JSON object is answered with an error
// naming it. The calls of one reply that may change anything (edit_file,
// bash) run in the order the model gave them, each once the one before it
// has ended; read_file and list_files run in parallel beside them.
//
// The programs the agent runs on the host — git, bubblewrap, bash with
// -sandbox off, the MCP servers' commands, the toolchains of the
// environment query — are found once, at start, by one resolver
// (agent/internal/progpath) that never looks in a directory of PATH the model's
// commands can write: the workspace (an activated .venv/bin, direnv's
// PATH_add bin, ./node_modules/.bin), the sandbox's build caches, the
// paths exposed writable, a directory reached through a link into one of
// them, nor a relative entry; nor does it take a program that links into
// them. The start banner says on one line what it skipped and why (-v:
// every one), and a program found only there is an error naming it.
//
// /undo takes the last turn back, once it has ended: the turn's commit is
// reverted by a commit of the agent ("agent: undo …", the turn's commit
// stays in the history) that puts its files back in the work tree, and
// the conversation is cut back to before the user's message (the model
// no longer sees the turn's messages; but a summary made during the turn,
// by a compaction between its rounds, stays and may still mention what
// the turn did). The turn's commit is found by its trailers
// (Agent-Thread, Agent-Turn), so a resumed session, or a fork, undoes a
// turn of an earlier session too. /undo refuses, and changes nothing,
// when commits were made on the branch after the turn's, or when a file
// of the turn's commit changed since (yours: it would be lost); with
// -commit off, or outside a git repository, it cuts the conversation back
// and says the files are left as they are. In the thread's journal, an
// undo is a record appended that drops the turn's messages, and in the
// event log the machine's UndoTurn event: replay reproduces it.
//
// # Server queries
//
// With -tool-calls=false the model is offered no tools; its system prompt
// teaches it to ask for what it needs on a line of its own ("QUERY: read
// PATH", "QUERY: list [DIR]", "QUERY: search PATTERN [in DIR]", "QUERY:
// environment", "QUERY: project"), and the agent reads every reply as it
// streams for such a query, in the protocol or in prose ("I need to read
// src/main.rs", "What's in the environment?"; see agent/internal/query and
// docs/queries.md). At the end of the sentence that asks, the reply is cut
// and the LLM call cancelled; the query runs through the agent's tools
// (read_file, list_files, search_files: confined, masked and redacted as
// every tool call) or gathers the facts (the environment query names the
// environment's variables, never their values, and leaves out those that
// look secret, and runs the toolchains' version commands in the bash
// sandbox, from /, with the variables that redirect toolchains left out, so
// that no file of the workspace chooses what runs); the result goes back to
// the model as a message marked as the query's, and the reply resumes with
// the next request. A query is shown as the tool call it runs. With -mode
// plan the system prompt asks for a plan rather than the changes. The
// config file's MCP servers are not started (no tool is offered; the agent
// says so), so approve: always needs no terminal. A request cut at a query
// counts in the usage with what the provider reported before the cut
// (Anthropic: the prompt's tokens; OpenAI: nothing, its usage comes at a
// reply's end) and its output estimated from the bytes received. A resumed
// thread keeps its own setting, with tools or without, whatever the config
// file's tool_calls says; only -tool-calls changes it.
//
// # Commits
//
// When the workspace is in a git repository, each turn that changed files
// ends with one commit holding only what the agent's tools changed: the
// files they wrote, and what bash changed, found by comparing the
// workspace's changed and untracked files with a snapshot taken before
// each round. Your own uncommitted changes stay as they were, never staged
// nor committed; a file you had changed that the tools changed too is
// named and left out. The commit is made through an index of its own, by
// "fsmgen-agent <agent@fsmgen.invalid>", with hooks and other configured
// commands off; its message is derived from the turn (nothing is asked of
// the model): the first line of the model's last reply, your request, the
// files with A, M or D, and the tools run. Ignored files, temporary files
// and files holding the API key are never committed, and the commit is
// refused if the repository or its configuration changed since the agent
// started. The start banner says where commits go:
//
//	-commit MODE      current (default: the branch checked out), branch (a
//	                  branch of its own, agent/<thread ID>, started at
//	                  HEAD, or for a /fork at its thread's branch; your
//	                  checkout is untouched; a resumed session takes the
//	                  files that hold what the branch holds for the
//	                  agent's earlier work) or off
//
// Exit status: 0 when all went well, 1 on an error (or a one-shot turn that
// failed, or a replay that differs), 2 for a usage error or a config file
// that cannot be read.
package main

import (
	"os"

	"github.com/fsmgen/fsmgen/agent/app"
)

func main() { os.Exit(app.Main()) }
