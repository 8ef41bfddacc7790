package llm

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/anthropics/anthropic-sdk-go/packages/param"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// Anthropic streams calls to Anthropic's Messages API. It is safe for
// concurrent use.
type Anthropic struct {
	client anthropic.Client
	log    *slog.Logger
	sc     scrubber
	lim    limits
	// baseURL is the API's root, for messages.
	baseURL string
}

// anthropicBaseURL is the root of Anthropic's own API.
const anthropicBaseURL = "https://api.anthropic.com"

var _ Provider = (*Anthropic)(nil)

// NewAnthropic returns a provider for Anthropic's Messages API. It uses cfg
// as given and reads no environment variable: use [New] or [FromEnv] for
// that. The SDK's own retries are off.
func NewAnthropic(cfg Config) (*Anthropic, error) {
	if cfg.APIKey == "" {
		return nil, fmt.Errorf("anthropic: %w: set ANTHROPIC_API_KEY (or use -%s %s with OPENAI_API_KEY)", ErrNoAPIKey, FlagProvider, NameOpenAI)
	}
	if err := checkBaseURL("ANTHROPIC_BASE_URL", cfg.BaseURL); err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	httpClient := cfg.HTTPClient
	if httpClient == nil {
		httpClient = defaultHTTPClient()
	}
	opts := []option.RequestOption{
		// The environment was read by FromEnv, if at all: the SDK must not
		// add credentials or headers of its own finding.
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(0),
		option.WithHTTPClient(httpClient),
	}
	// The SDK's paths start with v1/: a base URL that ends with it, as
	// OpenAI-compatible ones do, would ask for /v1/v1/messages.
	base := strings.TrimSuffix(strings.TrimRight(cfg.BaseURL, "/"), "/v1")
	if base != "" {
		opts = append(opts, option.WithBaseURL(base))
	}
	if base == "" {
		base = anthropicBaseURL
	}
	return &Anthropic{
		client:  anthropic.NewClient(opts...),
		log:     loggerOr(cfg.Logger),
		sc:      scrubber{secret: cfg.APIKey},
		lim:     limitsOf(cfg),
		baseURL: base,
	}, nil
}

// Name returns "anthropic".
func (a *Anthropic) Name() string { return NameAnthropic }

// Stream sends req to the Messages API and streams the reply; see [Provider].
func (a *Anthropic) Stream(ctx context.Context, req chat.Request, emit func(Event)) error {
	c := newCall(ctx, NameAnthropic, a.baseURL, emit, a.log, a.sc, a.lim)
	return c.run(req, func() (chat.Response, error) { return a.stream(c, req) })
}

