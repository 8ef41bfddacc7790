package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// openAIBaseURL is the root of OpenAI's own API.
const openAIBaseURL = "https://api.openai.com/v1/"

// OpenAI streams calls to an OpenAI chat completions API: OpenAI's own or an
// OpenAI-compatible server such as llama.cpp, vLLM or Ollama. It is safe for
// concurrent use.
type OpenAI struct {
	client openai.Client
	log    *slog.Logger
	sc     scrubber
	lim    limits
	// baseURL is the API's root, for messages.
	baseURL string
	// official is set for api.openai.com, which wants max_completion_tokens;
	// compatible servers get the older max_tokens, which they all read.
	official bool
}

var _ Provider = (*OpenAI)(nil)

// NewOpenAI returns a provider for an OpenAI chat completions API. It uses
// cfg as given and reads no API key or base URL from the environment: use
// [New] or [FromEnv] for that. An empty BaseURL means OpenAI's own API,
// which needs an API key; a local server may need none, and then no
// Authorization header is sent. The SDK's own retries are off.
func NewOpenAI(cfg Config) (*OpenAI, error) {
	if err := checkBaseURL("OPENAI_BASE_URL", cfg.BaseURL); err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	base := cfg.BaseURL
	if base == "" {
		if cfg.APIKey == "" {
			return nil, fmt.Errorf("openai: %w: set OPENAI_API_KEY, or point -%s or OPENAI_BASE_URL at a local server that needs none (or use -%s %s with ANTHROPIC_API_KEY)",
				ErrNoAPIKey, FlagBaseURL, FlagProvider, NameAnthropic)
		}
		base = openAIBaseURL
	}
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		// Always set, so that a key the SDK found in the environment is
		// not sent when cfg has none.
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(0),
	}
	httpClient := cfg.HTTPClient
	if httpClient == nil {
		httpClient = defaultHTTPClient()
	}
	opts = append(opts, option.WithHTTPClient(httpClient))
	u, _ := url.Parse(base) // checked above
	return &OpenAI{
		client:   openai.NewClient(opts...),
		log:      loggerOr(cfg.Logger),
		sc:       scrubber{secret: cfg.APIKey},
		official: strings.EqualFold(u.Hostname(), "api.openai.com"),
		lim:      limitsOf(cfg),
		baseURL:  base,
	}, nil
}

// Name returns "openai".
func (o *OpenAI) Name() string { return NameOpenAI }

// Stream sends req to the chat completions API and streams the reply; see
// [Provider]. A reply is complete once a finish_reason has arrived and the
// stream ended cleanly ([DONE], or the end of the body after it).
func (o *OpenAI) Stream(ctx context.Context, req chat.Request, emit func(Event)) error {
	c := newCall(ctx, NameOpenAI, o.baseURL, emit, o.log, o.sc, o.lim)
	return c.run(req, func() (chat.Response, error) { return o.stream(c, req) })
}

// openAICall is a tool call being assembled from its deltas.
type openAICall struct {
	id, name string
	args     strings.Builder
}

