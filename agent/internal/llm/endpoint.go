package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"mime"
	"net/http"
	"regexp"
	"strings"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// maxExcerpt bounds, in runes, the server's text quoted when the server does
// not speak the API.
const maxExcerpt = 120

// maxSniff bounds how much of a successful response's body is read to tell
// whether it is an event stream.
const maxSniff = 512

// errNotAPI is what the middleware returns to the SDK for a successful
// response that is not the API's; the call's [httpCapture] says why.
var errNotAPI = errors.New("the server's response is not the API's")

// foreignReply describes a response from a server that does not speak the
// provider's API: a web server, a proxy's page, the wrong path.
type foreignReply struct {
	status      int
	contentType string
	// excerpt is the start of the body's text, made safe to show.
	excerpt string
}

// llmError classifies the reply: not retried, since asking the same server
// again gives the same page; the message names the base URL, what came back
// and the settings to fix.
func (f *foreignReply) llmError(provider, baseURL string) chat.LLMError {
	api := "an Anthropic Messages API endpoint"
	extra := ""
	tried := strings.TrimRight(baseURL, "/") + "/v1/messages"
	if provider == NameOpenAI {
		api = "an OpenAI chat completions API endpoint"
		extra = " (a local server's base URL usually ends in /v1)"
		tried = strings.TrimRight(baseURL, "/") + "/chat/completions"
	}
	what := fmt.Sprintf("HTTP %d", f.status)
	if f.contentType != "" {
		what += ", " + f.contentType
	} else {
		what += ", no content type"
	}
	if f.excerpt != "" {
		what += fmt.Sprintf(": %q", f.excerpt)
	}
	e := errorHint(provider, chat.ErrInvalidRequest,
		fmt.Sprintf("check %s%s, and -%s", baseURLSettings(provider), extra, FlagProvider),
		"the base URL %s does not look like %s (%s from %s)", baseURL, api, what, tried)
	if f.status >= 400 {
		e.StatusCode = f.status
	}
	return e
}

// mediaType returns the media type of a Content-Type header, lower case,
// without its parameters.
func mediaType(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt, _, _ = strings.Cut(contentType, ";")
	}
	return strings.ToLower(strings.TrimSpace(mt))
}

// isHTML reports whether a media type is a web page's.
func isHTML(mt string) bool { return mt == "text/html" || mt == "application/xhtml+xml" }

// isJSON reports whether a media type is JSON's.
func isJSON(mt string) bool { return mt == "application/json" || strings.HasSuffix(mt, "+json") }

// foreignError reports whether an error response (status >= 400) comes from
// a server that does not speak the API, and describes it. A status the API
// itself uses for a request it refuses keeps its meaning when the body is
// an error of the API's shape; so do the statuses a proxy in front of the
// API sends for a passing trouble (408, 429, 5xx other than 501), which
// are retried.
func foreignError(status int, contentType string, body []byte) (*foreignReply, bool) {
	if apiShaped(body) {
		return nil, false
	}
	mt := mediaType(contentType)
	switch {
	case status == http.StatusNotFound, status == http.StatusMethodNotAllowed, status == http.StatusNotImplemented:
	case status >= 400 && status < 500 && status != http.StatusRequestTimeout && status != http.StatusTooManyRequests && isHTML(mt):
	default:
		return nil, false
	}
	return &foreignReply{status: status, contentType: mt, excerpt: excerpt(mt, body)}, true
}

// apiShaped reports whether body is an error of the shape the providers
// and the compatible servers send: {"error": ...}, {"type": "error", ...}
// or vLLM's {"object": "error", ...}.
func apiShaped(body []byte) bool {
	var env struct {
		Error   json.RawMessage `json:"error"`
		Type    string          `json:"type"`
		Object  string          `json:"object"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(bytes.TrimSpace(body), &env) != nil {
		return false
	}
	hasError := len(env.Error) > 0 && string(env.Error) != "null"
	return hasError || env.Type == "error" || env.Object == "error" || (env.Message != "" && env.Type != "")
}

// sniffSuccess checks the body of a successful response that says it is
// neither an event stream nor JSON. A web page is never the API's. Any
// other body is read up to its first line: when that line is not an event
// stream's, the server does not speak the API. Otherwise body is returned
// whole, the bytes read put back in front, for the SDK to decode.
func sniffSuccess(status int, contentType string, body io.ReadCloser) (io.ReadCloser, *foreignReply) {
	mt := mediaType(contentType)
	if mt == "text/event-stream" || isJSON(mt) {
		return body, nil
	}
	if isHTML(mt) {
		b, _ := io.ReadAll(io.LimitReader(body, maxErrorBody))
		return body, &foreignReply{status: status, contentType: mt, excerpt: excerpt(mt, b)}
	}
	head := make([]byte, 0, maxSniff)
	for len(head) < maxSniff {
		n, err := body.Read(head[len(head):maxSniff])
		head = head[:len(head)+n]
		if err != nil || bytes.IndexByte(bytes.TrimLeft(head, " \t\r\n"), '\n') >= 0 {
			break
		}
	}
	if looksLikeEvents(head) {
		return struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(head), body), body}, nil
	}
	return body, &foreignReply{status: status, contentType: mt, excerpt: excerpt(mt, head)}
}

// looksLikeEvents reports whether the start of a body is that of an event
// stream: its first line names a field of one, or is a comment.
func looksLikeEvents(head []byte) bool {
	line := bytes.TrimLeft(head, " \t\r\n\ufeff")
	if len(line) == 0 {
		return false // an empty body: the stream code reports it
	}
	for _, field := range []string{"data:", "event:", "id:", "retry:", ":"} {
		if bytes.HasPrefix(line, []byte(field)) {
			return true
		}
	}
	return false
}

// htmlNoise matches what a page holds that is not the text of its body:
// its head (whose title the body repeats), scripts, styles, comments and
// tags.
var htmlNoise = regexp.MustCompile(`(?is)<head\b.*?</head\s*>|<script\b.*?</script\s*>|<style\b.*?</style\s*>|<!--.*?-->|<[^>]*>`)

// htmlTitle matches a page's title.
var htmlTitle = regexp.MustCompile(`(?is)<title\b[^>]*>(.*?)</title\s*>`)

// excerpt returns the start of a body's text, safe to show on one line: a
// web page's text without its markup (its title when its body has none),
// no control characters, at most maxExcerpt runes.
func excerpt(mediaType string, body []byte) string {
	text := string(body)
	if isHTML(mediaType) || bytes.HasPrefix(bytes.TrimSpace(body), []byte("<")) {
		text = oneLine(html.UnescapeString(htmlNoise.ReplaceAllString(text, " ")))
		if m := htmlTitle.FindStringSubmatch(string(body)); text == "" && m != nil {
			text = html.UnescapeString(m[1])
		}
	}
	return truncate(oneLine(text), maxExcerpt)
}
