// Package mcptools offers the tools of MCP (Model Context Protocol)
// servers to the coding agent, as [tools.Tool]s beside its own. It is a
// client on the official Go SDK (github.com/modelcontextprotocol/go-sdk).
//
// A stdio server is a long-lived command started through the agent's
// sandbox, confined as bash's commands are (bubblewrap: the workspace
// writable unless its entry says read-only, the rest of the file system
// read-only, an empty home directory but for the paths its entry exposes,
// no network unless its entry grants it, secrets hidden), and killed with
// everything it started when the session ends ([Clients.Close]) or the
// agent dies. An HTTP server (MCP's streamable HTTP transport) is reached
// at the URL its entry names, with the headers it names; only servers
// named in the config file are ever reached.
//
// No secret of the session ([Options.Secrets]: the API keys, the sync
// token) leaves in an entry: before a server is started or reached, every
// field of its entry (name, command and arguments, env's names and values,
// exposed paths, URL, headers' names and values, tool names) is checked,
// in every encoding the redactor knows, and an entry that holds one is
// refused with a message naming the field, never the secret.
//
// A stdio server's program is found on the host by the sandbox's resolver
// (see agent/internal/progpath), confined or not: never in the workspace nor in
// a directory the model's commands can write, never through a relative
// path, and never in a directory its sandbox hides. Confinement alone is
// not enough, as an entry may grant its server what bash has not (the
// network, exposed paths, variables holding tokens), which a program the
// model planted must not get. Its arguments are the entry's own: a script
// of the workspace that an interpreter runs (node server.js) runs with
// the entry's grants, and the model can edit it.
//
// Each server's tools are listed once, at start, and offered as
// mcp__<server>__<tool>, the names cut down to what both LLM APIs accept
// (letters, digits, _ and -, at most 64 characters). A server that fails
// to start, or to list its tools, is left out with an error naming it; the
// others go on. A call runs with the agent's tool-call timeout; its result
// is the text of its content (other content is described, not sent),
// cut to a size limit, and redacted of the agent's secrets (the agent
// redacts every tool result again).
//
// Every MCP tool is mutating (it runs in order with the other mutating
// calls and counts for the commit's snapshot) unless its server's entry
// lists it read-only; its approval setting ([tools.Approval]) is the one
// its entry names, else the session's policy.
package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/redact"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
)

// Defaults of [Options].
const (
	DefaultStartTimeout   = 30 * time.Second
	DefaultMaxResultBytes = 64 << 10
)

// Server is one MCP server's entry in the agent's config file: a stdio
// server (Command) or an HTTP one (URL).
type Server struct {
	// Name names the server: it prefixes its tools' names.
	Name string
	// Command is the stdio server's program and arguments.
	Command []string
	// Env sets variables for the stdio server, whatever their names.
	Env map[string]string
	// Network lets the stdio server reach the network.
	Network bool
	// Expose shows the stdio server these paths of the home directory
	// (see sandbox.Options.Expose).
	Expose []sandbox.Exposure
	// ReadOnlyWorkspace keeps the stdio server from writing the
	// workspace.
	ReadOnlyWorkspace bool
	// URL is the HTTP server's endpoint.
	URL string
	// Headers are sent with every request to the HTTP server.
	Headers map[string]string
	// ReadOnlyTools name the server's tools (as it names them) that change
	// nothing.
	ReadOnlyTools []string
	// StartTimeout bounds its start and the listing of its tools; 0
	// means Options.StartTimeout.
	StartTimeout time.Duration
	// Approve maps the server's tools (as it names them) to their
	// approval setting; "*" applies to the others. Missing: the policy.
	Approve map[string]tools.Approval
}

// Options configures [Start].
type Options struct {
	// Workspace is the workspace root, absolute: a stdio server's working
	// directory.
	Workspace string
	// Sandbox is what every stdio server's sandbox starts from (mode,
	// hidden paths, limits, redactor, cache); each server's entry adds
	// its network and exposed paths.
	Sandbox sandbox.Options
	// Masked returns the workspace's files that hold the API key (see
	// sandbox.Command.Masked); nil for none.
	Masked func() []string
	// Secrets are removed from every result, description and error, and
	// no field of an entry may hold one.
	Secrets *redact.Redactor
	// StartTimeout bounds a server's start and the listing of its tools;
	// 0 means DefaultStartTimeout.
	StartTimeout time.Duration
	// MaxResultBytes cuts each result; 0 means DefaultMaxResultBytes.
	MaxResultBytes int
	// Logger receives debug records; nil discards them.
	Logger *slog.Logger
}

