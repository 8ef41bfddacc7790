package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// silence is the cause a watchdog cancels a call's context with: the server
// sent nothing, or nothing of the reply, for too long.
type silence struct {
	// what says what the call was waiting for, e.g. "the response headers".
	what string
	// limit is the time limit that passed.
	limit time.Duration
	// flag is the command-line flag that sets the limit.
	flag string
	// keepAlive says that the server sent bytes meanwhile, but none that
	// carried the reply: pings, comments, empty deltas.
	keepAlive bool
}

func (s *silence) Error() string {
	if s.keepAlive {
		return fmt.Sprintf("the server sent nothing of the reply for %s, only keep-alives (pings, comments or empty deltas), while the call waited for %s",
			s.limit, s.what)
	}
	return fmt.Sprintf("the server sent nothing for %s while the call waited for %s", s.limit, s.what)
}

// llmError classifies the silence: a timeout, retryable, saying which flag
// allows more time.
func (s *silence) llmError(provider string) chat.LLMError {
	return errorHint(provider, chat.ErrTimeout,
		fmt.Sprintf("retry, or allow more time with -%s (now %s)", s.flag, s.limit), "%v", s)
}

// overtime is the cause a watchdog cancels a call's context with when the
// reply streamed for longer than its overall limit.
type overtime struct{ limit time.Duration }

func (o *overtime) Error() string {
	return fmt.Sprintf("the reply was still streaming after %s, the time limit of one reply, and was cut off", o.limit)
}

// llmError classifies the overtime: not retried, since the same request
// would most likely take as long again, like a reply over its size limit.
func (o *overtime) llmError(provider string) chat.LLMError {
	return errorHint(provider, chat.ErrOther,
		fmt.Sprintf("if so long a reply is expected, allow more time with -%s (now %s)", FlagReplyTimeout, o.limit), "%v", o)
}

// watchdog cancels a call's context when the server stays silent longer
// than a limit, or the reply streams longer than its overall limit. The
// silence timer runs only while the call waits for the server (the
// response headers, a read of the body), so the time the caller takes with
// the events does not count. It starts no goroutine of its own: the
// timers' functions run only when a limit passes, and only cancel.
type watchdog struct {
	cancel context.CancelCauseFunc

	mu    sync.Mutex
	timer *time.Timer
	// wait is the wait the timer runs for; fire cancels with it.
	wait silence
	// reply is the timer of the reply's overall limit, once started.
	reply *time.Timer
	// stopped is set once the call has ended: no timer starts again.
	stopped bool
}

// newWatchdog returns a watchdog that cancels with cancel.
func newWatchdog(cancel context.CancelCauseFunc) *watchdog {
	return &watchdog{cancel: cancel}
}

// arm starts the clock for a wait of at most limit; a limit of 0 is none.
func (w *watchdog) arm(limit time.Duration, wait silence) {
	if limit <= 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	w.wait = wait
	if w.timer == nil {
		w.timer = time.AfterFunc(limit, w.fire)
		return
	}
	w.timer.Reset(limit)
}

// disarm stops the silence clock: the server answered.
func (w *watchdog) disarm() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
	}
}

// fire cancels the call with the cause of the wait that took too long.
func (w *watchdog) fire() {
	w.mu.Lock()
	cause := w.wait
	w.mu.Unlock()
	w.cancel(&cause)
}

// limitReply starts the clock of the reply's overall limit, once; a limit
// of 0 is none.
func (w *watchdog) limitReply(limit time.Duration) {
	if limit <= 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped || w.reply != nil {
		return
	}
	w.reply = time.AfterFunc(limit, func() { w.cancel(&overtime{limit: limit}) })
}

// stop stops every clock for good: the call has ended.
func (w *watchdog) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	if w.timer != nil {
		w.timer.Stop()
	}
	if w.reply != nil {
		w.reply.Stop()
	}
}

// idleClock measures how long the server has sent nothing of the reply:
// the time the call spent waiting in reads of the body since the reply
// last progressed. Bytes that carry no part of the reply (keep-alive
// pings, SSE comments, empty deltas) do not reset it; the provider code
// calls progress for the events that do. It is used on the call's
// goroutine only.
type idleClock struct {
	// limit is the idle limit; 0 is none.
	limit time.Duration
	// waited is the time spent in reads since the last progress.
	waited time.Duration
	// noise says that bytes arrived since the last progress.
	noise bool
	// started says that the reply has progressed at least once.
	started bool
	// read counts the body's bytes read so far.
	read int64
}

// progress notes that the reply grew: the clock starts again.
func (k *idleClock) progress() {
	k.waited, k.noise, k.started = 0, false, true
}

// wait describes what a read waits for, for the message of a timeout.
func (k *idleClock) wait() silence {
	s := silence{limit: k.limit, flag: FlagIdleTimeout, keepAlive: k.noise}
	switch {
	case k.read == 0:
		s.what = "the first byte of the reply after its headers"
	case !k.started:
		s.what = "the start of the reply"
	default:
		s.what = "more of the reply (the stream stalled)"
	}
	return s
}

// wireFactor is how many times the reply's size limit a response body may
// hold on the wire. The events that carry a reply weigh far more than its
// text (an OpenAI chunk of about 200 bytes carries one token), but no
// healthy server comes near this; a server that floods the stream with
// events that carry no text (empty deltas, pings) faster than the idle
// timeout passes is cut off.
const wireFactor = 64

// errWireLimit is the error a watched body's Read returns once the body has
// passed its size limit; the call's httpCapture records it.
var errWireLimit = errors.New("the response body passed its size limit")

// errIdle is the error a watched body's Read returns when the reply's idle
// time was used up before the read began; the watchdog has cancelled the
// call with the silence as its cause.
var errIdle = errors.New("the reply stalled")

// watchedBody is a response body whose reads are watched for silence and
// counted.
type watchedBody struct {
	io.ReadCloser
	w     *watchdog
	clock *idleClock
	// maxRead, when > 0, is the most the body may hold; overflow is set
	// when it held more.
	maxRead  int64
	overflow *bool
}

// Read reads from the body with the watchdog's clock running for what is
// left of the idle limit.
func (b *watchedBody) Read(p []byte) (int, error) {
	k := b.clock
	if b.maxRead > 0 && k.read > b.maxRead {
		*b.overflow = true
		return 0, errWireLimit
	}
	if k.limit > 0 {
		left := k.limit - k.waited
		if left <= 0 {
			cause := k.wait()
			b.w.cancel(&cause)
			return 0, errIdle
		}
		b.w.arm(left, k.wait())
	}
	start := time.Now()
	n, err := b.ReadCloser.Read(p)
	b.w.disarm()
	k.waited += time.Since(start)
	k.read += int64(n)
	if n > 0 {
		k.noise = true
	}
	return n, err
}

// Close stops the clock and closes the body.
func (b *watchedBody) Close() error {
	b.w.disarm()
	return b.ReadCloser.Close()
}
