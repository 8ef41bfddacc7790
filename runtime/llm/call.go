package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/chat"
)

// call is the state one Stream call shares between the provider code and
// the bookkeeping common to both providers.
type call struct {
	provider string
	ctx      context.Context
	emit     func(Event)
	log      *slog.Logger
	sc       scrubber
	wire     httpCapture
	start    time.Time
	// inEmit is set while the caller's emit runs, so that a panic of the
	// caller's own is passed on rather than taken for bad server input.
	inEmit bool
}

// failure is an error already classified by the provider code.
type failure struct{ err chat.LLMError }

func (f *failure) Error() string { return f.err.Error() }

// fail returns a classified error for the provider code to return.
func (c *call) fail(kind chat.ErrorKind, format string, args ...any) error {
	return &failure{err: errorf(c.provider, kind, format, args...)}
}

// send passes one event to the caller.
func (c *call) send(ev Event) {
	c.inEmit = true
	c.emit(ev)
	c.inEmit = false
}

// run runs body, which streams the reply and sends the deltas, and ends the
// call as the [Provider] contract says: exactly one Completed or Failed, or
// ctx.Err() without either when ctx was cancelled.
func (c *call) run(req chat.Request, body func() (chat.Response, error)) (ret error) {
	c.start = time.Now()
	c.log.DebugContext(c.ctx, "llm call", "provider", c.provider, "model", req.Model,
		"messages", len(req.Messages), "tools", len(req.Tools))
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if c.inEmit {
			panic(r)
		}
		if errors.Is(c.ctx.Err(), context.Canceled) {
			ret = c.ctx.Err()
			return
		}
		c.log.ErrorContext(c.ctx, "llm call panicked", "provider", c.provider,
			"panic", c.sc.scrub(fmt.Sprint(r)), "stack", string(debug.Stack()))
		c.finishErr(errorf(c.provider, chat.ErrMalformed, "the SDK failed on the server's reply: %v", r))
		ret = nil
	}()

	resp, err := body()
	if err == nil {
		c.log.DebugContext(c.ctx, "llm reply", "provider", c.provider, "model", req.Model,
			"stop_reason", resp.StopReason, "tool_calls", len(resp.Message.ToolCalls),
			"input_tokens", resp.Usage.InputTokens, "output_tokens", resp.Usage.OutputTokens,
			"duration", time.Since(c.start))
		c.send(Completed{Response: resp})
		return nil
	}
	if errors.Is(c.ctx.Err(), context.Canceled) {
		c.log.DebugContext(c.ctx, "llm call cancelled", "provider", c.provider, "model", req.Model)
		return c.ctx.Err()
	}
	c.finishErr(c.classify(err))
	return nil
}

// finishErr logs e and sends it as the Failed event.
func (c *call) finishErr(e chat.LLMError) {
	ev := c.sc.fail(e)
	c.log.WarnContext(c.ctx, "llm call failed", "provider", c.provider,
		"kind", string(ev.Err.Kind), "status", ev.Err.StatusCode, "retry_after", ev.Err.RetryAfter,
		"requests", c.wire.requests, "duration", time.Since(c.start), "error", ev.Err.Message)
	c.send(ev)
}

// classify turns what body returned into an LLMError: a failure as it is,
// an API error from its status and body, anything else from its nature.
func (c *call) classify(err error) chat.LLMError {
	var f *failure
	if errors.As(err, &f) {
		return f.err
	}
	if api, ok := apiFailureOf(err, &c.wire); ok {
		return classifyAPI(c.provider, api, time.Now())
	}
	if errors.Is(c.ctx.Err(), context.DeadlineExceeded) && !errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("%w: %w", c.ctx.Err(), err)
	}
	streaming := c.wire.status >= 200 && c.wire.status < 300
	return classifyTransport(c.provider, err, c.wire.requests > 0, streaming)
}

// cutShort reports a stream that ended cleanly before its final event
// (named by final) after the given number of events. A reply that was no
// event stream at all is malformed: the server does not speak the API.
func (c *call) cutShort(events int, final string) error {
	ct := c.wire.header.Get("Content-Type")
	if events == 0 && !strings.Contains(strings.ToLower(ct), "event-stream") {
		return c.fail(chat.ErrMalformed, "the server answered with content type %q and no stream events", ct)
	}
	return c.fail(chat.ErrNetwork, "the stream ended before %s, after %d events", final, events)
}