// Clients are the MCP servers of a session that started. Close them when
// the session ends.
type Clients struct {
	conns []*conn
	tools []tools.Tool
}

// conn is one server's session.
type conn struct {
	server  Server
	session *mcp.ClientSession
	proc    *sandbox.Process // the stdio server; nil for HTTP
	stderr  *tail
}

// Start starts every server, at once, and lists their tools. Those that
// fail are returned as errors, one each, naming the server; the others
// are in Clients, whose tools are sorted by name.
func Start(ctx context.Context, servers []Server, opt Options) (*Clients, []error) {
	if opt.StartTimeout <= 0 {
		opt.StartTimeout = DefaultStartTimeout
	}
	if opt.MaxResultBytes <= 0 {
		opt.MaxResultBytes = DefaultMaxResultBytes
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	type started struct {
		c     *conn
		tools []tools.Tool
		err   error
	}
	results := make([]started, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() {
			c, err := connect(ctx, s, opt)
			if err == nil {
				var ts []tools.Tool
				lopt := opt
				if s.StartTimeout > 0 {
					lopt.StartTimeout = s.StartTimeout
				}
				ts, err = c.list(ctx, lopt)
				if err != nil {
					_ = c.close()
					c = nil
				}
				results[i] = started{c: c, tools: ts, err: err}
				return
			}
			results[i] = started{err: err}
		})
	}
	wg.Wait()
	cs := &Clients{}
	var errs []error
	names := map[string]string{} // tool name → server
	for i, r := range results {
		if r.err != nil {
			errs = append(errs, fmt.Errorf("MCP server %q: %s", servers[i].Name, opt.Secrets.String(r.err.Error())))
			continue
		}
		cs.conns = append(cs.conns, r.c)
		for _, t := range r.tools {
			n := t.Spec().Name
			if other, dup := names[n]; dup {
				errs = append(errs, fmt.Errorf("MCP server %q: its tool %s has the name of one of server %q once cut down to what the LLM APIs accept; it is left out: rename a server", servers[i].Name, n, other))
				continue
			}
			names[n] = servers[i].Name
			cs.tools = append(cs.tools, t)
		}
	}
	slices.SortFunc(cs.tools, func(a, b tools.Tool) int { return strings.Compare(a.Spec().Name, b.Spec().Name) })
	return cs, errs
}

// Tools returns the servers' tools, sorted by name.
func (c *Clients) Tools() []tools.Tool { return slices.Clone(c.tools) }

// Servers returns the names of the servers that started, with how many
// tools each offers, in the config's order.
func (c *Clients) Servers() []string {
	var out []string
	for _, cn := range c.conns {
		n := 0
		for _, t := range c.tools {
			if t.(*tool).conn == cn {
				n++
			}
		}
		out = append(out, fmt.Sprintf("%s (%d tools)", cn.server.Name, n))
	}
	return out
}

// Close ends every server's session and kills the stdio servers, with
// everything they started.
func (c *Clients) Close() error {
	var errs []error
	for _, cn := range c.conns {
		errs = append(errs, cn.close())
	}
	return errors.Join(errs...)
}

