package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/instructions"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
)

// pathTools are the tools whose "path" argument names where they work,
// and whether it names a directory.
var pathTools = map[string]bool{"read_file": false, "edit_file": false, "list_files": true}

// instructionsRunner runs the tool calls and appends to a call's result
// the instructions of the directories its path leads into that the
// conversation does not hold (see instructions.Set.ForPath): the system
// prompt stays as it was, so that the provider's prompt cache keeps it.
// It is an agentexec.ResultNoter: the agent tells it the conversation
// before each round, so that instructions an undo or a compaction cut are
// sent again, and appends them after the round's output budget cut the
// result, so that the budget never cuts them.
type instructionsRunner struct {
	tools *tools.Set
	set   *instructions.Set
}

// Approval returns the tool's approval setting, as tools.Set.Approval
// does: the runner stands for the set.
func (r instructionsRunner) Approval(name string) tools.Approval { return r.tools.Approval(name) }

// Run implements agentexec.ToolRunner.
func (r instructionsRunner) Run(ctx context.Context, call chat.ToolCall, progress func(chat.ToolProgress)) chat.ToolOutcome {
	return r.tools.Run(ctx, call, progress)
}

// NoteConversation implements agentexec.ResultNoter: the instructions the
// conversation holds are those of its tool results and query results.
func (r instructionsRunner) NoteConversation(messages []chat.Message) {
	var results []string
	for _, m := range messages {
		if m.Role == chat.RoleTool || chat.IsQueryResult(m) {
			results = append(results, m.Content)
		}
	}
	r.set.Holding(results)
}

// Note implements agentexec.ResultNoter: the instructions the call's path
// leads to that were not sent. Looking for them is a step of the call:
// it ends with ctx, and within the tools' timeout.
func (r instructionsRunner) Note(ctx context.Context, call chat.ToolCall) string {
	isDir, ok := pathTools[call.Name]
	if !ok {
		return ""
	}
	var args struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(call.Arguments, &args) != nil || args.Path == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, r.tools.Timeout())
	defer cancel()
	return r.set.ForPath(ctx, args.Path, isDir)
}

// instructionsCommand shows the instructions files loaded.
var instructionsCommand = slashCommand{
	name: "instructions",
	help: "the instructions files loaded (AGENTS.md, CLAUDE.md, yours), their sizes and what was cut",
	run: func(ctx context.Context, s *slashSession, _ string) error {
		return s.say(ctx, describeInstructions(s.instructions))
	},
}

// describeInstructions is /instructions' text.
func describeInstructions(set *instructions.Set) string {
	if set == nil {
		return "instructions are off (instructions: {enabled: false} in the config file)"
	}
	files := set.Files()
	if len(files) == 0 {
		return "no instructions file was loaded: put an AGENTS.md at the workspace root (or in a directory, read when a tool first works there), or your own in " + set.UserFile()
	}
	var b strings.Builder
	b.WriteString("instructions loaded:\n")
	for _, f := range files {
		where := "system prompt"
		if f.Dir != "" && f.Dir != "." {
			where = "with the first tool result under " + f.Dir + "/"
		}
		switch {
		case f.Err != nil:
			fmt.Fprintf(&b, "  %s: refused: %v\n", f.Path, f.Err)
		case f.Loaded == 0 && f.Cut != "":
			fmt.Fprintf(&b, "  %s (%d bytes): %s\n", f.Path, f.Size, f.Cut)
		default:
			fmt.Fprintf(&b, "  %s (%d bytes, %s)", f.Path, f.Size, where)
			if f.Cut != "" {
				fmt.Fprintf(&b, ": %s", f.Cut)
			}
			b.WriteString("\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
