package app

import (
	"io"
	"os"

	"github.com/fsmgen/fsmgen/agent/internal/agentexec"
	"github.com/fsmgen/fsmgen/agent/internal/term"
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
// (its unfinished last line drawn on a row of its own, at once, and
// again as it grows: see term.Editor.WriteText).
func (t *terminal) useEditor(ed *term.Editor, stdout io.Writer) {
	t.diag, t.editor = ed, ed
	if f, ok := stdout.(*os.File); ok && term.IsTerminal(f) {
		t.out = ed
		t.streamEditor = true
	}
	t.prompt = false // the editor shows its own
}

// writeText writes streamed text to out as it arrives.
func (t *terminal) writeText(s string) {
	if t.streamEditor {
		_, _ = t.editor.WriteText(s)
		return
	}
	_, _ = io.WriteString(t.out, s)
}

// sessionInput is where the messages of interactive sessions come from,
// opened once for all the sessions of a run (/resume and /fork go on with
// another thread on the same input): the terminal's line editor, or the
// lines of standard input.
type sessionInput struct {
	// stdin is the input run was given, nil for the process's.
	stdin io.Reader
	// opened says open ran; messages reads the messages, editor is the
	// line editor when standard input is a terminal, and prompt says
	// that a prompt is shown.
	opened   bool
	messages agentexec.MessageReader
	editor   *term.Editor
	prompt   bool
	// file is the standard input opened again (see agentexec.OpenStdin),
	// closed at the end.
	file *os.File
	// keys are the API keys' environment variables as the first session
	// found them (see keyVars): the agent's environment keeps none
	// after that.
	keys map[string]string
	// said holds the notes about the machine (the sandbox, the PATH)
	// that a session of the run has said: a /fork or a /resume does not
	// say them again (see onceNote).
	said map[string]bool
}

// once reports whether note is said for the first time in the run, and
// notes that it is.
func (in *sessionInput) once(note string) bool {
	if in.said[note] {
		return false
	}
	if in.said == nil {
		in.said = map[string]bool{}
	}
	in.said[note] = true
	return true
}

// open opens the input, once; limit is the longest message read from
// lines.
func (in *sessionInput) open(stderr io.Writer, limit int) error {
	if in.opened {
		return nil
	}
	in.opened = true
	input := in.stdin
	if input == nil {
		f := agentexec.OpenStdin()
		if f != os.Stdin {
			in.file = f
		}
		if isTerminal(f) {
			in.prompt = true
			ed, err := openEditor(f, stderr)
			if err != nil {
				return err
			}
			if ed != nil {
				in.editor, in.messages = ed, ed
				return nil
			}
		}
		input = f
	}
	in.messages = agentexec.NewLineReader(input, limit)
	return nil
}

// close closes what open opened.
func (in *sessionInput) close() {
	if in.editor != nil {
		_ = in.editor.Close()
	}
	if in.file != nil {
		_ = in.file.Close()
	}
}
