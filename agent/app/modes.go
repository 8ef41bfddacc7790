package app

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/approval"
	"github.com/fsmgen/fsmgen/agent/internal/query"
	"github.com/fsmgen/fsmgen/agent/internal/sandbox"
	"github.com/fsmgen/fsmgen/agent/internal/termtext"
	"github.com/fsmgen/fsmgen/agent/internal/tools"
)

// The values of -mode.
const (
	modeAuto = "auto"
	modePlan = "plan"
)

// modes are the values -mode takes.
var modes = []string{modeAuto, modePlan}

// planPrompt is the system prompt of plan mode.
const planPrompt = `You are a coding agent in plan mode, working in a software project (the workspace).
In plan mode nothing is changed: the workspace is read-only, files cannot be edited and nothing is committed.
Investigate with the tools: list_files to find your way, read_file to read the code, and bash (when it is offered) to search, build and run the tests; its writes to the workspace fail.
Paths are relative to the workspace root. When you know enough, write the plan as your last reply and stop: what to change, file by file and in order, why, the risks, and how to check the result (which tests to run or write).
Do not ask to carry the plan out: the user runs the agent again in auto mode to do it.`

// queryPlanPrompt is the system prompt of plan mode for a model without
// tool calling (-tool-calls=false -mode plan): it teaches the queries, and
// asks for a plan where queryPrompt asks for the changes.
const queryPlanPrompt = `You are a coding agent in plan mode, working in a software project (the workspace), helping the user with its code.
In plan mode nothing is changed: the workspace is read-only, files cannot be edited and nothing is committed.
` + query.ProtocolHelp + `
Paths are relative to the workspace root. When you know enough, write the plan as your last reply and stop: what to change, file by file and in order, why, the risks, and how to check the result (which tests to run or write).
Do not ask to carry the plan out: the user runs the agent again in auto mode to do it.`

// queryPromptOf returns the system prompt of the mode for a model without
// tool calling.
func queryPromptOf(mode string) string {
	if mode == modePlan {
		return queryPlanPrompt
	}
	return queryPrompt
}

// systemPromptOf returns the system prompt of the mode.
func systemPromptOf(mode string) string {
	if mode == modePlan {
		return planPrompt
	}
	return systemPrompt
}

// planRefusal is why plan mode does not run edit_file, which the model
// reads when it calls it all the same.
const planRefusal = "plan mode: the workspace is read-only and the agent only investigates and plans; write the change into your plan instead"

// modeTools returns the tools of the mode: all of set in auto mode; in
// plan mode, the read-only ones, and bash where the sandbox keeps the
// workspace read-only (with the sandbox off, nothing would).
func modeTools(mode string, sb *sandbox.Sandbox, set *tools.Set) *tools.Set {
	if mode != modePlan {
		return set
	}
	set = set.Refuse(planRefusal, "edit_file")
	if !sb.Confined() && sb.Disabled() == nil {
		set = set.Refuse("plan mode: with -sandbox off nothing keeps a command from changing the workspace, so bash is not offered; read with read_file and list_files", "bash")
	}
	// Any other tool that may change anything is refused too.
	return set.Refuse(planRefusal, set.MutatingNames()...)
}

// offerApproval returns the specs of the set's tools as the model sees
// them: under -approve on-request, each mutating tool offers the model
// to ask for approval (see approval.Offer). A tool whose schema cannot
// take the arguments is named on w: its calls run without asking.
func offerApproval(policy approval.Policy, set *tools.Set, w io.Writer) []chat.ToolSpec {
	specs := set.Specs()
	if policy != approval.OnRequest {
		return specs
	}
	for i, s := range specs {
		if !set.Mutating(s.Name) || set.Approval(s.Name) == tools.ApprovalNever {
			continue // never asked about: nothing to ask for
		}
		offered, err := approval.Offer(s)
		if err != nil {
			fmt.Fprintf(w, "agent: -approve on-request: the model cannot ask before calls of %s, which run without asking: %v\n", s.Name, err)
			continue
		}
		specs[i] = offered
	}
	return specs
}

// needsTerminal is the error of an approval policy that would ask with no
// terminal to ask on.
func needsTerminal(p approval.Policy) error {
	return fmt.Errorf("-approve %s needs a terminal to ask; use -approve never, or run interactively", p)
}

// alwaysAsked returns the tools of set whose own setting asks before every
// call (an MCP server's approve: always), sorted.
func alwaysAsked(set *tools.Set) []string {
	var names []string
	for _, n := range set.Names() {
		if set.Approval(n) == tools.ApprovalAlways {
			names = append(names, n)
		}
	}
	return names
}

// canAsk reports whether the agent can ask the user and read the answer:
// whether it reads its input from a terminal, with its line editor (see
// openEditor), standard input and standard error both terminals.
func canAsk(stdin io.Reader, stderr io.Writer) bool {
	diag, ok := stderr.(*os.File)
	return stdin == nil && isTerminal(os.Stdin) && ok && isTerminal(diag)
}

// Ask implements agentexec.Display: the tool call to approve, exactly —
// an edit as its whole diff, numbered from the line it changes, a command
// whole —, why the model asks, which subagent asks (when one does), and
// how to answer.
func (t *terminal) Ask(q approval.Question) {
	t.events.ask(q)
	call := q.Call
	name := termtext.Sanitize(short(call.Name, 64))
	var a toolArgs
	_ = json.Unmarshal(call.Arguments, &a) // what is not an edit's or a command's is shown raw
	what := ""
	if call.Name == "edit_file" {
		what = " " + termtext.Sanitize(callSummary(call))
	}
	if t.editor != nil {
		t.editor.Ask() // drawn below the question
		t.asking = true
	}
	by := ""
	if q.By != "" {
		// A writing subagent's call, which the user answers here.
		by = termtext.Sanitize(short(q.By, 120)) + " — "
	}
	t.line(fmt.Sprintf("%s %s%s%s", t.paint(sgrYellow, "?"), by, t.paint(sgrBold, "approve "+name), what))
	if q.Reason != "" {
		t.diagf("  the model asks: %s", q.Reason)
	}
	switch {
	case call.Name == "edit_file":
		line, found := 0, 1
		if t.editLine != nil {
			line, found = t.editLine(call)
		}
		if found != 1 {
			t.diagf("  (old_str occurs %d times in the file: the edit will fail and change nothing)", found)
		}
		result := ""
		if line > 0 {
			result = fmt.Sprintf("at line %d", line)
		}
		if d := editDiff(call, result); d != "" {
			t.diff(strings.TrimSuffix(d, "\n"), "    ")
		}
	case call.Name == "bash" && a.Command != "":
		t.line("    " + t.paint(sgrDim, indent("$ "+termtext.Sanitize(a.Command))))
	default:
		t.diagf("    %s", string(call.Arguments))
	}
	t.line(fmt.Sprintf("  %s y: yes; n: no (n WHY tells the model why); a: always, every %s call this session", t.paint(sgrYellow, "approve?"), name))
	t.showPrompt()
}

// unask shows the editor's prompt again after a question: answered, or
// no longer waiting as the turn ended.
func (t *terminal) unask() {
	if t.asking {
		t.editor.Unask()
		t.asking = false
	}
}
