package llm

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	oaistream "github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// checkImages refuses req, before it is sent, when it holds an image
// that the provider cannot be sent (its media type is not one the APIs
// take, or it is larger than they take) or the model is known to take
// none (see Config.TextOnly).
func checkImages(c *call, lim limits, req chat.Request) error {
	for i, m := range req.Messages {
		for _, im := range m.Images {
			switch {
			case m.Role != chat.RoleUser:
				return c.fail(chat.ErrInvalidRequest, "message %d (the %s's) holds %s; only the user's messages may", i, m.Role, im.Marker())
			case lim.textOnly != nil && lim.textOnly(req.Model):
				return c.fail(chat.ErrInvalidRequest,
					"message %d holds %s, and %s takes no images (agent -model list); go on with a model that takes them (/model NAME), or start a new thread", i, im.Marker(), req.Model)
			case !slices.Contains(chat.ImageTypes, im.MediaType):
				return c.fail(chat.ErrInvalidRequest, "message %d holds %s of type %q; the APIs take %s", i, im.Marker(), im.MediaType, strings.Join(chat.ImageTypes, ", "))
			case len(im.Data) > chat.MaxImageBytes:
				return c.fail(chat.ErrInvalidRequest, "message %d holds %s, larger than the %s an image may have", i, im.Marker(), chat.FormatBytes(chat.MaxImageBytes))
			}
		}
	}
	return nil
}

// dataURL is the image as a data: URL, as OpenAI's image_url takes it.
func dataURL(im chat.Image) string {
	return "data:" + im.MediaType + ";base64," + base64.StdEncoding.EncodeToString(im.Data)
}

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

// malformedCall returns the call of the tool named name whose arguments
// raw are not a JSON object, to be answered with an error rather than
// run: the rest of the reply is good. When the reply stopped at the token
// limit (stopReason == limitReason) the arguments were cut off: the model
// needs to put less in one call, and is told how.
func malformedCall(id, name, raw, stopReason, limitReason string) chat.ToolCall {
	why := "are not a JSON object"
	if stopReason == limitReason {
		why = fmt.Sprintf("were cut off: the reply reached its token limit (stop reason %s) inside them; "+
			"the same call would be cut again, so make the change in smaller calls, e.g. a long file in parts, each part in a call of its own", stopReason)
	}
	args, _ := json.Marshal(raw) // a string: it cannot fail
	return chat.ToolCall{ID: id, Name: name, Arguments: args, Malformed: why}
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

// The tool call IDs a conversation holds are each provider's own, and a
// conversation may go from one provider to the other (the agent's
// /model): Anthropic takes IDs of letters, digits, '_' and '-' only,
// OpenAI IDs of at most 40 characters. Their own IDs ("toolu_…",
// "call_…") fit both; an ID that does not fit the API it is sent to (a
// local OpenAI-compatible server's) is sent as a stand-in made from it,
// the same for the call and its result, and the conversation keeps the
// original.

// openAIMaxCallID is the longest tool call ID OpenAI's API takes.
const openAIMaxCallID = 40

// standInCallID is the stand-in of a tool call ID: "call_" and 32
// hexadecimal digits of its SHA-256, which both APIs take.
func standInCallID(id string) string {
	sum := sha256.Sum256([]byte(id))
	return "call_" + hex.EncodeToString(sum[:16])
}

// anthropicCallID returns id as Anthropic's API takes it.
func anthropicCallID(id string) string {
	if id == "" {
		return standInCallID(id)
	}
	for _, r := range id {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '-') {
			return standInCallID(id)
		}
	}
	return id
}

// openAICallID returns id as OpenAI's API takes it.
func openAICallID(id string) string {
	if len(id) > openAIMaxCallID {
		return standInCallID(id)
	}
	return id
}
