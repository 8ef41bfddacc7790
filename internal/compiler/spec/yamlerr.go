package spec

import (
	"errors"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/fsmgen/fsmgen/internal/compiler/diag"
)

// yamlError reports a syntax error of the YAML library at the place it
// was found: yaml.v4's LoadError carries the line and column of the
// problem (Mark) and of the construct it was reading (ContextMark), a
// quoted string or a flow mapping, say. When the file ends inside that
// construct, the construct's start is the place to fix, and the error
// points there.
func (p *parser) yamlError(err error) {
	var le *yaml.LoadError
	if !errors.As(err, &le) {
		p.lineMessage(err.Error())
		return
	}
	msg := le.Message
	if strings.Contains(msg, "found character that cannot start any token") && p.tabAt(le.Mark) {
		msg += " (tabs cannot indent YAML: use spaces)"
	}
	at, ctx := le.Mark, le.ContextMark
	hasCtx := le.ContextMsg != "" && ctx.Line > 0 && (ctx.Line != at.Line || ctx.Column != at.Column)
	switch {
	case hasCtx && (at.Line > p.lines || strings.Contains(msg, "end of stream")):
		// The file ended inside the construct: point at its start.
		p.diags.Errorf(p.markPos(ctx), "invalid YAML: the file ends %s that starts here: %s", le.ContextMsg, closeHint(le.ContextMsg))
	case hasCtx:
		p.diags.Errorf(p.markPos(at), "invalid YAML: %s (%s that starts at line %d, column %d)", msg, le.ContextMsg, ctx.Line, ctx.Column)
	default:
		p.diags.Errorf(p.markPos(at), "invalid YAML: %s", msg)
	}
}

// markPos is the position of a mark of the YAML library, whose lines and
// columns count from 1 as fsmgen's do; one past the last line (the end of
// the file) is the last line.
func (p *parser) markPos(m yaml.Mark) diag.Pos {
	if m.Line <= 0 {
		return diag.Pos{File: p.path}
	}
	if p.lines > 0 && m.Line > p.lines {
		return diag.Pos{File: p.path, Line: p.lines}
	}
	return diag.Pos{File: p.path, Line: m.Line, Col: m.Column}
}

// tabAt reports whether the character at a mark is a tab.
func (p *parser) tabAt(m yaml.Mark) bool {
	lines := diag.Lines(p.src)
	if m.Line <= 0 || m.Line > len(lines) || m.Column <= 0 {
		return false
	}
	rs := []rune(lines[m.Line-1])
	return m.Column <= len(rs) && rs[m.Column-1] == '\t'
}

// closeHint says how to close the construct the file ended in, from the
// YAML library's description of it.
func closeHint(context string) string {
	switch {
	case strings.Contains(context, "quoted scalar"):
		return "close the quote"
	case strings.Contains(context, "flow mapping"):
		return "close it with }"
	case strings.Contains(context, "flow sequence"):
		return "close it with ]"
	}
	return "complete it"
}

// lineMessage reports a message of the YAML library of the form "yaml:
// line N: text", for an error that carries no mark.
func (p *parser) lineMessage(msg string) {
	msg = strings.TrimPrefix(msg, "yaml: ")
	pos := diag.Pos{File: p.path}
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, text, ok := strings.Cut(rest, ": "); ok {
			if n, err := strconv.Atoi(num); err == nil {
				pos.Line, msg = n, text
			}
		}
	}
	p.diags.Errorf(pos, "invalid YAML: %s", msg)
}
