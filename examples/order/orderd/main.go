// Command orderd runs one order of package order as a small service that
// outlives its process: the recipe of docs/spec.md ("Machines that outlive
// the process"), end to end.
//
// It reads the order's events on standard input, one JSON object a line
// ({"kind":"add_item","price":1000}), and prints each action it performs on
// standard output, one JSON object a line. It keeps the order in a state
// file (-state): the machine as Save saves it, the journal of the events
// it handled (each with the time it was handled) and the actions not yet
// performed. After each event, and before performing any of its actions,
// it replaces the state file, durably. So whatever moment the process is
// killed at:
//
//   - an event either is in the journal, and its step is in the saved
//     machine, or is not, and the machine is as before it;
//   - the payment deadline is the one the machine saved when the order was
//     placed: after a restart, orderd arms the timer for that deadline,
//     not for a new payment window, and a deadline that passed while the
//     process was down fires at once;
//   - the deadline's firing is handled once: its step is saved with the
//     journal in one write;
//   - an action is performed at least once: the actions of a saved step
//     wait in the state file until they have been performed.
//
// orderd exits when the order ends (delivered, cancelled or expired), or
// on SIGINT or SIGTERM.
//
// Usage:
//
//	orderd -state order.json [-payment-window 30m]
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/fsmgen/fsmgen/examples/order"
	"github.com/fsmgen/fsmgen/internal/atomicfile"
	"github.com/fsmgen/fsmgen/runtime/fsmrt"
	"github.com/fsmgen/fsmgen/runtime/loop"
)

func main() {
	statePath := flag.String("state", "order.json", "the state file: the order, its journal and the actions to perform")
	window := flag.Duration("payment-window", order.DefaultWindow, "how long a placed order waits for its payment")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *statePath, *window, stdin(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "orderd:", err)
		os.Exit(1)
	}
}

// file is what the state file holds.
type file struct {
	// Machine is the order as its Save method saves it.
	Machine json.RawMessage `json:"machine"`
	// Journal lists the events handled, oldest first.
	Journal []entry `json:"journal"`
	// Outbox holds the actions of the last saved step not yet performed.
	Outbox []json.RawMessage `json:"outbox,omitempty"`
}

// entry is one event handled: when, the event, the state after it, and
// whether the machine refused it.
type entry struct {
	At       time.Time       `json:"at"`
	Event    json.RawMessage `json:"event"`
	State    string          `json:"state"`
	Rejected bool            `json:"rejected,omitempty"`
}

// service is the order, its handler and its state file.
type service struct {
	path   string
	m      *order.Machine
	rec    *order.Recorder // the Handler: the machine's actions, as values
	timers *loop.Timers[order.Event]
	out    io.Writer
	f      file
}

// HandleEvent hands ev to the order with the time it is handled: the
// deadline of a timer the step starts counts from it.
func (s *service) HandleEvent(ev order.Event) error {
	s.rec.Now = time.Now().UTC()
	s.rec.Actions = s.rec.Actions[:0]
	return s.m.HandleEvent(ev)
}

// Execute implements loop.Executor: it saves the step, then performs its
// actions, and stops the loop when the order has ended.
func (s *service) Execute(_ context.Context, l *loop.Loop[order.Event], st loop.Step[order.Event]) error {
	ev, err := json.Marshal(st.Event)
	if err != nil {
		return fmt.Errorf("encode event %d: %w", st.Seq, err)
	}
	if st.Err != nil && !errors.Is(st.Err, fsmrt.ErrRejected) {
		return st.Err
	}
	s.f.Journal = append(s.f.Journal, entry{At: s.rec.Now, Event: ev, State: s.m.Kind().String(), Rejected: st.Err != nil})
	var timers []order.Action
	for _, a := range s.rec.Actions {
		switch a.(type) {
		case *order.StartTimer, *order.CancelTimer:
			timers = append(timers, a)
		default:
			data, err := json.Marshal(a)
			if err != nil {
				return fmt.Errorf("encode action %s: %w", a.Kind(), err)
			}
			s.f.Outbox = append(s.f.Outbox, data)
		}
	}
	if err := s.save(); err != nil {
		return err
	}
	for _, a := range timers {
		switch a := a.(type) {
		case *order.StartTimer:
			s.timers.Arm(a.Timer, s.m.Deadline(a.Timer), a.Delay)
		case *order.CancelTimer:
			s.timers.CancelTimer(a.Timer)
		}
	}
	if err := s.perform(); err != nil {
		return err
	}
	if ended(s.m.Kind()) {
		l.Stop()
	}
	return nil
}

