// Package hooks runs the commands the user configures for the coding
// agent to run before a tool call, after one and at the end of a turn (a
// formatter, a linter, a notifier), as Claude Code's and Codex's users
// know them.
//
// Hooks come from two files of one format: the user's, hooks.yaml in the
// agent's config directory, and the project's, .agent/hooks.yaml at the
// workspace root. The project's come from the repository, which may be
// hostile, so every hook runs where the model's own commands run and
// nowhere else: in bash's sandbox (bubblewrap, the curated environment
// without keys or tokens, the masks, the limits; see [tools.RunScript]),
// never on the host, whatever -sandbox says. A hook can do nothing the
// model's bash commands cannot do; the agent lists every hook in its
// start banner, and -hooks decides whose run.
package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fsmgen/fsmgen/agent/internal/tools"
)

// Event is when a hook runs.
type Event string

// The events a hook runs on.
const (
	// PreTool runs before a tool call; a hook that fails (a non-zero
	// status, a timeout, a sandbox that cannot run it) refuses the call,
	// its output the reason the model reads.
	PreTool Event = "pre_tool"
	// PostTool runs after a tool call that ran; its output is appended
	// to the call's result.
	PostTool Event = "post_tool"
	// TurnEnd runs once a turn ended with the model's last reply; its
	// output is shown, and the model reads it with the next message.
	TurnEnd Event = "turn_end"
)

// DefaultTimeout is a hook's time limit when its entry gives none.
const DefaultTimeout = time.Minute

// MaxFileBytes bounds a hooks file.
const MaxFileBytes = 64 << 10

// Hook is one command of a hooks file.
type Hook struct {
	// Event is when it runs.
	Event Event
	// Command is the script, run with `bash -c` in the workspace root.
	Command string
	// Tools are the tool names it runs for (PreTool and PostTool), each
	// a name or a pattern of path.Match ("mcp__files__*"); none: every
	// tool.
	Tools []string
	// Timeout is its time limit.
	Timeout time.Duration
	// Source names its entry in messages: "FILE:LINE".
	Source string
	// Project marks a hook of the project's file, not the user's.
	Project bool
}

