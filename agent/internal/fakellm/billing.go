package fakellm

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// BytesPerToken is how the servers count tokens when they bill (see
// [Server.Bill]): a token for every four bytes of each block of the
// request's JSON (rounded up), and one more for the request, as a rough
// tokenizer counts English and code.
const BytesPerToken = 4

// lookback is how many blocks before a breakpoint Anthropic's cache looks
// for an entry an earlier request wrote.
const lookback = 20

// Bill makes the server bill the replies that set no Usage as the
// provider does, counting [BytesPerToken] bytes a token: the input from
// the request's blocks (tools, system prompt, messages), the output from
// the reply's text, thinking and tool arguments.
//
// The Anthropic server keeps a prompt cache as the Messages API does: a
// request's cache_control breakpoints write the prefix up to each of them
// (cache_creation_input_tokens), and a prefix an earlier request wrote, at
// a breakpoint or up to 20 blocks before one, is read from the cache
// (cache_read_input_tokens); the tokens after the last breakpoint are
// billed as input_tokens. The OpenAI server caches automatically, as
// OpenAI does: the longest prefix of whole messages (tools first) that an
// earlier request sent is reported as prompt_tokens_details.cached_tokens.
// Entries never expire.
func (s *Server) Bill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bill = true
	if s.cache == nil {
		s.cache = map[[32]byte]bool{}
	}
}

// block is one unit of a prompt the cache works on: its canonical JSON
// without cache_control, and whether it carries a breakpoint.
type block struct {
	text       []byte
	breakpoint bool
}

// blocksOf returns the request's prompt as blocks, in the order the
// provider caches them: the tools, the system prompt, the messages (for
// Anthropic each content block of each message, for OpenAI each message).
func blocksOf(p Provider, body []byte) []block {
	var req struct {
		Tools    []map[string]any `json:"tools"`
		System   json.RawMessage  `json:"system"`
		Messages []map[string]any `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil {
		return nil
	}
	var out []block
	add := func(v map[string]any) {
		_, bp := v["cache_control"]
		delete(v, "cache_control")
		b, _ := json.Marshal(v) // map keys sorted: canonical
		out = append(out, block{text: b, breakpoint: bp})
	}
	for _, t := range req.Tools {
		add(t)
	}
	if p == OpenAI {
		for _, m := range req.Messages {
			add(m)
		}
		return out
	}
	var system []map[string]any
	if json.Unmarshal(req.System, &system) == nil {
		for _, b := range system {
			add(b)
		}
	} else if len(req.System) > 0 {
		add(map[string]any{"type": "text", "text": string(req.System)})
	}
	for _, m := range req.Messages {
		role := m["role"]
		switch content := m["content"].(type) {
		case string:
			add(map[string]any{"role": role, "type": "text", "text": content})
		case []any:
			for _, c := range content {
				if b, ok := c.(map[string]any); ok {
					b["role"] = role
					add(b)
				}
			}
		}
	}
	return out
}

// inputTokens counts a request's input as billing does: BytesPerToken
// bytes a token of each block, rounded up, and one for the request.
func inputTokens(blocks []block) int {
	total := 1
	for _, b := range blocks {
		total += (len(b.text) + BytesPerToken - 1) / BytesPerToken
	}
	return total
}

// usageFor bills the request: the prompt's tokens, what of it the cache
// held and what it wrote there, and output tokens for out bytes of reply.
// It is called with s.mu held.
func (s *Server) usageFor(body []byte, out int) chat.Usage {
	blocks := blocksOf(s.provider, body)
	// prefix[i] is the hash of blocks[:i+1], and tokens[i] their tokens.
	prefix := make([][32]byte, len(blocks))
	tokens := make([]int, len(blocks))
	h := sha256.New()
	total := 0 // each block counts whole tokens, so that a block costs the same wherever it is
	for i, b := range blocks {
		fmt.Fprintf(h, "%d:", len(b.text))
		h.Write(b.text)
		copy(prefix[i][:], h.Sum(nil))
		total += (len(b.text) + BytesPerToken - 1) / BytesPerToken
		tokens[i] = total
	}
	u := chat.Usage{InputTokens: total + 1, OutputTokens: out/BytesPerToken + 1}
	if len(blocks) == 0 {
		return u
	}
	read := 0
	if s.provider == OpenAI {
		for i := len(blocks) - 1; i >= 0; i-- {
			if s.cache[prefix[i]] {
				read = tokens[i]
				break
			}
		}
		for _, p := range prefix {
			s.cache[p] = true
		}
		u.CacheReadInputTokens = read
		return u
	}
	last := -1
	for i, b := range blocks {
		if !b.breakpoint {
			continue
		}
		last = i
		for j := i; j >= 0 && j >= i-lookback; j-- {
			if s.cache[prefix[j]] {
				read = max(read, tokens[j])
				break
			}
		}
	}
	if last < 0 {
		return u
	}
	for i, b := range blocks {
		if b.breakpoint {
			s.cache[prefix[i]] = true
		}
	}
	u.CacheReadInputTokens = read
	u.CacheCreationInputTokens = tokens[last] - read
	return u
}
