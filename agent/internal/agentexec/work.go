package agentexec

import "context"

// work is a kind of work the agent runs one at a time: an LLM stream, a
// round of tools, a retry timer. Starting it again cancels the one still
// running, whose events are then dropped, even those already queued.
// Loop goroutine only.
type work struct {
	gen    uint64
	cancel context.CancelFunc
}

// restart cancels the work running, if any, and returns the context of the
// new one, a child of parent, and the test the loop asks before handing
// one of its events to the machine (see loop.SendIf): whether it is still
// the current work.
func (w *work) restart(parent context.Context) (ctx context.Context, current func() bool) {
	w.stop()
	w.gen++
	gen := w.gen
	ctx, w.cancel = context.WithCancel(parent)
	return ctx, func() bool { return w.gen == gen }
}

// drop cancels the work running, if any, and drops its events, even
// those already queued.
func (w *work) drop() {
	w.stop()
	w.gen++
}

// stop cancels the work running, if any.
func (w *work) stop() {
	if w.cancel != nil {
		w.cancel()
	}
}
