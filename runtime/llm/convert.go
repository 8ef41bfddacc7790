package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	oaistream "github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/fsmgen/fsmgen/chat"
)

// emptySchema is the schema of a tool that takes no arguments.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// isJSONObject reports whether b is one valid JSON object.
func isJSONObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}

// argsOrEmpty returns the arguments as the LLM wrote them, or {} for none.
func argsOrEmpty(b []byte) json.RawMessage {
	if len(bytes.TrimSpace(b)) == 0 {
		return json.RawMessage("{}")
	}
	return json.RawMessage(bytes.Clone(b))
}

// toolSchema returns the JSON Schema of t's arguments to send, checked.
func toolSchema(t chat.ToolSpec) (json.RawMessage, error) {
	if t.Name == "" {
		return nil, errors.New("a tool offered to the model has no name")
	}
	if len(bytes.TrimSpace(t.InputSchema)) == 0 {
		return emptySchema, nil
	}
	if !isJSONObject(t.InputSchema) {
		return nil, fmt.Errorf("tool %q: its input schema is not a JSON object", t.Name)
	}
	return t.InputSchema, nil
}

// badArgsError reports tool arguments that are not a JSON object. When the
// reply stopped at the token limit (stopReason == limitReason) the arguments
// were cut off: the reply needs more tokens than the request allows.
func badArgsError(c *call, stopReason, limitReason, tool, raw string) error {
	if stopReason == limitReason {
		return &failure{err: errorHint(c.provider, chat.ErrInvalidRequest, "ask for a smaller step, or allow longer replies (max tokens)",
			"the reply reached the request's max tokens inside the arguments of tool %q, which were cut off (stop reason %s)",
			tool, stopReason)}
	}
	return c.fail(chat.ErrMalformed, "tool %q got arguments that are not a JSON object: %s",
		tool, truncate(oneLine(raw), 200))
}

// apiFailureOf recognises an error the API reported, as either SDK returns
// it, and falls back on the HTTP status the middleware saw.
func apiFailureOf(err error, wire *httpCapture) (apiFailure, bool) {
	var aerr *anthropic.Error
	if errors.As(err, &aerr) {
		f := apiFailure{status: aerr.StatusCode, body: []byte(aerr.RawJSON())}
		if aerr.Response != nil {
			f.header = aerr.Response.Header
		}
		if f.status >= 400 && len(wire.body) > 0 {
			f.body = wire.body
		}
		if f.status < 400 {
			f.status = 0 // an error event inside a 200 OK stream
		}
		return f, true
	}
	var oerr *openai.Error
	if errors.As(err, &oerr) {
		f := apiFailure{status: oerr.StatusCode, body: []byte(oerr.RawJSON()), header: wire.header}
		if oerr.Response != nil {
			f.header = oerr.Response.Header
		}
		if len(wire.body) > 0 {
			f.body = wire.body
		}
		return f, true
	}
	var serr *oaistream.StreamError
	if errors.As(err, &serr) {
		return apiFailure{body: serr.Event.Data, header: wire.header}, true
	}
	if wire.status >= 400 {
		// The SDK could not make sense of the error body; the status says enough.
		return apiFailure{status: wire.status, body: wire.body, header: wire.header}, true
	}
	return apiFailure{}, false
}
