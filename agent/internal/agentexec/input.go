package agentexec

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/fsmgen/fsmgen/agent/chat"
	"github.com/fsmgen/fsmgen/agent/internal/approval"
	"github.com/fsmgen/fsmgen/gen/agent"
)

// MessageReader reads the user's messages one at a time: a terminal's
// line editor (see agent/internal/term), where one message may hold several
// lines.
type MessageReader interface {
	// ReadMessage returns the next message, io.EOF after the last one; it
	// returns soon after ctx is done.
	ReadMessage(ctx context.Context) (string, error)
}

// readInput reads the user's messages in a task: from Config.Editor, or
// one per line from Config.Input. Blank messages are skipped, a slash
// command (see IsCommand) goes to Config.Commands, a message longer than
// Limits.InputLine is refused with a notice (the input goes on with the
// next one), and a message that starts with "//" is sent less its first
// slash. When the input ends the agent stops once every turn has ended.
func (a *Agent) readInput() {
	next := a.cfg.Editor
	if next == nil {
		next = newLineReader(a.cfg.Input, a.limits.InputLine)
	}
	l := a.loop
	l.Go(a.ctx, "input", func(ctx context.Context) {
		for {
			msg, err := next.ReadMessage(ctx)
			var long *tooLongError
			tooLong := errors.As(err, &long) || len(msg) > a.limits.InputLine
			command := a.cfg.Commands != nil && IsCommand(strings.TrimSpace(msg))
			use := approval.NotAnswer
			if err == nil && !tooLong && !(command && a.gate.Waiting()) {
				use = a.gate.Offer(msg)
			}
			switch {
			case tooLong:
				size := len(msg)
				if long != nil {
					size, err = long.size, nil
				}
				notice := fmt.Sprintf("a message of %d bytes is longer than the limit of %d bytes (-max-input-line) and was not sent; put long text in a file and ask the agent to read it",
					size, a.limits.InputLine)
				if l.Call(ctx, func() { a.display.Notice(notice) }) != nil {
					return
				}
			case command && use == approval.NotAnswer && a.gate.Waiting():
				// A command typed while a tool call waits for approval
				// runs at once (/diff, say); the question still waits.
				a.cfg.Commands(ctx, strings.TrimSpace(msg))
			case use == approval.Answered:
				// The answer to the question a tool call waits on.
			case use == approval.TooEarly:
				// Not yet shown, a question cannot be answered.
				notice := approval.DroppedNotice(msg, "once it is")
				if l.Call(ctx, func() { a.display.Notice(notice) }) != nil {
					return
				}
			case strings.TrimSpace(msg) == "":
			case a.cfg.Commands != nil && IsCommand(strings.TrimSpace(msg)):
				// Typed at a terminal, a command runs at once; read from
				// a script, after the turns of the lines before it.
				if _, script := next.(*lineReader); script && a.waitIdle(ctx) != nil {
					return
				}
				a.cfg.Commands(ctx, strings.TrimSpace(msg))
			default:
				if a.send(ctx, Literal(msg)) != nil {
					return
				}
			}
			if err != nil {
				if !errors.Is(err, io.EOF) && ctx.Err() == nil {
					msg := fmt.Sprintf("reading input failed, no more input is read: %v", err)
					_ = l.Call(ctx, func() { a.display.Notice(msg) })
				}
				break
			}
		}
		if ctx.Err() != nil {
			return
		}
		a.gate.Close("the user's input ended before they answered")
		_ = l.Call(ctx, func() {
			a.inputClosed = true
			a.settle()
		})
	})
}

// lineReader reads messages one per line.
type lineReader struct {
	r     io.Reader
	br    *bufio.Reader
	limit int
}

// NewLineReader returns a reader of the messages of r, one per line, of
// at most limit bytes each, whose reads Run can interrupt, for
// Config.Editor: a slash command read from it runs once the turns of the
// lines before it have ended, as a script expects. Unlike Config.Input, it
// can be handed to one agent after another (what one has read ahead is
// the next one's).
func NewLineReader(r io.Reader, limit int) MessageReader { return newLineReader(r, limit) }