// stream makes the HTTP request and reads the stream to its message_stop.
func (a *Anthropic) stream(c *call, req chat.Request) (chat.Response, error) {
	params, err := a.params(c, req)
	if err != nil {
		return chat.Response{}, err
	}
	stream := a.client.Messages.NewStreaming(c.ctx, params, option.WithMiddleware(c.wire.middleware))
	defer func() { _ = stream.Close() }()

	var msg anthropic.Message
	// badArgs holds, by block index, tool input that was not a JSON object
	// when its block ended: the accumulator would replace it with {}.
	badArgs := map[int]string{}
	stopped, started := false, false
	events := 0
	for !stopped && stream.Next() {
		ev := stream.Current()
		events++
		if ev.Type == "" {
			// The SDK decodes leniently; an event without a type is not one.
			return chat.Response{}, c.fail(chat.ErrMalformed, "an event has no type: %s", truncate(oneLine(ev.RawJSON()), 200))
		}
		switch ev.Type {
		case "content_block_stop":
			noteBadArgs(&msg, int(ev.Index), badArgs)
		case "message_stop":
			for i := range msg.Content {
				noteBadArgs(&msg, i, badArgs)
			}
		}
		usageBefore, stopBefore := c.usage, msg.StopReason
		if err := msg.Accumulate(ev); err != nil {
			return chat.Response{}, c.fail(chat.ErrMalformed, "bad %s event: %v", ev.Type, err)
		}
		switch ev.Type {
		case "message_start":
			c.usage = anthropicUsage(msg.Usage)
			c.send(Usage{Usage: c.usage})
			if !started {
				c.progress()
			}
			started = true
		case "message_delta":
			c.usage, c.outputCounted = anthropicUsage(msg.Usage), true
			if c.usage != usageBefore || msg.StopReason != stopBefore {
				c.progress()
			}
			if c.usage != usageBefore {
				c.send(Usage{Usage: c.usage})
			}
		case "content_block_start":
			b := msg.Content[ev.Index]
			n := len(b.Text) + len(b.Thinking) + len(b.Signature) + len(b.Data)
			if b.Type == "tool_use" {
				if err := c.checkToolCall(b.ID, b.Name); err != nil {
					return chat.Response{}, err
				}
				n += len(b.ID) + len(b.Name)
				if in := string(b.Input); in != "{}" {
					n += len(in)
				}
			}
			if err := c.grow(n); err != nil {
				return chat.Response{}, err
			}
			if n > 0 {
				c.progress()
			}
			if b.Type == "tool_use" {
				c.send(ToolCallDelta{CallID: b.ID, ToolName: b.Name})
			}
		case "content_block_delta":
			n := len(ev.Delta.Text) + len(ev.Delta.PartialJSON) + len(ev.Delta.Thinking) + len(ev.Delta.Signature)
			if ev.Delta.Type == "citations_delta" {
				n += len(ev.Delta.Citation.RawJSON())
			}
			if err := c.grow(n); err != nil {
				return chat.Response{}, err
			}
			if n > 0 {
				c.progress()
			}
			switch ev.Delta.Type {
			case "text_delta":
				if ev.Delta.Text != "" && msg.Content[ev.Index].Type == "text" {
					c.send(TextDelta{Text: ev.Delta.Text})
				}
			case "input_json_delta":
				if b := msg.Content[ev.Index]; ev.Delta.PartialJSON != "" {
					c.send(ToolCallDelta{CallID: b.ID, ToolName: b.Name, Fragment: ev.Delta.PartialJSON})
				}
			}
		case "message_stop":
			stopped = true
		}
	}
	if !stopped {
		if err := stream.Err(); err != nil {
			return chat.Response{}, err
		}
		return chat.Response{}, c.cutShort(events, "message_stop")
	}
	return anthropicResponse(c, &msg, badArgs), nil
}

// noteBadArgs records the input of tool block i when it is not a JSON object.
func noteBadArgs(msg *anthropic.Message, i int, bad map[int]string) {
	if i < 0 || i >= len(msg.Content) {
		return
	}
	b := msg.Content[i]
	if b.Type == "tool_use" && !isJSONObject(b.Input) {
		if _, seen := bad[i]; !seen {
			bad[i] = string(b.Input)
		}
	}
}

// anthropicResponse turns the accumulated message into a chat.Response.
func anthropicResponse(c *call, msg *anthropic.Message, badArgs map[int]string) chat.Response {
	out := chat.Message{Role: chat.RoleAssistant}
	var text []byte
	for i, b := range msg.Content {
		switch b.Type {
		case "thinking":
			out.Thinking = append(out.Thinking, chat.Thinking{Text: b.Thinking, Signature: b.Signature})
		case "redacted_thinking":
			out.Thinking = append(out.Thinking, chat.Thinking{Redacted: b.Data})
		case "text":
			text = append(text, b.Text...)
		case "tool_use":
			if raw, bad := badArgs[i]; bad {
				c.log.DebugContext(c.ctx, "tool call arguments are not a JSON object", "provider", NameAnthropic, "call_id", b.ID, "tool", b.Name)
				out.ToolCalls = append(out.ToolCalls, malformedCall(b.ID, b.Name, raw, string(msg.StopReason), "max_tokens"))
				continue
			}
			out.ToolCalls = append(out.ToolCalls, chat.ToolCall{ID: b.ID, Name: b.Name, Arguments: argsOrEmpty(b.Input)})
		}
	}
	out.Content = string(text)
	return chat.Response{Message: out, Usage: anthropicUsage(msg.Usage), StopReason: string(msg.StopReason)}
}

