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
	// Write asks for a subagent that may change the workspace (the
	// argument "write": true); the runner refuses it unless the session
	// allows it (see [WritingTask]).
	Write bool
}

// TaskRunner runs the sub-task of one call of the task tool to its end
// and returns the subagent's answer. It gets the call's context (see
// [CallID]) and the progress function of [Tool.Run].
type TaskRunner func(ctx context.Context, args TaskArgs, progress func(chat.ToolProgress)) (string, error)

// Task returns the task tool: each call runs run, which starts a child
// agent on the call's prompt (see agent/internal/subagent). The tool only
// reads: the child it starts has read-only tools; a call with "write":
// true reaches run, which refuses it, saying why.
func Task(run TaskRunner) Tool { return taskTool{run: run} }

// WritingTask returns the task tool of a session whose subagents may
// write: its schema offers the argument "write", and it is a mutating
// tool (its calls run one after another, among the calls that change
// anything, and the turn's commit holds what its children change). It
// never asks the user itself ([Approvable]: ApprovalNever): a writing
// child asks about each of its own calls.
func WritingTask(run TaskRunner) Tool { return taskTool{run: run, write: true} }

// taskTool implements the task tool.
type taskTool struct {
	run   TaskRunner
	write bool
}

var _ Approvable = taskTool{}

// taskUsage describes the task tool's arguments in error messages.
const taskUsage = `{"description": "find the retry logic", "prompt": "Find where ... and report ..."}`

// taskArgs are the task tool's arguments.
type taskArgs struct {
	Description *string `json:"description" jsonschema:"A short name of the task, 3 to 7 words, shown to the user, e.g. \"find the retry logic\"."`
	Prompt      *string `json:"prompt" jsonschema:"The task, whole and self-contained: what to find out or check, where to start, and what the answer must hold. The subagent sees nothing else of this conversation."`
	// Write is decoded whatever the schema offers, so that a call that
	// asks for it is refused saying why, not as malformed.
	Write *bool `json:"write,omitempty"`
}

// writingTaskArgs are the arguments of the task tool of [WritingTask], as
// its schema shows them.
type writingTaskArgs struct {
	Description *string `json:"description" jsonschema:"A short name of the task, 3 to 7 words, shown to the user, e.g. \"find the retry logic\"."`
	Prompt      *string `json:"prompt" jsonschema:"The task, whole and self-contained: what to find out, check or change, where to start, and what the answer must hold. The subagent sees nothing else of this conversation."`
	Write       *bool   `json:"write,omitempty" jsonschema:"true for a subagent that may change the workspace (edit_file and bash, under the same approvals as yours); false or absent for a read-only one."`
}

// The JSON Schemas of taskArgs and writingTaskArgs.
var (
	taskSchema        = readOnlyTaskSchema()
	writingTaskSchema = argsSchema[writingTaskArgs]()
)

// readOnlyTaskSchema is the schema of taskArgs without "write", which a
// read-only task tool does not offer.
func readOnlyTaskSchema() json.RawMessage {
	type shown struct {
		Description *string `json:"description" jsonschema:"A short name of the task, 3 to 7 words, shown to the user, e.g. \"find the retry logic\"."`
		Prompt      *string `json:"prompt" jsonschema:"The task, whole and self-contained: what to find out or check, where to start, and what the answer must hold. The subagent sees nothing else of this conversation."`
	}
	return argsSchema[shown]()
}

// Mutating implements Mutator: a read-only task tool's subagents change
// nothing; a writing one's may.
func (t taskTool) Mutating() bool { return t.write }

// Approval implements Approvable: the task call itself is never asked
// about; a writing subagent's calls are, each under the session's policy.
func (taskTool) Approval() Approval { return ApprovalNever }

// ReadOnly implements Approvable.
func (t taskTool) ReadOnly() bool { return !t.write }

// Spec implements Tool.
func (t taskTool) Spec() chat.ToolSpec {
	if t.write {
		return chat.ToolSpec{
			Name: TaskName,
			Description: "Run a focused sub-task in a subagent: a separate agent with a conversation of its own, " +
				"which returns its final answer as this call's result. By default it investigates read-only " +
				"(list_files, read_file, and bash with the workspace read-only when offered): use that for a search or an " +
				"investigation whose details you will not need afterwards, so that they do not fill your own conversation. " +
				"With \"write\": true it may also change the workspace with your tools (edit_file, bash), under the same " +
				"approvals as your calls, and its changes count as yours (committed with this turn, undone with it): use " +
				"that for a self-contained change (\"rename X to Y in package p and make its tests pass\"). The subagent " +
				"sees nothing of this conversation: give it everything it needs in prompt, and say what its answer must " +
				"hold. It cannot start subagents. Task calls run one after another.",
			InputSchema: writingTaskSchema,
		}
	}
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
	a := TaskArgs{Prompt: *args.Prompt, Write: args.Write != nil && *args.Write}
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