// save replaces the state file with the order as it is now.
func (s *service) save() error {
	m, err := s.m.Save()
	if err != nil {
		return err
	}
	s.f.Machine = m
	data, err := json.Marshal(s.f)
	if err != nil {
		return fmt.Errorf("encode the state file: %w", err)
	}
	if err := atomicfile.Write(s.path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("save %s: %w", s.path, err)
	}
	return nil
}

// perform prints the actions waiting in the outbox, then saves the state
// file without them.
func (s *service) perform() error {
	if len(s.f.Outbox) == 0 {
		return nil
	}
	for _, a := range s.f.Outbox {
		if _, err := fmt.Fprintf(s.out, "%s\n", a); err != nil {
			return fmt.Errorf("perform %s: %w", a, err)
		}
	}
	s.f.Outbox = nil
	return s.save()
}

// ended reports whether the order is in a terminal state.
func ended(k order.StateKind) bool {
	return k == order.StateDelivered || k == order.StateCancelled || k == order.StateExpired
}

// run serves the order of the state file at path, or a new one, until it
// ends or ctx is done.
func run(ctx context.Context, path string, window time.Duration, in io.Reader, out io.Writer) error {
	s := &service{path: path, rec: &order.Recorder{}, out: out}
	c := order.Config{Behavior: order.Shop{Window: window}, Handler: s.rec}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if s.m, err = order.New(c); err != nil {
			return err
		}
	case err != nil:
		return fmt.Errorf("read %s: %w", path, err)
	default:
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s.f); err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		if s.m, err = order.Load(c, s.f.Machine); err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
	}
	l := loop.New[order.Event](s, s, loop.Options{Logger: slog.New(slog.DiscardHandler)})
	s.timers = loop.NewTimersAt(l, func(id fsmrt.TimerID, deadline, now time.Time) order.Event {
		return &order.TimerFired{Timer: id, Deadline: deadline, Now: now}
	})
	// The timers the order had running when it was saved fire at their
	// deadlines; what a killed process did not perform is performed now.
	for _, t := range s.m.Timers() {
		s.timers.Arm(t.Timer, s.m.Deadline(t.Timer), t.Delay)
	}
	if err := s.perform(); err != nil {
		return err
	}
	if ended(s.m.Kind()) {
		return nil
	}
	l.Go(ctx, "input", func(ctx context.Context) { read(ctx, l, in) })
	return l.Run(ctx)
}

// stdin returns the process's standard input, opened again in non-blocking
// mode when it is a pipe or a terminal, so that a deadline can end a read
// and the input task stop with the loop; os.Stdin otherwise.
func stdin() io.Reader {
	if fi, err := os.Stdin.Stat(); err == nil && fi.Mode().IsRegular() {
		return os.Stdin
	}
	f, err := os.OpenFile("/dev/stdin", os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil || f.SetReadDeadline(time.Time{}) != nil {
		return os.Stdin
	}
	return f
}

// read hands the events of in to the loop, one a line; a line that is not
// an event is reported and skipped. It returns at the end of the input or,
// if in takes a deadline, when ctx is done.
func read(ctx context.Context, l *loop.Loop[order.Event], in io.Reader) {
	if d, ok := in.(interface{ SetReadDeadline(time.Time) error }); ok {
		stop := context.AfterFunc(ctx, func() { _ = d.SetReadDeadline(time.Now()) })
		defer stop()
	}
	lines := bufio.NewScanner(in)
	for lines.Scan() {
		ev, err := order.UnmarshalEvent(lines.Bytes())
		if err != nil {
			fmt.Fprintln(os.Stderr, "orderd:", err)
			continue
		}
		if err := l.Send(ctx, ev); err != nil {
			return
		}
	}
}
