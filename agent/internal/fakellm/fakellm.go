// Package fakellm provides local fake LLM servers for the tests of the
// agent (its packages and agent/app): one speaks Anthropic's Messages API streaming
// wire format (server-sent events), the other OpenAI's chat completions
// chunks. Each answers its requests from a
// script, one [Reply] per request in order, and records every request so
// a test can check what the agent sent.
//
// The servers are the real HTTP edge of the agent: the official SDKs talk
// to them exactly as they would talk to the providers.
//
// Besides good replies and the providers' errors, a Reply can reproduce a
// broken server:
//
//	Reply{Text: "la", Forever: true}   // text deltas without end
//	Reply{Forever: true}               // empty deltas without end
//	Reply{Pings: true}                 // the reply's start, then keep-alives without end
//	Reply{Text: "Hi", Pings: true}     // some text, then keep-alives without end
//	Reply{Text: "la", Forever: true, Every: time.Second} // a slow trickle of text
//	Reply{HeadersOnly: true}           // the stream's headers, then silence
//	Reply{NoHeaders: true}             // silence from the start
//	Reply{Text: "Hi", Stall: true}     // some text, then silence
//	Reply{Page: 501}                   // a web server's HTML error page
//	Reply{Body: "hello", ContentType: "text/plain"} // any other answer
//	Reply{Text: "Hi", Usage: &chat.Usage{...}}      // usage with cache figures
//	Reply{Text: "The first half", AtLimit: true}    // a reply cut at its token limit
//	Reply{Thinking: "Let me see.", Text: "Hi"}      // thinking (Anthropic) or reasoning_content (OpenAI) first
//
// [Server.Bill] makes a server bill its requests as the provider does,
// prompt cache included, and record what it billed (Request.Billed).
//
// [NewWebServer] starts a plain web server that answers every request with
// an HTML page, as `python -m http.server` answers a POST.
package fakellm

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// Provider names the wire format a server speaks.
type Provider string

// The wire formats.
const (
	Anthropic Provider = "anthropic"
	OpenAI    Provider = "openai"
)

// ToolCall is a tool call the fake model makes.
type ToolCall struct {
	ID   string
	Name string
	// Args is the JSON object of arguments; it is streamed in pieces.
	Args string
}

