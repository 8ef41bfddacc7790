package autocommit

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// The limits of a turn's commit message: its subject, the prompt quoted,
// the files and the tools listed (a turn can change thousands of files
// and run thousands of calls).
const (
	maxSubject     = 72
	maxPrompt      = 300
	maxFiles       = 100
	maxToolSummary = 8
)

// TurnMessage returns the commit message of a turn: a subject taken from
// the first line of the assistant's last reply (the model is asked to end
// with what it did), or from the prompt when it said nothing; then the
// user's request, the files changed with how (A, M, D), and the tools
// that ran with how many calls of each failed. Nothing is asked of the
// model: the message is derived from the turn.
func TurnMessage(t Turn, files []FileChange) string {
	subject := firstLine(t.Summary)
	if subject == "" {
		subject = firstLine(t.Prompt)
	}
	if subject == "" {
		subject = "changes"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "agent: %s\n", clip(subject, maxSubject))
	if p := strings.TrimSpace(t.Prompt); p != "" {
		fmt.Fprintf(&b, "\nAsked: %s\n", clip(strings.Join(strings.Fields(p), " "), maxPrompt))
	}
	b.WriteString("\nFiles:\n")
	for i, f := range files {
		if i == maxFiles {
			fmt.Fprintf(&b, "  and %d more\n", len(files)-maxFiles)
			break
		}
		fmt.Fprintf(&b, "  %c %s\n", f.Status, f.Path)
	}
	if s := toolSummary(t); s != "" {
		fmt.Fprintf(&b, "\nTools: %s\n", s)
	}
	if t.Thread != "" {
		fmt.Fprintf(&b, "\n%s: %s\n%s: %s\n", TrailerThread, t.Thread, TrailerTurn, t.Key)
	}
	return strings.TrimRight(b.String(), "\n")
}

// toolSummary names each tool of the turn once, in the order they first
// ran, with its number of calls and of failed ones.
func toolSummary(t Turn) string {
	type count struct{ calls, failed int }
	counts := map[string]*count{}
	var names []string
	for _, c := range t.Tools {
		name := cleanName(c.ToolName)
		if counts[name] == nil {
			counts[name] = &count{}
			names = append(names, name)
		}
		counts[name].calls++
		if !c.Succeeded {
			counts[name].failed++
		}
	}
	var parts []string
	for i, name := range names {
		if i == maxToolSummary {
			parts = append(parts, fmt.Sprintf("and %d more tools", len(names)-maxToolSummary))
			break
		}
		part := fmt.Sprintf("%s ×%d", name, counts[name].calls)
		if f := counts[name].failed; f > 0 {
			part += fmt.Sprintf(" (%d failed)", f)
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", ")
}

// firstLine returns the first non-blank line of s, trimmed, without
// Markdown's heading and emphasis marks.
func firstLine(s string) string {
	for line := range strings.SplitSeq(s, "\n") {
		line = strings.Trim(strings.TrimSpace(line), "#*_` ")
		if line != "" {
			return strings.Map(func(r rune) rune {
				if r < ' ' || r == 0x7f {
					return ' '
				}
				return r
			}, line)
		}
	}
	return ""
}

// clip cuts s to at most n characters, ending it with "…" when cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}
