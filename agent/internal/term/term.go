// Package term is the coding agent's line editor on a terminal: it reads
// the user's messages with line editing, history and bracketed paste
// (golang.org/x/term's Terminal does the editing), and lets what the agent
// prints appear above the line being typed.
//
// A message is what is typed up to Enter. Lines pasted at once (the
// terminal brackets a paste) stay one message, sent with the next Enter,
// and a line that ends with a backslash goes on on the next line: both
// arrive as one message, its lines joined by newlines. Up and Down recall
// the lines typed before, Ctrl-D on an empty line ends the input, and
// Ctrl-C clears the line typed, or, on an empty line, is the interrupt
// the agent handles (SIGINT), as it is while no line is read.
package term

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sys/unix"
	xterm "golang.org/x/term"
	"golang.org/x/text/width"

	"github.com/fsmgen/fsmgen/agent/internal/approval"
)

// The prompts: before a message, before each further line of one, and
// before the answer to a question (see Editor.Ask).
const (
	Prompt     = "> "
	MorePrompt = "… "
	AskPrompt  = "approve? [y/n/a] "
)

// Editor reads messages from a terminal. Its methods may be called from
// several goroutines: ReadMessage from one, Write from others.
type Editor struct {
	in, out *os.File
	t       *xterm.Terminal
	saved   *unix.Termios
	raw     unix.Termios // the mode Open set
	// mu guards partial: the last row of the streamed text written by
	// WriteText that no newline has ended yet, drawn on a row of its own
	// above the prompt; "" when there is none.
	mu      sync.Mutex
	partial string
	// live is how many rows the block SetLive drew takes, 0 when none
	// is drawn.
	live int
	// complete completes the word after an "@" (see SetComplete); nil
	// when Tab completes nothing. mu guards it.
	complete func(word string) []string
	// asked says that a question was shown (see Ask) and no key has been
	// typed since: what the line holds then was typed before the
	// question, and is dropped (see key and ReadMessage). mu guards it.
	asked bool
}

// IsTerminal reports whether f is a terminal (not merely a character
// device such as /dev/null).
func IsTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// Open puts the terminal in out of line mode: keys are no longer echoed
// or gathered into lines by the terminal but by the editor, while Ctrl-C
// (but while a line is read: see ReadMessage) and Ctrl-\ still send their
// signals; and it turns bracketed paste on.
// in is the terminal's input, opened so that a deadline can end a read
// (see agentexec.OpenStdin). Close puts the terminal back.
func Open(in, out *os.File) (*Editor, error) {
	fd := int(in.Fd())
	saved, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil, fmt.Errorf("read the terminal's settings: %w; pipe the input to use the agent without line editing", err)
	}
	raw := *saved
	raw.Lflag &^= unix.ECHO | unix.ICANON | unix.IEXTEN
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &raw); err != nil {
		return nil, fmt.Errorf("set the terminal's mode: %w; pipe the input to use the agent without line editing", err)
	}
	e := &Editor{in: in, out: out, saved: saved, raw: raw}
	e.t = xterm.NewTerminal(struct {
		io.Reader
		io.Writer
	}{ctrlCReader{in}, out}, Prompt)
	e.t.AutoCompleteCallback = e.key
	e.t.SetBracketedPasteMode(true)
	e.resize()
	return e, nil
}

// resize tells the editor the terminal's width, which it wraps long lines
// at.
func (e *Editor) resize() {
	if ws, err := unix.IoctlGetWinsize(int(e.out.Fd()), unix.TIOCGWINSZ); err == nil && ws.Col > 0 {
		_ = e.t.SetSize(int(ws.Col), int(ws.Row))
	}
}

