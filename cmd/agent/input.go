package main

import (
	"io"
	"os"
	"strings"

	"github.com/fsmgen/fsmgen/runtime/term"
)

// openEditor returns the line editor of the terminal in when the agent's
// diagnostics go to a terminal too (the prompt and the typed line are
// drawn there), nil otherwise: the input is then read one message per
// line, as from a script.
func openEditor(in *os.File, stderr io.Writer) (*term.Editor, error) {
	diag, ok := stderr.(*os.File)
	if !ok || !term.IsTerminal(diag) {
		return nil, nil
	}
	return term.Open(in, diag)
}

// useEditor makes the display write through the editor, above the line
// being typed: diagnostics, and the reply when stdout is a terminal too
// (its lines are then written whole, so that the line being typed is
// drawn again only below complete lines).
func (t *terminal) useEditor(ed *term.Editor, stdout io.Writer) {
	t.diag, t.editor = ed, ed
	if f, ok := stdout.(*os.File); ok && term.IsTerminal(f) {
		t.out = ed
		t.wholeLines = true
	}
	t.prompt = false // the editor shows its own
}

// writeText writes streamed text to out: at once, or, with wholeLines,
// up to its last newline, keeping the rest for later (see endLine).
func (t *terminal) writeText(s string) {
	if !t.wholeLines {
		_, _ = io.WriteString(t.out, s)
		return
	}
	t.partial += s
	if i := strings.LastIndexByte(t.partial, '\n'); i >= 0 {
		_, _ = io.WriteString(t.out, t.partial[:i+1])
		t.partial = t.partial[i+1:]
	}
}
