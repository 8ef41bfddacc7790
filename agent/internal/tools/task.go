package tools

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// TaskName is the name of the task tool, which runs a sub-task in a
// subagent (see [Task]), as Claude Code's users know it.
const TaskName = "task"

// TaskArgs are the task tool's arguments, as its runner gets them.
type TaskArgs struct {
	// Description names the task in a few words, for the user to see.
	Description string
	// Prompt is the task, whole: all the subagent is told.
	Prompt string
}

// TaskRunner runs the sub-task of one call of the task tool to its end
// and returns the subagent's answer. It gets the call's context (see
// [CallID]) and the progress function of [Tool.Run].
type TaskRunner func(ctx context.Context, args TaskArgs, progress func(chat.ToolProgress)) (string, error)

// Task returns the task tool: each call runs run, which starts a child
// agent on the call's prompt (see agent/internal/subagent). The tool only
// reads: the child it starts has read-only tools.
func Task(run TaskRunner) Tool { return taskTool{run: run} }

// taskTool implements the task tool.
type taskTool struct{ run TaskRunner }

// taskUsage describes the task tool's arguments in error messages.
const taskUsage = `{"description": "find the retry logic", "prompt": "Find where ... and report ..."}`

// taskArgs are the task tool's arguments.
type taskArgs struct {
	Description *string `json:"description" jsonschema:"A short name of the task, 3 to 7 words, shown to the user, e.g. \"find the retry logic\"."`
	Prompt      *string `json:"prompt" jsonschema:"The task, whole and self-contained: what to find out or check, where to start, and what the answer must hold. The subagent sees nothing else of this conversation."`
}

// taskSchema is the JSON Schema of taskArgs.
var taskSchema = argsSchema[taskArgs]()

// Mutating implements Mutator: the subagent changes nothing; its tools
// only read.
func (taskTool) Mutating() bool { return false }

// Spec implements Tool.
func (taskTool) Spec() chat.ToolSpec {
	return chat.ToolSpec{
		Name: TaskName,
		Description: "Run a focused sub-task in a subagent: a separate agent with a conversation of its own, " +
			"which investigates read-only (list_files, read_file, and bash with the workspace read-only when offered) " +
			"and returns its final answer as this call's result. Use it for a search or an investigation whose " +
			"details you will not need afterwards (\"find every caller of X and say which pass a nil context\"), " +
			"so that they do not fill your own conversation. The subagent sees nothing of this conversation: " +
			"give it everything it needs in prompt, and say what its answer must hold. It cannot change files " +
			"or start subagents. Several task calls in one reply run at the same time.",
		InputSchema: taskSchema,
	}
}

// Run implements Tool.
func (t taskTool) Run(ctx context.Context, raw json.RawMessage, progress func(chat.ToolProgress)) (string, error) {
	var args taskArgs
	if err := decodeArgs(raw, &args, taskUsage); err != nil {
		return "", err
	}
	if args.Prompt == nil || strings.TrimSpace(*args.Prompt) == "" {
		return "", missingArg("prompt", taskUsage)
	}
	a := TaskArgs{Prompt: *args.Prompt}
	if args.Description != nil {
		a.Description = *args.Description
	}
	return t.run(ctx, a, progress)
}

// callKey is the context key of the call a tool runs for.
type callKey struct{}

// withCall returns ctx holding the ID of call, for the tool it runs.
func withCall(ctx context.Context, call chat.ToolCall) context.Context {
	return context.WithValue(ctx, callKey{}, call.ID)
}

// CallID returns the ID of the call a tool's Run runs for, as [Set.Run]
// gives it in Run's context; "" outside such a Run.
func CallID(ctx context.Context) string {
	id, _ := ctx.Value(callKey{}).(string)
	return id
}
