package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/agent/internal/instructions"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
)

// projectCommandsDir is where a project keeps its custom slash commands,
// relative to the workspace root; the user's are in the "commands"
// folder of the agent's config directory.
const projectCommandsDir = ".agent/commands"

// maxCommandBytes bounds a custom command's file, as an instructions
// file is bounded (see instructions.DefaultMaxFileBytes).
const maxCommandBytes = instructions.DefaultMaxFileBytes

// commandName is what a custom command's file name (less ".md") must be
// to name a command: what the prompt takes after its slash.
var commandName = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// customCommand is a slash command read from a Markdown file: its text,
// the arguments substituted, is sent to the model as the user's message.
type customCommand struct {
	name, text string
	// file names it in messages, e.g. ".agent/commands/review.md".
	file string
	// project marks one of the project's, not the user's.
	project bool
}

// loadCustomCommands reads the custom slash commands: the user's, in
// userDir (a folder of *.md; "" for none), then the project's, in the
// workspace's projectCommandsDir, a project's command taking the place of
// the user's of the same name. Each file is read as AGENTS.md is: at most
// maxCommandBytes, neither a symbolic link leading out of its folder nor
// a special file (a FIFO). A name that is a built-in command's, or no
// command's, is refused. It returns the commands and the notes to show:
// what was refused or overridden, and why.
func loadCustomCommands(ctx context.Context, ws *tools.Workspace, userDir, userLabel string, builtin []slashCommand) ([]customCommand, []string) {
	taken := map[string]bool{}
	for _, c := range builtin {
		taken[c.name] = true
	}
	var notes []string
	var cmds []customCommand
	byName := map[string]int{}
	add := func(dir *tools.Workspace, folder, label string, project bool) {
		entries, err := dir.ReadDir(ctx, folder)
		if errors.Is(err, fs.ErrNotExist) {
			return
		}
		if err != nil {
			notes = append(notes, fmt.Sprintf("custom commands: %s not read: %v", label, err))
			return
		}
		for _, e := range entries {
			base, ok := strings.CutSuffix(e.Name(), ".md")
			if !ok || e.IsDir() {
				continue
			}
			file := path.Join(label, e.Name())
			switch {
			case !commandName.MatchString(base):
				notes = append(notes, fmt.Sprintf("custom commands: %s is not used: a command's name is lower-case letters, digits and dashes, starting with a letter; rename the file", file))
				continue
			case taken[base]:
				notes = append(notes, fmt.Sprintf("custom commands: %s is not used: /%s is a built-in command; rename the file", file, base))
				continue
			}
			data, size, err := dir.ReadFile(ctx, path.Join(folder, e.Name()), maxCommandBytes)
			switch {
			case err != nil:
				notes = append(notes, fmt.Sprintf("custom commands: %s is not used: %v", file, err))
				continue
			case size > maxCommandBytes:
				notes = append(notes, fmt.Sprintf("custom commands: %s is not used: it has %d bytes, past the limit of %d", file, size, maxCommandBytes))
				continue
			case strings.TrimSpace(string(data)) == "":
				notes = append(notes, fmt.Sprintf("custom commands: %s is not used: it is empty", file))
				continue
			}
			c := customCommand{name: base, text: strings.TrimSpace(strings.ToValidUTF8(string(data), "\uFFFD")), file: file, project: project}
			if i, ok := byName[base]; ok {
				notes = append(notes, fmt.Sprintf("custom commands: /%s is the project's %s, not your %s", base, file, cmds[i].file))
				cmds[i] = c
				continue
			}
			byName[base] = len(cmds)
			cmds = append(cmds, c)
		}
	}
	if userDir != "" {
		if uw, err := tools.NewWorkspace(userDir); err == nil {
			add(uw, ".", userLabel, false)
			_ = uw.Close()
		} else if _, statErr := os.Stat(userDir); !errors.Is(statErr, fs.ErrNotExist) {
			notes = append(notes, fmt.Sprintf("custom commands: %s not read: %v", userLabel, err))
		}
	}
	add(ws, projectCommandsDir, projectCommandsDir, true)
	slices.SortFunc(cmds, func(a, b customCommand) int { return strings.Compare(a.name, b.name) })
	return cmds, notes
}

// userCommandsDir is the folder of the user's custom commands and how
// messages name it; "" when there is no config directory.
func userCommandsDir() (dir, label string) {
	d := defaultConfigDir()
	if d == "" {
		return "", ""
	}
	dir = filepath.Join(d, "commands")
	label = dir
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		if rel, err := filepath.Rel(home, dir); err == nil && !strings.HasPrefix(rel, "..") {
			label = "~/" + filepath.ToSlash(rel)
		}
	}
	return dir, label
}

// description is a custom command's line in /help: the first line of its
// text, a Markdown heading's marks taken off.
func (c customCommand) description() string {
	for line := range strings.Lines(c.text) {
		if line = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "#")); line != "" {
			where := "the user's"
			if c.project {
				where = "the project's"
			}
			return short(line, 70) + " (" + where + ")"
		}
	}
	return ""
}

// positional finds $1 to $9 in a custom command's text.
var positional = regexp.MustCompile(`\$[1-9]`)

// expand returns the command's text with the arguments put in:
// $ARGUMENTS is args whole, $1 to $9 its words (empty when there are
// fewer). A text with neither gets args, when there are some, appended
// after a blank line, so that they reach the model.
func (c customCommand) expand(args string) string {
	words := strings.Fields(args)
	used := strings.Contains(c.text, "$ARGUMENTS") || positional.MatchString(c.text)
	out := strings.ReplaceAll(c.text, "$ARGUMENTS", args)
	out = positional.ReplaceAllStringFunc(out, func(m string) string {
		i, _ := strconv.Atoi(m[1:]) // one digit: cannot fail
		if i <= len(words) {
			return words[i-1]
		}
		return ""
	})
	if !used && args != "" {
		out += "\n\n" + args
	}
	return out
}

// slash is the custom command as a slash command: it sends its text to
// the model, saying so.
func (c customCommand) slash() slashCommand {
	return slashCommand{
		name:   c.name,
		args:   "[args]",
		help:   c.description(),
		custom: true,
		run: func(ctx context.Context, s *slashSession, args string) error {
			msg := c.expand(args)
			if err := s.say(ctx, fmt.Sprintf("/%s: sending %s to the model (%s)", c.name, c.file, plural(strings.Count(msg, "\n")+1, "line"))); err != nil {
				return err
			}
			return s.agent.Send(ctx, msg)
		},
	}
}

// expandCustom returns the first message of a session (-p's prompt, or
// the one given as an argument) with a custom command in it expanded, as
// typing it would: "/review src" sends review.md's text. Another message
// is returned as it is.
func (s *agentSession) expandCustom(prompt string) string {
	line := strings.TrimSpace(prompt)
	if !agentexec.IsCommand(line) {
		return prompt
	}
	name, args, _ := strings.Cut(strings.TrimPrefix(line, "/"), " ")
	for _, c := range s.custom {
		if c.name == strings.TrimSpace(name) {
			s.display.Notice(fmt.Sprintf("/%s: sending %s to the model", c.name, c.file))
			return c.expand(strings.TrimSpace(args))
		}
	}
	return prompt
}
