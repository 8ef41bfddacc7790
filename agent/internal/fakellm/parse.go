package fakellm

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// parse fills the common view of the request's conversation.
func parse(p Provider, req *Request) {
	if p == OpenAI {
		parseOpenAI(req)
	} else {
		parseAnthropic(req)
	}
}

// parseAnthropic reads a Messages API request.
func parseAnthropic(req *Request) {
	var body struct {
		MaxTokens int `json:"max_tokens"`
		Thinking  struct {
			Type         string `json:"type"`
			BudgetTokens int    `json:"budget_tokens"`
		} `json:"thinking"`
		System []struct {
			Text         string          `json:"text"`
			CacheControl json.RawMessage `json:"cache_control"`
		} `json:"system"`
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type         string          `json:"type"`
				CacheControl json.RawMessage `json:"cache_control"`
				Thinking     string          `json:"thinking"`
				Signature    string          `json:"signature"`
				Data         string          `json:"data"`
				Text         string          `json:"text"`
				ID           string          `json:"id"`
				Name         string          `json:"name"`
				Input        json.RawMessage `json:"input"`
				ToolUseID    string          `json:"tool_use_id"`
				IsError      bool            `json:"is_error"`
				Source       imageSource     `json:"source"`
				Content      []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name         string          `json:"name"`
			CacheControl json.RawMessage `json:"cache_control"`
		} `json:"tools"`
	}
	if json.Unmarshal(req.Body, &body) != nil {
		return
	}
	req.MaxTokens = body.MaxTokens
	if body.Thinking.Type == "enabled" {
		req.Thinking = body.Thinking.BudgetTokens
	}
	for i, t := range body.Tools {
		req.Tools = append(req.Tools, t.Name)
		if t.CacheControl != nil {
			req.Breakpoints = append(req.Breakpoints, fmt.Sprintf("tools[%d]", i))
		}
	}
	for i, s := range body.System {
		req.System += s.Text
		if s.CacheControl != nil {
			req.Breakpoints = append(req.Breakpoints, fmt.Sprintf("system[%d]", i))
		}
	}
	for i, m := range body.Messages {
		msg := Message{Role: m.Role}
		for j, b := range m.Content {
			if b.CacheControl != nil {
				req.Breakpoints = append(req.Breakpoints, fmt.Sprintf("messages[%d].content[%d]", i, j))
			}
			switch b.Type {
			case "thinking":
				msg.Thinking = append(msg.Thinking, chat.Thinking{Text: b.Thinking, Signature: b.Signature})
			case "redacted_thinking":
				msg.Thinking = append(msg.Thinking, chat.Thinking{Redacted: b.Data})
			case "text":
				msg.Text += b.Text
			case "image":
				im, err := anthropicImage(b.Source)
				if err != nil {
					req.Invalid = fmt.Sprintf("messages.%d.content.%d.%v", i, j, err)
				}
				msg.Images = append(msg.Images, im)
			case "tool_use":
				msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Args: string(b.Input)})
			case "tool_result":
				res := Message{Role: "tool", ToolCallID: b.ToolUseID, IsError: b.IsError}
				for _, c := range b.Content {
					res.Text += c.Text
				}
				req.Messages = append(req.Messages, res)
			}
		}
		if msg.Text != "" || len(msg.ToolCalls) > 0 || len(msg.Thinking) > 0 || len(msg.Images) > 0 {
			req.Messages = append(req.Messages, msg)
		}
	}
}

// parseOpenAI reads a chat completions request.
func parseOpenAI(req *Request) {
	var body struct {
		MaxTokens           int `json:"max_tokens"`
		MaxCompletionTokens int `json:"max_completion_tokens"`
		Messages            []struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if json.Unmarshal(req.Body, &body) != nil {
		return
	}
	req.MaxTokens = max(body.MaxTokens, body.MaxCompletionTokens)
	for _, t := range body.Tools {
		req.Tools = append(req.Tools, t.Function.Name)
	}
	for i, m := range body.Messages {
		text := contentText(m.Content)
		if m.Role == "system" {
			req.System += text
			continue
		}
		msg := Message{Role: m.Role, Text: text, ToolCallID: m.ToolCallID}
		for j, url := range imageURLs(m.Content) {
			im, err := openAIImage(url)
			if err != nil {
				req.Invalid = fmt.Sprintf("messages[%d].content[%d]: %v", i, j, err)
			}
			msg.Images = append(msg.Images, im)
		}
		if m.Role == "tool" && strings.HasPrefix(text, "Error: ") {
			msg.IsError = true
		}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Args: tc.Function.Arguments})
		}
		req.Messages = append(req.Messages, msg)
	}
}

// contentText reads an OpenAI content: a string or an array of text parts.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

// imageURLs returns the URLs of an OpenAI content's image_url parts.
func imageURLs(raw json.RawMessage) []string {
	var parts []struct {
		Type     string `json:"type"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return nil
	}
	var urls []string
	for _, p := range parts {
		if p.Type == "image_url" {
			urls = append(urls, p.ImageURL.URL)
		}
	}
	return urls
}

// Signature is the signature the Anthropic server gives a thinking block
// of this text, so that a test can check it came back intact.
func Signature(thinking string) string {
	return fmt.Sprintf("sig-%x", sha256.Sum256([]byte(thinking)))[:20]
}