// connect starts the server and opens its MCP session, once it checked
// that no field of its entry holds a secret.
func connect(ctx context.Context, s Server, opt Options) (*conn, error) {
	if err := s.checkSecrets(opt.Secrets); err != nil {
		return nil, err
	}
	if s.StartTimeout > 0 {
		opt.StartTimeout = s.StartTimeout
	}
	sctx, cancel := context.WithTimeout(ctx, opt.StartTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "fsmgen-agent", Version: "1"}, &mcp.ClientOptions{Logger: opt.Logger})
	if s.URL != "" {
		hc := &http.Client{Transport: headerTransport{headers: s.Headers, base: http.DefaultTransport}}
		session, err := client.Connect(sctx, &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
		if err != nil {
			return nil, fmt.Errorf("connect to %s: %w; check the URL and that the server runs", s.URL, err)
		}
		return &conn{server: s, session: session}, nil
	}
	c, transport, err := startStdio(sctx, s, opt)
	if err != nil {
		return nil, err
	}
	session, err := client.Connect(sctx, transport, nil)
	if err != nil {
		why := err.Error()
		if errors.Is(sctx.Err(), context.DeadlineExceeded) {
			why = fmt.Sprintf("it did not answer within %s", opt.StartTimeout)
		}
		c.proc.Kill()
		bounded := time.NewTimer(time.Second)
		defer bounded.Stop()
		select {
		case <-c.proc.Done():
			var exit *exec.ExitError
			if werr := c.proc.Wait(); errors.As(werr, &exit) && exit.ExitCode() > 0 && exit.ExitCode() != 128+int(syscall.SIGKILL) {
				why = "it exited (" + werr.Error() + ") before answering"
			}
		case <-bounded.C:
		}
		rest := time.NewTimer(time.Second) // bounded itself may have fired
		defer rest.Stop()
		select {
		case <-c.stderr.done:
		case <-rest.C:
		}
		if t := c.stderr.String(); t != "" {
			why += "; its standard error ends with: " + t
		}
		return nil, fmt.Errorf("start %s: %s", strings.Join(s.Command, " "), why)
	}
	c.session = session
	return c, nil
}

// startStdio starts the stdio server's command in a sandbox of its own.
func startStdio(ctx context.Context, s Server, opt Options) (*conn, mcp.Transport, error) {
	if len(s.Command) == 0 {
		return nil, nil, errors.New("no command given; give its command or its url")
	}
	so := opt.Sandbox
	so.Network = s.Network
	if so.Expose == nil {
		so.Expose = sandbox.DefaultExpose(nil)
	}
	so.Expose = append(slices.Clone(so.Expose), s.Expose...)
	sb, err := sandbox.New(ctx, so)
	if err != nil {
		return nil, nil, fmt.Errorf("its sandbox: %w", err)
	}
	if why := sb.Disabled(); why != nil {
		return nil, nil, fmt.Errorf("its sandbox is unavailable, so it was not started: %w", why)
	}
	// Found on the host, outside every directory the model's commands
	// can write, whether the server runs confined or not: its entry may
	// grant it what bash has not (the network, exposed paths, variables).
	prog, err := sb.Look(s.Command[0])
	if err != nil {
		return nil, nil, fmt.Errorf("its command: %w", err)
	}
	if err := checkVisible(sb, prog, s.Command[1:]); err != nil {
		return nil, nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, nil, err
	}
	args := append([]string{prog}, s.Command[1:]...)
	cmd := sandbox.Command{Workspace: opt.Workspace, Args: args, Stdin: inR, Stdout: outW, Stderr: errW, Env: maps.Clone(s.Env)}
	if s.ReadOnlyWorkspace {
		cmd.Workspace, cmd.Dir = "", opt.Workspace
	}
	if opt.Masked != nil {
		cmd.Masked = opt.Masked()
	}
	p, err := sb.Start(cmd)
	// The child has its ends once started.
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, nil, err
	}
	t := &tail{redactor: opt.Secrets, done: make(chan struct{})}
	go t.fill(errR) // ends when the server and what it started are gone
	return &conn{server: s, proc: p, stderr: t}, &mcp.IOTransport{Reader: outR, Writer: inW}, nil
}

// close ends the session and kills the server.
func (c *conn) close() error {
	var err error
	if c.session != nil {
		done := make(chan error, 1)
		go func() { done <- c.session.Close() }()
		select {
		case err = <-done:
		case <-time.After(2 * time.Second):
			err = fmt.Errorf("MCP server %q did not end its session in time; it was killed", c.server.Name)
		}
	}
	if c.proc != nil {
		c.proc.Kill()
		<-c.proc.Done()
		err = nil // a stdio server killed is a session ended
	}
	return err
}

// exited says how the stdio server ended when it has ("" while it runs,
// and for an HTTP server), with the end of its standard error. A call
// that failed because it ended may learn so before it was waited for:
// exited gives it a moment.
func (c *conn) exited() string {
	if c.proc == nil {
		return ""
	}
	wait := time.NewTimer(200 * time.Millisecond)
	defer wait.Stop()
	select {
	case <-c.proc.Done():
	case <-wait.C:
		return ""
	}
	why := "has exited"
	if err := c.proc.Wait(); err != nil {
		why += " (" + err.Error() + ")"
	}
	select {
	case <-c.stderr.done:
	case <-wait.C:
	}
	if t := c.stderr.String(); t != "" {
		why += "; its standard error ends with: " + t
	}
	return why
}

