package llm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// maxErrorBody bounds how much of an error response body is kept.
const maxErrorBody = 64 << 10

// maxDetail bounds the length of the server's text quoted in an LLMError.
const maxDetail = 500

// maxRetryAfter caps the delay a server may ask for.
const maxRetryAfter = 24 * time.Hour

// httpCapture records what happened on the wire during one call, and
// watches it for silence. Its middleware runs on the goroutine that calls
// the SDK, so it needs no lock.
type httpCapture struct {
	// requests counts the HTTP requests sent.
	requests int
	// status is the status code of the last response, or 0.
	status int
	// header holds the headers of the last response.
	header http.Header
	// body is the start of the last error response's body.
	body []byte
	// foreign, when set, says that the server does not speak the API.
	foreign *foreignReply
	// overflow says that the response body passed wireFactor times the
	// reply's size limit.
	overflow bool

	// watch, when set, limits the server's silences and the reply's
	// duration to lim's timeouts; idle measures the reply's silence.
	watch *watchdog
	lim   limits
	idle  idleClock
}

// middleware records the request and its response. It reads the body of an
// error response (status >= 400) and puts an unread copy back for the SDK;
// it tells a server that does not speak the API by its response; and it
// runs the watchdog's clock while the server is awaited. Its signature is
// that of both SDKs' option.Middleware.
func (c *httpCapture) middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	c.requests++
	if c.watch != nil {
		c.watch.arm(c.lim.header, silence{what: "the response headers", limit: c.lim.header, flag: FlagHeaderTimeout})
	}
	res, err := next(req)
	if c.watch != nil {
		c.watch.disarm()
		if res != nil {
			c.watch.limitReply(c.lim.reply)
		}
	}
	if err != nil || res == nil {
		return res, err
	}
	c.status = res.StatusCode
	c.header = res.Header.Clone()
	if res.Body == nil {
		return res, nil
	}
	if c.watch != nil {
		c.idle = idleClock{limit: c.lim.idle}
		res.Body = &watchedBody{ReadCloser: res.Body, w: c.watch, clock: &c.idle,
			maxRead: int64(c.lim.maxReply) * wireFactor, overflow: &c.overflow}
	}
	ct := res.Header.Get("Content-Type")
	if res.StatusCode >= 400 {
		b, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
		_ = res.Body.Close()
		c.body = b
		res.Body = io.NopCloser(bytes.NewReader(b))
		if f, ok := foreignError(res.StatusCode, ct, b); ok {
			c.foreign = f
		}
		return res, nil
	}
	if res.StatusCode >= 200 && res.StatusCode < 300 {
		body, f := sniffSuccess(res.StatusCode, ct, res.Body)
		if f != nil {
			_ = body.Close()
			c.foreign = f
			return nil, errNotAPI
		}
		res.Body = body
	}
	return res, nil
}

// apiFailure is an error the API reported, over HTTP or inside the stream,
// in a provider-neutral form.
type apiFailure struct {
	// status is the HTTP status; 0 for an error event inside a stream.
	status int
	// body is the error's JSON (or text) as the server sent it.
	body []byte
	// header holds the response headers, for retry-after and request ids.
	header http.Header
}

// errorInfo is what an error body says.
type errorInfo struct {
	typ     string // e.g. "overloaded_error", "invalid_request_error"
	message string
	code    string // e.g. "invalid_api_key", or "500" from llama.cpp and vLLM
}

// parseErrorBody reads the error envelopes of Anthropic
// ({"type":"error","error":{"type":..,"message":..}}), OpenAI and llama.cpp
// ({"error":{"message":..,"type":..,"code":..}}), vLLM
// ({"object":"error","message":..,"type":..,"code":400}) and
// {"error":"text"}. A body that is not JSON becomes the message.
func parseErrorBody(body []byte) errorInfo {
	type inner struct {
		Type    string          `json:"type"`
		Message string          `json:"message"`
		Code    json.RawMessage `json:"code"`
	}
	var outer struct {
		inner
		Error json.RawMessage `json:"error"`
	}
	trimmed := bytes.TrimSpace(body)
	if err := json.Unmarshal(trimmed, &outer); err != nil {
		return errorInfo{message: string(trimmed)}
	}
	info := errorInfo{typ: outer.Type, message: outer.Message, code: rawCode(outer.Code)}
	if len(outer.Error) > 0 {
		var in inner
		var text string
		switch {
		case json.Unmarshal(outer.Error, &in) == nil:
			info = errorInfo{typ: in.Type, message: in.Message, code: rawCode(in.Code)}
		case json.Unmarshal(outer.Error, &text) == nil:
			info = errorInfo{message: text}
		}
	}
	if info.typ == "error" { // Anthropic's envelope type, not the error's
		info.typ = ""
	}
	if info.message == "" && info.typ == "" {
		info.message = string(trimmed)
	}
	return info
}