// anthropicUsage returns the API's usage figures as a chat.Usage. The API's
// input_tokens leaves out the tokens written to and read from the cache;
// chat.Usage counts them in.
func anthropicUsage(u anthropic.Usage) chat.Usage {
	return chat.Usage{
		InputTokens:              int(u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens),
		OutputTokens:             int(u.OutputTokens),
		CacheCreationInputTokens: int(u.CacheCreationInputTokens),
		CacheReadInputTokens:     int(u.CacheReadInputTokens),
		ReasoningTokens:          int(u.OutputTokensDetails.ThinkingTokens),
	}
}

// params maps req to the Messages API's parameters.
func (a *Anthropic) params(c *call, req chat.Request) (anthropic.MessageNewParams, error) {
	if req.Model == "" {
		return anthropic.MessageNewParams{}, c.fail(chat.ErrInvalidRequest, "the request names no model: name one with -%s", FlagModel)
	}
	if req.MaxTokens <= 0 {
		return anthropic.MessageNewParams{}, c.fail(chat.ErrInvalidRequest,
			"the request allows the reply %d tokens: the Messages API needs a positive max tokens", req.MaxTokens)
	}
	p := anthropic.MessageNewParams{
		Model:     anthropic.Model(req.Model),
		MaxTokens: int64(req.MaxTokens),
	}
	if req.Thinking > 0 {
		if req.Thinking >= req.MaxTokens {
			return anthropic.MessageNewParams{}, c.fail(chat.ErrInvalidRequest,
				"the thinking budget of %d tokens is not less than the reply's limit of %d: lower -%s or raise -%s",
				req.Thinking, req.MaxTokens, FlagThinking, FlagMaxTokens)
		}
		p.Thinking = anthropic.ThinkingConfigParamOfEnabled(int64(req.Thinking))
	}
	if req.Temperature != nil && req.Thinking == 0 { // thinking allows no other temperature than the default
		p.Temperature = anthropic.Float(*req.Temperature)
	}
	if err := checkImages(c, a.lim, req); err != nil {
		return anthropic.MessageNewParams{}, err
	}
	system := req.System
	add := func(role anthropic.MessageParamRole, blocks ...anthropic.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		// Consecutive messages of one role become one message: the results
		// of one round of tool calls go back together.
		if n := len(p.Messages); n > 0 && p.Messages[n-1].Role == role {
			p.Messages[n-1].Content = append(p.Messages[n-1].Content, blocks...)
			return
		}
		p.Messages = append(p.Messages, anthropic.MessageParam{Role: role, Content: blocks})
	}
	for i, m := range req.Messages {
		switch m.Role {
		case chat.RoleSystem:
			if m.Content != "" {
				if system != "" {
					system += "\n\n"
				}
				system += m.Content
			}
		case chat.RoleUser:
			// The images first, then the text that asks about them, as
			// Anthropic advises.
			var blocks []anthropic.ContentBlockParamUnion
			for _, im := range m.Images {
				blocks = append(blocks, anthropic.NewImageBlockBase64(im.MediaType, base64.StdEncoding.EncodeToString(im.Data)))
			}
			if m.Content != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Content))
			}
			add(anthropic.MessageParamRoleUser, blocks...)
		case chat.RoleAssistant:
			var blocks []anthropic.ContentBlockParamUnion
			// The thinking blocks go back first, as the model wrote them:
			// the API checks their signatures, and needs them beside the
			// tool results of the turn they led to.
			for _, th := range m.Thinking {
				switch {
				case th.Redacted != "":
					blocks = append(blocks, anthropic.NewRedactedThinkingBlock(th.Redacted))
				case th.Signature == "":
					// Thinking cut at the token limit before its signature
					// came: the API would refuse it, and needs it only
					// beside tool results, which a cut reply has none of.
					a.log.DebugContext(c.ctx, "thinking without a signature is not sent back", "provider", NameAnthropic, "message", i)
				default:
					blocks = append(blocks, anthropic.NewThinkingBlock(th.Signature, th.Text))
				}
			}
			if m.Content != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Content))
			}
			for _, tc := range m.ToolCalls {
				blocks = append(blocks, anthropic.NewToolUseBlock(anthropicCallID(tc.ID), json.RawMessage(a.historyArgs(c, i, tc)), tc.Name))
			}
			add(anthropic.MessageParamRoleAssistant, blocks...)
		case chat.RoleTool:
			res := anthropic.ToolResultBlockParam{ToolUseID: anthropicCallID(m.ToolCallID), IsError: anthropic.Bool(m.IsError)}
			if m.Content != "" {
				res.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: m.Content}}}
			}
			add(anthropic.MessageParamRoleUser, anthropic.ContentBlockParamUnion{OfToolResult: &res})
		default:
			return anthropic.MessageNewParams{}, c.fail(chat.ErrInvalidRequest, "message %d has unknown role %q", i, m.Role)
		}
	}
	if system != "" {
		p.System = []anthropic.TextBlockParam{{Text: system}}
	}
	for _, t := range req.Tools {
		schema, err := toolSchema(t)
		if err != nil {
			return anthropic.MessageNewParams{}, c.fail(chat.ErrInvalidRequest, "%v", err)
		}
		tp := anthropic.ToolParam{
			Name:        t.Name,
			InputSchema: param.Override[anthropic.ToolInputSchemaParam](schema),
		}
		if t.Description != "" {
			tp.Description = anthropic.String(t.Description)
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: &tp})
	}
	if !req.NoCache { // a request no later one starts as (chat.Request.NoCache) writes nothing
		if len(p.System) > 0 {
			p.System[0].CacheControl = anthropic.NewCacheControlEphemeralParam()
		}
		if n := len(p.Tools); n > 0 {
			p.Tools[n-1].OfTool.CacheControl = anthropic.NewCacheControlEphemeralParam()
		}
		markCache(p.Messages)
	}
	return p, nil
}