// list lists the server's tools as the agent's.
func (c *conn) list(ctx context.Context, opt Options) ([]tools.Tool, error) {
	lctx, cancel := context.WithTimeout(ctx, opt.StartTimeout)
	defer cancel()
	var out []tools.Tool
	for t, err := range c.session.Tools(lctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("list its tools: %w", err)
		}
		schema, err := json.Marshal(t.InputSchema)
		if err != nil || !bytes.HasPrefix(bytes.TrimSpace(schema), []byte("{")) {
			schema = []byte(`{"type":"object"}`)
		}
		approval, ok := c.server.Approve[t.Name]
		if !ok {
			approval = c.server.Approve["*"]
		}
		desc := t.Description
		if desc == "" {
			desc = t.Title
		}
		out = append(out, &tool{
			conn: c, remote: t.Name,
			spec: chat.ToolSpec{
				Name:        ToolName(c.server.Name, t.Name),
				Description: opt.Secrets.String(fmt.Sprintf("[MCP server %s, tool %s] %s", c.server.Name, t.Name, desc)),
				InputSchema: json.RawMessage(opt.Secrets.String(string(schema))),
			},
			readOnly: slices.Contains(c.server.ReadOnlyTools, t.Name),
			approval: approval,
			max:      opt.MaxResultBytes,
			secrets:  opt.Secrets,
		})
	}
	return out, nil
}

// headerTransport adds headers to every request.
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range h.headers {
			r.Header.Set(k, v)
		}
	}
	return h.base.RoundTrip(r)
}

// tail keeps the last 2 KiB a server wrote to standard error.
type tail struct {
	mu       sync.Mutex
	buf      []byte
	redactor *redact.Redactor
	done     chan struct{} // closed once the output has ended
}

// maxTail is what tail keeps.
const maxTail = 2 << 10

// fill reads r into the tail until it ends, then closes it.
func (t *tail) fill(r *os.File) {
	defer close(t.done)
	defer r.Close()
	b := make([]byte, 4096)
	for {
		n, err := r.Read(b)
		t.mu.Lock()
		t.buf = append(t.buf, b[:n]...)
		if len(t.buf) > maxTail {
			t.buf = t.buf[len(t.buf)-maxTail:]
		}
		t.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// String returns the tail, trimmed and redacted.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.redactor.String(strings.TrimSpace(strings.ToValidUTF8(string(t.buf), "")))
}

// checkVisible returns an error when the server's program, or a file an
// argument names by its absolute path (a script, say), is hidden by its
// sandbox (a home directory, the host's /tmp): the server would fail to
// start with "No such file or directory" and nothing else. The error says
// what hides it and the expose: line of the entry that shows it.
func checkVisible(sb *sandbox.Sandbox, prog string, args []string) error {
	home, _ := os.UserHomeDir()
	for i, p := range append([]string{prog}, args...) {
		if !filepath.IsAbs(p) {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			continue
		}
		hider := sb.HiddenBy(p)
		if hider == "" {
			continue
		}
		what := "its program " + p
		if i > 0 {
			what = "its argument " + p
		}
		// Show the directory that holds it, unless that is the hidden
		// directory itself (all of /tmp, or of the home directory).
		show := filepath.Dir(p)
		if show == hider || !strings.HasPrefix(show, hider+"/") {
			show = p
		}
		if home != "" && strings.HasPrefix(show, home+"/") {
			show = "~/" + strings.TrimPrefix(show, home+"/")
		}
		why := "which the sandbox hides"
		if hider == "/tmp" {
			why = "which the sandbox replaces with an empty /tmp of its own"
		} else if home != "" && hider == home {
			why = "the home directory, which the sandbox shows empty"
		}
		return fmt.Errorf("%s lies in %s, %s, so the server cannot start; add \"expose: [%s]\" to its entry to show it read-only (\"%s:rw\" writable)", what, hider, why, show, show)
	}
	return nil
}