// stream makes the HTTP request and reads the chunks.
func (o *OpenAI) stream(c *call, req chat.Request) (chat.Response, error) {
	params, err := o.params(c, req)
	if err != nil {
		return chat.Response{}, err
	}
	stream := o.client.Chat.Completions.NewStreaming(c.ctx, params, option.WithMiddleware(c.wire.middleware))
	defer func() { _ = stream.Close() }()

	var (
		text    strings.Builder
		calls   []*openAICall
		byIndex = map[int64]*openAICall{}
		finish  string
		usage   chat.Usage
	)
	events := 0
	started := false
	for stream.Next() {
		chunk := stream.Current()
		events++
		if u := chunk.Usage; u.PromptTokens > 0 || u.CompletionTokens > 0 {
			// prompt_tokens counts the cached tokens in, as chat.Usage does.
			usage = chat.Usage{
				InputTokens:              int(u.PromptTokens),
				OutputTokens:             int(u.CompletionTokens),
				CacheCreationInputTokens: int(u.PromptTokensDetails.CacheWriteTokens),
				CacheReadInputTokens:     int(u.PromptTokensDetails.CachedTokens),
				ReasoningTokens:          int(u.CompletionTokensDetails.ReasoningTokens),
			}
			changed := usage != c.usage
			if changed {
				c.progress()
			}
			c.usage, c.outputCounted = usage, true
			if changed {
				c.send(Usage{Usage: usage})
			}
		}
		for _, choice := range chunk.Choices {
			if choice.Index != 0 {
				continue // only one choice is asked for
			}
			if choice.Delta.Role != "" && !started {
				started = true
				c.progress()
			}
			// Reasoning and refusals are not passed on, but they are part
			// of the reply: they count towards its size, and as progress.
			n := len(choice.Delta.Content) + len(choice.Delta.Refusal) + reasoningBytes(choice.Delta)
			for _, tc := range choice.Delta.ToolCalls {
				n += len(tc.Function.Arguments)
				// The ID and the name count once, as they are kept (see
				// below): some servers repeat them in every delta.
				switch call := byIndex[tc.Index]; {
				case call == nil || (tc.ID != "" && call.id != tc.ID):
					n += len(tc.ID) + len(tc.Function.Name)
				case call.name == "":
					n += len(tc.Function.Name)
				}
				if err := c.checkToolCall(tc.ID, tc.Function.Name); err != nil {
					return chat.Response{}, err
				}
			}
			if err := c.grow(n); err != nil {
				return chat.Response{}, err
			}
			if n > 0 {
				c.progress()
			}
			if d := choice.Delta.Content; d != "" {
				text.WriteString(d)
				c.send(TextDelta{Text: d})
			}
			for _, tc := range choice.Delta.ToolCalls {
				call := byIndex[tc.Index]
				// A new id at a known index is a new call: some servers
				// give every call index 0.
				if call == nil || (tc.ID != "" && call.id != tc.ID) {
					call = &openAICall{id: tc.ID}
					if call.id == "" {
						call.id = fmt.Sprintf("call_%d", len(calls))
					}
					calls = append(calls, call)
					byIndex[tc.Index] = call
					if call.name == "" {
						call.name = tc.Function.Name
					}
					call.args.WriteString(tc.Function.Arguments)
					c.send(ToolCallDelta{CallID: call.id, ToolName: call.name, Fragment: tc.Function.Arguments})
					continue
				}
				if call.name == "" {
					call.name = tc.Function.Name
				}
				if tc.Function.Arguments != "" {
					call.args.WriteString(tc.Function.Arguments)
					c.send(ToolCallDelta{CallID: call.id, ToolName: call.name, Fragment: tc.Function.Arguments})
				}
			}
			if choice.FinishReason != "" {
				if finish == "" {
					c.progress()
				}
				finish = choice.FinishReason
			}
		}
	}
	if err := stream.Err(); err != nil {
		return chat.Response{}, err
	}
	if finish == "" {
		return chat.Response{}, c.cutShort(events, "a finish_reason")
	}
	msg := chat.Message{Role: chat.RoleAssistant, Content: text.String()}
	for _, call := range calls {
		args := call.args.String()
		if strings.TrimSpace(args) != "" && !isJSONObject([]byte(args)) {
			c.log.DebugContext(c.ctx, "tool call arguments are not a JSON object", "provider", NameOpenAI, "call_id", call.id, "tool", call.name)
			msg.ToolCalls = append(msg.ToolCalls, malformedCall(call.id, call.name, args, finish, "length"))
			continue
		}
		msg.ToolCalls = append(msg.ToolCalls, chat.ToolCall{ID: call.id, Name: call.name, Arguments: argsOrEmpty([]byte(args))})
	}
	return chat.Response{Message: msg, Usage: usage, StopReason: finish}, nil
}

// reasoningFields are the members of a delta in which OpenAI-compatible
// servers stream a model's reasoning: reasoning_content (llama.cpp, vLLM,
// DeepSeek) and reasoning (Ollama, OpenRouter).
var reasoningFields = []string{"reasoning_content", "reasoning"}

