// Package diag holds source positions and the sorted list of problems that
// every stage of fsmgen reports, in the form path:line:col: message. Each
// problem carries the id of its rule (see Rule), given from its message, and
// may carry notes that explain it further.
package diag

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Pos is a position in a spec file. Line and Col count from 1; zero means
// unknown.
type Pos struct {
	File string
	Line int
	Col  int
}

// String returns "file:line:col", "file:line" or "file" as far as known.
func (p Pos) String() string {
	switch {
	case p.Line == 0:
		return p.File
	case p.Col == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Severity says whether a problem stops generation.
type Severity int

// The severities, least severe first.
const (
	Warning Severity = iota
	Error
)

// String returns "warning" or "error", the words SARIF and fsmgen's JSON
// output use.
func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// Diagnostic is one problem found in a spec.
type Diagnostic struct {
	Pos      Pos
	Severity Severity
	// Rule is the id of the problem's kind (see Rules), such as
	// "unknown-name"; Errorf and Warnf set it from the message.
	Rule string
	Msg  string
	// Notes explain the problem further (a path that shows it, a reason),
	// one line each; List.Note adds them.
	Notes []string
}

// String formats the diagnostic as "path:line:col: message", with
// "warning: " before the message of a warning.
func (d Diagnostic) String() string {
	if d.Severity == Warning {
		return d.Pos.String() + ": warning: " + d.Msg
	}
	return d.Pos.String() + ": " + d.Msg
}

// NotesText returns the diagnostic's notes as text lines to print under
// it: each indented by four spaces after "note: ", a note's own line
// breaks indented to match; "" when it has none.
func (d Diagnostic) NotesText() string {
	var b strings.Builder
	for _, n := range d.Notes {
		b.WriteString("    note: ")
		b.WriteString(strings.ReplaceAll(n, "\n", "\n          "))
		b.WriteByte('\n')
	}
	return b.String()
}

// List collects diagnostics. The zero List is empty and ready to use.
type List []Diagnostic

// Errorf adds an error at pos, with the rule its message belongs to.
func (l *List) Errorf(pos Pos, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	*l = append(*l, Diagnostic{Pos: pos, Severity: Error, Rule: Classify(msg), Msg: msg})
}

// Warnf adds a warning at pos, with the rule its message belongs to.
func (l *List) Warnf(pos Pos, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	*l = append(*l, Diagnostic{Pos: pos, Severity: Warning, Rule: Classify(msg), Msg: msg})
}

// Note appends text as a note to the diagnostic added last, such as the
// path of events that shows an error or the reason behind it. It does
// nothing when the list is empty.
func (l *List) Note(text string) {
	if len(*l) == 0 {
		return
	}
	d := &(*l)[len(*l)-1]
	d.Notes = append(d.Notes, text)
}

// Sort orders the list by file, line, column, severity (errors first),
// message, then notes, and drops exact duplicates.
func (l *List) Sort() {
	slices.SortStableFunc(*l, func(a, b Diagnostic) int {
		return cmp.Or(
			cmp.Compare(a.Pos.File, b.Pos.File),
			cmp.Compare(a.Pos.Line, b.Pos.Line),
			cmp.Compare(a.Pos.Col, b.Pos.Col),
			cmp.Compare(b.Severity, a.Severity),
			cmp.Compare(a.Msg, b.Msg),
			cmp.Compare(a.Rule, b.Rule),
			slices.Compare(a.Notes, b.Notes),
		)
	})
	*l = slices.CompactFunc(*l, func(a, b Diagnostic) bool {
		return a.Pos == b.Pos && a.Severity == b.Severity && a.Rule == b.Rule && a.Msg == b.Msg && slices.Equal(a.Notes, b.Notes)
	})
}

// HasErrors reports whether the list holds an error (not only warnings).
func (l List) HasErrors() bool {
	return slices.ContainsFunc(l, func(d Diagnostic) bool { return d.Severity == Error })
}

// Errors returns the errors of the list, without the warnings.
func (l List) Errors() List {
	return slices.DeleteFunc(slices.Clone(l), func(d Diagnostic) bool { return d.Severity != Error })
}

// Warnings returns the warnings of the list.
func (l List) Warnings() List {
	return slices.DeleteFunc(slices.Clone(l), func(d Diagnostic) bool { return d.Severity != Warning })
}

// Err returns the list's errors as an error, or nil when it has none.
func (l List) Err() error {
	if errs := l.Errors(); len(errs) > 0 {
		return errs
	}
	return nil
}

// Error implements error: one diagnostic per line, each followed by its
// notes (see NotesText).
func (l List) Error() string {
	var b strings.Builder
	for i, d := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(d.String())
		if len(d.Notes) > 0 {
			b.WriteByte('\n')
			b.WriteString(strings.TrimSuffix(d.NotesText(), "\n"))
		}
	}
	return b.String()
}

// Lines splits src into lines the way YAML counts them: "\r\n", "\r",
// "\n", and the Unicode breaks NEL, LS and PS each end a line.
func Lines(src []byte) []string {
	var lines []string
	start := 0
	for i := 0; i < len(src); {
		r, size := utf8.DecodeRune(src[i:])
		brk := 0
		switch {
		case r == '\r' && i+1 < len(src) && src[i+1] == '\n':
			brk = 2
		case r == '\r', r == '\n', r == 0x85, r == 0x2028, r == 0x2029:
			brk = size
		}
		if brk == 0 {
			i += size
			continue
		}
		lines = append(lines, string(src[start:i]))
		i += brk
		start = i
	}
	return append(lines, string(src[start:]))
}

// Excerpt returns the line of src that d points at, with a caret under
// its column (counted in characters, as YAML counts them), indented by
// four spaces; "" when d has no line or src does not have it.
func Excerpt(src []byte, d Diagnostic) string {
	if d.Pos.Line <= 0 {
		return ""
	}
	lines := Lines(src)
	if d.Pos.Line > len(lines) {
		return ""
	}
	line := strings.Map(func(r rune) rune {
		if r < ' ' && r != '\t' || r == 0x7f {
			return ' '
		}
		return r
	}, lines[d.Pos.Line-1])
	if n := utf8.RuneCountInString(line); n > 200 {
		line = string([]rune(line)[:200]) + "…"
	}
	if d.Pos.Col == 0 {
		return "    " + line + "\n"
	}
	var caret strings.Builder
	col := 1
	for _, r := range line {
		if col >= d.Pos.Col {
			break
		}
		if r == '\t' {
			caret.WriteByte('\t')
		} else {
			caret.WriteByte(' ')
		}
		col++
	}
	return "    " + line + "\n    " + caret.String() + "^\n"
}

// Count returns n and the noun that counts it, in the singular for one:
// Count(1, "change") is "1 change", Count(2, "change") "2 changes". The
// plural adds "s", which fits every noun fsmgen counts.
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
