package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// call is the state one Stream call shares between the provider code and
// the bookkeeping common to both providers.
type call struct {
	provider string
	// baseURL is the API's root as the user gave it, for messages.
	baseURL string
	// parent is the caller's context; ctx, derived from it, is the one the
	// request runs under, which the watchdog cancels when the server is
	// silent too long.
	parent context.Context
	ctx    context.Context
	emit   func(Event)
	log    *slog.Logger
	sc     scrubber
	lim    limits
	wire   httpCapture
	start  time.Time
	// replyBytes counts the bytes of text, thinking, tool names, call IDs
	// and tool arguments the reply has streamed so far.
	replyBytes int
	// usage is the usage the server has reported so far; outputCounted
	// says that it counted the reply's output (Anthropic's message_delta,
	// OpenAI's usage chunk), not only its prompt.
	usage         chat.Usage
	outputCounted bool
	// inEmit is set while the caller's emit runs, so that a panic of the
	// caller's own is passed on rather than taken for bad server input.
	inEmit bool
}

// newCall returns the state of one call of the named provider.
func newCall(ctx context.Context, provider, baseURL string, emit func(Event), log *slog.Logger, sc scrubber, lim limits) *call {
	return &call{provider: provider, baseURL: baseURL, parent: ctx, ctx: ctx, emit: emit, log: log, sc: sc, lim: lim}
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

// grow counts n more bytes of the reply, and fails the call when the reply
// has passed its size limit.
func (c *call) grow(n int) error {
	c.replyBytes += n
	if c.lim.maxReply > 0 && c.replyBytes > c.lim.maxReply {
		return &failure{err: c.tooLarge("the reply passed the limit of %d bytes of text and tool call arguments, and was cut off",
			c.lim.maxReply)}
	}
	return nil
}

// progress notes that the reply grew: its idle clock starts again.
func (c *call) progress() { c.wire.idle.progress() }

// checkToolCall fails the call when a tool call's name or ID is longer
// than any a healthy server sends. It is called before the call is passed
// on, so that no one shows or keeps the oversized name.
func (c *call) checkToolCall(id, name string) error {
	check := func(what, v string, limit int) error {
		if len(v) <= limit {
			return nil
		}
		return &failure{err: errorHint(c.provider, chat.ErrOther,
			fmt.Sprintf("not retried: the server or its model is broken; check -%s and the base URL (%s)", FlagModel, baseURLSettings(c.provider)),
			"the reply has a tool call whose %s is %d bytes long (%q), more than the %d bytes a tool call %s may have",
			what, len(v), truncate(oneLine(v), 40), limit, what)}
	}
	if err := check("name", name, MaxToolNameBytes); err != nil {
		return err
	}
	return check("ID", id, MaxCallIDBytes)
}

// usageSoFar returns what the call is known to have used: the usage the
// server reported, with the output estimated from the reply's bytes when
// the server has not counted it yet.
func (c *call) usageSoFar() chat.Usage {
	u := c.usage
	if !c.outputCounted {
		u.OutputTokens = max(u.OutputTokens, TokensOf(c.replyBytes))
	}
	return u
}

// tooLarge returns the error of a reply that passed its size limit: not
// retried, since the same request may well run away again.
func (c *call) tooLarge(format string, args ...any) chat.LLMError {
	return errorHint(c.provider, chat.ErrOther,
		fmt.Sprintf("if so long a reply is expected, raise the limit with -%s (now %d bytes)", FlagMaxReply, c.lim.maxReply),
		format, args...)
}

// run runs body, which streams the reply and sends the deltas, and ends the
// call as the [Provider] contract says: exactly one Completed or Failed, or
// ctx.Err() without either when ctx was cancelled.
func (c *call) run(req chat.Request, body func() (chat.Response, error)) (ret error) {
	c.start = time.Now()
	ctx, cancel := context.WithCancelCause(c.parent)
	c.ctx = ctx
	c.wire.watch = newWatchdog(cancel)
	c.wire.lim = c.lim
	defer func() {
		c.wire.watch.stop()
		cancel(nil)
	}()
	c.log.DebugContext(c.parent, "llm call", "provider", c.provider, "model", req.Model,
		"messages", len(req.Messages), "tools", len(req.Tools))
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if c.inEmit {
			panic(r)
		}
		if errors.Is(c.parent.Err(), context.Canceled) {
			ret = c.parent.Err()
			return
		}
		// The panic is reported as the Failed event; its stack is for a
		// developer, who turns debug logs on.
		c.log.DebugContext(c.parent, "llm call panicked", "provider", c.provider,
			"panic", c.sc.scrub(fmt.Sprint(r)), "stack", string(debug.Stack()))
		c.finishErr(errorf(c.provider, chat.ErrMalformed, "the SDK failed on the server's reply: %v", r))
		ret = nil
	}()

	resp, err := body()
	if err == nil {
		c.log.DebugContext(c.parent, "llm reply", "provider", c.provider, "model", req.Model,
			"stop_reason", resp.StopReason, "tool_calls", len(resp.Message.ToolCalls),
			"input_tokens", resp.Usage.InputTokens, "output_tokens", resp.Usage.OutputTokens,
			"cache_creation_input_tokens", resp.Usage.CacheCreationInputTokens,
			"cache_read_input_tokens", resp.Usage.CacheReadInputTokens,
			"reasoning_tokens", resp.Usage.ReasoningTokens,
			"reply_bytes", c.replyBytes, "duration", time.Since(c.start))
		c.send(Completed{Response: resp})
		return nil
	}
	if errors.Is(c.parent.Err(), context.Canceled) {
		c.log.DebugContext(c.parent, "llm call cancelled", "provider", c.provider, "model", req.Model)
		return c.parent.Err()
	}
	c.finishErr(c.classify(err))
	return nil
}