// newLineReader returns a reader of the messages of r, one per line,
// whose reads Run can interrupt (see Config.Input).
func newLineReader(r io.Reader, limit int) *lineReader {
	if !interruptible(r) {
		r = detach(r)
	}
	return &lineReader{r: r, br: bufio.NewReaderSize(r, 64<<10), limit: limit}
}

// tooLongError is a line longer than the limit, read to its end but not
// kept.
type tooLongError struct{ size int }

// Error implements error.
func (e *tooLongError) Error() string { return fmt.Sprintf("a line of %d bytes is too long", e.size) }

// ReadMessage implements MessageReader: the next line, without its line
// ending; a *tooLongError for a line over the limit.
func (lr *lineReader) ReadMessage(ctx context.Context) (string, error) {
	if d, ok := lr.r.(deadliner); ok {
		_ = d.SetReadDeadline(time.Time{}) // an earlier agent's reads may have been interrupted
	}
	if err := ctx.Err(); err != nil {
		return "", err // what is buffered is the next agent's
	}
	stop := context.AfterFunc(ctx, func() { interrupt(lr.r) })
	defer stop()
	line, size, err := readLine(lr.br, lr.limit)
	if size > lr.limit {
		return "", &tooLongError{size: size}
	}
	if line == "" && err != nil {
		return "", err
	}
	return strings.TrimRight(line, "\r"), nil
}

// send sends msg as the user's message, made ready by Config.Prepare
// (with the images it attaches) and redacted; it runs on the input task.
// It returns an error once the agent has stopped or ctx is done.
func (a *Agent) send(ctx context.Context, msg string) error {
	m := chat.UserMessage(msg)
	if a.cfg.Prepare != nil {
		var notes []string
		m, notes = a.cfg.Prepare(ctx, msg)
		for _, n := range notes {
			n = a.secrets.String(n)
			if err := a.loop.Call(ctx, func() { a.display.Notice(n) }); err != nil {
				return err
			}
		}
	}
	m.Content = a.secrets.String(m.Content)
	ev := &agent.UserInput{Message: withID(m)}
	return a.loop.Call(ctx, func() { a.takeInput(ev) })
}

// Send sends msg to the model as if the user had typed it (a custom
// slash command's text, say), through Config.Prepare. Call it only from a
// command (see [Commands]), which runs on the input task.
func (a *Agent) Send(ctx context.Context, msg string) error { return a.send(ctx, msg) }

// takeInput hands the machine a message the user typed: it starts a turn,
// or waits in the machine (deferred) for the turn in flight to end; the
// step that takes it saves the thread with it (see Execute). Loop
// goroutine only.
func (a *Agent) takeInput(ev *agent.UserInput) {
	a.noteHooksRunning()
	ev.Message = a.withHookNote(ev.Message)
	a.loop.Next(ev)
}

// userMessage returns the user's message text, with an ID of its own
// (see withID).
func userMessage(text string) chat.Message { return withID(chat.UserMessage(text)) }

// withID returns the user's message m with an ID of its own (see
// chat.Message.ID): 16 random hexadecimal digits.
func withID(m chat.Message) chat.Message {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand's Read never fails
	m.ID = hex.EncodeToString(b[:])
	return m
}

// readLine reads one line from br, without its newline, and its size in
// bytes. A line longer than limit is read to its end but not kept: line
// is then empty and size tells how long it was. err is io.EOF after the
// last line (which may lack a newline) or the read error.
func readLine(br *bufio.Reader, limit int) (line string, size int, err error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		size += len(chunk)
		if size <= limit+1 { // +1: the newline
			buf = append(buf, chunk...)
		} else {
			buf = nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if n := len(chunk); err == nil && n > 0 {
			size-- // the newline is not part of the line
			if buf != nil {
				buf = buf[:len(buf)-1]
			}
		}
		if size > limit {
			return "", size, err
		}
		return string(buf), size, err
	}
}

// deadliner is a reader whose blocked reads a deadline can end.
type deadliner interface {
	SetReadDeadline(t time.Time) error
}

// interruptible reports whether a blocked Read on r can be ended: a
// regular file never blocks, a pollable file or connection takes a
// deadline, another io.Closer (an io.PipeReader) ends reads when closed.
func interruptible(r io.Reader) bool {
	if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			return true
		}
		return f.SetReadDeadline(time.Time{}) == nil
	}
	if d, ok := r.(deadliner); ok && d.SetReadDeadline(time.Time{}) == nil {
		return true
	}
	_, ok := r.(io.Closer)
	return ok
}