// Reply scripts the answer to one request.
type Reply struct {
	// Text is the assistant's text, streamed in deltas of a few words.
	Text string
	// ToolCalls are the tools the model asks for, in order.
	ToolCalls []ToolCall
	// Thinking, when set, is a thinking block the reply starts with,
	// streamed in deltas with a signature (Anthropic), or reasoning
	// streamed as reasoning_content before the text (OpenAI).
	Thinking string
	// RedactedThinking, when set, is the data of a redacted_thinking
	// block the reply has after Thinking's (Anthropic only).
	RedactedThinking string
	// AtLimit ends the reply as one cut at the token limit: stop reason
	// max_tokens (Anthropic), finish reason length (OpenAI).
	AtLimit bool

	// Status, when not 0 or 200, makes the reply an HTTP error with the
	// provider's error body.
	Status int
	// ErrorType is the provider's error type, e.g. "rate_limit_error" or
	// "overloaded_error"; a default is chosen from Status.
	ErrorType string
	// ErrorMessage is the error's message.
	ErrorMessage string
	// Header is added to the response, e.g. {"retry-after-ms": "20"}.
	Header map[string]string

	// CutAfter, when > 0, drops the connection after that many text
	// deltas, mid-stream.
	CutAfter int
	// Malformed sends an event that is not valid JSON after the text.
	Malformed bool
	// StreamError, when set, sends an error event of this type (Anthropic
	// only, e.g. "overloaded_error") after the text instead of finishing.
	StreamError string
	// Stall, after the text, keeps the stream open until the client goes
	// away.
	Stall bool
	// Forever, after the text, streams text deltas without end until the
	// client goes away: a runaway server. The deltas repeat the text's; with
	// no Text they are empty, a flood that carries no text at all.
	Forever bool
	// Pings, after the reply's start and its text, sends keep-alives
	// without end until the client goes away: a server that keeps the
	// connection busy while nothing of the reply comes. Anthropic's are
	// ping events and SSE comment lines (": ping") in turn; OpenAI's are
	// comment lines, as OpenAI-compatible servers and proxies send them.
	Pings bool
	// Every paces Forever's deltas and Pings' keep-alives: one each Every.
	// 0 sends Forever's as fast as the client reads them, and Pings' every
	// 10 ms.
	Every time.Duration
	// HeadersOnly sends the stream's status and headers (200,
	// text/event-stream), then nothing until the client goes away.
	HeadersOnly bool
	// NoHeaders sends nothing at all, not even the status, until the client
	// goes away.
	NoHeaders bool
	// Page, when not 0, answers as a web server that does not speak the
	// API, whatever the method and path: this HTTP status with an HTML page
	// (text/html), e.g. 501 as `python -m http.server` answers a POST, 404
	// or 405 as other web servers do, or 200 as a web app answers any path.
	Page int
	// Body, when set, is the whole answer, whatever the method and path,
	// sent with Status (200 when 0) and ContentType (text/plain when
	// empty): an answer of any other kind, e.g. a wrong content type.
	Body string
	// ContentType, when set, replaces the Content-Type of the answer: of
	// Body, or of a stream (whose events are still those of the provider).
	ContentType string
	// Usage, when set, is the usage the reply reports, in the provider's
	// wire format: Anthropic's message_start and message_delta usage (the
	// cache figures apart from input_tokens, the reasoning tokens as
	// output_tokens_details.thinking_tokens), OpenAI's final usage chunk
	// (prompt_tokens_details.cached_tokens and cache_write_tokens,
	// completion_tokens_details.reasoning_tokens). Its figures mean what
	// chat.Usage's mean. Nil reports 10 input and 20 output tokens.
	Usage *chat.Usage
	// Wait, when set, holds the answer until it is closed (or the client
	// goes away).
	Wait <-chan struct{}
	// Handler, when set, answers the request instead; the fields above are
	// ignored.
	Handler http.HandlerFunc
}

// Request is one request a server received.
type Request struct {
	// Path is the URL path, e.g. "/v1/messages".
	Path string
	// Header holds the request headers.
	Header http.Header
	// Body is the raw JSON body.
	Body []byte
	// Messages is the conversation the request carried, in a form common
	// to both providers.
	Messages []Message
	// System is the system prompt.
	System string
	// Tools names the tools offered.
	Tools []string
	// MaxTokens is the reply's limit the request asked for: max_tokens
	// (Anthropic, OpenAI-compatible servers) or max_completion_tokens.
	MaxTokens int
	// Thinking is the thinking budget (Anthropic's thinking.budget_tokens)
	// when the request enabled thinking.
	Thinking int
	// Breakpoints says where the request's cache_control marks are, in
	// order: "tools[i]", "system[i]", "messages[i].content[j]".
	Breakpoints []string
	// Billed is the usage the server billed the request with, when it
	// bills (see Server.Bill).
	Billed chat.Usage
	// InputTokens is the request's input as the server counts it when it
	// bills or checks a context window: [BytesPerToken] bytes a token of
	// each block of its JSON, rounded up, and one more.
	InputTokens int
	// Refused says that the server refused the request for passing its
	// context window (see Server.ContextWindow).
	Refused bool
	// Invalid says what the API would refuse in the request: an image
	// block it does not take (a media type its bytes are not, more than 5
	// MB of base64 for Anthropic, a URL that is not a base64 data URL).
	// Such a request is answered 400, with this message, and takes its
	// place in the script as a refused one does.
	Invalid string
}

// Message is a message of a request, in a form common to both providers:
// tool results are messages of role "tool".
type Message struct {
	Role       string
	Text       string
	ToolCalls  []ToolCall
	ToolCallID string
	IsError    bool
	// Thinking are the thinking blocks an assistant message carries back
	// (Anthropic), in order.
	Thinking []chat.Thinking
	// Images are the images a user message carries, decoded from their
	// blocks (Anthropic's image, OpenAI's image_url parts), in order.
	Images []chat.Image
}