// rawCode returns a JSON string or number as text, and "" for anything else.
func rawCode(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// kindForStatus classifies an HTTP status.
func kindForStatus(status int) chat.ErrorKind {
	switch {
	case status == 529:
		return chat.ErrOverloaded
	case status == http.StatusTooManyRequests:
		return chat.ErrRateLimited
	case status == http.StatusRequestTimeout:
		return chat.ErrTimeout
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return chat.ErrAuth
	case status == http.StatusBadRequest || status == http.StatusNotFound ||
		status == http.StatusRequestEntityTooLarge || status == http.StatusUnprocessableEntity:
		return chat.ErrInvalidRequest
	case status >= 500 && status <= 599:
		return chat.ErrServer
	}
	return chat.ErrOther
}

// kindForType classifies an error type or code named in an error body.
func kindForType(typ string) (chat.ErrorKind, bool) {
	switch strings.ToLower(typ) {
	case "overloaded_error", "overloaded":
		return chat.ErrOverloaded, true
	case "rate_limit_error", "rate_limit_exceeded", "ratelimiterror":
		return chat.ErrRateLimited, true
	case "api_error", "server_error", "internal_error", "internalservererror":
		return chat.ErrServer, true
	case "timeout_error", "timeout":
		return chat.ErrTimeout, true
	case "authentication_error", "permission_error", "invalid_api_key", "authenticationerror", "permissiondeniederror":
		return chat.ErrAuth, true
	case "invalid_request_error", "not_found_error", "request_too_large", "badrequesterror", "notfounderror",
		"context_length_exceeded", "model_not_found":
		return chat.ErrInvalidRequest, true
	case "billing_error", "insufficient_quota":
		return chat.ErrOther, true
	}
	return "", false
}

// classifyAPI turns an error the API reported into an LLMError.
func classifyAPI(provider string, f apiFailure, now time.Time) chat.LLMError {
	info := parseErrorBody(f.body)
	var kind chat.ErrorKind
	if f.status >= 400 {
		kind = kindForStatus(f.status)
		// Anthropic may report overload with another status; a quota that is
		// used up is not worth retrying even though it comes as a 429.
		if k, ok := kindForType(info.typ); ok && (k == chat.ErrOverloaded || info.typ == "insufficient_quota") {
			kind = k
		} else if k, ok := kindForType(info.code); ok && info.code == "insufficient_quota" {
			kind = k
		}
	} else {
		// An error event inside a stream that started with 200 OK.
		kind = chat.ErrServer
		if n, err := strconv.Atoi(info.code); err == nil && n >= 400 {
			kind = kindForStatus(n)
		} else if k, ok := kindForType(info.typ); ok {
			kind = k
		} else if k, ok := kindForType(info.code); ok {
			kind = k
		}
	}

	var detail strings.Builder
	detail.WriteString(provider + ": ")
	if f.status < 400 {
		detail.WriteString("error event in the stream: ")
	}
	if info.typ != "" {
		detail.WriteString(info.typ + ": ")
	}
	msg := info.message
	if !json.Valid(bytes.TrimSpace(f.body)) {
		// A page from a proxy, or text: only its start, as text.
		msg = excerpt(mediaType(f.header.Get("Content-Type")), f.body)
	}
	if strings.TrimSpace(msg) == "" {
		msg = http.StatusText(f.status)
	}
	detail.WriteString(truncate(oneLine(msg), maxDetail))
	if info.code != "" && info.code != info.typ {
		detail.WriteString(" (code " + info.code + ")")
	}
	for _, h := range []string{"request-id", "x-request-id"} {
		if id := f.header.Get(h); id != "" {
			detail.WriteString(" (request " + id + ")")
			break
		}
	}
	e := chat.LLMError{Kind: kind, Message: withHint(detail.String(), kind, provider)}
	if f.status >= 400 {
		e.StatusCode = f.status
	}
	e.RetryAfter = retryAfter(f.header, now)
	return e
}

// classifyTransport classifies an error that is not one the API reported:
// the connection, a timeout, or a stream that could not be decoded. sent
// says whether the request went out at all.
func classifyTransport(provider string, err error, sent, streaming bool) chat.LLMError {
	var kind chat.ErrorKind
	var netErr net.Error
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) ||
		(errors.As(err, &netErr) && netErr.Timeout()):
		kind = chat.ErrTimeout
	case errors.As(err, &syntaxErr) || errors.As(err, &typeErr) || errors.Is(err, bufio.ErrTooLong):
		kind = chat.ErrMalformed
	case !sent:
		kind = chat.ErrOther
	default:
		kind = chat.ErrNetwork
	}
	what := ""
	switch {
	case !sent && kind == chat.ErrOther:
		what = "could not send the request: "
	case streaming && kind == chat.ErrMalformed:
		what = "could not parse a stream event: "
	case streaming:
		what = "reading the stream: "
	}
	msg := provider + ": " + what + truncate(oneLine(err.Error()), maxDetail)
	return chat.LLMError{Kind: kind, Message: withHint(msg, kind, provider)}
}