// interrupt makes a blocked Read on r return.
func interrupt(r io.Reader) {
	if d, ok := r.(deadliner); ok && d.SetReadDeadline(time.Now()) == nil {
		return
	}
	if _, isFile := r.(*os.File); isFile {
		return // a regular file: its reads do not block
	}
	if c, ok := r.(io.Closer); ok {
		_ = c.Close()
	}
}

// detach returns a reader of r that can be closed while a read of r
// blocks. It copies r in a goroutine that no one can stop: a read that
// the operating system cannot interrupt ends only with input, the end of
// the input, or the process. It is the fallback for such readers (a
// terminal OpenStdin could not open again); the input task itself stays
// owned by the loop and stops when told to.
func detach(r io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		_, err := io.Copy(pw, r)
		_ = pw.CloseWithError(err)
	}()
	return pr
}

// OpenStdin returns a reader of the process's standard input whose reads
// can be interrupted, so that [Agent.Run] can stop its input task.
//
// A read from os.Stdin on a terminal or a pipe blocks in the kernel and
// cannot be interrupted. When standard input is a terminal or a pipe,
// OpenStdin opens it again (through /dev/stdin, a file description of its
// own, in non-blocking mode so that Go's poller serves it and
// SetReadDeadline works); the flags of the descriptor the shell shares are
// untouched. Anything else (a regular file, whose reads never block), or a
// failure to reopen, gives os.Stdin itself. Close the file returned when it
// is not os.Stdin.
func OpenStdin() *os.File {
	fi, err := os.Stdin.Stat()
	if err != nil || fi.Mode()&(os.ModeCharDevice|os.ModeNamedPipe) == 0 {
		return os.Stdin
	}
	for _, name := range []string{"/dev/stdin", "/proc/self/fd/0"} {
		fd, err := syscall.Open(name, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err == nil {
			return os.NewFile(uintptr(fd), name)
		}
	}
	return os.Stdin
}

// TurnStopped is the Result's LastError of a turn the user stopped.
const TurnStopped = "the turn was stopped by the user"

// InterruptWindow is how soon after an interrupt (Ctrl-C) that stopped a
// turn a second one quits.
const InterruptWindow = 2 * time.Second

// watchSignals sends ShutdownRequested when one of Config.Signals
// arrives, and stops the turn or shuts down when one of Config.Interrupts
// does (see interrupt).
func (a *Agent) watchSignals() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, append(slices.Clone(a.cfg.Signals), a.cfg.Interrupts...)...)
	l := a.loop
	started := l.Go(a.ctx, "signals", func(ctx context.Context) {
		defer signal.Stop(ch)
		for {
			select {
			case <-ctx.Done():
				return
			case sig := <-ch:
				if slices.Contains(a.cfg.Interrupts, sig) {
					_ = l.Call(ctx, a.interrupt)
					continue
				}
				a.log.Info("signal received; shutting down", "signal", sig.String())
				_ = l.Call(ctx, func() { a.display.Notice(fmt.Sprintf("%s: stopping; the thread is saved", sig)) })
				_ = l.Send(ctx, &agent.ShutdownRequested{})
			}
		}
	})
	if !started {
		signal.Stop(ch)
	}
}

// interrupt stops the turn_end hooks running, else the turn in flight;
// when there is none, or the user
// stopped one less than InterruptWindow ago, it shuts the agent down.
// Loop goroutine only.
func (a *Agent) interrupt() {
	if a.endHooks != nil {
		// The next turn, if a message started it, waits for them.
		a.log.Info("interrupt: stopping the end-of-turn hooks")
		a.endHooks()
		a.hooksStopped = true
		return
	}
	now := a.now()
	if a.isBusy() && (a.interrupted.IsZero() || now.Sub(a.interrupted) >= InterruptWindow) {
		a.interrupted = now
		a.log.Info("interrupt: stopping the turn")
		a.loop.Next(&agent.Interrupt{})
		return
	}
	a.log.Info("interrupt: shutting down")
	a.showReplyRest()
	a.display.Notice("quitting; the thread is saved")
	a.loop.Next(&agent.ShutdownRequested{})
}