// Server is a fake LLM API.
type Server struct {
	*httptest.Server
	// client, for a server of NewInMemory, is the client that reaches it.
	client   *http.Client
	provider Provider
	// web, when not 0, makes the server a web server answering every
	// request with this status and a page (NewWebServer).
	web int

	mu         sync.Mutex
	replies    []Reply
	respond    func(Request) Reply
	requests   []Request
	unexpected []string
	// bill and cache: see Bill.
	bill  bool
	cache map[[32]byte]bool
	// window: see ContextWindow.
	window int
}

// ContextWindow makes the server refuse, as Anthropic, OpenAI and vLLM
// do, with a 400 invalid request error, a request whose input and
// max_tokens together pass tokens; 0 turns the check off. The input is
// counted as billing counts it (see Request.InputTokens). A refused
// request is recorded (Request.Refused) and still takes its place in the
// script; the Respond function does not see it.
func (s *Server) ContextWindow(tokens int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.window = tokens
}

// refusal returns the error a provider answers a request with whose
// input and max_tokens pass the window, in its words.
func (s *Server) refusal(input, maxTokens int) Reply {
	msg := fmt.Sprintf("input length and `max_tokens` exceed context limit: %d + %d > %d, decrease input length or `max_tokens` and try again", input, maxTokens, s.window)
	if s.provider == OpenAI {
		msg = fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.", s.window, input+maxTokens, input, maxTokens)
	}
	return Reply{Status: http.StatusBadRequest, ErrorMessage: msg}
}

// New starts a fake server for provider that answers with replies, and
// closes it when the test ends. Requests beyond the script get a 400
// invalid request error, and are reported by Unexpected.
func New(t testing.TB, provider Provider, replies ...Reply) *Server {
	t.Helper()
	s := &Server{provider: provider, replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// NewWebServer starts a plain web server that speaks no LLM API: it
// answers every request, whatever its method and path, with status and an
// HTML page, as `python -m http.server` answers a POST with 501. It records
// the requests (Requests) and closes when the test ends.
func NewWebServer(t testing.TB, status int) *Server {
	t.Helper()
	s := &Server{web: status}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// BaseURL is the base URL to configure the provider's SDK with.
func (s *Server) BaseURL() string {
	if s.provider == OpenAI {
		return s.URL + "/v1"
	}
	return s.URL
}

// Add appends replies to the script.
func (s *Server) Add(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, replies...)
}

// Respond makes fn answer the requests that come after the script: it is
// given each request, parsed, and returns the reply. It lets a test serve
// a conversation whose requests it cannot count in advance (an agent
// killed and resumed at random moments sends some requests again). fn is
// called from the server's goroutines, one request at a time.
func (s *Server) Respond(fn func(Request) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.respond = fn
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Unexpected describes the requests that came after the script ran out.
func (s *Server) Unexpected() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.unexpected...)
}

// serve records the request and answers it from the script.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	parse(s.provider, &req)

	s.mu.Lock()
	if s.web == 0 && (s.bill || s.window > 0) {
		req.InputTokens = inputTokens(blocksOf(s.provider, body))
		req.Refused = s.window > 0 && req.InputTokens+req.MaxTokens > s.window
	}
	n := len(s.requests)
	s.requests = append(s.requests, req)
	var reply Reply
	ok := n < len(s.replies)
	switch {
	case s.web != 0:
		reply, ok = Reply{Page: s.web}, true
	case req.Refused:
		reply, ok = s.refusal(req.InputTokens, req.MaxTokens), true
	case req.Invalid != "":
		reply, ok = Reply{Status: http.StatusBadRequest, ErrorMessage: req.Invalid}, true
	case ok:
		reply = s.replies[n]
	case s.respond != nil:
		reply, ok = s.respond(req), true
	default:
		s.unexpected = append(s.unexpected, fmt.Sprintf("request %d to %s: no reply scripted", n+1, r.URL.Path))
	}
	if ok && s.bill && reply.Usage == nil && s.web == 0 && !req.Refused && req.Invalid == "" {
		out := len(reply.Text) + len(reply.Thinking)
		for _, tc := range reply.ToolCalls {
			out += len(tc.Args)
		}
		u := s.usageFor(body, out)
		reply.Usage = &u
		s.requests[n].Billed = u
	}
	s.mu.Unlock()

	if ok && reply.Wait != nil {
		select {
		case <-reply.Wait:
		case <-r.Context().Done():
			return
		}
	}
	wantPath := "/v1/messages"
	if s.provider == OpenAI {
		wantPath = "/v1/chat/completions"
	}
	switch {
	case !ok:
		s.fail(w, Reply{Status: http.StatusBadRequest, ErrorMessage: fmt.Sprintf("fakellm: no reply scripted for request %d", n+1)})
	case reply.NoHeaders:
		stall(r)
	case reply.Page != 0:
		page(w, r, reply)
	case reply.Body != "":
		plain(w, reply)
	case r.Method != http.MethodPost || r.URL.Path != wantPath:
		s.fail(w, Reply{Status: http.StatusNotFound, ErrorMessage: "fakellm: no such endpoint " + r.Method + " " + r.URL.Path})
	case reply.Handler != nil:
		reply.Handler(w, r)
	case reply.Status != 0 && reply.Status != http.StatusOK:
		s.fail(w, reply)
	case reply.HeadersOnly:
		_ = startSSE(w, reply).rc.Flush()
		stall(r)
	case s.provider == OpenAI:
		streamOpenAI(w, r, reply)
	default:
		streamAnthropic(w, r, reply)
	}
}

