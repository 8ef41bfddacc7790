package fakellm

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
)

// TestBill checks that the servers bill the prompt cache as the providers
// do: Anthropic from the breakpoints and the prefixes written before,
// OpenAI from the longest prefix of messages sent before.
func TestBill(t *testing.T) {
	big := strings.Repeat("x", 4000) // 1000 tokens
	tests := []struct {
		name     string
		provider Provider
		bodies   []string
		want     []chat.Usage // billed, output aside
	}{
		{
			name:     "anthropic: a breakpoint writes, the next request reads",
			provider: Anthropic,
			bodies: []string{
				`{"system":[{"type":"text","text":"` + big + `","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`,
				`{"system":[{"type":"text","text":"` + big + `","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`,
			},
			want: []chat.Usage{
				{InputTokens: 1019, CacheCreationInputTokens: 1007},
				{InputTokens: 1019, CacheReadInputTokens: 1007},
			},
		},
		{
			name:     "anthropic: without breakpoints nothing is cached",
			provider: Anthropic,
			bodies: []string{
				`{"system":[{"type":"text","text":"` + big + `"}],"messages":[]}`,
				`{"system":[{"type":"text","text":"` + big + `"}],"messages":[]}`,
			},
			want: []chat.Usage{{InputTokens: 1008}, {InputTokens: 1008}},
		},
		{
			name:     "anthropic: a moved breakpoint reads the earlier prefix within 20 blocks",
			provider: Anthropic,
			bodies: []string{
				`{"messages":[{"role":"user","content":[{"type":"text","text":"` + big + `","cache_control":{"type":"ephemeral"}}]}]}`,
				`{"messages":[{"role":"user","content":[{"type":"text","text":"` + big + `"}]},{"role":"assistant","content":[{"type":"text","text":"ok"}]},{"role":"user","content":[{"type":"text","text":"more","cache_control":{"type":"ephemeral"}}]}]}`,
			},
			want: []chat.Usage{
				{InputTokens: 1011, CacheCreationInputTokens: 1010},
				{InputTokens: 1034, CacheReadInputTokens: 1010, CacheCreationInputTokens: 23},
			},
		},
		{
			name:     "openai: a repeated prefix of messages is cached",
			provider: OpenAI,
			bodies: []string{
				`{"messages":[{"role":"system","content":"` + big + `"},{"role":"user","content":"hi"}]}`,
				`{"messages":[{"role":"system","content":"` + big + `"},{"role":"user","content":"hi"},{"role":"assistant","content":"yes"}]}`,
			},
			want: []chat.Usage{
				{InputTokens: 1017},
				{InputTokens: 1026, CacheReadInputTokens: 1016},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			replies := make([]Reply, len(tt.bodies))
			s := New(t, tt.provider, replies...)
			s.Bill()
			for _, body := range tt.bodies {
				path := "/v1/messages"
				if tt.provider == OpenAI {
					path = "/v1/chat/completions"
				}
				res, err := http.Post(s.URL+path, "application/json", strings.NewReader(body))
				require.NoError(t, err)
				require.NoError(t, res.Body.Close())
			}
			reqs := s.Requests()
			require.Len(t, reqs, len(tt.want))
			for i, r := range reqs {
				got := r.Billed
				got.OutputTokens = 0
				assert.Equal(t, tt.want[i], got, "request %d", i+1)
			}
		})
	}
}
