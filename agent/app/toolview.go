package app

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// How much of a tool's result the display shows, unless -v.
const (
	tailLines = 10 // the last lines of a command's output
	diffLines = 40 // the lines of an edit's diff
)

// toolArgs are the arguments of the agent's tools that the display shows.
type toolArgs struct {
	Path    string `json:"path"`
	OldStr  string `json:"old_str"`
	NewStr  string `json:"new_str"`
	Command string `json:"command"`
	Pattern string `json:"pattern"`
	// Description names a task tool's sub-task.
	Description string `json:"description"`
}

// callSummary describes a tool call on one line: its tool and what it
// works on (a path, a command), not its raw arguments.
func callSummary(call chat.ToolCall) string {
	var a toolArgs
	if json.Unmarshal(call.Arguments, &a) != nil {
		return short(string(call.Arguments), 100)
	}
	switch {
	case len(call.Arguments) == 0 || string(call.Arguments) == "{}":
		return "" // a query of facts (environment, project): its name says it all
	case a.Pattern != "" && a.Path != "":
		return strconv.Quote(short(a.Pattern, 100)) + " in " + short(a.Path, 100)
	case a.Pattern != "":
		return strconv.Quote(short(a.Pattern, 100))
	case a.Command != "":
		return "$ " + short(a.Command, 200)
	case a.Path != "" && call.Name == "edit_file" && a.OldStr == "":
		return short(a.Path, 200) + " (new file)"
	case a.Path != "":
		return short(a.Path, 200)
	case a.Description != "":
		return short(a.Description, 100)
	}
	return short(string(call.Arguments), 100)
}

// editedAt finds the line edit_file's result says the edit starts at.
var editedAt = regexp.MustCompile(`at line (\d+)`)

// hunkHeader is a unified diff's hunk header.
var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@`)

// editDiff returns the unified diff of a successful edit_file call, its
// hunks numbered from the line the edit starts at; "" when the call's
// arguments are not an edit's.
func editDiff(call chat.ToolCall, result string) string {
	var a toolArgs
	if json.Unmarshal(call.Arguments, &a) != nil || a.Path == "" || a.OldStr == a.NewStr {
		return ""
	}
	d, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: splitLines(a.OldStr), B: splitLines(a.NewStr),
		FromFile: "a/" + a.Path, ToFile: "b/" + a.Path, Context: 3,
	})
	if a.OldStr == "" {
		d = strings.Replace(d, "--- a/"+a.Path, "--- /dev/null", 1)
	}
	if err != nil || d == "" {
		return ""
	}
	offset := 0
	if m := editedAt.FindStringSubmatch(result); m != nil {
		n, _ := strconv.Atoi(m[1])
		offset = n - 1
	}
	if offset == 0 {
		return d
	}
	var b strings.Builder
	for line := range strings.Lines(d) {
		if m := hunkHeader.FindStringSubmatch(line); m != nil {
			from, _ := strconv.Atoi(m[1])
			to, _ := strconv.Atoi(m[3])
			line = fmt.Sprintf("@@ -%d%s +%d%s @@", from+offset, m[2], to+offset, m[4]) + line[len(m[0]):]
		}
		b.WriteString(line)
	}
	return b.String()
}

// splitLines splits s into its lines, each with its newline (one added
// to a last line without).
func splitLines(s string) []string {
	var out []string
	for line := range strings.Lines(s) {
		if !strings.HasSuffix(line, "\n") {
			line += "\n"
		}
		out = append(out, line)
	}
	return out
}

// lines splits s into its lines, without their newlines.
func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