// markCache sets the prompt cache's breakpoints in the conversation: at
// the end of its last message, so that the next request of the turn,
// which repeats it all, reads it from the cache, and at the end of the
// user message before it, where the request before this one ended, so
// that this one reads what that one wrote even when the last round added
// more blocks than the API looks back over (20). With those of the tools
// and the system prompt, that makes the four breakpoints the API allows.
// Only a user message is marked: an assistant message ends with thinking
// blocks, which cannot be.
func markCache(msgs []anthropic.MessageParam) {
	marked := 0
	for i := len(msgs) - 1; i >= 0 && marked < 2; i-- {
		m := msgs[i]
		if m.Role != anthropic.MessageParamRoleUser || len(m.Content) == 0 {
			continue
		}
		if cc := m.Content[len(m.Content)-1].GetCacheControl(); cc != nil {
			*cc = anthropic.NewCacheControlEphemeralParam()
			marked++
		}
	}
}

// historyArgs returns the arguments of an earlier tool call to send back,
// or {} with a warning when they are not a JSON object.
func (a *Anthropic) historyArgs(c *call, i int, tc chat.ToolCall) []byte {
	if isJSONObject(tc.Arguments) {
		return tc.Arguments
	}
	if len(tc.Arguments) > 0 && tc.Malformed == "" { // a malformed call's result says why
		a.log.WarnContext(c.ctx, "tool call arguments are not a JSON object; sending {}",
			"provider", NameAnthropic, "message", i, "call_id", tc.ID, "tool", tc.Name)
	}
	return []byte("{}")
}