// reasoningBytes returns the length of the reasoning text a delta holds.
func reasoningBytes(d openai.ChatCompletionChunkChoiceDelta) int {
	n := 0
	for _, name := range reasoningFields {
		// The SDK marks members it does not know as not valid; their raw
		// JSON is kept.
		f, ok := d.JSON.ExtraFields[name]
		if !ok || f.Raw() == "" {
			continue
		}
		var text string
		if json.Unmarshal([]byte(f.Raw()), &text) == nil {
			n += len(text)
		}
	}
	return n
}

// params maps req to the chat completions API's parameters.
func (o *OpenAI) params(c *call, req chat.Request) (openai.ChatCompletionNewParams, error) {
	if req.Model == "" {
		return openai.ChatCompletionNewParams{}, c.fail(chat.ErrInvalidRequest, "the request names no model: name one with -%s", FlagModel)
	}
	if err := checkImages(c, o.lim, req); err != nil {
		return openai.ChatCompletionNewParams{}, err
	}
	p := openai.ChatCompletionNewParams{
		Model:         req.Model,
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if req.MaxTokens > 0 {
		if o.official {
			p.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
		} else {
			p.MaxTokens = openai.Int(int64(req.MaxTokens))
		}
	}
	if req.Temperature != nil {
		p.Temperature = openai.Float(*req.Temperature)
	}
	if req.System != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(req.System))
	}
	for i, m := range req.Messages {
		switch m.Role {
		case chat.RoleSystem:
			p.Messages = append(p.Messages, openai.SystemMessage(m.Content))
		case chat.RoleUser:
			if len(m.Images) == 0 {
				p.Messages = append(p.Messages, openai.UserMessage(m.Content))
				break
			}
			// The images as data URLs, then the text that asks about them.
			parts := make([]openai.ChatCompletionContentPartUnionParam, 0, len(m.Images)+1)
			for _, im := range m.Images {
				parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: dataURL(im)}))
			}
			if m.Content != "" {
				parts = append(parts, openai.TextContentPart(m.Content))
			}
			p.Messages = append(p.Messages, openai.UserMessage(parts))
		case chat.RoleAssistant:
			var asst openai.ChatCompletionAssistantMessageParam
			if m.Content != "" || len(m.ToolCalls) == 0 {
				asst.Content.OfString = openai.String(m.Content)
			}
			for _, tc := range m.ToolCalls {
				args := string(tc.Arguments)
				if !isJSONObject(tc.Arguments) {
					if len(tc.Arguments) > 0 && tc.Malformed == "" { // a malformed call's result says why
						o.log.WarnContext(c.ctx, "tool call arguments are not a JSON object; sending {}",
							"provider", NameOpenAI, "message", i, "call_id", tc.ID, "tool", tc.Name)
					}
					args = "{}"
				}
				asst.ToolCalls = append(asst.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       openAICallID(tc.ID),
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: args},
					},
				})
			}
			p.Messages = append(p.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &asst})
		case chat.RoleTool:
			content := m.Content
			if m.IsError {
				content = "Error: " + content
			}
			p.Messages = append(p.Messages, openai.ToolMessage(content, openAICallID(m.ToolCallID)))
		default:
			return openai.ChatCompletionNewParams{}, c.fail(chat.ErrInvalidRequest, "message %d has unknown role %q", i, m.Role)
		}
	}
	for _, t := range req.Tools {
		schema, err := toolSchema(t)
		if err != nil {
			return openai.ChatCompletionNewParams{}, c.fail(chat.ErrInvalidRequest, "%v", err)
		}
		// Each top-level value stays raw JSON, so the schema is sent exactly
		// as written (numbers included).
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(schema, &fields); err != nil {
			return openai.ChatCompletionNewParams{}, c.fail(chat.ErrInvalidRequest, "tool %q: read its input schema: %v", t.Name, err)
		}
		params := make(shared.FunctionParameters, len(fields))
		for k, v := range fields {
			params[k] = v
		}
		def := shared.FunctionDefinitionParam{Name: t.Name, Parameters: params}
		if t.Description != "" {
			def.Description = openai.String(t.Description)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(def))
	}
	return p, nil
}