// page answers as a web server that does not speak the API: the reply's
// Page status with an HTML page, which has a title, a style and a script
// as real pages do.
func page(w http.ResponseWriter, r *http.Request, reply Reply) {
	for k, v := range reply.Header {
		w.Header().Set(k, v)
	}
	ct := reply.ContentType
	if ct == "" {
		ct = "text/html; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(reply.Page)
	text := http.StatusText(reply.Page)
	_, _ = fmt.Fprintf(w, `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>%[1]d %[2]s</title>
    <style>body { font-family: sans-serif; color: #333; }</style>
  </head>
  <body>
    <h1>%[1]d %[2]s</h1>
    <p>fakellm web server: no page for %[3]s %[4]s.</p>
    <script>console.log("this is a web page, not an API");</script>
  </body>
</html>
`, reply.Page, text, r.Method, r.URL.Path)
}

// plain answers with the reply's Body as it is.
func plain(w http.ResponseWriter, reply Reply) {
	for k, v := range reply.Header {
		w.Header().Set(k, v)
	}
	ct := reply.ContentType
	if ct == "" {
		ct = "text/plain; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	status := reply.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, reply.Body)
}

// defaultErrorType is the provider's error type for an HTTP status.
func defaultErrorType(p Provider, status int) string {
	if p == OpenAI {
		switch status {
		case 429:
			return "rate_limit_exceeded"
		case 400, 404:
			return "invalid_request_error"
		case 401:
			return "invalid_api_key"
		}
		return "server_error"
	}
	switch status {
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	case 400, 404:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	}
	return "api_error"
}

// fail writes an HTTP error with the provider's error body.
func (s *Server) fail(w http.ResponseWriter, reply Reply) {
	typ := reply.ErrorType
	if typ == "" {
		typ = defaultErrorType(s.provider, reply.Status)
	}
	msg := reply.ErrorMessage
	if msg == "" {
		msg = http.StatusText(reply.Status)
		if msg == "" {
			msg = "Overloaded"
		}
	}
	var body any
	if s.provider == OpenAI {
		body = map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": nil}}
	} else {
		body = map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
	}
	for k, v := range reply.Header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(reply.Status)
	_ = json.NewEncoder(w).Encode(body)
}