// Matches reports whether the hook runs for a call of the tool name.
func (h Hook) Matches(name string) bool {
	if len(h.Tools) == 0 {
		return true
	}
	for _, p := range h.Tools {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// String names the hook in messages: its event, its tools and its command.
func (h Hook) String() string {
	var b strings.Builder
	b.WriteString(string(h.Event))
	if h.Event != TurnEnd && len(h.Tools) > 0 {
		b.WriteString(" " + strings.Join(h.Tools, ","))
	}
	fmt.Fprintf(&b, " %q", short(h.Command, 60))
	return b.String()
}

// entry is a hook as a hooks file writes it.
type entry struct {
	Command string   `yaml:"command"`
	Tools   []string `yaml:"tools"`
	Timeout string   `yaml:"timeout"`
}

// file is a hooks file.
type file struct {
	PreTool  []yaml.Node `yaml:"pre_tool"`
	PostTool []yaml.Node `yaml:"post_tool"`
	TurnEnd  []yaml.Node `yaml:"turn_end"`
}

// Parse reads the hooks of a hooks file; name names it in errors and in
// the hooks' Source, and project marks them as the project's. It is
// strict: an unknown key, a key given twice, an entry without a command,
// a bad pattern or duration is an error naming FILE:LINE:COL and what is
// allowed.
func Parse(data []byte, name string, project bool) ([]Hook, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	var f file
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w (allowed: pre_tool, post_tool, turn_end, each a list of {command, tools, timeout})", name, err)
	}
	var hooks []Hook
	var errs []error
	for _, ev := range []struct {
		event Event
		nodes []yaml.Node
	}{{PreTool, f.PreTool}, {PostTool, f.PostTool}, {TurnEnd, f.TurnEnd}} {
		for i := range ev.nodes {
			h, err := parseEntry(&ev.nodes[i], ev.event, name)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			h.Project = project
			hooks = append(hooks, h)
		}
	}
	return hooks, errors.Join(errs...)
}

// parseEntry reads one entry of event's list.
func parseEntry(n *yaml.Node, ev Event, name string) (Hook, error) {
	at := fmt.Sprintf("%s:%d:%d", name, n.Line, n.Column)
	var e entry
	if n.Kind != yaml.MappingNode {
		return Hook{}, fmt.Errorf("%s: a %s hook is a mapping {command, tools, timeout}", at, ev)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch k := n.Content[i]; k.Value {
		case "command", "tools", "timeout":
		default:
			return Hook{}, fmt.Errorf("%s:%d:%d: %s hook: unknown key %q (allowed: command, tools, timeout)", name, k.Line, k.Column, ev, k.Value)
		}
	}
	if err := n.Decode(&e); err != nil {
		return Hook{}, fmt.Errorf("%s: %s hook: %w (allowed: command, tools, timeout)", at, ev, err)
	}
	if strings.TrimSpace(e.Command) == "" {
		return Hook{}, fmt.Errorf("%s: %s hook has no command; give the shell command to run, e.g. command: gofmt -l -w .", at, ev)
	}
	h := Hook{Event: ev, Command: e.Command, Timeout: DefaultTimeout, Source: fmt.Sprintf("%s:%d", name, n.Line)}
	if ev == TurnEnd && len(e.Tools) > 0 {
		return Hook{}, fmt.Errorf("%s: a turn_end hook runs for no tool; remove its tools", at)
	}
	for _, p := range e.Tools {
		if _, err := path.Match(p, ""); err != nil || p == "" {
			return Hook{}, fmt.Errorf("%s: %s hook: tools: %q is no tool name or pattern (e.g. edit_file, bash, \"mcp__files__*\")", at, ev, p)
		}
	}
	h.Tools = e.Tools
	if e.Timeout != "" {
		d, err := time.ParseDuration(e.Timeout)
		if err != nil || d <= 0 {
			return Hook{}, fmt.Errorf("%s: %s hook: timeout %q is no positive duration (e.g. 30s, 2m)", at, ev, e.Timeout)
		}
		h.Timeout = d
	}
	return h, nil
}

// short returns s on one line, cut at n characters with an ellipsis.
func short(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// ProjectFile is the project's hooks file, relative to the workspace
// root; the user's is hooks.yaml in the agent's config directory.
const ProjectFile = ".agent/hooks.yaml"

// Load reads the hooks of the user's file (userFile, absolute; "" for
// none; named userLabel in messages) and then, when project is true, the
// project's (ProjectFile, through the workspace's handle, as AGENTS.md is
// read: a symbolic link leading out of the workspace, a special file or a
// file holding the API key is refused). A missing file holds no hooks; a
// file that cannot be read or parsed is an error.
func Load(ctx context.Context, ws *tools.Workspace, userFile, userLabel string, project bool) ([]Hook, error) {
	var all []Hook
	if userFile != "" {
		data, err := readUserFile(userFile)
		if err != nil {
			return nil, fmt.Errorf("hooks file %s: %w", userLabel, err)
		}
		hs, err := Parse(data, userLabel, false)
		if err != nil {
			return nil, err
		}
		all = append(all, hs...)
	}
	if project {
		data, size, err := ws.ReadFile(ctx, ProjectFile, MaxFileBytes)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("hooks file %s: %w", ProjectFile, err)
		case size > MaxFileBytes:
			return nil, fmt.Errorf("hooks file %s: it has %d bytes, past the limit of %d", ProjectFile, size, MaxFileBytes)
		default:
			hs, err := Parse(data, ProjectFile, true)
			if err != nil {
				return nil, err
			}
			all = append(all, hs...)
		}
	}
	return all, nil
}

// readUserFile reads the user's hooks file: nil when there is none.
func readUserFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, errors.New("it is not a regular file")
	case fi.Size() > MaxFileBytes:
		return nil, fmt.Errorf("it has %d bytes, past the limit of %d", fi.Size(), MaxFileBytes)
	}
	return io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
}
