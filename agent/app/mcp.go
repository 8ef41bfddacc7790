package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/agent/internal/instructions"
	"github.com/fsmgen/fsmgen/agent/internal/mcptools"
	"github.com/fsmgen/fsmgen/agent/internal/redact"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
)

// startMCP starts the config file's MCP servers, each in a sandbox made
// as bash's is (its own network and exposed paths), and says on stderr
// which started with which tools and which failed (those are left out;
// the session goes on). With -tool-calls=false it starts none, and says
// so: the model is offered no tools. secrets are all the session's
// secrets (the API key, the sync token): no entry's env may hold one, and
// they are removed from what the servers send. bash is the options of
// bash's sandbox, which each server's starts from.
func startMCP(ctx context.Context, o options, ws *tools.Workspace, bash sandbox.Options, secrets *redact.Redactor, logger *slog.Logger, stderr io.Writer) (*mcptools.Clients, error) {
	if len(o.config.servers) == 0 {
		return &mcptools.Clients{}, nil
	}
	if !o.toolCalls {
		fmt.Fprintln(stderr, "agent: -tool-calls=false offers the model no tools: the config file's MCP servers are not started")
		return &mcptools.Clients{}, nil
	}
	base := bash
	base.Expose, base.Network = nil, false // each entry grants its own
	if base.Limits != nil {
		// A server runs for the whole session, in which the disk's use
		// grows with the bash commands' writes: the disk limit, a
		// command's, does not apply to it.
		l := *base.Limits
		l.Disk = 0
		base.Limits = &l
	}
	base.Redactor = secrets
	clients, errs := mcptools.Start(ctx, o.config.servers, mcptools.Options{
		Workspace: ws.Root(),
		Sandbox:   base,
		Masked:    ws.MaskedPaths,
		Secrets:   secrets,
		Logger:    logger,
	})
	for _, err := range errs {
		fmt.Fprintf(stderr, "agent: %v; it is left out\n", err)
	}
	for _, s := range clients.Servers() {
		fmt.Fprintf(stderr, "agent: MCP server %s\n", s)
	}
	if ctx.Err() != nil {
		_ = clients.Close()
		return nil, ctx.Err()
	}
	return clients, nil
}

// toolRunner returns what runs the tool calls: the set, and the
// instructions of the directories the calls lead into when there are any.
func toolRunner(set *tools.Set, ins *instructions.Set) agentexec.ToolRunner {
	if ins == nil {
		return set
	}
	return instructionsRunner{tools: set, set: ins}
}

// noteInstructions says on stderr which instructions files the system
// prompt holds, and which were refused or cut.
func noteInstructions(ins *instructions.Set, stderr io.Writer) {
	var loaded []string
	for _, f := range ins.Files() {
		switch {
		case f.Err != nil:
			fmt.Fprintf(stderr, "agent: instructions %s refused: %v\n", f.Path, f.Err)
		case f.Cut != "":
			loaded = append(loaded, f.Path)
			fmt.Fprintf(stderr, "agent: instructions %s %s\n", f.Path, f.Cut)
		default:
			loaded = append(loaded, f.Path)
		}
	}
	if len(loaded) > 0 {
		fmt.Fprintf(stderr, "agent: instructions: %s (/instructions shows them)\n", strings.Join(loaded, ", "))
	}
}