// ReadMessage reads the next message: the lines typed up to an Enter that
// neither a paste nor a final backslash continues, joined by newlines. It
// returns io.EOF when the user ends the input (Ctrl-D on an empty line),
// with what was typed of the message before it, and ctx's error soon
// after ctx is done.
func (e *Editor) ReadMessage(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	// An earlier reader's context may have ended a read (the session
	// before a /resume, say): the terminal is read again.
	_ = e.in.SetReadDeadline(time.Time{})
	stop := context.AfterFunc(ctx, func() { _ = e.in.SetReadDeadline(time.Now()) })
	defer stop()
	// While a line is read, Ctrl-C is a key the editor handles (see
	// key): the terminal does not turn it into SIGINT.
	own := e.raw
	own.Cc[unix.VINTR] = 0 // _POSIX_VDISABLE
	if err := unix.IoctlSetTermios(int(e.in.Fd()), unix.TCSETS, &own); err == nil {
		defer func() { _ = unix.IoctlSetTermios(int(e.in.Fd()), unix.TCSETS, &e.raw) }()
	}
	var lines []string
	e.t.SetPrompt(Prompt)
	for {
		e.resize()
		line, err := e.t.ReadLine()
		if err == nil && len(lines) == 0 && e.typedBefore(line) {
			continue
		}
		switch {
		case errors.Is(err, xterm.ErrPasteIndicator):
			// A line of a paste: the message goes on.
			lines = append(lines, line)
		case err != nil:
			// No more input is read: no prompt is drawn any more, and
			// the one on the screen is erased.
			e.t.SetPrompt("")
			_, _ = e.t.Write([]byte("\r\x1b[K"))
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			return strings.Join(append(lines, line), "\n"), err
		case strings.HasSuffix(line, `\`):
			lines = append(lines, strings.TrimSuffix(line, `\`))
		default:
			return strings.Join(append(lines, line), "\n"), nil
		}
		e.t.SetPrompt(MorePrompt)
	}
}

// Ask shows AskPrompt in place of the prompt until the next message is
// read: the line typed answers a question the agent asked. It is drawn
// with what is written next (the question). What the line holds when the
// question is shown was typed before it, and cannot answer it: it is
// dropped, saying so, with the first key typed after the question (or
// the Enter that would have sent it).
func (e *Editor) Ask() {
	e.mu.Lock()
	e.asked = true
	e.mu.Unlock()
	e.t.SetPrompt(AskPrompt)
}

// typedBefore reports whether line, just entered, was typed whole before
// the question now shown (see Ask), and drops it, saying so.
func (e *Editor) typedBefore(line string) bool {
	e.mu.Lock()
	asked := e.asked
	e.asked = false
	e.mu.Unlock()
	if !asked || line == "" {
		return false
	}
	e.dropped(line)
	return true
}

// dropped says that typed, typed before the question shown, is dropped.
func (e *Editor) dropped(typed string) {
	_, _ = fmt.Fprintf(e, "agent: %s\n", approval.DroppedNotice(typed, "now"))
}

// Unask shows the prompt again once a question is no longer waiting (the
// turn was stopped); it is drawn with what is written next.
func (e *Editor) Unask() {
	e.mu.Lock()
	e.asked = false
	e.mu.Unlock()
	e.t.SetPrompt(Prompt)
}

// Write writes p to the terminal above the line being typed, which is
// drawn again below it. A line WriteText left unfinished stays on the
// screen as it is, and the streamed text goes on below what p wrote.
func (e *Editor) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.partial = ""
	if erase := e.eraseLive(); erase != "" {
		if _, err := e.t.Write([]byte(erase + string(p))); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return e.t.Write(p)
}

// SetLive draws lines above the line being typed in place of the ones it
// drew before (a running command's last lines, redrawn as they change);
// each must fit on one row (see Width). What is written next with Write
// or WriteText takes their place; nil only erases them.
func (e *Editor) SetLive(lines []string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	var b strings.Builder
	b.WriteString(e.eraseLive())
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	e.live, e.partial = len(lines), ""
	if b.Len() == 0 {
		return nil
	}
	_, err := e.t.Write([]byte(b.String()))
	return err
}

// eraseLive returns what erases the block SetLive drew, if any: x/term's
// Write starts at the prompt's row, below it.
func (e *Editor) eraseLive() string {
	if e.live == 0 {
		return ""
	}
	s := fmt.Sprintf("\x1b[%dA\r\x1b[J", e.live)
	e.live = 0
	return s
}

// WriteText writes streamed text (the model's reply) above the line being
// typed as it arrives: a line not ended yet is drawn on a row of its own
// at once, and drawn again, longer, with the next text, so that the
// prompt and what is typed stay below it.
func (e *Editor) WriteText(s string) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var b strings.Builder
	b.WriteString(e.eraseLive())
	if e.partial != "" {
		// x/term's Write starts at the prompt's row, below the
		// unfinished row: back up to it.
		b.WriteString("\x1b[A\r\x1b[K")
	}
	text := e.partial + s
	i := strings.LastIndexByte(text, '\n') + 1
	b.WriteString(text[:i])
	rows := Rows(text[i:], e.width())
	e.partial = ""
	if len(rows) > 0 {
		for _, r := range rows {
			b.WriteString(r)
		}
		e.partial = rows[len(rows)-1]
		b.WriteString("\n")
	}
	if _, err := e.t.Write([]byte(b.String())); err != nil {
		return 0, err
	}
	return len(s), nil
}

// Width returns the terminal's width in columns, 80 when unknown.
func (e *Editor) Width() int { return e.width() }

// width returns the terminal's width in columns, 80 when unknown.
func (e *Editor) width() int {
	if ws, err := unix.IoctlGetWinsize(int(e.out.Fd()), unix.TIOCGWINSZ); err == nil && ws.Col > 0 {
		return int(ws.Col)
	}
	return 80
}

// Rows cuts a line of text without newlines into the rows a terminal of
// cols columns shows it in: every row but the last full. A wide
// character (most of CJK, most emoji) takes two columns, a tab goes to
// the next multiple of 8.
func Rows(line string, cols int) []string {
	if line == "" {
		return nil
	}
	cols = max(cols, 2)
	var rows []string
	start, col := 0, 0
	for i, r := range line {
		w := 1
		switch {
		case r == '\t':
			w = 8 - col%8
		case wide(r):
			w = 2
		}
		if col+w > cols && col > 0 {
			rows = append(rows, line[start:i])
			start, col = i, 0
		}
		col += min(w, cols)
	}
	return append(rows, line[start:])
}

// Close turns bracketed paste off and puts the terminal back in the mode
// Open found it in.
func (e *Editor) Close() error {
	e.t.SetBracketedPasteMode(false)
	if err := unix.IoctlSetTermios(int(e.in.Fd()), unix.TCSETS, e.saved); err != nil {
		return fmt.Errorf("restore the terminal's settings: %w; run \"stty sane\" to fix the terminal", err)
	}
	return nil
}

// wide reports whether r takes two columns of a terminal.
func wide(r rune) bool {
	k := width.LookupRune(r).Kind()
	return k == width.EastAsianWide || k == width.EastAsianFullwidth
}

// ctrlC is what ctrlCReader turns Ctrl-C into: a character of the
// private use area, which x/term hands to AutoCompleteCallback (it ends
// ReadLine on Ctrl-C itself, keeping the line for the next read).
const ctrlC = '\uE003'

// ctrlCReader reads the terminal's input with each Ctrl-C turned into
// ctrlC.
type ctrlCReader struct{ r io.Reader }

func (c ctrlCReader) Read(p []byte) (int, error) {
	// Room for ctrlC's three bytes in place of each byte read.
	buf := make([]byte, max(1, len(p)/3))
	n, err := c.r.Read(buf)
	out := p[:0]
	for _, b := range buf[:n] {
		if b == 3 {
			out = utf8.AppendRune(out, ctrlC)
			continue
		}
		out = append(out, b)
	}
	return len(out), err
}

// SetComplete makes Tab complete the word the cursor ends when it starts
// with "@" (a path the user mentions): fn returns what the word after the
// "@" may become. One candidate takes the word's place; several extend
// it to what they have in common, and are listed above the line when
// that adds nothing.
func (e *Editor) SetComplete(fn func(word string) []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.complete = fn
}

// key handles Tab (see SetComplete) and Ctrl-C as shells do: with text
// typed, it clears the line; on an empty line, it is the interrupt the
// agent handles (stop the turn, or quit), sent as SIGINT to the agent
// itself.
func (e *Editor) key(line string, pos int, key rune) (string, int, bool) {
	e.mu.Lock()
	asked := e.asked
	e.asked = false
	e.mu.Unlock()
	if asked && line != "" && key != ctrlC {
		// The first key after a question: the line before it was typed
		// before the question, and the answer starts with this key.
		e.dropped(line)
		if unicode.IsPrint(key) {
			return string(key), utf8.RuneLen(key), true
		}
		return "", 0, true
	}
	if key == '\t' {
		return e.tab(line, pos)
	}
	if key != ctrlC {
		return "", 0, false
	}
	if line == "" {
		_ = unix.Kill(os.Getpid(), unix.SIGINT)
	}
	return "", 0, true
}

// tab completes the "@" word that ends at pos in line (see SetComplete).
// Tab with nothing to complete changes nothing.
func (e *Editor) tab(line string, pos int) (string, int, bool) {
	start := strings.LastIndexAny(line[:pos], " \t\n") + 1
	word, ok := strings.CutPrefix(line[start:pos], "@")
	e.mu.Lock()
	complete := e.complete
	e.mu.Unlock()
	if !ok || complete == nil {
		return line, pos, true
	}
	found := complete(word)
	if len(found) == 0 {
		return line, pos, true
	}
	common := found[0]
	for _, f := range found[1:] {
		for !strings.HasPrefix(f, common) {
			_, size := utf8.DecodeLastRuneInString(common)
			common = common[:len(common)-size]
		}
	}
	if len(found) > 1 && common == word {
		// Nothing to add: show the candidates, as shells do.
		const most = 40
		shown := found[:min(len(found), most)]
		list := strings.Join(shown, "  ")
		if len(found) > most {
			list += fmt.Sprintf("  … (%d more)", len(found)-most)
		}
		_, _ = e.Write([]byte(list + "\n"))
		return line, pos, true
	}
	return line[:start] + "@" + common + line[pos:], start + 1 + len(common), true
}