// withHint appends what to do about an error of the given kind.
func withHint(msg string, kind chat.ErrorKind, provider string) string {
	var hint string
	switch kind {
	case chat.ErrRateLimited:
		hint = "the provider is rate limiting: wait before retrying"
	case chat.ErrOverloaded:
		hint = "the provider is overloaded: retry later"
	case chat.ErrServer:
		hint = "the provider had a server error: retry later"
	case chat.ErrTimeout:
		hint = "the call timed out: retry, or allow it more time"
	case chat.ErrNetwork:
		hint = "the connection failed or was cut: check the network and the base URL (" + baseURLSettings(provider) + "), then retry"
	case chat.ErrMalformed:
		hint = "the reply could not be parsed: retry, and check that the base URL (" + baseURLSettings(provider) +
			") points at a server that speaks the " + provider + " API"
	case chat.ErrAuth:
		hint = "check the API key (" + strings.ToUpper(provider) + "_API_KEY) and its permissions"
	case chat.ErrInvalidRequest:
		hint = "fix the request (model name, max tokens, messages, tool schemas)"
	default:
		hint = "not retried: check the provider's message"
	}
	return msg + "; " + hint
}

// baseURLSettings names the settings of a provider's base URL: the flag
// and the environment variable.
func baseURLSettings(provider string) string {
	return "-" + FlagBaseURL + " or " + strings.ToUpper(provider) + "_BASE_URL"
}

// retryAfter returns the delay the server asked for in the retry-after-ms or
// retry-after (seconds or HTTP date) header, or 0.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && !math.IsInf(ms, 0) {
			return clampDelay(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("retry-after"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs < 0 || math.IsInf(secs, 0) {
			return 0
		}
		return clampDelay(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return min(d, maxRetryAfter)
		}
	}
	return 0
}

// clampDelay converts nanoseconds to a Duration no longer than maxRetryAfter.
func clampDelay(ns float64) time.Duration {
	if math.IsNaN(ns) || ns <= 0 {
		return 0
	}
	if ns >= float64(maxRetryAfter) {
		return maxRetryAfter
	}
	return time.Duration(ns)
}

// oneLine collapses runs of white space, newlines included, into one space,
// and drops control characters and the characters that reorder text
// (bidirectional overrides), so that a server's text shows as it is.
func oneLine(s string) string {
	clean := strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\v':
			return ' '
		case unicode.IsControl(r), r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069, r == utf8.RuneError:
			return -1
		}
		return r
	}, s)
	return strings.Join(strings.Fields(clean), " ")
}

// truncate shortens s to at most n runes, marking the cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// errorf returns an LLMError of the given kind with a formatted message and
// the kind's hint.
func errorf(provider string, kind chat.ErrorKind, format string, args ...any) chat.LLMError {
	return chat.LLMError{Kind: kind, Message: withHint(provider+": "+fmt.Sprintf(format, args...), kind, provider)}
}

// errorHint returns an LLMError of the given kind with a formatted message
// and a hint of its own in place of the kind's.
func errorHint(provider string, kind chat.ErrorKind, hint, format string, args ...any) chat.LLMError {
	return chat.LLMError{Kind: kind, Message: provider + ": " + fmt.Sprintf(format, args...) + "; " + hint}
}
