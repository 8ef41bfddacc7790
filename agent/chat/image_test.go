package chat_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fsmgen/fsmgen/agent/chat"
)

func TestImageMarker(t *testing.T) {
	t.Parallel()
	tests := []struct {
		size int
		want string
	}{
		{0, "[image: a.png, 0 bytes]"},
		{999, "[image: a.png, 999 bytes]"},
		{1000, "[image: a.png, 1 KB]"},
		{120_400, "[image: a.png, 120 KB]"},
		{3_400_000, "[image: a.png, 3.4 MB]"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, chat.Image{Name: "a.png", MediaType: "image/png", Data: make([]byte, tt.size)}.Marker())
		})
	}
}

// TestImageMessage: a message's images are kept in its JSON as base64,
// count in the conversation's size as the tokens the model reads of them
// (not their bytes), and make messages differ.
func TestImageMessage(t *testing.T) {
	t.Parallel()
	small := chat.Image{Name: "a.png", MediaType: "image/png", Data: []byte{1, 2, 3}}
	big := chat.Image{Name: "b.png", MediaType: "image/png", Data: make([]byte, 3<<20)}
	m := chat.Message{Role: chat.RoleUser, Content: "see", Images: []chat.Image{small}}

	data, err := json.Marshal(m)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"images":[{"name":"a.png","media_type":"image/png","data_base64":"AQID"}]`)
	var back chat.Message
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, m, back)

	plain := chat.NewConversation("c").Append(chat.UserMessage("see"))
	one := chat.NewConversation("c").Append(m)
	large := chat.NewConversation("c").Append(chat.Message{Role: chat.RoleUser, Content: "see", Images: []chat.Image{big}})
	perImage := one.Size() - plain.Size()
	assert.Equal(t, perImage, large.Size()-plain.Size(), "an image counts the same whatever its bytes")
	assert.InDelta(t, chat.ImageTokens*3, perImage, 32, "about the tokens an image costs, at three bytes a token")

	assert.True(t, one.Equal(chat.NewConversation("c").Append(back)))
	assert.False(t, one.Equal(large), "other images, another message")
	assert.False(t, one.Equal(plain))
}
