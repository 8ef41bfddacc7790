package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/fsmgen/fsmgen/chat"
)

// silence is the cause a watchdog cancels a call's context with: the server
// sent nothing for too long.
type silence struct {
	// what says what the call was waiting for, e.g. "the response headers".
	what string
	// limit is the time limit that passed.
	limit time.Duration
	// flag is the command-line flag that sets the limit.
	flag string
}

func (s *silence) Error() string {
	return fmt.Sprintf("the server sent nothing for %s while the call waited for %s", s.limit, s.what)
}

// llmError classifies the silence: a timeout, retryable, saying which flag
// allows more time.
func (s *silence) llmError(provider string) chat.LLMError {
	return errorHint(provider, chat.ErrTimeout,
		fmt.Sprintf("retry, or allow more time with -%s (now %s)", s.flag, s.limit), "%v", s)
}

// watchdog cancels a call's context when the server stays silent longer
// than a limit. Its timer runs only while the call waits for the server
// (the response headers, a read of the body), so the time the caller takes
// with the events does not count. It starts no goroutine of its own: the
// timer's function runs only when a limit passes, and only cancels.
type watchdog struct {
	cancel context.CancelCauseFunc

	mu    sync.Mutex
	timer *time.Timer
	// wait is the wait the timer runs for; fire cancels with it.
	wait silence
}

// newWatchdog returns a watchdog that cancels with cancel.
func newWatchdog(cancel context.CancelCauseFunc) *watchdog {
	return &watchdog{cancel: cancel}
}

// arm starts the clock for a wait of at most limit; a limit of 0 is none.
func (w *watchdog) arm(limit time.Duration, what, flag string) {
	if limit <= 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.wait = silence{what: what, limit: limit, flag: flag}
	if w.timer == nil {
		w.timer = time.AfterFunc(limit, w.fire)
		return
	}
	w.timer.Reset(limit)
}

// disarm stops the clock: the server answered.
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

// wireFactor is how many times the reply's size limit a response body may
// hold on the wire. The events that carry a reply weigh far more than its
// text (an OpenAI chunk of about 200 bytes carries one token), but no
// healthy server comes near this; a server that floods the stream with
// events that carry no text (empty deltas, pings) is cut off.
const wireFactor = 64

// errWireLimit is the error a watched body's Read returns once the body has
// passed its size limit; the call's httpCapture records it.
var errWireLimit = errors.New("the response body passed its size limit")

// watchedBody is a response body whose reads are watched for silence and
// counted.
type watchedBody struct {
	io.ReadCloser
	w     *watchdog
	limit time.Duration
	// maxRead, when > 0, is the most the body may hold; overflow is set
	// when it held more.
	maxRead  int64
	overflow *bool
	// read counts the bytes read so far.
	read int64
}

// Read reads from the body with the watchdog's clock running.
func (b *watchedBody) Read(p []byte) (int, error) {
	if b.maxRead > 0 && b.read > b.maxRead {
		*b.overflow = true
		return 0, errWireLimit
	}
	what := "more of the reply (the stream stalled)"
	if b.read == 0 {
		what = "the first byte of the reply after its headers"
	}
	b.w.arm(b.limit, what, FlagIdleTimeout)
	n, err := b.ReadCloser.Read(p)
	b.w.disarm()
	b.read += int64(n)
	return n, err
}

// Close stops the clock and closes the body.
func (b *watchedBody) Close() error {
	b.w.disarm()
	return b.ReadCloser.Close()
}