// finishErr sends e as the Failed event. It is logged at debug level only:
// the caller shows the failure, and one failure is shown once.
func (c *call) finishErr(e chat.LLMError) {
	e.Usage = c.usageSoFar()
	ev := c.sc.fail(e)
	c.log.DebugContext(c.parent, "llm call failed", "provider", c.provider,
		"kind", string(ev.Err.Kind), "status", ev.Err.StatusCode, "retry_after", ev.Err.RetryAfter,
		"requests", c.wire.requests, "reply_bytes", c.replyBytes, "duration", time.Since(c.start),
		"input_tokens", ev.Err.Usage.InputTokens, "output_tokens", ev.Err.Usage.OutputTokens,
		"error", ev.Err.Message)
	c.send(ev)
}

// classify turns what body returned into an LLMError: a failure as it is;
// a server that does not speak the API, or that went silent, as such; an
// API error from its status and body; anything else from its nature.
func (c *call) classify(err error) chat.LLMError {
	var f *failure
	if errors.As(err, &f) {
		return f.err
	}
	if c.wire.foreign != nil {
		return c.wire.foreign.llmError(c.provider, shownURL(c.baseURL))
	}
	if c.wire.overflow {
		return c.tooLarge("the server sent more than %d bytes for one reply (%d times the reply's limit), and was cut off",
			c.lim.maxReply*wireFactor, wireFactor)
	}
	if c.parent.Err() == nil {
		var quiet *silence
		var late *overtime
		switch cause := context.Cause(c.ctx); {
		case errors.As(cause, &quiet):
			return quiet.llmError(c.provider)
		case errors.As(cause, &late):
			return late.llmError(c.provider)
		}
	}
	if api, ok := apiFailureOf(err, &c.wire); ok {
		return classifyAPI(c.provider, api, time.Now())
	}
	if errors.Is(c.parent.Err(), context.DeadlineExceeded) && !errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("%w: %w", c.parent.Err(), err)
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
